-- uses: prelude
-- KEYS: meta, events. ARGV: now, ttl. Reply 1 dropped, 0 kept.
local now = clock(ARGV[1])
local t = redis.call('HGET', KEYS[1], 't')
if not t or not aged_out(tonumber(t), tonumber(ARGV[2]), now) then return 0 end
redis.call('DEL', KEYS[1], KEYS[2])
return 1
