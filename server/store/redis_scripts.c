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
 * - Integers travel as decimal strings written with %.0f (exact up to
 *   2^53; times are clamped to that by the caller and here).
 * - Probe tokens are 64-bit, so they stay strings end to end. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "store/redis_internal.h"

#define LUA_PRELUDE                                                                      \
    "local MAXT = 9007199254740991\n"                                                   \
    "local SLACK = 600000\n"                                                            \
    "local function clock(arg)\n"                                                       \
    "  local n = tonumber(arg)\n"                                                       \
    "  if n and n >= 0 then return n, true end\n"                                       \
    "  local t = redis.call('TIME')\n"                                                  \
    "  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), false\n"      \
    "end\n"                                                                             \
    "local function sat_add(a, b)\n"                                                    \
    "  local s = a + b\n"                                                               \
    "  if s > MAXT then return MAXT end\n"                                              \
    "  if s < -MAXT then return -MAXT end\n"                                            \
    "  return s\n"                                                                      \
    "end\n"                                                                             \
    "local function str(x) return string.format('%.0f', x) end\n"                       \
    "local function real_ttl(ms, caller)\n"                                             \
    "  if caller then return sat_add(ms, SLACK) end\n"                                  \
    "  return ms\n"                                                                     \
    "end\n"                                                                             \
    "local function aged_out(since, ttl, now) return ttl > 0 and now - since >= ttl end\n"

#define LUA_BREAKER                                                                      \
    "local function inc32(v) if v >= 4294967295 then return v end return v + 1 end\n"  \
    "local function at_least_one(v) if v == 0 then return 1 end return v end\n"        \
    "local function load(key)\n"                                                        \
    "  local v = redis.call('HMGET', key, 'st','cf','cs','oa','ou','gen','ot','ls','ver',\n" \
    "                       'fo','fu')\n"                                               \
    "  if not v[1] then return nil end\n"                                               \
    "  return {st=tonumber(v[1]), cf=tonumber(v[2]), cs=tonumber(v[3]),\n"              \
    "          oa=tonumber(v[4]), ou=tonumber(v[5]), gen=tonumber(v[6]),\n"             \
    "          ot=tonumber(v[7]), ls=tonumber(v[8]), ver=tonumber(v[9]) or 0,\n"        \
    "          fo=tonumber(v[10]) or 0, fu=tonumber(v[11]) or 0, tok='0', plu=0}\n"     \
    "end\n"                                                                             \
    "local function fresh(now)\n"                                                       \
    "  return {st=1, cf=0, cs=0, oa=0, ou=0, gen=0, ot=0, ls=now, ver=0, fo=0, fu=0,\n" \
    "          tok='0', plu=0}\n"                                                       \
    "end\n"                                                                             \
    /* A probe key of another generation is a leftover of an older epoch. */           \
    "local function load_probe(pkey, b)\n"                                              \
    "  local v = redis.call('GET', pkey)\n"                                             \
    "  if not v then return end\n"                                                      \
    "  local tok, gen, untl = string.match(v, '^(%d+) (%d+) (%-?%d+)$')\n"              \
    "  if tok and tonumber(gen) == b.gen then b.tok = tok; b.plu = tonumber(untl) end\n" \
    "end\n"                                                                             \
    "local function probe_live(b, now) return b.tok ~= '0' and now < b.plu end\n"     \
    /* An operator's hold (fo = 1 CLOSED, 2 OPEN) lasts until fu (0 = until  \
     * released) and overrides the breaker's own state meanwhile. */           \
    "local function hold_live(b, now)\n"                                               \
    "  return (b.fo == 1 or b.fo == 2) and (b.fu == 0 or now < b.fu)\n"                \
    "end\n"                                                                             \
    "local function pristine(b, now)\n"                                                \
    "  return b.st == 1 and b.cf == 0 and b.tok == '0' and not hold_live(b, now)\n"    \
    "end\n"                                                                             \
    /* Pristine: forgotten after the idle TTL. OPEN: after its open period,   \
     * any live lease and the idle TTL. A failure streak: kept (like the       \
     * memory store; max_tools bounds how many). */                              \
    "local function expire(bkey, b, now, idle, caller)\n"                              \
    "  if idle <= 0 then redis.call('PERSIST', bkey); return end\n"                    \
    "  if hold_live(b, now) and b.fu == 0 then\n"                                      \
    "    redis.call('PERSIST', bkey)\n"                                                 \
    "  elseif pristine(b, now) then\n"                                                  \
    "    redis.call('PEXPIRE', bkey, str(real_ttl(idle, caller)))\n"                    \
    "  elseif b.st == 2 or hold_live(b, now) then\n"                                   \
    "    local base = math.max(b.ou, b.ls, b.plu, b.fu)\n"                              \
    "    redis.call('PEXPIRE', bkey, str(real_ttl(sat_add(base - now, idle), caller)))\n" \
    "  else\n"                                                                          \
    "    redis.call('PERSIST', bkey)\n"                                                 \
    "  end\n"                                                                           \
    "end\n"                                                                             \
    "local function save(bkey, b, now, idle, caller)\n"                                 \
    "  redis.call('HSET', bkey, 'st', b.st, 'cf', str(b.cf), 'cs', str(b.cs),\n"       \
    "    'oa', str(b.oa), 'ou', str(b.ou), 'gen', str(b.gen), 'ot', str(b.ot),\n"     \
    "    'ls', str(b.ls), 'ver', str(b.ver), 'fo', str(b.fo), 'fu', str(b.fu))\n"      \
    "  expire(bkey, b, now, idle, caller)\n"                                            \
    "end\n"                                                                             \
    "local function publish(channel, b, tool)\n"                                        \
    "  redis.call('PUBLISH', channel, str(b.ver) .. ' ' .. str(b.gen) .. ' ' .. tool)\n" \
    "end\n"                                                                             \
    "local function reply(code, adm, tr, b, now)\n"                                     \
    "  return {code, adm, tr, b.st, b.cf, b.cs, b.oa, b.ou, b.gen, b.ot, b.tok, b.plu,\n" \
    "          b.ls, now, b.ver, b.fo, b.fu}\n"                                         \
    "end\n"

/* The bucketed window of core/window.c in a hash: field b<slot> holds the
 * absolute bucket number of the slot, v<slot>_<f> its counters (f = 1..3).
 * The key expires one window after its last write. */
#define LUA_WINDOW                                                                       \
    "local NB = 10\n"                                                                   \
    "local function win_bucket(w, now)\n"                                               \
    "  local width = math.floor(w / NB)\n"                                              \
    "  if width < 1 then width = 1 end\n"                                               \
    "  if now < 0 then now = 0 end\n"                                                   \
    "  return math.floor(now / width)\n"                                                \
    "end\n"                                                                             \
    "local function win_add(key, w, now, add, caller)\n"                                \
    "  local b = win_bucket(w, now)\n"                                                  \
    "  local slot = b % NB\n"                                                           \
    "  if tonumber(redis.call('HGET', key, 'b' .. slot)) ~= b then\n"                   \
    "    redis.call('HSET', key, 'b' .. slot, str(b), 'v' .. slot .. '_1', 0,\n"        \
    "               'v' .. slot .. '_2', 0, 'v' .. slot .. '_3', 0)\n"                  \
    "  end\n"                                                                           \
    "  for f = 1, 3 do\n"                                                               \
    "    if add[f] ~= 0 then redis.call('HINCRBY', key, 'v' .. slot .. '_' .. f, add[f]) end\n" \
    "  end\n"                                                                           \
    "  redis.call('PEXPIRE', key, str(real_ttl(w, caller)))\n"                          \
    "end\n"                                                                             \
    "local function win_sum(key, w, now)\n"                                             \
    "  local b = win_bucket(w, now)\n"                                                  \
    "  local all = redis.call('HGETALL', key)\n"                                        \
    "  local m = {}\n"                                                                  \
    "  for i = 1, #all, 2 do m[all[i]] = all[i + 1] end\n"                              \
    "  local out = {0, 0, 0}\n"                                                         \
    "  for slot = 0, NB - 1 do\n"                                                       \
    "    local sb = tonumber(m['b' .. slot])\n"                                         \
    "    if sb and sb <= b and sb > b - NB then\n"                                      \
    "      for f = 1, 3 do out[f] = out[f] + (tonumber(m['v' .. slot .. '_' .. f]) or 0) end\n" \
    "    end\n"                                                                         \
    "  end\n"                                                                           \
    "  return out\n"                                                                    \
    "end\n"

/* KEYS: breaker, probe. ARGV: now, tool, failure_threshold,
 * success_threshold, open_timeout, lease, fresh_token, idle_ttl, create,
 * channel. Reply: see reply() above; {1} = unknown tool and create = 0. */
static const char admit_src[] =
    LUA_PRELUDE LUA_BREAKER
    "local now, caller = clock(ARGV[1])\n"
    "local idle = tonumber(ARGV[8])\n"
    "local b = load(KEYS[1])\n"
    "local created = false\n"
    "if not b then\n"
    "  if ARGV[9] ~= '1' then return {1} end\n"
    "  b = fresh(now); created = true\n"
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
    "  local lease = tonumber(ARGV[6])\n"
    "  if lease <= 0 then lease = 1 end\n"
    "  b.tok = ARGV[7]; b.plu = sat_add(now, lease)\n"
    /* Inside the script this SET is the lease's SET NX: nothing else runs
     * between the liveness check above and it. */
    "  redis.call('SET', KEYS[2], b.tok .. ' ' .. str(b.gen) .. ' ' .. str(b.plu),\n"
    "             'PX', str(real_ttl(lease, caller)))\n"
    "  adm, tr = 2, 3\n"
    "end\n"
    "if created or tr ~= 0 then\n"
    "  save(KEYS[1], b, now, idle, caller)\n"
    "else\n"
    "  redis.call('HSET', KEYS[1], 'ls', str(now))\n"
    "  expire(KEYS[1], b, now, idle, caller)\n"
    "end\n"
    "return reply(0, adm, tr, b, now)\n";

/* KEYS: breaker, probe, calls (window hash), quorum (sorted set of
 * executor ids by last transient failure). ARGV: now, tool,
 * failure_threshold, success_threshold, open_timeout, outcome, token,
 * idle_ttl, create, channel, mode (0 consecutive, 1 failure rate),
 * failure_rate_threshold, minimum_calls, window_ms, slow_call_ms,
 * slow_call_rate_threshold, quorum_min_executors, quorum_window_ms,
 * executor, latency_ms (-1 = not measured). Mirrors
 * rd_breaker_record_evidence and the memory store's counting. Reply as
 * admit, then calls, failures, slow, failing executors, held by quorum. */
static const char record_src[] =
    LUA_PRELUDE LUA_BREAKER LUA_WINDOW
    "local now, caller = clock(ARGV[1])\n"
    "local fthr = at_least_one(tonumber(ARGV[3]))\n"
    "local sthr = at_least_one(tonumber(ARGV[4]))\n"
    "local timeout = tonumber(ARGV[5])\n"
    "local outcome = tonumber(ARGV[6])\n"
    "local tok = ARGV[7]\n"
    "local mode, rthr, mincalls = tonumber(ARGV[11]), tonumber(ARGV[12]), tonumber(ARGV[13])\n"
    "local wms, slowms, slowthr = tonumber(ARGV[14]), tonumber(ARGV[15]), tonumber(ARGV[16])\n"
    "local qk, qwin = tonumber(ARGV[17]), tonumber(ARGV[18])\n"
    "local latency = tonumber(ARGV[20])\n"
    "local b = load(KEYS[1])\n"
    "if not b then\n"
    "  if ARGV[9] ~= '1' then return {1} end\n"
    "  b = fresh(now)\n"
    "else\n"
    "  load_probe(KEYS[2], b)\n"
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
    "  if counts then win_add(KEYS[3], wms, now, {1, transient, slow}, caller) end\n"
    "  ev = win_sum(KEYS[3], wms, now)\n"
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
    "  if outcome == 2 then b.cf = inc32(b.cf) else b.cf = 0 end\n"
    "  local trip\n"
    "  if mode == 1 then trip = rate_tripped() else trip = outcome == 2 and b.cf >= fthr end\n"
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
    "save(KEYS[1], b, now, tonumber(ARGV[8]), caller)\n"
    "if tr ~= 0 then publish(ARGV[10], b, ARGV[2]) end\n"
    "local out = reply(0, 0, tr, b, now)\n"
    "for _, v in ipairs({ev[1], ev[2], ev[3], execs, held}) do out[#out + 1] = v end\n"
    "return out\n";

/* KEYS: breaker, probe. ARGV: now, tool, -, -, -, mode (1 hold OPEN,
 * 2 hold CLOSED, 3 reset, 4 release), ttl, idle_ttl, create, channel.
 * Mirrors rd_breaker_force. Reply as admit. */
static const char force_src[] =
    LUA_PRELUDE LUA_BREAKER
    "local now, caller = clock(ARGV[1])\n"
    "local mode = tonumber(ARGV[6])\n"
    "local ttl = tonumber(ARGV[7])\n"
    "local b = load(KEYS[1])\n"
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
    "save(KEYS[1], b, now, tonumber(ARGV[8]), caller)\n"
    "publish(ARGV[10], b, ARGV[2])\n"
    "return reply(0, 0, 0, b, now)\n";

/* KEYS: breaker, probe. ARGV: now. Reply as admit, {2} = not found. */
static const char read_src[] =
    LUA_PRELUDE LUA_BREAKER
    "local now = clock(ARGV[1])\n"
    "local b = load(KEYS[1])\n"
    "if not b then return {2} end\n"
    "load_probe(KEYS[2], b)\n"
    "return reply(0, 0, 0, b, now)\n";

/* KEYS: breaker, probe. ARGV: now, tool, idle_ttl, mode ('idle' = the
 * evict rule, 'pristine' = make room under max_tools), channel.
 * Reply: 1 dropped, 0 kept, -1 no such breaker. */
static const char forget_tool_src[] =
    LUA_PRELUDE LUA_BREAKER
    "local now = clock(ARGV[1])\n"
    "local idle = tonumber(ARGV[3])\n"
    "local b = load(KEYS[1])\n"
    "if not b then return -1 end\n"
    "load_probe(KEYS[2], b)\n"
    "local drop\n"
    "if ARGV[4] == 'pristine' then\n"
    "  drop = pristine(b, now)\n"
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
    "return win_sum(KEYS[1], tonumber(ARGV[2]), now)\n";

/* KEYS: the tool's budget window. ARGV: now, op (1 count a request, 2 take
 * a retry, 3 peek), window_ms, budget_percent, min_retries. Mirrors
 * rd_budget_allows. Reply {granted, requests, retries} after the op. */
static const char budget_src[] =
    LUA_PRELUDE LUA_WINDOW
    "local now, caller = clock(ARGV[1])\n"
    "local op, w = tonumber(ARGV[2]), tonumber(ARGV[3])\n"
    "local pct, minr = tonumber(ARGV[4]), tonumber(ARGV[5])\n"
    "local sum = win_sum(KEYS[1], w, now)\n"
    "local req, ret, granted = sum[1], sum[2], 0\n"
    "if op == 1 then\n"
    "  win_add(KEYS[1], w, now, {1, 0, 0}, caller); req = req + 1\n"
    "else\n"
    "  local allowance = 0\n"
    "  if pct > 0 then allowance = math.floor(pct / 100 * req) end\n"
    "  if allowance < minr then allowance = minr end\n"
    "  if ret < allowance then granted = 1 end\n"
    "  if op == 2 and granted == 1 then\n"
    "    win_add(KEYS[1], w, now, {0, 1, 0}, caller); ret = ret + 1\n"
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
