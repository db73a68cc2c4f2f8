-- uses: prelude
-- A tenant's limit (engine/tenant.h). KEYS: the sorted set of the tenant's
-- tools or turns by last use. ARGV: now, member, max, ttl_ms (0 = members
-- never age out). Reply 1 = member is counted (known, or there was room),
-- 0 = the set is full.
local now, caller = clock(ARGV[1])
local max, ttl = ARGV[3] + 0, ARGV[4] + 0
if not redis.call('ZSCORE', KEYS[1], ARGV[2]) then
  if ttl > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - ttl) end
  if redis.call('ZCARD', KEYS[1]) >= max then return 0 end
end
redis.call('ZADD', KEYS[1], now, ARGV[2])
if ttl > 0 then redis.call('PEXPIRE', KEYS[1], real_ttl(ttl, caller)) end
return 1
