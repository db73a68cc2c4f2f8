-- uses: prelude breaker_read breaker_rules publish
-- KEYS: breaker, probe, calls. ARGV: now, tool, idle_ttl, mode ('idle' = the
-- evict rule, 'closed' = make room under max_tools: any CLOSED breaker
-- without probe or hold), channel.
-- Reply: 1 dropped, 0 kept, -1 no such breaker.
local now = clock(ARGV[1])
local idle = tonumber(ARGV[3])
local b = load(KEYS[1])
if not b then
  if stray then redis.call('DEL', KEYS[1]) end
  redis.call('DEL', KEYS[3])
  return -1
end
load_probe(KEYS[2], b)
local drop
if ARGV[4] == 'closed' then
  drop = b.st == 1 and not probe_live(b, now) and not hold_live(b, now)
else
  drop = aged_out(b.ls, idle, now) and (idle_forgettable(b, now) or
    (b.st == 2 and aged_out(b.ou, idle, now) and not probe_live(b, now)
     and not hold_live(b, now)))
end
if not drop then return 0 end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
b.ver = b.ver + 1
publish(ARGV[5], b, ARGV[2])
return 1
