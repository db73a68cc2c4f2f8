-- uses: prelude
-- KEYS: meta, events. ARGV: now, ttl, max_events, n, event 1..n.
-- Reply {started_at, now, sequence 1..n} (0 = over max_events, dropped).
local now, caller = clock(ARGV[1])
local ttl = tonumber(ARGV[2])
local max_events = tonumber(ARGV[3])
local n = tonumber(ARGV[4])
local m = redis.call('HMGET', KEYS[1], 's', 't', 'n')
local started, count
if not m[1] or aged_out(tonumber(m[2]), ttl, now) then
  redis.call('DEL', KEYS[1], KEYS[2])
  started = now; count = 0
  redis.call('HSET', KEYS[1], 's', now, 'd', 0)
else
  started = tonumber(m[1]); count = tonumber(m[3])
end
local out = {started, now}
local dropped = 0
for i = 1, n do
  if max_events <= 0 or count < max_events then
    count = count + 1
    redis.call('RPUSH', KEYS[2], ARGV[4 + i])
    out[#out + 1] = count
  else
    out[#out + 1] = 0; dropped = dropped + 1
  end
end
redis.call('HSET', KEYS[1], 't', now, 'n', count)
if dropped > 0 then redis.call('HINCRBY', KEYS[1], 'd', dropped) end
for _, k in ipairs(KEYS) do
  if ttl > 0 then redis.call('PEXPIRE', k, real_ttl(ttl, caller))
  else redis.call('PERSIST', k) end
end
return out
