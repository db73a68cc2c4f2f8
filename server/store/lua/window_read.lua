-- uses: prelude breaker_read window window_record
-- KEYS: a breaker record. ARGV: now, window_ms. Reply {f1, f2, f3}: the
-- sums of its call window.
local now = clock(ARGV[1])
load(KEYS[1])
return rwin_total(tonumber(ARGV[2]), now)
