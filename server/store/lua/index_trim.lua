-- uses: prelude
-- KEYS: an index (turns by last touch, outcomes by claim time). ARGV: now,
-- member, cap, only_if_new ('1': a member already there keeps its score).
-- Adds or refreshes member, then removes the oldest others past cap.
-- Reply: the removed members (the caller deletes their keys).
local now = clock(ARGV[1])
if ARGV[4] == '1' then redis.call('ZADD', KEYS[1], 'NX', now, ARGV[2])
else redis.call('ZADD', KEYS[1], now, ARGV[2]) end
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[3])
local removed = {}
if over <= 0 then return removed end
for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, over)) do
  if #removed < over and m ~= ARGV[2] then
    redis.call('ZREM', KEYS[1], m); removed[#removed + 1] = m
  end
end
return removed
