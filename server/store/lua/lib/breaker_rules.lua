-- The rules of domain/breaker.c, for the scripts: the same functions over
-- the record as load() gives it (st 1 CLOSED / 2 OPEN, cf, cs, oa, ou, gen,
-- ot, tok, plu, ls, ver, fo, fu). They change only the record; the scripts
-- do the reading and writing around them. A rule that drops the probe sets
-- b.cleared, so that the script deletes the probe key.
-- tests/unit/test_breaker_differential.c drives these and the C rules with
-- the same random operations and compares them after every step.
local U32 = 4294967295
local function inc32(v) if v >= U32 then return v end return v + 1 end
-- A threshold of 0 behaves as 1, so a bad policy cannot wedge a breaker.
local function at_least_one(v) if v == 0 then return 1 end return v end

-- rd_breaker_init
local function fresh(now)
  return {st=1, cf=0, cs=0, oa=0, ou=0, gen=0, ot=0, ls=now, ver=0, fo=0, fu=0,
          tok='0', plu=0}
end
local function probe_live(b, now) return b.tok ~= '0' and now < b.plu end
-- An operator's hold (fo = 1 CLOSED, 2 OPEN) lasts until fu (0 = until
-- released) and overrides the breaker's own state meanwhile.
local function hold_live(b, now)
  return (b.fo == 1 or b.fo == 2) and (b.fu == 0 or now < b.fu)
end
-- rd_breaker_idle_forgettable: CLOSED, no probe, no hold (a failure
-- streak or not); forgotten once idle for the idle TTL.
local function idle_forgettable(b, now)
  return b.st == 1 and b.tok == '0' and not hold_live(b, now)
end
local function clear_probe(b) b.tok = '0'; b.plu = 0; b.cleared = true end
-- CLOSED or HALF_OPEN -> OPEN: a new epoch whose timer starts now.
local function open_now(b, now, timeout)
  b.st = 2; b.oa = now; b.ou = sat_add(now, timeout); b.gen = b.gen + 1
  b.ot = b.ot + 1; b.cs = 0; clear_probe(b)
end
local function close_now(b) b.st = 1; b.cf = 0; b.cs = 0; clear_probe(b) end

-- rd_breaker_admit: admission (1 yes, 2 probe, 3 no) and transition (3 =
-- probe granted). Token '0' means "no probe", so it is never handed out; a
-- lease is at least 1 ms, so the permit is held by someone at all.
local function admit_rule(b, now, lease, token)
  if hold_live(b, now) then
    if b.fo == 1 then return 1, 0 end
    return 3, 0
  end
  if b.st ~= 2 then return 1, 0 end
  if now < b.ou or probe_live(b, now) or token == '0' then return 3, 0 end
  if lease <= 0 then lease = 1 end
  b.tok = token; b.plu = sat_add(now, lease)
  return 2, 3
end

-- rd_breaker_counts_calls: outcomes while OPEN or HALF_OPEN are about the
-- breaker's own probing, not the tool's traffic.
local function counts_calls(b, now) return not hold_live(b, now) and b.st ~= 2 end

-- rd_breaker_rate_tripped over the window counts ev = {calls, failures, slow}.
local function rate_tripped(ev, rthr, mincalls, slowms, slowthr)
  if ev[1] == 0 or ev[1] < mincalls then return false end
  if rthr > 0 and ev[2] * 100 >= rthr * ev[1] then return true end
  return slowms > 0 and slowthr > 0 and ev[3] * 100 >= slowthr * ev[1]
end

-- The streak after one outcome on a CLOSED breaker, and whether the mode's
-- rule says "open": `rate` is the failure-rate verdict (any outcome may tip
-- a rate), nil in the consecutive mode. Either way a success or permanent
-- failure ends the streak: the service answered.
local function closed_outcome(b, outcome, fthr, rate)
  if outcome == 2 then b.cf = inc32(b.cf) else b.cf = 0 end
  if rate ~= nil then return rate end
  return outcome == 2 and b.cf >= at_least_one(fthr)
end

-- A CLOSED breaker whose rule tripped opens when the quorum is met; one
-- sick executor must not open it for everyone, so otherwise the streak goes
-- on and `held` tells it. Returns transition (1 = opened), held (0/1).
local function closed_verdict(b, now, timeout, trip, quorum_met)
  if not trip then return 0, 0 end
  if not quorum_met then return 0, 1 end
  open_now(b, now, timeout)
  return 1, 0
end

-- Only the holder of the live permit speaks for the half-open period.
local function probe_speaks(b, now, token)
  return b.st == 2 and now >= b.ou and token ~= '0' and token == b.tok and probe_live(b, now)
end

-- The probe's outcome: transition 4 closed, 2 reopened, 0 none. A permanent
-- error says nothing about the service's health: it frees the permit so the
-- next caller probes, and decides nothing.
local function probe_outcome(b, now, outcome, sthr, timeout)
  if outcome == 1 then
    clear_probe(b); b.cs = inc32(b.cs)
    if b.cs < at_least_one(sthr) then return 0 end
    close_now(b)
    return 4
  elseif outcome == 2 then
    b.cf = inc32(b.cf); open_now(b, now, timeout)
    return 2
  end
  b.cf = 0; clear_probe(b)
  return 0
end

-- rd_breaker_force: mode 1 holds OPEN, 2 holds CLOSED (both drop the probe
-- in flight), 3 resets to a fresh record of the next generation (opens_total
-- counts history and is kept, as is the version), 4 ends a hold.
local function force_rule(b, mode, now, ttl)
  if mode == 1 or mode == 2 then
    if mode == 1 then b.fo = 2 else b.fo = 1 end
    if ttl > 0 then b.fu = sat_add(now, ttl) else b.fu = 0 end
    clear_probe(b)
  elseif mode == 3 then
    local f = fresh(now)
    f.gen = b.gen + 1; f.ot = b.ot; f.ver = b.ver
    for k, v in pairs(f) do b[k] = v end
    b.cleared = true
  else
    b.fo = 0; b.fu = 0
  end
  b.ls = now
end
