-- The call window inside the breaker record (breaker_read.lua): REC_NB
-- slots of (absolute bucket number, calls, transient failures, slow
-- calls), the domain/window.c layout, buckets numbered as window.lua's
-- win_bucket. Stale slots need no expiry: a sum counts a slot only while
-- its bucket is one of the last REC_NB.
--
-- An outcome changes one slot: rwin_add notes it (win_slot, its bytes in
-- win_bytes, its numbers in wb..w3) without copying the record, and says
-- whether the slot moved on to a new bucket; save()
-- writes the whole record with the window as it now is (rwin_now in
-- breaker_read.lua), and
-- win_save writes the changed slot alone in place when save() had nothing
-- else to write.
local REC_SLOT = '>llll'
local REC_WINDOW = '>llllllllllllllllllllllllllllllllllllllll'
local wb, w1, w2, w3
local function rwin_add(w, now, a1, a2, a3)
  local b = win_bucket(w, now)
  local s = b % REC_NB
  local x, c1, c2, c3 = 0, 0, 0, 0
  if raw and not win_cleared then
    x, c1, c2, c3 = struct.unpack(REC_SLOT, raw, REC_HEAD_LEN + s * REC_SLOT_LEN + 1)
  end
  if x ~= b then c1, c2, c3 = 0, 0, 0 end
  wb, w1, w2, w3 = b, c1 + a1, c2 + a2, c3 + a3
  win_slot = s
  win_bytes = struct.pack(REC_SLOT, wb, w1, w2, w3)
  return x ~= b
end
local function rwin_total(w, now)
  local b = win_bucket(w, now)
  local c1, c2, c3 = 0, 0, 0
  if raw and not win_cleared then
    local v = {struct.unpack(REC_WINDOW, raw, REC_HEAD_LEN + 1)}
    if win_slot then
      local k = win_slot * 4 + 1
      v[k], v[k + 1], v[k + 2], v[k + 3] = wb, w1, w2, w3
    end
    for k = 1, 4 * REC_NB, 4 do
      local x = v[k]
      if x <= b and x > b - REC_NB then
        c1 = c1 + v[k + 1]; c2 = c2 + v[k + 2]; c3 = c3 + v[k + 3]
      end
    end
  elseif win_slot and wb <= b and wb > b - REC_NB then
    c1, c2, c3 = w1, w2, w3
  end
  return {c1, c2, c3}
end
-- a new period judges only its own calls
local function rwin_clear() win_cleared = true; win_slot = nil end
