-- What every script starts with.
--
-- ARGV[1] is the time (the record script: the first of its numbers): a
-- number >= 0 (use_caller_time, tests) or -1 for Redis TIME, so
-- replicas' clocks play no part in production. In
-- caller-time mode every real TTL gets SLACK more, so that the logical time
-- the test drives decides expiry, not the wall clock.
--
-- Every number is an integer, exact up to 2^53 (MAXT; the caller clamps
-- times to it too). Numbers go to redis.call as Lua numbers: Redis writes
-- them with %.17g, the same digits as %d for such integers, without a
-- string.format per field; str() (%d) is for numbers joined into a string,
-- where Lua's own conversion would round them. Numeric strings that are
-- always numbers are read with arithmetic (x + 0: one conversion, no
-- call), those that may be absent with tonumber(). Probe tokens are 64-bit, so they stay strings end to end.
local MAXT = 9007199254740991
local SLACK = 600000
local function clock_at(n)
  if n >= 0 then return n, true end
  local t = redis.call('TIME')
  return t[1] * 1000 + math.floor(t[2] / 1000), false
end
local function clock(arg)
  return clock_at(tonumber(arg) or -1)
end
local function sat_add(a, b)
  local s = a + b
  if s > MAXT then return MAXT end
  if s < -MAXT then return -MAXT end
  return s
end
local function str(x) return string.format('%d', x) end
local function real_ttl(ms, caller)
  if caller then return sat_add(ms, SLACK) end
  return ms
end
local function aged_out(since, ttl, now) return ttl > 0 and now - since >= ttl end
