-- uses: prelude
-- KEYS: outcome. ARGV: now, ttl. Reply 1 dropped, 0 kept.
local now = clock(ARGV[1])
local v = redis.call('GET', KEYS[1])
if not v or not aged_out(tonumber(v), tonumber(ARGV[2]), now) then return 0 end
redis.call('DEL', KEYS[1])
return 1
