-- uses: prelude breaker_read
-- KEYS: breaker, probe. ARGV: now. Reply as admit, {2} = not found.
local now = clock(ARGV[1])
local b = load(KEYS[1])
if not b then return {2} end
load_probe(KEYS[2], b)
return reply(0, 0, 0, b, now)
