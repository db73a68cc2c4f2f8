-- uses: prelude
-- KEYS: meta, events. ARGV: now, ttl. Reply {0} unknown or expired, else
-- {1, started_at, now, {event...}}.
local now = clock(ARGV[1])
local m = redis.call('HMGET', KEYS[1], 's', 't')
if not m[1] or aged_out(tonumber(m[2]), tonumber(ARGV[2]), now) then return {0} end
return {1, tonumber(m[1]), now, redis.call('LRANGE', KEYS[2], 0, -1)}
