-- uses: prelude
-- KEYS: the tools index. ARGV: now, tool, cap. Reply 1 = the tool is (now)
-- indexed, 0 = the index is full.
local now = clock(ARGV[1])
if redis.call('ZSCORE', KEYS[1], ARGV[2]) then return 1 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], now, ARGV[2])
return 1
