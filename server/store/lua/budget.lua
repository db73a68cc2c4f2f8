-- uses: prelude window
-- rd_budget_allows. KEYS: the tool's budget window. ARGV: now, op (1 count
-- a request, 2 take a retry, 3 peek), window_ms, budget_percent,
-- min_retries. Reply {granted, requests, retries} after the op.
local now, caller = clock(ARGV[1])
local op, w = tonumber(ARGV[2]), tonumber(ARGV[3])
local pct, minr = tonumber(ARGV[4]), tonumber(ARGV[5])
local m, sb = win_load(KEYS[1])
local sum = win_total(m, sb, w, now)
local req, ret, granted = sum[1], sum[2], 0
if op == 1 then
  win_add(KEYS[1], m, sb, w, now, {1, 0, 0}, caller); req = req + 1
else
  local allowance = 0
  if pct > 0 then allowance = math.floor(pct / 100 * req) end
  if allowance < minr then allowance = minr end
  if ret < allowance then granted = 1 end
  if op == 2 and granted == 1 then
    win_add(KEYS[1], m, sb, w, now, {0, 1, 0}, caller); ret = ret + 1
  end
end
return {granted, req, ret}
