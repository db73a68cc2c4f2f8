-- uses: prelude
-- KEYS: a learning link. ARGV: now, new signature id ('' = none), ttl.
-- Swaps the pending signature: reply the previous one ('' = none or
-- expired), so each pending retry is settled by one caller only.
local now, caller = clock(ARGV[1])
local ttl = tonumber(ARGV[3])
local v = redis.call('GET', KEYS[1])
local prev = ''
if v then
  local sig, at = string.match(v, '^(%S+) (%-?%d+)$')
  if sig and not aged_out(tonumber(at), ttl, now) then prev = sig end
end
if ARGV[2] == '' then
  redis.call('DEL', KEYS[1])
elseif ttl > 0 then
  redis.call('SET', KEYS[1], ARGV[2] .. ' ' .. str(now), 'PX', real_ttl(ttl, caller))
else
  redis.call('SET', KEYS[1], ARGV[2] .. ' ' .. str(now))
end
return prev
