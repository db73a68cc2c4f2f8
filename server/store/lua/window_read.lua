-- uses: prelude breaker_read window window_record
-- KEYS: a breaker record, its calls key. ARGV: now, window_ms. Reply
-- {f1, f2, f3}: the sums of its call window, the calls and failures
-- pending in the calls key included.
local now = clock(ARGV[1])
local w = tonumber(ARGV[2])
local b = load(KEYS[1])
local sums = rwin_total(w, now)
if b then
  load_calls(KEYS[2], b, true)
  local s, x = pending_calls_slot()
  local cur = win_bucket(w, now)
  if s and x <= cur and x > cur - REC_NB then
    sums[1] = sums[1] + ck_pend
    sums[2] = sums[2] + ck_fail
  end
end
return sums
