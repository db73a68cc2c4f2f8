-- uses: prelude breaker_read breaker_rules breaker_write publish
-- rd_breaker_force. KEYS: breaker, probe. ARGV: now, tool, -, -, -, mode
-- (1 hold OPEN, 2 hold CLOSED, 3 reset, 4 release), ttl, idle_ttl, create,
-- channel. Reply as admit.
local now, caller = clock(ARGV[1])
local mode = tonumber(ARGV[6])
local ttl = tonumber(ARGV[7])
local b = load(KEYS[1], true)
if not b then
  if ARGV[9] ~= '1' then return {1} end
  b = fresh(now)
end
local function hold(status)
  b.fo = status
  if ttl > 0 then b.fu = sat_add(now, ttl) else b.fu = 0 end
end
if mode == 1 then hold(2)
elseif mode == 2 then hold(1)
elseif mode == 3 then
  local opens, gen, ver = b.ot, b.gen, b.ver
  b = fresh(now); b.gen = gen + 1; b.ot = opens; b.ver = ver
else b.fo = 0; b.fu = 0 end
-- every command drops the probe in flight (reset: its epoch is over)
if mode ~= 4 then redis.call('DEL', KEYS[2]) else load_probe(KEYS[2], b) end
b.ls = now
b.ver = b.ver + 1
save(KEYS[1], b, now, tonumber(ARGV[8]), caller, true)
publish(ARGV[10], b, ARGV[2])
return reply(0, 0, 0, b, now)
