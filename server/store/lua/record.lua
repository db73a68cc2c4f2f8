-- uses: prelude breaker_read breaker_rules breaker_write publish window window_record
-- rd_breaker_record_evidence and the memory store's counting.
-- KEYS: record, probe, quorum (sorted set of executor ids by last
-- transient failure), calls. ARGV: the numbers (below), token, tool,
-- channel, executor (only with a quorum).
-- The numbers come as one string of little-endian doubles (redis_breakers.c
-- record_numbers), since Redis hands every argument to the script as a Lua
-- string of its own: now (-1 = Redis TIME, as prelude.lua's clock),
-- failure_threshold, success_threshold, open_timeout,
-- outcome, idle_ttl, create, mode (0 consecutive, 1 failure rate),
-- failure_rate_threshold, minimum_calls, window_ms, slow_call_ms,
-- slow_call_rate_threshold, quorum_min_executors, quorum_window_ms,
-- latency_ms (-1 = not measured); for an outcome sent to the calls key
-- first (redis_in_place.c): -1 = not sent, 0 = not counted there (the key
-- held nothing of the record's version), 1 = counted there, then the key's
-- stamp it was counted at (load_calls), the record's version read beside
-- the count and, for a transient failure, the streak the count made (-1 =
-- none); then, for a batched run
-- (redis_batch.c) only: calls, transient failures, slow calls, trailing
-- failures, reset (1 = the run ends the streak first), the epoch it was
-- counted in.
-- Reply: reply() with the window's sums (in the failure-rate mode only: the
-- consecutive mode judges by the streak, so its outcomes are counted
-- without summing the window), failing executors, held by quorum.
local ONE = '<dddddddddddddddddddd'
local RUN = '<dddddddddddddddddddddddddd'
local t, fthr, sthr, timeout, outcome, idle, create, mode, rthr, mincalls, wms, slowms,
      slowthr, qk, qwin, latency, ucalls, ustamp, uver, ucf, rcalls, rfail, rslow, trailing, reset,
      epoch
if #ARGV[1] == 208 then
  t, fthr, sthr, timeout, outcome, idle, create, mode, rthr, mincalls, wms, slowms, slowthr, qk,
    qwin, latency, ucalls, ustamp, uver, ucf, rcalls, rfail, rslow, trailing, reset,
    epoch = struct.unpack(RUN, ARGV[1])
else
  t, fthr, sthr, timeout, outcome, idle, create, mode, rthr, mincalls, wms, slowms, slowthr, qk,
    qwin, latency, ucalls, ustamp, uver, ucf = struct.unpack(ONE, ARGV[1])
end
local now, caller = clock_at(t)
local run = rcalls or 0
local tok = ARGV[2]
local b = load(KEYS[1], true)
local known = b ~= nil
if not b then
  if create ~= 1 then
    if stray then redis.call('DEL', KEYS[1]) end
    -- what a count in the calls key left where there is no breaker
    if ucalls ~= -1 then redis.call('DEL', KEYS[4]) end
    return {1}
  end
  b = fresh(now)
else
  load_probe(KEYS[2], b)
  -- An outcome counted in the calls key of the record's version then, and
  -- the record has moved on since: that change (a transition or a reset,
  -- every one moves the version) came after it and saw its count. Counted
  -- in a key of another version (left from an earlier record), it is
  -- counted below as any outcome.
  if ucalls == 1 and stamp_version(ustamp) ~= b.ver % CK_VERS then
    if uver >= 0 and stamp_version(ustamp) == uver % CK_VERS then
      return reply(0, 0, 0, b, now, 0, 0, 0, 0, 0)
    end
    ucalls = 0
  end
end
-- The calls key is read whenever the record is CLOSED without a hold (the
-- transient failures pending there are part of the streak every rule
-- judges), when this call went through it, and for a new record. An
-- outcome counted there and still pending (no script has written the key
-- since) is counted below as any outcome; one a script has folded in since
-- is in the window and the streak already, and only its rules remain.
local calls_now = ucalls ~= -1 or not known or (b.st == 1 and b.fo == 0)
local call_pending, call_folded = false, false
if calls_now then
  load_calls(KEYS[4], b, known)
  call_pending = ucalls == 1 and ck_stamp == ustamp and ck_pend >= 1 and
                 (outcome ~= 2 or ck_fail >= 1)
  call_folded = ucalls == 1 and not call_pending
end
-- a run counted on a CLOSED breaker is void once its period is over, its
-- call too
if run > 0 and (b.gen ~= epoch or b.st == 2 or hold_live(b, now)) then
  if call_pending then redis.call('DECR', KEYS[4]) end
  return {1}
end
-- the other outcomes the calls key counted go into the window and the streak
if call_pending then
  ck_pend = ck_pend - 1
  if outcome == 2 then ck_fail = ck_fail - 1 end
end
if calls_now then fold_calls(KEYS[1], b) end
if wms <= 0 then slowms = 0 end
b.ls = now
local counts = counts_calls(b, now)
local transient = 0
if outcome == 2 then transient = 1 end
local ev, execs = nil, 0
local added = false
if wms > 0 and (counts or mode == 1) then
  if counts and not call_folded then
    added = true
    -- what this outcome (or run) adds: calls, transient failures, slow calls
    local moved
    if run > 0 then
      moved = rwin_add(wms, now, run, rfail, rslow)
    elseif slowms > 0 and latency >= slowms then
      moved = rwin_add(wms, now, 1, transient, 1)
    else
      moved = rwin_add(wms, now, 1, transient, 0)
    end
    -- the calls pending for an older bucket go in before the key moves on
    -- (those of the bucket this slot held are out of the window: dropped)
    if moved and not calls_now then
      load_calls(KEYS[4], b, known)
      fold_calls(KEYS[1], b)
      calls_now = true
    end
  end
  if mode == 1 then ev = rwin_total(wms, now) end
end
if qk > 1 then
  if counts and transient == 1 then
    redis.call('ZADD', KEYS[3], now, ARGV[5])
    redis.call('PEXPIRE', KEYS[3], real_ttl(qwin, caller))
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - qwin)
  execs = redis.call('ZCARD', KEYS[3])
end
local tr, held = 0, 0
if hold_live(b, now) then
  tr = 0 -- the operator decides during a hold
elseif b.st ~= 2 then
  local trip
  if run > 0 then -- consecutive mode only: the streak after the run
    if reset == 1 then b.cf = 0 end
    b.cf = math.min(b.cf + trailing, U32)
    trip = trailing > 0 and b.cf >= at_least_one(fthr)
  else
    local rate
    if mode == 1 then rate = rate_tripped(ev, rthr, mincalls, slowms, slowthr) end
    if call_folded and outcome == 2 then
      -- The streak already holds this failure, folded in by another script:
      -- what the count made then decides, even if a success has ended the
      -- streak since, which came after a failure that had tripped the breaker.
      trip = ucf >= at_least_one(fthr)
    else
      trip = closed_outcome(b, outcome, fthr, rate)
    end
  end
  tr, held = closed_verdict(b, now, timeout, trip, qk <= 1 or execs >= qk)
elseif probe_speaks(b, now, tok) then
  tr = probe_outcome(b, now, outcome, sthr, timeout)
end
-- the probe key goes with the probe: only its holder or a new epoch clears it
if b.cleared then redis.call('DEL', KEYS[2]) end
-- a new period judges only its own calls
if tr ~= 0 then b.ver = b.ver + 1; rwin_clear(); redis.call('DEL', KEYS[3]) end
if not save(KEYS[1], b, now, idle, caller) then win_save(KEYS[1]) end
-- the bucket this call was counted in is where the next calls go
local tag
if added then tag = win_bucket(wms, now) % CK_TAGS end
if calls_now then
  calls_save(b, now, idle, caller, tag)
elseif tr ~= 0 or expiry_set then
  load_calls(KEYS[4], b, known)
  calls_save(b, now, idle, caller, tag, true)
end
if tr ~= 0 then publish(ARGV[4], b, ARGV[3]) end
if ev then return reply(0, 0, tr, b, now, ev[1], ev[2], ev[3], execs, held) end
return reply(0, 0, tr, b, now, 0, 0, 0, execs, held)
