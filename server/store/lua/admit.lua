-- uses: prelude breaker_read breaker_rules breaker_write
-- rd_breaker_admit. KEYS: breaker, probe. ARGV: now, tool,
-- failure_threshold, success_threshold, open_timeout, lease, fresh_token,
-- idle_ttl, create, channel. Reply: see reply() in breaker_read.lua;
-- {1} = unknown tool and create = 0.
local now, caller = clock(ARGV[1])
local idle = ARGV[8] + 0
local b = load(KEYS[1], true)
if not b then
  if ARGV[9] ~= '1' then return {1} end
  b = fresh(now)
else
  load_probe(KEYS[2], b)
end
b.ls = now
local adm, tr = 3, 0
if hold_live(b, now) then
  if b.fo == 1 then adm = 1 end
elseif b.st ~= 2 then
  adm = 1
elseif now >= b.ou and not probe_live(b, now) and ARGV[7] ~= '0' then
  local lease = ARGV[6] + 0
  if lease <= 0 then lease = 1 end
  b.tok = ARGV[7]; b.plu = sat_add(now, lease)
  -- Inside the script this SET is the lease's SET NX: nothing else runs
  -- between the liveness check above and it.
  redis.call('SET', KEYS[2], b.tok .. ' ' .. str(b.gen) .. ' ' .. str(b.plu),
             'PX', str(real_ttl(lease, caller)))
  adm, tr = 2, 3
end
save(KEYS[1], b, now, idle, caller)
return reply(0, adm, tr, b, now)
