-- uses: prelude breaker_read breaker_rules breaker_write publish window
-- rd_breaker_record_evidence and the memory store's counting.
-- KEYS: breaker, probe, calls (window hash), quorum (sorted set of executor
-- ids by last transient failure). ARGV: now, tool, failure_threshold,
-- success_threshold, open_timeout, outcome, token, idle_ttl, create,
-- channel, mode (0 consecutive, 1 failure rate), failure_rate_threshold,
-- minimum_calls, window_ms, slow_call_ms, slow_call_rate_threshold,
-- quorum_min_executors, quorum_window_ms, executor ('' without a quorum),
-- latency_ms (-1 = not measured), then a batched run (redis_batch.c;
-- absent for one outcome, as ARGV[6]): calls, transient failures, slow
-- calls, trailing failures, reset (1 = the run ends the streak first), the
-- epoch it was counted in.
-- Reply as admit, then calls, failures, slow (the window's sums, in the
-- failure-rate mode only: the consecutive mode judges by the streak, so its
-- outcomes are counted without reading the window), failing executors,
-- held by quorum.
local now, caller = clock(ARGV[1])
-- arguments that only some paths need are converted where they are used
local fthr, timeout = ARGV[3] + 0, ARGV[5] + 0
local outcome = ARGV[6] + 0
local tok = ARGV[7]
local mode, wms, qk = ARGV[11] + 0, ARGV[14] + 0, ARGV[17] + 0
local slowms = 0
if wms > 0 then slowms = ARGV[15] + 0 end
local run = tonumber(ARGV[21]) or 0
local b = load(KEYS[1], true)
if not b then
  if ARGV[9] ~= '1' then return {1} end
  b = fresh(now)
else
  load_probe(KEYS[2], b)
end
-- a run counted on a CLOSED breaker is void once its period is over
if run > 0 and (b.gen ~= tonumber(ARGV[26]) or b.st == 2 or hold_live(b, now)) then
  return {1}
end
b.ls = now
local counts = counts_calls(b, now)
local transient = 0
if outcome == 2 then transient = 1 end
local ev, execs = nil, 0
if wms > 0 and (counts or mode == 1) then
  -- what this outcome (or run) adds: calls, transient failures, slow calls
  local a1, a2, a3 = 1, transient, 0
  if slowms > 0 and ARGV[20] + 0 >= slowms then a3 = 1 end
  if run > 0 then a1, a2, a3 = run, tonumber(ARGV[22]), tonumber(ARGV[23]) end
  if mode == 1 then
    local m, sb = win_load(KEYS[3])
    if counts then win_add(KEYS[3], m, sb, wms, now, {a1, a2, a3}, caller) end
    ev = win_total(m, sb, wms, now)
  else
    win_bump(KEYS[3], wms, now, a1, a2, a3, caller)
  end
end
if qk > 1 then
  local qwin = ARGV[18] + 0
  if counts and transient == 1 then
    redis.call('ZADD', KEYS[4], now, ARGV[19])
    redis.call('PEXPIRE', KEYS[4], real_ttl(qwin, caller))
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now - qwin)
  execs = redis.call('ZCARD', KEYS[4])
end
local tr, held = 0, 0
if hold_live(b, now) then
  tr = 0 -- the operator decides during a hold
elseif b.st ~= 2 then
  local trip
  if run > 0 then -- consecutive mode only: the streak after the run
    local trailing = tonumber(ARGV[24])
    if ARGV[25] == '1' then b.cf = 0 end
    b.cf = math.min(b.cf + trailing, U32)
    trip = trailing > 0 and b.cf >= at_least_one(fthr)
  else
    local rate
    if mode == 1 then
      rate = rate_tripped(ev, ARGV[12] + 0, ARGV[13] + 0, slowms, ARGV[16] + 0)
    end
    trip = closed_outcome(b, outcome, fthr, rate)
  end
  tr, held = closed_verdict(b, now, timeout, trip, qk <= 1 or execs >= qk)
elseif probe_speaks(b, now, tok) then
  tr = probe_outcome(b, now, outcome, ARGV[4] + 0, timeout)
end
-- the probe key goes with the probe: only its holder or a new epoch clears it
if b.cleared then redis.call('DEL', KEYS[2]) end
-- a new period judges only its own calls
if tr ~= 0 then b.ver = b.ver + 1; redis.call('DEL', KEYS[3], KEYS[4]) end
save(KEYS[1], b, now, ARGV[8] + 0, caller)
if tr ~= 0 then publish(ARGV[10], b, ARGV[2]) end
if ev then return reply(0, 0, tr, b, now, ev[1], ev[2], ev[3], execs, held) end
return reply(0, 0, tr, b, now, 0, 0, 0, execs, held)
