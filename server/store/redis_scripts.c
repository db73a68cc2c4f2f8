/* The Lua scripts of the Redis store, and the SHA-1 that names them for
 * EVALSHA. docs/REDIS.md states each script's contract.
 *
 * The breaker scripts mirror core/breaker.c rule for rule (same thresholds
 * treated as at least 1, same saturating counters, same "only the live
 * probe of the current generation speaks for the half-open period").
 *
 * Conventions shared by all scripts:
 * - ARGV[1] is the time: a number >= 0 (use_caller_time, tests) or "-1"
 *   for Redis TIME. In caller-time mode every real TTL gets SLACK more so
 *   that the logical time the test drives decides expiry, not the wall
 *   clock.
 * - Integers travel as decimal strings, written with %d (every number
 *   formatted is an integer, exact up to 2^53; times are clamped to that
 *   by the caller and here). Numeric strings from Redis or the caller are
 *   read with arithmetic (x + 0: one conversion, no call) where they are
 *   always numbers; tonumber() where they may be absent.
 * - Probe tokens are 64-bit, so they stay strings end to end. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "store/redis_scripts.h"

#define LUA_PRELUDE                                                                      \
    "local MAXT = 9007199254740991\n"                                                   \
    "local SLACK = 600000\n"                                                            \
    "local function clock(arg)\n"                                                       \
    "  if arg ~= '-1' then\n"                                                           \
    "    local n = tonumber(arg)\n"                                                     \
    "    if n and n >= 0 then return n, true end\n"                                     \
    "  end\n"                                                                           \
    "  local t = redis.call('TIME')\n"                                                  \
    "  return t[1] * 1000 + math.floor(t[2] / 1000), false\n"                           \
    "end\n"                                                                             \
    "local function sat_add(a, b)\n"                                                    \
    "  local s = a + b\n"                                                               \
    "  if s > MAXT then return MAXT end\n"                                              \
    "  if s < -MAXT then return -MAXT end\n"                                            \
    "  return s\n"                                                                      \
    "end\n"                                                                             \
    "local function str(x) return string.format('%d', x) end\n"                         \
    "local function real_ttl(ms, caller)\n"                                             \
    "  if caller then return sat_add(ms, SLACK) end\n"                                  \
    "  return ms\n"                                                                     \
    "end\n"                                                                             \
    "local function aged_out(since, ttl, now) return ttl > 0 and now - since >= ttl end\n"

/* The breaker record in its hash. The scripts run on every call, so they
 * are written for Redis's Lua: every number turned into a string (concat,
 * string.format) and every string turned into a number costs, as does each
 * closure and table made per run; the field names below are constants.
 *
 * LUA_BREAKER_READ reads: load() keeps what it read in `stored` (by field
 * position, then the probe's token and lease) when asked, so that save()
 * writes only what changed; `partial`: a field was missing or not a number. */
#define LUA_BREAKER_READ                                                                 \
    "local stored, partial\n"                                                           \
    "local function load(key, track)\n"                                                 \
    "  local v = redis.call('HMGET', key, 'st','cf','cs','oa','ou','gen','ot','ls','ver',\n" \
    "                       'fo','fu')\n"                                               \
    "  local st, cf, cs, oa, ou, gen = v[1], v[2], v[3], v[4], v[5], v[6]\n"            \
    "  if not st then return nil end\n"                                                 \
    "  local ot, ls, ver, fo, fu = v[7], v[8], v[9], v[10], v[11]\n"                    \
    "  st = st + 0; cf = cf and cf + 0; cs = cs and cs + 0; oa = oa and oa + 0\n"        \
    "  ou = ou and ou + 0; gen = gen and gen + 0; ot = ot and ot + 0; ls = ls and ls + 0\n" \
    "  if track then\n"                                                                 \
    "    partial = not (cf and cs and oa and ou and gen and ot and ls and ver and fo and fu)\n" \
    "  end\n"                                                                           \
    "  ver = ver and ver + 0 or 0; fo = fo and fo + 0 or 0; fu = fu and fu + 0 or 0\n"   \
    "  if track then stored = {st, cf, cs, oa, ou, gen, ot, ls, ver, fo, fu, '0', 0} end\n" \
    "  return {st=st, cf=cf, cs=cs, oa=oa, ou=ou, gen=gen, ot=ot, ls=ls, ver=ver, fo=fo,\n" \
    "          fu=fu, tok='0', plu=0}\n"                                                \
    "end\n"                                                                             \
    /* A probe key of another generation is a leftover of an older epoch. The \
     * probe key is only written while the stored status is OPEN (admit), and \
     * every change away from OPEN (close, reset) or to a new generation       \
     * (open_now, reset) deletes it in the same script: with st ~= 2 no probe \
     * key of this generation can exist, so there is nothing to read. */       \
    "local function load_probe(pkey, b)\n"                                              \
    "  if b.st ~= 2 then return end\n"                                                  \
    "  local v = redis.call('GET', pkey)\n"                                             \
    "  if not v then return end\n"                                                      \
    "  local tok, gen, untl = string.match(v, '^(%d+) (%d+) (%-?%d+)$')\n"              \
    "  if tok and tonumber(gen) == b.gen then\n"                                        \
    "    b.tok = tok; b.plu = tonumber(untl)\n"                                         \
    "    if stored then stored[12] = b.tok; stored[13] = b.plu end\n"                   \
    "  end\n"                                                                           \
    "end\n"                                                                             \
    "local function reply(code, adm, tr, b, now)\n"                                     \
    "  return {code, adm, tr, b.st, b.cf, b.cs, b.oa, b.ou, b.gen, b.ot, b.tok, b.plu,\n" \
    "          b.ls, now, b.ver, b.fo, b.fu}\n"                                         \
    "end\n"

/* LUA_BREAKER_RULES: the rules of core/breaker.c that the scripts share. */
#define LUA_BREAKER_RULES                                                                \
    "local function probe_live(b, now) return b.tok ~= '0' and now < b.plu end\n"     \
    /* An operator's hold (fo = 1 CLOSED, 2 OPEN) lasts until fu (0 = until  \
     * released) and overrides the breaker's own state meanwhile. */           \
    "local function hold_live(b, now)\n"                                               \
    "  return (b.fo == 1 or b.fo == 2) and (b.fu == 0 or now < b.fu)\n"                \
    "end\n"                                                                             \
    "local function pristine(b, now)\n"                                                \
    "  return b.st == 1 and b.cf == 0 and b.tok == '0' and not hold_live(b, now)\n"    \
    "end\n"

#define LUA_PUBLISH                                                                      \
    "local function publish(channel, b, tool)\n"                                        \
    "  redis.call('PUBLISH', channel, str(b.ver) .. ' ' .. str(b.gen) .. ' ' .. tool)\n" \
    "end\n"

/* LUA_BREAKER_WRITE: the scripts that change a breaker (after
 * LUA_BREAKER_RULES). */
#define LUA_BREAKER_WRITE                                                                \
    "local function fresh(now)\n"                                                       \
    "  return {st=1, cf=0, cs=0, oa=0, ou=0, gen=0, ot=0, ls=now, ver=0, fo=0, fu=0,\n" \
    "          tok='0', plu=0}\n"                                                       \
    "end\n"                                                                             \
    /* The key's expiry for record b last seen at ls, judged at now: kind 0 no \
     * TTL, 1 pristine, 2 OPEN or held; and the time it ends. Pristine:        \
     * forgotten after the idle TTL. OPEN: after its open period, any lease    \
     * and the idle TTL. A failure streak or an endless hold: kept (like the   \
     * memory store; max_tools bounds how many). */                             \
    "local function expiry(b, ls, now, idle)\n"                                         \
    "  if idle <= 0 then return 0, 0 end\n"                                             \
    "  local held = hold_live(b, now)\n"                                                \
    "  if held and b.fu == 0 then return 0, 0 end\n"                                    \
    "  if pristine(b, now) then return 1, sat_add(ls, idle) end\n"                      \
    "  if b.st == 2 or held then return 2, sat_add(math.max(b.ou, ls, b.plu, b.fu), idle) end\n" \
    "  return 0, 0\n"                                                                   \
    "end\n"                                                                             \
    "local function expire(bkey, b, now, idle, caller)\n"                               \
    "  local kind = expiry(b, b.ls, now, idle)\n"                                       \
    "  if kind == 0 then\n"                                                             \
    "    redis.call('PERSIST', bkey)\n"                                                 \
    "  elseif kind == 1 then\n"                                                         \
    "    redis.call('PEXPIRE', bkey, str(real_ttl(idle, caller)))\n"                    \
    "  else\n"                                                                          \
    "    local base = math.max(b.ou, b.ls, b.plu, b.fu)\n"                              \
    "    redis.call('PEXPIRE', bkey, str(real_ttl(sat_add(base - now, idle), caller)))\n" \
    "  end\n"                                                                           \
    "end\n"                                                                             \
    /* Writes b (b.ls = now), after load(key, true) or for a new record.     \
     * Invariant: the key's TTL is the one expire() gives the stored record   \
     * at its stored ls. So when nothing but the time changed and the stored  \
     * ls is younger than the slack (idle / 16, at least 1 s), nothing is     \
     * written, unless the kind of expiry changed meanwhile (a timed hold ran \
     * out): last_seen and a sliding TTL lag by less than the slack.          \
     * Otherwise the changed fields and ls go in one HSET, and the expiry is  \
     * set only when it differs from the stored one. `always` (force), or a   \
     * field missing from the hash, writes every field and sets the expiry. */ \
    "local function save(bkey, b, now, idle, caller, always)\n"                         \
    "  local s = stored\n"                                                              \
    "  if always or partial then s = nil end\n"                                         \
    "  if s and idle > 0 and b.st == s[1] and b.cf == s[2] and b.cs == s[3] and\n"      \
    "     b.oa == s[4] and b.ou == s[5] and b.gen == s[6] and b.ot == s[7] and\n"       \
    "     b.ver == s[9] and b.fo == s[10] and b.fu == s[11] and b.tok == s[12] and\n"   \
    "     b.plu == s[13] then\n"                                                        \
    /* the kind of expiry changes with time only where a timed hold ends */    \
    "    local seen, slack = s[8], math.floor(idle / 16)\n"                             \
    "    if slack < 1000 then slack = 1000 end\n"                                       \
    "    if now >= seen and now - seen < slack and\n"                                   \
    "       not ((b.fo == 1 or b.fo == 2) and b.fu > seen and b.fu <= now) then\n"      \
    "      return\n"                                                                    \
    "    end\n"                                                                         \
    "  end\n"                                                                           \
    "  local names = {'st', 'cf', 'cs', 'oa', 'ou', 'gen', 'ot', 'ls', 'ver', 'fo', 'fu'}\n" \
    "  local args, n = {}, 0\n"                                                         \
    "  for i = 1, 11 do\n"                                                              \
    "    local x = b[names[i]]\n"                                                       \
    "    if not s or x ~= s[i] then\n"                                                  \
    "      args[n + 1] = names[i]; args[n + 2] = str(x); n = n + 2\n"                   \
    "    end\n"                                                                         \
    "  end\n"                                                                           \
    "  if n > 0 then redis.call('HSET', bkey, unpack(args)) end\n"                      \
    "  if s and idle > 0 then\n"                                                        \
    "    local old = {st=s[1], cf=s[2], ou=s[5], fo=s[10], fu=s[11], tok=s[12], plu=s[13]}\n" \
    "    local k0, d0 = expiry(old, s[8], s[8], idle)\n"                                \
    "    local k1, d1 = expiry(b, b.ls, now, idle)\n"                                   \
    "    if k0 == k1 and d0 == d1 then return end\n"                                    \
    "  end\n"                                                                           \
    "  expire(bkey, b, now, idle, caller)\n"                                            \
    "end\n"

/* The bucketed window of core/window.c in a hash: field b<slot> holds the
 * absolute bucket number of the slot, v<slot>_<f> its counters (f = 1..3),
 * named by the constants BF and VF. win_load reads the hash once (m: the
 * fields, sb: each slot's bucket number); win_total sums the slots of the
 * last NB buckets; win_add adds to the current bucket's slot in one HSET
 * and keeps m and sb up to date.
 *
 * Expiry: a slot counts only while its bucket is one of the last NB, and
 * NB buckets span at most w (width = floor(w / NB)), so the key may expire
 * one window after the first write into its newest bucket instead of after
 * every write: win_add sets the TTL (w) only when it writes a bucket other
 * than the newest one stored, and always when w < NB (the width is then
 * rounded up to 1 ms and the TTL itself bounds the sums). A write into an
 * older bucket (the clock stepped back) keeps the key until the newest
 * bucket has left the window too (if that is within 2 w). */
#define LUA_WINDOW                                                                       \
    "local NB = 10\n"                                                                   \
    "local BF = {'b0', 'b1', 'b2', 'b3', 'b4', 'b5', 'b6', 'b7', 'b8', 'b9'}\n"          \
    "local VF = {'v0_1', 'v0_2', 'v0_3', 'v1_1', 'v1_2', 'v1_3', 'v2_1', 'v2_2', 'v2_3',\n" \
    "  'v3_1', 'v3_2', 'v3_3', 'v4_1', 'v4_2', 'v4_3', 'v5_1', 'v5_2', 'v5_3', 'v6_1',\n" \
    "  'v6_2', 'v6_3', 'v7_1', 'v7_2', 'v7_3', 'v8_1', 'v8_2', 'v8_3', 'v9_1', 'v9_2',\n" \
    "  'v9_3'}\n"                                                                       \
    "local function win_width(w)\n"                                                     \
    "  local width = math.floor(w / NB)\n"                                              \
    "  if width < 1 then width = 1 end\n"                                               \
    "  return width\n"                                                                  \
    "end\n"                                                                             \
    "local function win_bucket(w, now)\n"                                               \
    "  if now < 0 then now = 0 end\n"                                                   \
    "  return math.floor(now / win_width(w))\n"                                         \
    "end\n"                                                                             \
    "local function win_load(key)\n"                                                    \
    "  local all = redis.call('HGETALL', key)\n"                                        \
    "  local m, sb = {}, {}\n"                                                          \
    "  for i = 1, #all, 2 do m[all[i]] = all[i + 1] end\n"                              \
    "  for s = 1, NB do local x = m[BF[s]]; sb[s] = x and x + 0 end\n"                  \
    "  return m, sb\n"                                                                  \
    "end\n"                                                                             \
    "local function win_total(m, sb, w, now)\n"                                         \
    "  local b = win_bucket(w, now)\n"                                                  \
    "  local c1, c2, c3 = 0, 0, 0\n"                                                    \
    "  for s = 1, NB do\n"                                                              \
    "    local x = sb[s]\n"                                                             \
    "    if x and x <= b and x > b - NB then\n"                                         \
    "      local k = 3 * s\n"                                                           \
    "      c1 = c1 + (m[VF[k - 2]] or 0)\n"                                             \
    "      c2 = c2 + (m[VF[k - 1]] or 0)\n"                                             \
    "      c3 = c3 + (m[VF[k]] or 0)\n"                                                 \
    "    end\n"                                                                         \
    "  end\n"                                                                           \
    "  return {c1, c2, c3}\n"                                                           \
    "end\n"                                                                             \
    "local function win_add(key, m, sb, w, now, add, caller)\n"                         \
    "  local b = win_bucket(w, now)\n"                                                  \
    "  local s = b % NB + 1\n"                                                          \
    "  local newest\n"                                                                  \
    "  for i = 1, NB do\n"                                                              \
    "    local x = sb[i]\n"                                                             \
    "    if x and (not newest or x > newest) then newest = x end\n"                     \
    "  end\n"                                                                           \
    "  local args, n = {}, 0\n"                                                         \
    "  local reset = sb[s] ~= b\n"                                                      \
    "  if reset then\n"                                                                 \
    "    sb[s] = b; m[BF[s]] = b; args[1] = BF[s]; args[2] = str(b); n = 2\n"           \
    "  end\n"                                                                           \
    "  for f = 1, 3 do\n"                                                               \
    "    local vf = VF[3 * s - 3 + f]\n"                                                \
    "    if reset or add[f] ~= 0 then\n"                                                \
    "      local x = add[f]\n"                                                          \
    "      if not reset then x = x + (m[vf] or 0) end\n"                                \
    "      m[vf] = x; args[n + 1] = vf; args[n + 2] = str(x); n = n + 2\n"              \
    "    end\n"                                                                         \
    "  end\n"                                                                           \
    "  if n > 0 then redis.call('HSET', key, unpack(args)) end\n"                       \
    "  if w < NB or b ~= newest then\n"                                                 \
    "    local ttl = w\n"                                                               \
    "    if newest and b < newest then\n"                                               \
    "      local keep = (newest + NB) * win_width(w) - now\n"                           \
    "      if keep > ttl and keep <= 2 * w then ttl = keep end\n"                       \
    "    end\n"                                                                         \
    "    redis.call('PEXPIRE', key, str(real_ttl(ttl, caller)))\n"                      \
    "  end\n"                                                                           \
    "end\n"

/* KEYS: breaker, probe. ARGV: now, tool, failure_threshold,
 * success_threshold, open_timeout, lease, fresh_token, idle_ttl, create,
 * channel. Reply: see reply() above; {1} = unknown tool and create = 0. */
static const char admit_src[] =
    LUA_PRELUDE LUA_BREAKER_READ LUA_BREAKER_RULES LUA_BREAKER_WRITE
    "local now, caller = clock(ARGV[1])\n"
    "local idle = ARGV[8] + 0\n"
    "local b = load(KEYS[1], true)\n"
    "if not b then\n"
    "  if ARGV[9] ~= '1' then return {1} end\n"
    "  b = fresh(now)\n"
    "else\n"
    "  load_probe(KEYS[2], b)\n"
    "end\n"
    "b.ls = now\n"
    "local adm, tr = 3, 0\n"
    "if hold_live(b, now) then\n"
    "  if b.fo == 1 then adm = 1 end\n"
    "elseif b.st ~= 2 then\n"
    "  adm = 1\n"
    "elseif now >= b.ou and not probe_live(b, now) and ARGV[7] ~= '0' then\n"
    "  local lease = ARGV[6] + 0\n"
    "  if lease <= 0 then lease = 1 end\n"
    "  b.tok = ARGV[7]; b.plu = sat_add(now, lease)\n"
    /* Inside the script this SET is the lease's SET NX: nothing else runs
     * between the liveness check above and it. */
    "  redis.call('SET', KEYS[2], b.tok .. ' ' .. str(b.gen) .. ' ' .. str(b.plu),\n"
    "             'PX', str(real_ttl(lease, caller)))\n"
    "  adm, tr = 2, 3\n"
    "end\n"
    "save(KEYS[1], b, now, idle, caller)\n"
    "return reply(0, adm, tr, b, now)\n";

/* KEYS: breaker, probe, calls (window hash), quorum (sorted set of
 * executor ids by last transient failure). ARGV: now, tool,
 * failure_threshold, success_threshold, open_timeout, outcome, token,
 * idle_ttl, create, channel, mode (0 consecutive, 1 failure rate),
 * failure_rate_threshold, minimum_calls, window_ms, slow_call_ms,
 * slow_call_rate_threshold, quorum_min_executors, quorum_window_ms,
 * executor, latency_ms (-1 = not measured), then a batched run
 * (redis_batch.c; calls 0 = one outcome, as ARGV[6]): calls, transient
 * failures, slow calls, trailing failures, reset (1 = the run ends the
 * streak first), the epoch it was counted in. Mirrors
 * rd_breaker_record_evidence and the memory store's counting. Reply as
 * admit, then calls, failures, slow, failing executors, held by quorum. */
static const char record_src[] =
    LUA_PRELUDE LUA_BREAKER_READ LUA_BREAKER_RULES LUA_BREAKER_WRITE LUA_PUBLISH LUA_WINDOW
    "local function inc32(v) if v >= 4294967295 then return v end return v + 1 end\n"
    "local function at_least_one(v) if v == 0 then return 1 end return v end\n"
    "local now, caller = clock(ARGV[1])\n"
    "local fthr = at_least_one(ARGV[3] + 0)\n"
    "local sthr = at_least_one(ARGV[4] + 0)\n"
    "local timeout = ARGV[5] + 0\n"
    "local outcome = ARGV[6] + 0\n"
    "local tok = ARGV[7]\n"
    "local mode, rthr, mincalls = ARGV[11] + 0, ARGV[12] + 0, ARGV[13] + 0\n"
    "local wms, slowms, slowthr = ARGV[14] + 0, ARGV[15] + 0, ARGV[16] + 0\n"
    "local qk, qwin = ARGV[17] + 0, ARGV[18] + 0\n"
    "local latency = ARGV[20] + 0\n"
    "local run = tonumber(ARGV[21]) or 0\n"
    "local b = load(KEYS[1], true)\n"
    "if not b then\n"
    "  if ARGV[9] ~= '1' then return {1} end\n"
    "  b = fresh(now)\n"
    "else\n"
    "  load_probe(KEYS[2], b)\n"
    "end\n"
    /* a run counted on a CLOSED breaker is void once its period is over */
    "if run > 0 and (b.gen ~= tonumber(ARGV[26]) or b.st == 2 or hold_live(b, now)) then\n"
    "  return {1}\n"
    "end\n"
    "b.ls = now\n"
    "local function clear_probe() b.tok = '0'; b.plu = 0; redis.call('DEL', KEYS[2]) end\n"
    "local function open_now()\n"
    "  b.st = 2; b.oa = now; b.ou = sat_add(now, timeout); b.gen = b.gen + 1\n"
    "  b.ot = b.ot + 1; b.cs = 0; clear_probe()\n"
    "end\n"
    /* the windows: counted only while CLOSED and not held */
    "local counts = not hold_live(b, now) and b.st ~= 2\n"
    "local transient = 0\n"
    "if outcome == 2 then transient = 1 end\n"
    "local ev, execs, held = {0, 0, 0}, 0, 0\n"
    "if wms > 0 then\n"
    "  local slow = 0\n"
    "  if slowms > 0 and latency >= slowms then slow = 1 end\n"
    "  local m, sb = win_load(KEYS[3])\n"
    "  local add = {1, transient, slow}\n"
    "  if run > 0 then add = {run, tonumber(ARGV[22]), tonumber(ARGV[23])} end\n"
    "  if counts then win_add(KEYS[3], m, sb, wms, now, add, caller) end\n"
    "  ev = win_total(m, sb, wms, now)\n"
    "end\n"
    "if qk > 1 then\n"
    "  if counts and transient == 1 then\n"
    "    redis.call('ZADD', KEYS[4], str(now), ARGV[19])\n"
    "    redis.call('PEXPIRE', KEYS[4], str(real_ttl(qwin, caller)))\n"
    "  end\n"
    "  redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', str(now - qwin))\n"
    "  execs = redis.call('ZCARD', KEYS[4])\n"
    "end\n"
    "local function rate_tripped()\n"
    "  if ev[1] == 0 or ev[1] < mincalls then return false end\n"
    "  if rthr > 0 and ev[2] * 100 >= rthr * ev[1] then return true end\n"
    "  return slowms > 0 and slowthr > 0 and ev[3] * 100 >= slowthr * ev[1]\n"
    "end\n"
    "local tr = 0\n"
    "if hold_live(b, now) then\n"
    "  tr = 0\n" /* the operator decides during a hold */
    "elseif b.st ~= 2 then\n"
    "  local trip\n"
    "  if run > 0 then\n" /* consecutive mode only: the streak after the run */
    "    local trailing = tonumber(ARGV[24])\n"
    "    if ARGV[25] == '1' then b.cf = 0 end\n"
    "    b.cf = math.min(b.cf + trailing, 4294967295)\n"
    "    trip = trailing > 0 and b.cf >= fthr\n"
    "  else\n"
    "    if outcome == 2 then b.cf = inc32(b.cf) else b.cf = 0 end\n"
    "    if mode == 1 then trip = rate_tripped() else trip = outcome == 2 and b.cf >= fthr end\n"
    "  end\n"
    "  if trip then\n"
    "    if qk > 1 and execs < qk then held = 1 else open_now(); tr = 1 end\n"
    "  end\n"
    "elseif now >= b.ou and tok ~= '0' and tok == b.tok and probe_live(b, now) then\n"
    /* compare-and-delete: only the live probe's token releases the lease */
    "  if outcome == 1 then\n"
    "    clear_probe(); b.cs = inc32(b.cs)\n"
    "    if b.cs >= sthr then b.st = 1; b.cf = 0; b.cs = 0; tr = 4 end\n"
    "  elseif outcome == 2 then\n"
    "    b.cf = inc32(b.cf); open_now(); tr = 2\n"
    "  else\n"
    "    b.cf = 0; clear_probe()\n"
    "  end\n"
    "end\n"
    /* a new period judges only its own calls */
    "if tr ~= 0 then b.ver = b.ver + 1; redis.call('DEL', KEYS[3], KEYS[4]) end\n"
    "save(KEYS[1], b, now, ARGV[8] + 0, caller)\n"
    "if tr ~= 0 then publish(ARGV[10], b, ARGV[2]) end\n"
    "local out = reply(0, 0, tr, b, now)\n"
    "out[18], out[19], out[20], out[21], out[22] = ev[1], ev[2], ev[3], execs, held\n"
    "return out\n";

/* KEYS: breaker, probe. ARGV: now, tool, -, -, -, mode (1 hold OPEN,
 * 2 hold CLOSED, 3 reset, 4 release), ttl, idle_ttl, create, channel.
 * Mirrors rd_breaker_force. Reply as admit. */
static const char force_src[] =
    LUA_PRELUDE LUA_BREAKER_READ LUA_BREAKER_RULES LUA_BREAKER_WRITE LUA_PUBLISH
    "local now, caller = clock(ARGV[1])\n"
    "local mode = tonumber(ARGV[6])\n"
    "local ttl = tonumber(ARGV[7])\n"
    "local b = load(KEYS[1], true)\n"
    "if not b then\n"
    "  if ARGV[9] ~= '1' then return {1} end\n"
    "  b = fresh(now)\n"
    "end\n"
    "local function hold(status)\n"
    "  b.fo = status\n"
    "  if ttl > 0 then b.fu = sat_add(now, ttl) else b.fu = 0 end\n"
    "end\n"
    "if mode == 1 then hold(2)\n"
    "elseif mode == 2 then hold(1)\n"
    "elseif mode == 3 then\n"
    "  local opens, gen, ver = b.ot, b.gen, b.ver\n"
    "  b = fresh(now); b.gen = gen + 1; b.ot = opens; b.ver = ver\n"
    "else b.fo = 0; b.fu = 0 end\n"
    /* every command drops the probe in flight (reset: its epoch is over) */
    "if mode ~= 4 then redis.call('DEL', KEYS[2]) else load_probe(KEYS[2], b) end\n"
    "b.ls = now\n"
    "b.ver = b.ver + 1\n"
    "save(KEYS[1], b, now, tonumber(ARGV[8]), caller, true)\n"
    "publish(ARGV[10], b, ARGV[2])\n"
    "return reply(0, 0, 0, b, now)\n";

/* KEYS: breaker, probe. ARGV: now. Reply as admit, {2} = not found. */
static const char read_src[] =
    LUA_PRELUDE LUA_BREAKER_READ
    "local now = clock(ARGV[1])\n"
    "local b = load(KEYS[1])\n"
    "if not b then return {2} end\n"
    "load_probe(KEYS[2], b)\n"
    "return reply(0, 0, 0, b, now)\n";

/* KEYS: breaker, probe. ARGV: now, tool, idle_ttl, mode ('idle' = the
 * evict rule, 'closed' = make room under max_tools: any CLOSED breaker
 * without probe or hold), channel.
 * Reply: 1 dropped, 0 kept, -1 no such breaker. */
static const char forget_tool_src[] =
    LUA_PRELUDE LUA_BREAKER_READ LUA_BREAKER_RULES LUA_PUBLISH
    "local now = clock(ARGV[1])\n"
    "local idle = tonumber(ARGV[3])\n"
    "local b = load(KEYS[1])\n"
    "if not b then return -1 end\n"
    "load_probe(KEYS[2], b)\n"
    "local drop\n"
    "if ARGV[4] == 'closed' then\n"
    "  drop = b.st == 1 and not probe_live(b, now) and not hold_live(b, now)\n"
    "else\n"
    "  drop = aged_out(b.ls, idle, now) and (pristine(b, now) or\n"
    "    (b.st == 2 and aged_out(b.ou, idle, now) and not probe_live(b, now)\n"
    "     and not hold_live(b, now)))\n"
    "end\n"
    "if not drop then return 0 end\n"
    "redis.call('DEL', KEYS[1], KEYS[2])\n"
    "b.ver = b.ver + 1\n"
    "publish(ARGV[5], b, ARGV[2])\n"
    "return 1\n";

/* KEYS: outcome. ARGV: now, ttl. Reply {duplicate 0/1, now}. The value is
 * the claim time, so a duplicate does not extend the memory. */
static const char claim_src[] =
    LUA_PRELUDE
    "local now, caller = clock(ARGV[1])\n"
    "local ttl = tonumber(ARGV[2])\n"
    "local v = redis.call('GET', KEYS[1])\n"
    "if v and not aged_out(tonumber(v), ttl, now) then return {1, now} end\n"
    "if ttl > 0 then\n"
    "  redis.call('SET', KEYS[1], str(now), 'PX', str(real_ttl(ttl, caller)))\n"
    "else\n"
    "  redis.call('SET', KEYS[1], str(now))\n"
    "end\n"
    "return {0, now}\n";

/* KEYS: meta, events. ARGV: now, ttl, max_events, n, event 1..n.
 * Reply {started_at, now, sequence 1..n} (0 = over max_events, dropped). */
static const char turn_append_src[] =
    LUA_PRELUDE
    "local now, caller = clock(ARGV[1])\n"
    "local ttl = tonumber(ARGV[2])\n"
    "local max_events = tonumber(ARGV[3])\n"
    "local n = tonumber(ARGV[4])\n"
    "local m = redis.call('HMGET', KEYS[1], 's', 't', 'n')\n"
    "local started, count\n"
    "if not m[1] or aged_out(tonumber(m[2]), ttl, now) then\n"
    "  redis.call('DEL', KEYS[1], KEYS[2])\n"
    "  started = now; count = 0\n"
    "  redis.call('HSET', KEYS[1], 's', str(now), 'd', 0)\n"
    "else\n"
    "  started = tonumber(m[1]); count = tonumber(m[3])\n"
    "end\n"
    "local out = {started, now}\n"
    "local dropped = 0\n"
    "for i = 1, n do\n"
    "  if max_events <= 0 or count < max_events then\n"
    "    count = count + 1\n"
    "    redis.call('RPUSH', KEYS[2], ARGV[4 + i])\n"
    "    out[#out + 1] = count\n"
    "  else\n"
    "    out[#out + 1] = 0; dropped = dropped + 1\n"
    "  end\n"
    "end\n"
    "redis.call('HSET', KEYS[1], 't', str(now), 'n', str(count))\n"
    "if dropped > 0 then redis.call('HINCRBY', KEYS[1], 'd', dropped) end\n"
    "for _, k in ipairs(KEYS) do\n"
    "  if ttl > 0 then redis.call('PEXPIRE', k, str(real_ttl(ttl, caller)))\n"
    "  else redis.call('PERSIST', k) end\n"
    "end\n"
    "return out\n";

/* KEYS: meta, events. ARGV: now, ttl. Reply {0} unknown or expired, else
 * {1, started_at, now, {event...}}. */
static const char turn_read_src[] =
    LUA_PRELUDE
    "local now = clock(ARGV[1])\n"
    "local m = redis.call('HMGET', KEYS[1], 's', 't')\n"
    "if not m[1] or aged_out(tonumber(m[2]), tonumber(ARGV[2]), now) then return {0} end\n"
    "return {1, tonumber(m[1]), now, redis.call('LRANGE', KEYS[2], 0, -1)}\n";

/* KEYS: meta, events. ARGV: now, ttl. Reply 1 dropped, 0 kept. */
static const char turn_expire_src[] =
    LUA_PRELUDE
    "local now = clock(ARGV[1])\n"
    "local t = redis.call('HGET', KEYS[1], 't')\n"
    "if not t or not aged_out(tonumber(t), tonumber(ARGV[2]), now) then return 0 end\n"
    "redis.call('DEL', KEYS[1], KEYS[2])\n"
    "return 1\n";

/* KEYS: outcome. ARGV: now, ttl. Reply 1 dropped, 0 kept. */
static const char outcome_expire_src[] =
    LUA_PRELUDE
    "local now = clock(ARGV[1])\n"
    "local v = redis.call('GET', KEYS[1])\n"
    "if not v or not aged_out(tonumber(v), tonumber(ARGV[2]), now) then return 0 end\n"
    "redis.call('DEL', KEYS[1])\n"
    "return 1\n";

/* KEYS: the tools index. ARGV: now, tool, cap. Reply 1 = the tool is (now)
 * indexed, 0 = the index is full. */
static const char index_reserve_src[] =
    LUA_PRELUDE
    "local now = clock(ARGV[1])\n"
    "if redis.call('ZSCORE', KEYS[1], ARGV[2]) then return 1 end\n"
    "if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end\n"
    "redis.call('ZADD', KEYS[1], str(now), ARGV[2])\n"
    "return 1\n";

/* KEYS: an index (turns by last touch, outcomes by claim time). ARGV: now,
 * member, cap, only_if_new ('1': a member already there keeps its score).
 * Adds or refreshes member, then removes the oldest others past cap.
 * Reply: the removed members (the caller deletes their keys). */
static const char index_trim_src[] =
    LUA_PRELUDE
    "local now = clock(ARGV[1])\n"
    "if ARGV[4] == '1' then redis.call('ZADD', KEYS[1], 'NX', str(now), ARGV[2])\n"
    "else redis.call('ZADD', KEYS[1], str(now), ARGV[2]) end\n"
    "local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[3])\n"
    "local removed = {}\n"
    "if over <= 0 then return removed end\n"
    "for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, over)) do\n"
    "  if #removed < over and m ~= ARGV[2] then\n"
    "    redis.call('ZREM', KEYS[1], m); removed[#removed + 1] = m\n"
    "  end\n"
    "end\n"
    "return removed\n";

/* KEYS: a window hash. ARGV: now, window_ms. Reply {f1, f2, f3}. */
static const char window_read_src[] =
    LUA_PRELUDE LUA_WINDOW
    "local now = clock(ARGV[1])\n"
    "local m, sb = win_load(KEYS[1])\n"
    "return win_total(m, sb, tonumber(ARGV[2]), now)\n";

/* KEYS: the tool's budget window. ARGV: now, op (1 count a request, 2 take
 * a retry, 3 peek), window_ms, budget_percent, min_retries. Mirrors
 * rd_budget_allows. Reply {granted, requests, retries} after the op. */
static const char budget_src[] =
    LUA_PRELUDE LUA_WINDOW
    "local now, caller = clock(ARGV[1])\n"
    "local op, w = tonumber(ARGV[2]), tonumber(ARGV[3])\n"
    "local pct, minr = tonumber(ARGV[4]), tonumber(ARGV[5])\n"
    "local m, sb = win_load(KEYS[1])\n"
    "local sum = win_total(m, sb, w, now)\n"
    "local req, ret, granted = sum[1], sum[2], 0\n"
    "if op == 1 then\n"
    "  win_add(KEYS[1], m, sb, w, now, {1, 0, 0}, caller); req = req + 1\n"
    "else\n"
    "  local allowance = 0\n"
    "  if pct > 0 then allowance = math.floor(pct / 100 * req) end\n"
    "  if allowance < minr then allowance = minr end\n"
    "  if ret < allowance then granted = 1 end\n"
    "  if op == 2 and granted == 1 then\n"
    "    win_add(KEYS[1], m, sb, w, now, {0, 1, 0}, caller); ret = ret + 1\n"
    "  end\n"
    "end\n"
    "return {granted, req, ret}\n";

/* KEYS: a learning link. ARGV: now, new signature id ('' = none), ttl.
 * Swaps the pending signature: reply the previous one ('' = none or
 * expired), so each pending retry is settled by one caller only. */
static const char learn_swap_src[] =
    LUA_PRELUDE
    "local now, caller = clock(ARGV[1])\n"
    "local ttl = tonumber(ARGV[3])\n"
    "local v = redis.call('GET', KEYS[1])\n"
    "local prev = ''\n"
    "if v then\n"
    "  local sig, at = string.match(v, '^(%S+) (%-?%d+)$')\n"
    "  if sig and not aged_out(tonumber(at), ttl, now) then prev = sig end\n"
    "end\n"
    "if ARGV[2] == '' then\n"
    "  redis.call('DEL', KEYS[1])\n"
    "elseif ttl > 0 then\n"
    "  redis.call('SET', KEYS[1], ARGV[2] .. ' ' .. str(now), 'PX', str(real_ttl(ttl, caller)))\n"
    "else\n"
    "  redis.call('SET', KEYS[1], ARGV[2] .. ' ' .. str(now))\n"
    "end\n"
    "return prev\n";

/* KEYS: a signature record (hash s successes, f failures, t last settled).
 * ARGV: now, settle (1 credit, 2 debit, 0 read only), ttl. Expired
 * evidence starts over. Reply {successes, failures}. */
static const char learn_settle_src[] =
    LUA_PRELUDE
    "local now, caller = clock(ARGV[1])\n"
    "local settle, ttl = tonumber(ARGV[2]), tonumber(ARGV[3])\n"
    "local v = redis.call('HMGET', KEYS[1], 's', 'f', 't')\n"
    "local s, f = tonumber(v[1]) or 0, tonumber(v[2]) or 0\n"
    "if v[3] and aged_out(tonumber(v[3]), ttl, now) then s = 0; f = 0 end\n"
    "if settle == 0 then return {s, f} end\n"
    "if settle == 1 then s = s + 1 else f = f + 1 end\n"
    "redis.call('HSET', KEYS[1], 's', str(s), 'f', str(f), 't', str(now))\n"
    "if ttl > 0 then redis.call('PEXPIRE', KEYS[1], str(real_ttl(ttl, caller)))\n"
    "else redis.call('PERSIST', KEYS[1]) end\n"
    "return {s, f}\n";

static rd_script scripts[RD_SCRIPT_COUNT] = {
    [RD_SCRIPT_ADMIT] = {"admit", admit_src, ""},
    [RD_SCRIPT_RECORD] = {"record", record_src, ""},
    [RD_SCRIPT_FORCE] = {"force", force_src, ""},
    [RD_SCRIPT_READ] = {"read", read_src, ""},
    [RD_SCRIPT_FORGET_TOOL] = {"forget_tool", forget_tool_src, ""},
    [RD_SCRIPT_CLAIM] = {"claim", claim_src, ""},
    [RD_SCRIPT_TURN_APPEND] = {"turn_append", turn_append_src, ""},
    [RD_SCRIPT_TURN_READ] = {"turn_read", turn_read_src, ""},
    [RD_SCRIPT_TURN_EXPIRE] = {"turn_expire", turn_expire_src, ""},
    [RD_SCRIPT_OUTCOME_EXPIRE] = {"outcome_expire", outcome_expire_src, ""},
    [RD_SCRIPT_INDEX_RESERVE] = {"index_reserve", index_reserve_src, ""},
    [RD_SCRIPT_INDEX_TRIM] = {"index_trim", index_trim_src, ""},
    [RD_SCRIPT_WINDOW_READ] = {"window_read", window_read_src, ""},
    [RD_SCRIPT_BUDGET] = {"budget", budget_src, ""},
    [RD_SCRIPT_LEARN_SWAP] = {"learn_swap", learn_swap_src, ""},
    [RD_SCRIPT_LEARN_SETTLE] = {"learn_settle", learn_settle_src, ""},
};

static pthread_once_t scripts_once = PTHREAD_ONCE_INIT;

static void hash_scripts(void)
{
    for (size_t i = 0; i < RD_SCRIPT_COUNT; i++)
        rd_sha1_hex(scripts[i].source, strlen(scripts[i].source), scripts[i].sha);
}

const rd_script *rd_redis_scripts(void)
{
    pthread_once(&scripts_once, hash_scripts);
    return scripts;
}

/* ---- SHA-1 (FIPS 180-4), enough to name a script as Redis does ---- */

static uint32_t rotl32(uint32_t x, int n)
{
    return (x << n) | (x >> (32 - n));
}

static void sha1_block(uint32_t h[5], const unsigned char *p)
{
    uint32_t w[80];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 80; i++)
        w[i] = rotl32(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (int i = 0; i < 80; i++) {
        uint32_t f, k;
        if (i < 20) {
            f = (b & c) | (~b & d);
            k = 0x5A827999;
        } else if (i < 40) {
            f = b ^ c ^ d;
            k = 0x6ED9EBA1;
        } else if (i < 60) {
            f = (b & c) | (b & d) | (c & d);
            k = 0x8F1BBCDC;
        } else {
            f = b ^ c ^ d;
            k = 0xCA62C1D6;
        }
        uint32_t t = rotl32(a, 5) + f + e + k + w[i];
        e = d;
        d = c;
        c = rotl32(b, 30);
        b = a;
        a = t;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
}

void rd_sha1_hex(const void *data, size_t len, char out[41])
{
    uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
    const unsigned char *p = data;
    size_t full = len / 64 * 64;
    for (size_t off = 0; off < full; off += 64)
        sha1_block(h, p + off);
    /* the tail, the 0x80 marker and the bit length fill one or two blocks */
    unsigned char tail[128] = {0};
    size_t rest = len - full;
    memcpy(tail, p + full, rest);
    tail[rest] = 0x80;
    size_t tail_len = rest + 1 + 8 <= 64 ? 64 : 128;
    uint64_t bits = (uint64_t)len * 8;
    for (int i = 0; i < 8; i++)
        tail[tail_len - 1 - i] = (unsigned char)(bits >> (8 * i));
    for (size_t off = 0; off < tail_len; off += 64)
        sha1_block(h, tail + off);
    for (int i = 0; i < 5; i++)
        snprintf(out + 8 * i, 9, "%08x", h[i]);
}
