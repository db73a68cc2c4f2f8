-- uses: prelude
-- KEYS: a signature record (hash s successes, f failures, t last settled).
-- ARGV: now, settle (1 credit, 2 debit, 0 read only), ttl. Expired evidence
-- starts over. Reply {successes, failures}.
local now, caller = clock(ARGV[1])
local settle, ttl = tonumber(ARGV[2]), tonumber(ARGV[3])
local v = redis.call('HMGET', KEYS[1], 's', 'f', 't')
local s, f = tonumber(v[1]) or 0, tonumber(v[2]) or 0
if v[3] and aged_out(tonumber(v[3]), ttl, now) then s = 0; f = 0 end
if settle == 0 then return {s, f} end
if settle == 1 then s = s + 1 else f = f + 1 end
redis.call('HSET', KEYS[1], 's', s, 'f', f, 't', now)
if ttl > 0 then redis.call('PEXPIRE', KEYS[1], real_ttl(ttl, caller))
else redis.call('PERSIST', KEYS[1]) end
return {s, f}
