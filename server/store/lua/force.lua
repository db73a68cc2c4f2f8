-- uses: prelude breaker_read breaker_rules breaker_write publish
-- rd_breaker_force. KEYS: breaker, probe, calls. ARGV: now, tool, -, -, -, mode
-- (1 hold OPEN, 2 hold CLOSED, 3 reset, 4 release), ttl, idle_ttl, create,
-- channel. Reply as admit.
local now, caller = clock(ARGV[1])
local mode = tonumber(ARGV[6])
local b = load(KEYS[1], true)
local known = b ~= nil
if not b then
  if ARGV[9] ~= '1' then return {1} end
  b = fresh(now)
end
load_calls(KEYS[3], b, known)
fold_calls(KEYS[1], b)
-- release keeps the probe in flight; every other command drops the probe
-- key, whatever epoch it is of
if mode == 4 then load_probe(KEYS[2], b) end
force_rule(b, mode, now, tonumber(ARGV[7]))
if mode ~= 4 then redis.call('DEL', KEYS[2]) end
b.ver = b.ver + 1
save(KEYS[1], b, now, tonumber(ARGV[8]), caller, true)
calls_save(b, now, tonumber(ARGV[8]), caller)
publish(ARGV[10], b, ARGV[2])
return reply(0, 0, 0, b, now)
