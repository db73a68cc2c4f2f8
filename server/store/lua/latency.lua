-- uses: prelude
-- A tool's latency distribution (domain/latency.h). KEYS: its hash
-- {w = index of the window c<i> counts, c<i> = that window's count of
-- bucket i, p<i> = the window before's}. ARGV: now, window_ms, bucket
-- (-1: only read), number of buckets. Reply: the counts of the window
-- holding now and of the one before, summed per bucket.
local now = clock(ARGV[1])
local wms, b, n = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local w = math.floor(now / wms)
local fields = redis.call('HGETALL', KEYS[1])
local h = {}
for i = 1, #fields, 2 do h[fields[i]] = tonumber(fields[i + 1]) end
local kw = h['w']
-- A replica whose clock runs behind counts into the newest window.
if kw and kw > w then w = kw end
local cur, prev = {}, {}
for i = 0, n - 1 do cur[i] = 0; prev[i] = 0 end
if kw == w then
  for i = 0, n - 1 do cur[i] = h['c' .. i] or 0; prev[i] = h['p' .. i] or 0 end
elseif kw == w - 1 then
  for i = 0, n - 1 do prev[i] = h['c' .. i] or 0 end
end
if b >= 0 and b < n then
  cur[b] = cur[b] + 1
  if kw == w then
    redis.call('HINCRBY', KEYS[1], 'c' .. b, 1)
  else
    local args = {'w', w}
    for i = 0, n - 1 do
      if cur[i] > 0 then args[#args + 1] = 'c' .. i; args[#args + 1] = cur[i] end
      if prev[i] > 0 then args[#args + 1] = 'p' .. i; args[#args + 1] = prev[i] end
    end
    redis.call('DEL', KEYS[1])
    redis.call('HSET', KEYS[1], unpack(args))
  end
  redis.call('PEXPIRE', KEYS[1], 2 * wms)
end
local out = {}
for i = 0, n - 1 do out[i + 1] = cur[i] + prev[i] end
return out
