-- uses: prelude breaker_read breaker_rules breaker_write
-- rd_breaker_admit. KEYS: breaker, probe, calls. ARGV: now, tool,
-- failure_threshold, success_threshold, open_timeout, lease, fresh_token,
-- idle_ttl, create, channel. Reply: see reply() in breaker_read.lua;
-- {1} = unknown tool and create = 0.
local now, caller = clock(ARGV[1])
local idle = ARGV[8] + 0
local b = load(KEYS[1], true)
local known = b ~= nil
if not b then
  if ARGV[9] ~= '1' then return {1} end
  b = fresh(now)
else
  load_probe(KEYS[2], b)
end
b.ls = now
local adm, tr = admit_rule(b, now, ARGV[6] + 0, ARGV[7])
if tr == 3 then
  -- Inside the script this SET is the lease's SET NX: nothing else runs
  -- between the liveness check of admit_rule and it.
  redis.call('SET', KEYS[2], b.tok .. ' ' .. str(b.gen) .. ' ' .. str(b.plu),
             'PX', real_ttl(b.plu - now, caller))
end
save(KEYS[1], b, now, idle, caller)
-- An admission changes neither the state nor the window: the calls key
-- follows the record's expiry (a new record's, a sliding TTL), keeping
-- what is pending in it.
if expiry_set then
  load_calls(KEYS[3], b, known)
  calls_save(b, now, idle, caller, nil, true)
end
return reply(0, adm, tr, b, now)
