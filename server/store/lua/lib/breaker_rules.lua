-- The rules of core/breaker.c for the scripts, on the record as load()
-- gives it (st 1 CLOSED / 2 OPEN, cf, cs, oa, ou, gen, ot, tok, plu, fo, fu).
-- tests/unit/test_breaker_differential.c drives both with the same random
-- operations and compares them after every step.
local function probe_live(b, now) return b.tok ~= '0' and now < b.plu end
-- An operator's hold (fo = 1 CLOSED, 2 OPEN) lasts until fu (0 = until
-- released) and overrides the breaker's own state meanwhile.
local function hold_live(b, now)
  return (b.fo == 1 or b.fo == 2) and (b.fu == 0 or now < b.fu)
end
local function pristine(b, now)
  return b.st == 1 and b.cf == 0 and b.tok == '0' and not hold_live(b, now)
end
