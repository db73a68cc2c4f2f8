-- uses: prelude window
-- KEYS: a window hash. ARGV: now, window_ms. Reply {f1, f2, f3}.
local now = clock(ARGV[1])
local m, sb = win_load(KEYS[1])
return win_total(m, sb, tonumber(ARGV[2]), now)
