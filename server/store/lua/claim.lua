-- uses: prelude
-- KEYS: outcome. ARGV: now, ttl. Reply {duplicate 0/1, now}. The value is
-- the claim time, so a duplicate does not extend the memory.
local now, caller = clock(ARGV[1])
local ttl = tonumber(ARGV[2])
local v = redis.call('GET', KEYS[1])
if v and not aged_out(tonumber(v), ttl, now) then return {1, now} end
if ttl > 0 then
  redis.call('SET', KEYS[1], now, 'PX', real_ttl(ttl, caller))
else
  redis.call('SET', KEYS[1], now)
end
return {0, now}
