-- uses: prelude breaker_read
-- KEYS: breaker, probe, calls. ARGV: now. Reply as admit, {2} = not found.
-- The streak includes the transient failures pending in the calls key.
local now = clock(ARGV[1])
local b = load(KEYS[1])
if not b then return {2} end
load_probe(KEYS[2], b)
load_calls(KEYS[3], b, true)
if ck_fail > 0 then
  b.cf = b.cf + ck_fail
  -- the reply's record: its fields are all a read takes from it
  raw = struct.pack(REC_HEAD, b.st, b.cf, b.cs, b.oa, b.ou, b.gen, b.ot, b.ls, b.ver, b.fo,
                    b.fu)
end
return reply(0, 0, 0, b, now)
