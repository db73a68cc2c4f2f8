-- The retry budget's bucketed window (domain/window.c) in a hash: field
-- b<slot> holds the absolute bucket number of the slot, v<slot>_<f> its
-- counters (f = 1..3), named by the constants BF and VF; win_bucket numbers
-- the breaker record's window too (window_record.lua). win_load reads the hash once (m: the
-- fields, sb: each slot's bucket number); win_total sums the slots of the
-- last NB buckets; win_add adds to the current bucket's slot in one HSET
-- and keeps m and sb up to date.
--
-- Expiry: a slot counts only while its bucket is one of the last NB, and NB
-- buckets span at most w (width = floor(w / NB)), so the key may expire one
-- window after the first write into its newest bucket instead of after
-- every write: win_add sets the TTL (w) only when it writes a bucket other
-- than the newest one stored, and always when w < NB (the width is then
-- rounded up to 1 ms and the TTL itself bounds the sums). A write into an
-- older bucket (the clock stepped back) keeps the key until the newest
-- bucket has left the window too (if that is within 2 w).
local NB = 10
local BF = {'b0', 'b1', 'b2', 'b3', 'b4', 'b5', 'b6', 'b7', 'b8', 'b9'}
local VF = {'v0_1', 'v0_2', 'v0_3', 'v1_1', 'v1_2', 'v1_3', 'v2_1', 'v2_2', 'v2_3',
  'v3_1', 'v3_2', 'v3_3', 'v4_1', 'v4_2', 'v4_3', 'v5_1', 'v5_2', 'v5_3', 'v6_1',
  'v6_2', 'v6_3', 'v7_1', 'v7_2', 'v7_3', 'v8_1', 'v8_2', 'v8_3', 'v9_1', 'v9_2',
  'v9_3'}
local function win_width(w)
  local width = math.floor(w / NB)
  if width < 1 then width = 1 end
  return width
end
local function win_bucket(w, now)
  if now < 0 then now = 0 end
  return math.floor(now / win_width(w))
end
local function win_load(key)
  local all = redis.call('HGETALL', key)
  local m, sb = {}, {}
  for i = 1, #all, 2 do m[all[i]] = all[i + 1] end
  for s = 1, NB do local x = m[BF[s]]; sb[s] = x and x + 0 end
  return m, sb
end
local function win_total(m, sb, w, now)
  local b = win_bucket(w, now)
  local c1, c2, c3 = 0, 0, 0
  for s = 1, NB do
    local x = sb[s]
    if x and x <= b and x > b - NB then
      local k = 3 * s
      c1 = c1 + (m[VF[k - 2]] or 0)
      c2 = c2 + (m[VF[k - 1]] or 0)
      c3 = c3 + (m[VF[k]] or 0)
    end
  end
  return {c1, c2, c3}
end
local function win_add(key, m, sb, w, now, add, caller)
  local b = win_bucket(w, now)
  local s = b % NB + 1
  local newest
  for i = 1, NB do
    local x = sb[i]
    if x and (not newest or x > newest) then newest = x end
  end
  local args, n = {}, 0
  local reset = sb[s] ~= b
  if reset then
    sb[s] = b; m[BF[s]] = b; args[1] = BF[s]; args[2] = b; n = 2
  end
  for f = 1, 3 do
    local vf = VF[3 * s - 3 + f]
    if reset or add[f] ~= 0 then
      local x = add[f]
      if not reset then x = x + (m[vf] or 0) end
      m[vf] = x; args[n + 1] = vf; args[n + 2] = x; n = n + 2
    end
  end
  if n > 0 then redis.call('HSET', key, unpack(args)) end
  if w < NB or b ~= newest then
    local ttl = w
    if newest and b < newest then
      local keep = (newest + NB) * win_width(w) - now
      if keep > ttl and keep <= 2 * w then ttl = keep end
    end
    redis.call('PEXPIRE', key, real_ttl(ttl, caller))
  end
end
