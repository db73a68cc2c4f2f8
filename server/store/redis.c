/* The Redis store: rd_store_ops on Redis (see redis.h and docs/REDIS.md).
 *
 * Keys (P = key_prefix; every key of one tool or turn shares a hash tag so
 * a script only ever touches one Cluster slot):
 *   P{tool:<id>}:breaker   hash  the breaker record
 *   P{tool:<id>}:probe     string "<token> <generation> <lease_until>", PX lease
 *   P{outcome:<id>}        string claim time, PX outcome_ttl
 *   P{turn:<id>}:meta      hash  s = started_at, t = last touch, n = events, d = dropped
 *   P{turn:<id>}:events    list  one serialised rd_trace_event per element
 *   P{tools} P{turns} P{outcomes}  sorted sets, only when the matching cap is set
 *
 * Ownership: every string the store keeps is copied; replies are freed
 * here; turn_read's array is malloc'd for the caller. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/redis_batch.h"
#include "store/redis_subscriber.h"

#define RD_KEY_MAX 640
#define RD_PREFIX_MAX 128
#define RD_TIME_MAX 9007199254740991LL /* 2^53 - 1: exact in Lua numbers */
#define RD_EVENTS_PER_SCRIPT 48        /* a turn_append chunk; keeps argv bounded */
#define RD_SCAN_COUNT "500"
#define RD_PIPELINE_BATCH 256

static void rs_report(rd_store *s, rd_store_report *out);

static const rd_store_ops redis_ops;

static redis_store *as_redis(rd_store *s)
{
    return (redis_store *)s;
}

/* ---- small helpers ---- */

static int64_t clamp_time(int64_t v)
{
    return v < 0 ? 0 : v > RD_TIME_MAX ? RD_TIME_MAX : v;
}

/* ARGV[1] of every script: the caller's time (tests) or -1 for Redis TIME. */
static void time_arg(const redis_store *r, int64_t now_ms, char buf[24])
{
    if (r->use_caller_time)
        snprintf(buf, 24, "%lld", (long long)clamp_time(now_ms));
    else
        snprintf(buf, 24, "-1");
}

static void fmt_i64(char buf[24], int64_t v)
{
    snprintf(buf, 24, "%lld", (long long)v);
}

static void key_tool(const redis_store *r, const char *tool, const char *part, char *out)
{
    snprintf(out, RD_KEY_MAX, "%s{tool:%s}:%s", r->prefix, tool, part);
}

static void key_turn(const redis_store *r, const char *turn, const char *part, char *out)
{
    snprintf(out, RD_KEY_MAX, "%s{turn:%s}:%s", r->prefix, turn, part);
}

static void key_outcome(const redis_store *r, const char *id, char *out)
{
    snprintf(out, RD_KEY_MAX, "%s{outcome:%s}", r->prefix, id);
}

static void key_index(const redis_store *r, const char *name, char *out)
{
    snprintf(out, RD_KEY_MAX, "%s{%s}", r->prefix, name);
}

static int64_t int_at(const redisReply *a, size_t i)
{
    const redisReply *e = a->element[i];
    if (e->type == REDIS_REPLY_INTEGER)
        return e->integer;
    if (e->type == REDIS_REPLY_STRING)
        return strtoll(e->str, NULL, 10);
    return 0;
}

static uint64_t fresh_token(rd_rng *rng)
{
    uint64_t t;
    do
        t = rd_rng_next(rng);
    while (t == 0);
    return t;
}

/* ---- breakers ---- */

#define RD_BREAKER_REPLY_LEN 17
#define RD_RECORD_REPLY_LEN 22

/* Reply layout of the breaker scripts: code, admission, transition, st, cf,
 * cs, oa, ou, gen, ot, token, lease_until, ls, now, version, forced,
 * forced_until; the record script adds calls, failures, slow, failing
 * executors, held by quorum. */
static bool parse_breaker(const redisReply *a, rd_store_result *out, int64_t *version)
{
    if (a->type != REDIS_REPLY_ARRAY ||
        (a->elements != RD_BREAKER_REPLY_LEN && a->elements != RD_RECORD_REPLY_LEN))
        return false;
    const redisReply *tok = a->element[10];
    rd_breaker b = {
        .stored = (rd_breaker_status)int_at(a, 3),
        .consecutive_failures = (uint32_t)int_at(a, 4),
        .consecutive_successes = (uint32_t)int_at(a, 5),
        .opened_at_ms = int_at(a, 6),
        .open_until_ms = int_at(a, 7),
        .generation = (uint64_t)int_at(a, 8),
        .opens_total = (uint64_t)int_at(a, 9),
        .probe_token = tok->type == REDIS_REPLY_STRING ? strtoull(tok->str, NULL, 10) : 0,
        .probe_lease_until_ms = int_at(a, 11),
        .last_seen_ms = int_at(a, 12),
        .forced = (rd_breaker_status)int_at(a, 15),
        .forced_until_ms = int_at(a, 16),
    };
    rd_admission adm = (rd_admission)int_at(a, 1);
    *out = (rd_store_result){
        .breaker = b,
        .transition = (rd_breaker_transition)int_at(a, 2),
        .admission = adm,
        .permit_token = adm == RD_ADMIT_PROBE ? b.probe_token : 0,
        .now_ms = int_at(a, 13),
    };
    *version = int_at(a, 14);
    if (a->elements == RD_RECORD_REPLY_LEN)
        out->evidence = (rd_breaker_evidence){
            .calls = (uint64_t)int_at(a, 17),
            .failures = (uint64_t)int_at(a, 18),
            .slow = (uint64_t)int_at(a, 19),
            .failing_executors = (uint32_t)int_at(a, 20),
            .held_by_quorum = int_at(a, 21) != 0,
        };
    return true;
}

/* The reply's code: 0 = done, 1 = unknown tool not created, 2 = not found. */
static int64_t reply_code(const redisReply *a)
{
    return a->type == REDIS_REPLY_ARRAY && a->elements > 0 ? int_at(a, 0) : -1;
}

typedef struct breaker_call {
    rd_script_id script;
    const char *tool;
    const rd_breaker_policy *policy;
    int64_t now_ms;
    int64_t lease_ms;        /* admit */
    rd_outcome outcome;      /* record */
    uint64_t token;          /* admit: fresh token; record: the caller's permit */
    rd_force_mode mode;      /* force */
    int64_t hold_ttl_ms;     /* force */
    const rd_call_report *call; /* record: executor and latency */
    const outcome_run *run;  /* record: a batch instead of one outcome, or NULL */
    int64_t run_gen;         /* record: the batch's epoch */
} breaker_call;

static const rd_breaker_policy no_policy = {0};

/* ARGV[6] and ARGV[7] of the breaker scripts: what each one needs. */
static void script_details(const breaker_call *c, char sixth[24], char seventh[24])
{
    switch (c->script) {
    case RD_SCRIPT_ADMIT:
        fmt_i64(sixth, clamp_time(c->lease_ms));
        snprintf(seventh, 24, "%" PRIu64, c->token);
        break;
    case RD_SCRIPT_RECORD:
        fmt_i64(sixth, c->outcome);
        snprintf(seventh, 24, "%" PRIu64, c->token);
        break;
    default: /* force */
        fmt_i64(sixth, c->mode);
        fmt_i64(seventh, clamp_time(c->hold_ttl_ms));
        break;
    }
}

/* The record script's fleet and batch arguments (ARGV[11..26]): see its
 * comment. */
#define RD_RECORD_EXTRA_ARGS 16

static void record_args(const breaker_call *c, char buf[RD_RECORD_EXTRA_ARGS][24],
                        const char **argv)
{
    const rd_breaker_policy *p = c->policy;
    int64_t latency = c->call ? c->call->latency_ms : -1;
    const outcome_run none = {0}, *run = c->run ? c->run : &none;
    int64_t nums[RD_RECORD_EXTRA_ARGS] = {
        p->mode, p->failure_rate_threshold, p->minimum_calls, clamp_time(p->window_ms),
        clamp_time(p->slow_call_ms), p->slow_call_rate_threshold, p->quorum_min_executors,
        clamp_time(p->quorum_window_ms), 0, latency < 0 ? -1 : clamp_time(latency),
        run->calls, run->failures, run->slow, run->trailing, run->reset, c->run_gen};
    for (int i = 0; i < RD_RECORD_EXTRA_ARGS; i++) {
        fmt_i64(buf[i], nums[i]);
        argv[i] = buf[i];
    }
    argv[8] = c->call && c->call->executor_id ? c->call->executor_id : "";
}

/* Runs the admit or record script once. *need_slot: the tool is unknown
 * and `create` was false. The record script also takes the tool's call
 * window and quorum keys and the fleet arguments. */
static int breaker_once(redis_store *r, conn_slot *slot, const breaker_call *c, bool create,
                        rd_store_result *out, bool *need_slot, rd_status *st)
{
    char bkey[RD_KEY_MAX], pkey[RD_KEY_MAX], ckey[RD_KEY_MAX], qkey[RD_KEY_MAX], now[24],
        fthr[24], sthr[24], timeout[24], sixth[24], seventh[24], idle[24],
        extra[RD_RECORD_EXTRA_ARGS][24];
    bool record = c->script == RD_SCRIPT_RECORD;
    key_tool(r, c->tool, "breaker", bkey);
    key_tool(r, c->tool, "probe", pkey);
    key_tool(r, c->tool, "calls", ckey);
    key_tool(r, c->tool, "quorum", qkey);
    time_arg(r, c->now_ms, now);
    fmt_i64(fthr, c->policy->failure_threshold);
    fmt_i64(sthr, c->policy->success_threshold);
    fmt_i64(timeout, clamp_time(c->policy->open_timeout_ms));
    script_details(c, sixth, seventh);
    fmt_i64(idle, r->base.limits.tool_idle_ttl_ms);
    const char *argv[4 + 10 + RD_RECORD_EXTRA_ARGS];
    int n = 0, nkeys = record ? 4 : 2;
    argv[n++] = bkey;
    argv[n++] = pkey;
    if (record) {
        argv[n++] = ckey;
        argv[n++] = qkey;
    }
    const char *common[] = {now, c->tool, fthr, sthr, timeout, sixth, seventh, idle,
                            create ? "1" : "0", r->channel};
    for (size_t i = 0; i < sizeof common / sizeof common[0]; i++)
        argv[n++] = common[i];
    if (record) {
        record_args(c, extra, argv + n);
        n += RD_RECORD_EXTRA_ARGS;
    }
    int64_t mono_sent = rd_clock_mono_ms();
    uint64_t seq_sent = rd_redis_cache_seq(r);
    redisReply *reply = rd_redis_eval(r, slot, c->script, nkeys, n, argv, NULL, st);
    if (!reply)
        return st ? st->code : RD_ERR_UNAVAILABLE;
    int64_t code = reply_code(reply), version = 0;
    *need_slot = code == 1;
    bool ok = code == 1 || (code == 0 && parse_breaker(reply, out, &version));
    freeReplyObject(reply);
    if (!ok)
        return rd_status_set(st, RD_ERR_INTERNAL, "store: redis breaker script: bad reply");
    if (code == 0)
        rd_redis_cache_note(r, c->tool, &out->breaker, version, out->now_ms, mono_sent,
                            seq_sent);
    return RD_OK;
}

static int index_reserve(redis_store *r, conn_slot *slot, const char *tool, int64_t now_ms,
                         bool *reserved, rd_status *st)
{
    char idx[RD_KEY_MAX], now[24], cap[24];
    key_index(r, "tools", idx);
    time_arg(r, now_ms, now);
    fmt_i64(cap, (int64_t)r->base.limits.max_tools);
    const char *argv[] = {idx, now, tool, cap};
    redisReply *reply = rd_redis_eval(r, slot, RD_SCRIPT_INDEX_RESERVE, 1, 4, argv, NULL, st);
    if (!reply)
        return st ? st->code : RD_ERR_UNAVAILABLE;
    *reserved = reply->type == REDIS_REPLY_INTEGER && reply->integer == 1;
    freeReplyObject(reply);
    return RD_OK;
}

static int forget_tool(redis_store *r, conn_slot *slot, const char *tool, int64_t now_ms,
                       const char *mode, int64_t *result, rd_status *st);
static int index_remove(redis_store *r, conn_slot *slot, const char *index, char **members,
                        size_t n, rd_status *st);

static int read_breaker(redis_store *r, conn_slot *slot, const char *tool, int64_t now_ms,
                        rd_breaker *out, bool *found, rd_status *st);

/* How many of the index's oldest members are looked at to make room. */
#define RD_REDIS_DISPLACE_CANDIDATES 64

/* max_tools reached: like the memory store, forgets the least recently used
 * CLOSED breaker without probe or hold among the index's oldest members (a
 * member whose breaker already expired goes first: it holds nothing). The
 * forget script checks again atomically, so a breaker that opened
 * meanwhile is kept. *made receives whether a slot was freed. */
static int tools_make_room(redis_store *r, conn_slot *slot, int64_t now_ms, bool *made,
                           rd_status *st)
{
    *made = false;
    char idx[RD_KEY_MAX], last[24];
    key_index(r, "tools", idx);
    fmt_i64(last, RD_REDIS_DISPLACE_CANDIDATES - 1);
    const char *argv[] = {"ZRANGE", idx, "0", last};
    if (rd_redis_slot_ready(r, slot, st) != RD_OK)
        return RD_ERR_UNAVAILABLE;
    redisReply *some = redisCommandArgv(slot->ctx, 4, argv, NULL);
    if (!some || some->type != REDIS_REPLY_ARRAY) {
        int rc = rd_redis_fail(r, slot, some, "ZRANGE", st);
        if (some)
            freeReplyObject(some);
        return rc;
    }
    char *victim = NULL;
    int64_t victim_seen = INT64_MAX;
    int rc = RD_OK;
    for (size_t i = 0; rc == RD_OK && i < some->elements; i++) {
        rd_breaker b;
        bool found;
        char *tool = some->element[i]->str;
        rc = read_breaker(r, slot, tool, now_ms, &b, &found, st);
        if (rc != RD_OK)
            break;
        if (!found) { /* expired on its own: only the index entry is left */
            victim = tool;
            break;
        }
        bool displaceable = rd_breaker_status_at(&b, now_ms) == RD_BREAKER_CLOSED &&
                            !rd_breaker_probe_live(&b, now_ms) &&
                            !rd_breaker_hold_live(&b, now_ms);
        if (displaceable && b.last_seen_ms < victim_seen) {
            victim = tool;
            victim_seen = b.last_seen_ms;
        }
    }
    int64_t res = 0;
    if (rc == RD_OK && victim)
        rc = forget_tool(r, slot, victim, now_ms, "closed", &res, st);
    if (rc == RD_OK && victim && res != 0)
        rc = index_remove(r, slot, "tools", &victim, 1, st);
    if (rc == RD_OK && victim && res != 0) {
        *made = true;
        rd_store_count_displaced(res == 1);
    }
    freeReplyObject(some);
    return rc;
}

static int reserve_tool(redis_store *r, conn_slot *slot, const char *tool, int64_t now_ms,
                        rd_status *st)
{
    bool reserved, made = false;
    int rc = index_reserve(r, slot, tool, now_ms, &reserved, st);
    if (rc == RD_OK && !reserved)
        rc = tools_make_room(r, slot, now_ms, &made, st);
    if (rc == RD_OK && !reserved && made)
        rc = index_reserve(r, slot, tool, now_ms, &reserved, st);
    if (rc == RD_OK && !reserved)
        return rd_status_set(st, RD_ERR_EXHAUSTED, "tool_id: tracked tool limit (%zu) reached",
                             r->base.limits.max_tools);
    return rc;
}

/* Without max_tools a new tool is created by the script itself. With it,
 * the script first reports the tool unknown, a slot in the tools index is
 * reserved, and the script runs again allowed to create. */
static int run_breaker(redis_store *r, const breaker_call *c, rd_store_result *out,
                       rd_status *st)
{
    conn_slot *slot = rd_redis_slot_take(r);
    breaker_call call = *c;
    if (call.script == RD_SCRIPT_ADMIT)
        call.token = fresh_token(&slot->rng);
    bool capped = r->base.limits.max_tools > 0, need_slot = false;
    int rc = rd_redis_batch_flush_tool(r, slot, call.tool, st);
    if (rc == RD_OK)
        rc = breaker_once(r, slot, &call, !capped, out, &need_slot, st);
    if (rc == RD_OK && need_slot) {
        rc = reserve_tool(r, slot, call.tool, call.now_ms, st);
        if (rc == RD_OK)
            rc = breaker_once(r, slot, &call, true, out, &need_slot, st);
    }
    rd_redis_slot_give(slot);
    return rc;
}

static int rs_admit(rd_store *s, const char *tool_id, const rd_breaker_policy *p,
                    int64_t now_ms, int64_t lease_ms, rd_store_result *out, rd_status *st)
{
    redis_store *r = as_redis(s);
    int rc = rd_store_check_id("tool_id", tool_id, st);
    if (rc != RD_OK)
        return rc;
    if (rd_redis_cache_admit(r, tool_id, now_ms, out)) {
        rd_store_mark_local_answer(st);
        return RD_OK;
    }
    breaker_call c = {.script = RD_SCRIPT_ADMIT, .tool = tool_id, .policy = p,
                      .now_ms = now_ms, .lease_ms = lease_ms};
    return run_breaker(r, &c, out, st);
}

static int rs_force(rd_store *s, const char *tool_id, rd_force_mode mode, int64_t now_ms,
                    int64_t ttl_ms, rd_store_result *out, rd_status *st)
{
    if (mode < RD_FORCE_OPEN || mode > RD_FORCE_RELEASE)
        return rd_status_set(st, RD_ERR_INVALID, "mode: unknown value %d", (int)mode);
    if (ttl_ms < 0)
        return rd_status_set(st, RD_ERR_INVALID, "ttl_ms: must not be negative");
    int rc = rd_store_check_id("tool_id", tool_id, st);
    if (rc != RD_OK)
        return rc;
    breaker_call c = {.script = RD_SCRIPT_FORCE, .tool = tool_id, .policy = &no_policy,
                      .now_ms = now_ms, .mode = mode, .hold_ttl_ms = ttl_ms};
    return run_breaker(as_redis(s), &c, out, st);
}

static int rs_record_call(rd_store *s, const char *tool_id, const rd_breaker_policy *p,
                          int64_t now_ms, const rd_call_report *call, rd_store_result *out,
                          rd_status *st)
{
    rd_outcome outcome = call->outcome;
    if (outcome != RD_OUTCOME_SUCCESS && outcome != RD_OUTCOME_TRANSIENT_FAILURE &&
        outcome != RD_OUTCOME_PERMANENT_FAILURE)
        return rd_status_set(st, RD_ERR_INVALID, "outcome: unknown value %d", (int)outcome);
    int rc = rd_store_check_id("tool_id", tool_id, st);
    if (rc != RD_OK)
        return rc;
    redis_store *r = as_redis(s);
    if (rd_redis_batch_outcome(r, tool_id, p, call, now_ms, out)) {
        rd_store_mark_local_answer(st);
        return RD_OK;
    }
    breaker_call c = {.script = RD_SCRIPT_RECORD, .tool = tool_id, .policy = p,
                      .now_ms = now_ms, .outcome = outcome, .token = call->permit_token,
                      .call = call};
    return run_breaker(r, &c, out, st);
}

/* The batch's rd_redis_send_run_fn: a run of outcomes as one record. */
static int send_run(redis_store *r, conn_slot *slot, const char *tool_id,
                    const rd_breaker_policy *p, const outcome_run *run, uint64_t generation,
                    rd_status *st)
{
    rd_call_report call = {.outcome = RD_OUTCOME_SUCCESS, .executor_id = "", .latency_ms = -1};
    breaker_call c = {.script = RD_SCRIPT_RECORD, .tool = tool_id, .policy = p,
                      .now_ms = 0, .outcome = RD_OUTCOME_SUCCESS, .call = &call, .run = run,
                      .run_gen = generation > INT64_MAX ? INT64_MAX : (int64_t)generation};
    rd_store_result out;
    bool unknown;
    return breaker_once(r, slot, &c, false, &out, &unknown, st);
}

static int rs_record(rd_store *s, const char *tool_id, const rd_breaker_policy *p,
                     int64_t now_ms, rd_outcome outcome, uint64_t permit_token,
                     rd_store_result *out, rd_status *st)
{
    rd_call_report call = {.outcome = outcome, .permit_token = permit_token,
                           .executor_id = "", .latency_ms = -1};
    return rs_record_call(s, tool_id, p, now_ms, &call, out, st);
}

/* Reads one breaker on `slot`; *found false when Redis has none. */
static int read_breaker(redis_store *r, conn_slot *slot, const char *tool, int64_t now_ms,
                        rd_breaker *out, bool *found, rd_status *st)
{
    char bkey[RD_KEY_MAX], pkey[RD_KEY_MAX], now[24];
    key_tool(r, tool, "breaker", bkey);
    key_tool(r, tool, "probe", pkey);
    time_arg(r, now_ms, now);
    const char *argv[] = {bkey, pkey, now};
    int64_t mono_sent = rd_clock_mono_ms();
    uint64_t seq_sent = rd_redis_cache_seq(r);
    redisReply *reply = rd_redis_eval(r, slot, RD_SCRIPT_READ, 2, 3, argv, NULL, st);
    if (!reply)
        return st ? st->code : RD_ERR_UNAVAILABLE;
    int64_t code = reply_code(reply), version;
    rd_store_result res;
    bool ok = code == 2 || (code == 0 && parse_breaker(reply, &res, &version));
    freeReplyObject(reply);
    if (!ok)
        return rd_status_set(st, RD_ERR_INTERNAL, "store: redis read script: bad reply");
    *found = code == 0;
    if (*found) {
        *out = res.breaker;
        rd_redis_cache_note(r, tool, out, version, res.now_ms, mono_sent, seq_sent);
    } else {
        rd_breaker_init(out, now_ms);
        rd_redis_cache_note_absent(r, tool, now_ms, mono_sent, seq_sent);
    }
    return RD_OK;
}

static int rs_get(rd_store *s, const char *tool_id, int64_t now_ms, rd_breaker *out,
                  bool *found, rd_status *st)
{
    int rc = rd_store_check_id("tool_id", tool_id, st);
    if (rc != RD_OK)
        return rc;
    redis_store *r = as_redis(s);
    /* The cache answers reads only while this replica has no outcome of the
     * tool waiting in (or on its way from) the batch table. */
    if (r->read_cache_ms > 0 && rd_redis_batch_idle(r, tool_id) &&
        rd_redis_cache_read(r, tool_id, now_ms, out, found)) {
        rd_store_mark_local_answer(st);
        return RD_OK;
    }
    conn_slot *slot = rd_redis_slot_take(r);
    rc = rd_redis_batch_flush_tool(r, slot, tool_id, st);
    if (rc == RD_OK)
        rc = read_breaker(r, slot, tool_id, now_ms, out, found, st);
    rd_redis_slot_give(slot);
    return rc;
}

static int forget_tool(redis_store *r, conn_slot *slot, const char *tool, int64_t now_ms,
                       const char *mode, int64_t *result, rd_status *st)
{
    char bkey[RD_KEY_MAX], pkey[RD_KEY_MAX], now[24], idle[24];
    key_tool(r, tool, "breaker", bkey);
    key_tool(r, tool, "probe", pkey);
    time_arg(r, now_ms, now);
    fmt_i64(idle, r->base.limits.tool_idle_ttl_ms);
    const char *argv[] = {bkey, pkey, now, tool, idle, mode, r->channel};
    redisReply *reply = rd_redis_eval(r, slot, RD_SCRIPT_FORGET_TOOL, 2, 7, argv, NULL, st);
    if (!reply)
        return st ? st->code : RD_ERR_UNAVAILABLE;
    *result = reply->type == REDIS_REPLY_INTEGER ? reply->integer : 0;
    freeReplyObject(reply);
    return RD_OK;
}

/* ZREM of members from P{index}, in chunks. */
static int index_remove(redis_store *r, conn_slot *slot, const char *index, char **members,
                        size_t n, rd_status *st)
{
    char idx[RD_KEY_MAX];
    key_index(r, index, idx);
    if (n && rd_redis_slot_ready(r, slot, st) != RD_OK)
        return RD_ERR_UNAVAILABLE;
    for (size_t done = 0; done < n;) {
        size_t chunk = n - done < RD_PIPELINE_BATCH ? n - done : RD_PIPELINE_BATCH;
        const char *argv[RD_PIPELINE_BATCH + 2] = {"ZREM", idx};
        for (size_t i = 0; i < chunk; i++)
            argv[2 + i] = members[done + i];
        redisReply *reply = redisCommandArgv(slot->ctx, (int)chunk + 2, argv, NULL);
        if (!reply || reply->type == REDIS_REPLY_ERROR) {
            int rc = rd_redis_fail(r, slot, reply, "ZREM", st);
            if (reply)
                freeReplyObject(reply);
            return rc;
        }
        freeReplyObject(reply);
        done += chunk;
    }
    return RD_OK;
}

/* ---- scanning (list, evict) ---- */

typedef struct key_list {
    char **keys;             /* owned, sorted and unique after key_list_finish */
    size_t n, cap;
} key_list;

static void key_list_free(key_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->keys[i]);
    free(l->keys);
    memset(l, 0, sizeof *l);
}

static int key_list_add(key_list *l, const char *key)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        char **grown = realloc(l->keys, cap * sizeof *grown);
        if (!grown)
            return RD_ERR_NOMEM;
        l->keys = grown;
        l->cap = cap;
    }
    l->keys[l->n] = strdup(key);
    return l->keys[l->n++] ? RD_OK : RD_ERR_NOMEM;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* SCAN may return a key twice (a rehash during the walk): sort and unique. */
static void key_list_finish(key_list *l)
{
    if (l->n == 0)
        return;
    qsort(l->keys, l->n, sizeof *l->keys, cmp_str);
    size_t out = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (out > 0 && strcmp(l->keys[out - 1], l->keys[i]) == 0)
            free(l->keys[i]);
        else
            l->keys[out++] = l->keys[i];
    }
    l->n = out;
}

/* The prefix as a SCAN MATCH pattern: glob characters escaped. */
static void glob_escape(const char *in, char *out, size_t out_size)
{
    size_t o = 0;
    for (const char *p = in; *p && o + 3 < out_size; p++) {
        if (strchr("*?[]\\", *p))
            out[o++] = '\\';
        out[o++] = *p;
    }
    out[o] = '\0';
}

/* Every key matching P<suffix_pattern>, collected with SCAN (O(keys in the
 * db) per call: see docs/REDIS.md). */
static int scan_keys(redis_store *r, conn_slot *slot, const char *suffix_pattern, key_list *out,
                     rd_status *st)
{
    char pattern[RD_KEY_MAX];
    glob_escape(r->prefix, pattern, sizeof pattern);
    strncat(pattern, suffix_pattern, sizeof pattern - strlen(pattern) - 1);
    char cursor[32] = "0";
    int rc = rd_redis_slot_ready(r, slot, st);
    do {
        if (rc != RD_OK)
            break;
        const char *argv[] = {"SCAN", cursor, "MATCH", pattern, "COUNT", RD_SCAN_COUNT};
        atomic_fetch_add(&r->commands, 1);
        redisReply *reply = redisCommandArgv(slot->ctx, 6, argv, NULL);
        if (!reply || reply->type != REDIS_REPLY_ARRAY || reply->elements != 2) {
            rc = rd_redis_fail(r, slot, reply, "SCAN", st);
            if (reply)
                freeReplyObject(reply);
            break;
        }
        snprintf(cursor, sizeof cursor, "%s", reply->element[0]->str);
        const redisReply *keys = reply->element[1];
        for (size_t i = 0; rc == RD_OK && i < keys->elements; i++)
            if (key_list_add(out, keys->element[i]->str) != RD_OK)
                rc = rd_status_set(st, RD_ERR_NOMEM, "store: out of memory scanning keys");
        freeReplyObject(reply);
    } while (strcmp(cursor, "0") != 0);
    if (rc == RD_OK)
        key_list_finish(out);
    return rc;
}

/* The id inside P{<family>:<id>}<tail>, copied to out; false if the key
 * is not of that shape. */
static bool id_from_key(const redis_store *r, const char *key, const char *family,
                        const char *tail, char out[RD_ID_MAX + 1])
{
    size_t plen = strlen(r->prefix), flen = strlen(family), tlen = strlen(tail),
           klen = strlen(key);
    if (klen < plen + 1 + flen + 1 + tlen || strncmp(key, r->prefix, plen) != 0 ||
        key[plen] != '{' || strncmp(key + plen + 1, family, flen) != 0 ||
        key[plen + 1 + flen] != ':' || strcmp(key + klen - tlen, tail) != 0)
        return false;
    size_t start = plen + flen + 2, len = klen - tlen - start;
    if (len == 0 || len > RD_ID_MAX)
        return false;
    memcpy(out, key + start, len);
    out[len] = '\0';
    return true;
}

/* One SCAN walk, then one read per breaker. The visitor runs with no
 * connection held, so it may call the store. */
static int rs_list(rd_store *s, int64_t now_ms, rd_store_visit visit, void *ctx, rd_status *st)
{
    redis_store *r = as_redis(s);
    key_list keys = {0};
    conn_slot *slot = rd_redis_slot_take(r);
    int rc = scan_keys(r, slot, "{tool:*}:breaker", &keys, st);
    rd_redis_slot_give(slot);
    for (size_t i = 0; rc == RD_OK && i < keys.n; i++) {
        char tool[RD_ID_MAX + 1];
        rd_breaker b;
        bool found;
        if (!id_from_key(r, keys.keys[i], "tool", "}:breaker", tool))
            continue;
        slot = rd_redis_slot_take(r);
        rc = read_breaker(r, slot, tool, now_ms, &b, &found, st);
        rd_redis_slot_give(slot);
        if (rc == RD_OK && found && visit(ctx, tool, &b))
            break;
    }
    key_list_free(&keys);
    return rc;
}

/* ---- capped indexes (max_turns, max_outcomes) ---- */

/* Adds member to P{index} at the script's time and returns in *removed the
 * oldest members past cap (a reply the caller frees; NULL when none). */
static int index_trim(redis_store *r, conn_slot *slot, const char *index, const char *member,
                      int64_t now_ms, size_t cap, redisReply **removed, rd_status *st)
{
    char idx[RD_KEY_MAX], now[24], cap_text[24];
    key_index(r, index, idx);
    time_arg(r, now_ms, now);
    fmt_i64(cap_text, (int64_t)cap);
    const char *argv[] = {idx, now, member, cap_text, "0"};
    redisReply *reply = rd_redis_eval(r, slot, RD_SCRIPT_INDEX_TRIM, 1, 5, argv, NULL, st);
    if (!reply)
        return st ? st->code : RD_ERR_UNAVAILABLE;
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements == 0) {
        freeReplyObject(reply);
        reply = NULL;
    }
    *removed = reply;
    return RD_OK;
}

/* DEL of keys one command each (they live in different Cluster slots). */
static int delete_keys(redis_store *r, conn_slot *slot, const char *const *keys, size_t n,
                       rd_status *st)
{
    if (n && rd_redis_slot_ready(r, slot, st) != RD_OK)
        return RD_ERR_UNAVAILABLE;
    for (size_t i = 0; i < n; i++) {
        const char *argv[] = {"DEL", keys[i]};
        atomic_fetch_add(&r->commands, 1);
        redisReply *reply = redisCommandArgv(slot->ctx, 2, argv, NULL);
        if (!reply || reply->type == REDIS_REPLY_ERROR) {
            int rc = rd_redis_fail(r, slot, reply, "DEL", st);
            if (reply)
                freeReplyObject(reply);
            return rc;
        }
        freeReplyObject(reply);
    }
    return RD_OK;
}

/* ---- outcome ids ---- */

static int forget_outcomes(redis_store *r, conn_slot *slot, const redisReply *ids, rd_status *st)
{
    for (size_t i = 0; ids && i < ids->elements; i++) {
        char key[RD_KEY_MAX];
        key_outcome(r, ids->element[i]->str, key);
        const char *keys[] = {key};
        int rc = delete_keys(r, slot, keys, 1, st);
        if (rc != RD_OK)
            return rc;
    }
    return RD_OK;
}

/* Runs an outcome script (claim or expire) over the outcome's key with
 * the time and outcome_ttl_ms; the caller frees the reply. */
static redisReply *eval_outcome(redis_store *r, conn_slot *slot, rd_script_id script,
                                const char *outcome_id, int64_t now_ms, rd_status *st)
{
    char key[RD_KEY_MAX], now[24], ttl[24];
    key_outcome(r, outcome_id, key);
    time_arg(r, now_ms, now);
    fmt_i64(ttl, r->base.limits.outcome_ttl_ms);
    const char *argv[] = {key, now, ttl};
    return rd_redis_eval(r, slot, script, 1, 3, argv, NULL, st);
}

static int claim_on(redis_store *r, conn_slot *slot, const char *outcome_id, int64_t now_ms,
                    bool *duplicate, rd_status *st)
{
    redisReply *reply = eval_outcome(r, slot, RD_SCRIPT_CLAIM, outcome_id, now_ms, st);
    if (!reply)
        return st ? st->code : RD_ERR_UNAVAILABLE;
    bool ok = reply->type == REDIS_REPLY_ARRAY && reply->elements == 2;
    *duplicate = ok && int_at(reply, 0) == 1;
    freeReplyObject(reply);
    if (!ok)
        return rd_status_set(st, RD_ERR_INTERNAL, "store: redis claim script: bad reply");
    size_t cap = r->base.limits.max_outcomes;
    if (*duplicate || cap == 0)
        return RD_OK;
    redisReply *removed;
    int rc = index_trim(r, slot, "outcomes", outcome_id, now_ms, cap, &removed, st);
    if (rc == RD_OK && removed)
        rc = forget_outcomes(r, slot, removed, st);
    if (removed)
        freeReplyObject(removed);
    return rc;
}

static int rs_claim_outcome(rd_store *s, const char *outcome_id, int64_t now_ms,
                            bool *duplicate, rd_status *st)
{
    int rc = rd_store_check_id("outcome_id", outcome_id, st);
    if (rc != RD_OK)
        return rc;
    redis_store *r = as_redis(s);
    conn_slot *slot = rd_redis_slot_take(r);
    rc = claim_on(r, slot, outcome_id, now_ms, duplicate, st);
    rd_redis_slot_give(slot);
    return rc;
}

/* ---- turns ---- */

/* One event as text: the numeric fields tab-separated, then the three
 * strings each as <length>:<bytes>, so any byte may appear in them. */
#define RD_EVENT_TEXT_MAX (256 + RD_ID_MAX + 2 * RD_TRACE_TEXT_MAX)

static size_t event_encode(const rd_trace_event *e, char *buf)
{
    size_t tool_len = strnlen(e->tool_id, sizeof e->tool_id - 1);
    size_t err_len = strnlen(e->error, sizeof e->error - 1);
    size_t det_len = strnlen(e->detail, sizeof e->detail - 1);
    int n = snprintf(buf, RD_EVENT_TEXT_MAX, "%d\t%d\t%d\t%" PRIu32 "\t%d\t%lld\t%lld\t%d\t",
                     (int)e->type, (int)e->retryability, (int)e->breaker, e->retry_count,
                     (int)e->decision, (long long)e->timestamp_ms, (long long)e->timeout_ms,
                     e->executed ? 1 : 0);
    size_t o = (size_t)n;
    const char *texts[3] = {e->tool_id, e->error, e->detail};
    size_t lens[3] = {tool_len, err_len, det_len};
    for (int i = 0; i < 3; i++) {
        o += (size_t)snprintf(buf + o, RD_EVENT_TEXT_MAX - o, "%zu:", lens[i]);
        memcpy(buf + o, texts[i], lens[i]);
        o += lens[i];
    }
    return o;
}

static bool next_number(const char **p, const char *end, long long *v)
{
    char *stop;
    *v = strtoll(*p, &stop, 10);
    if (stop == *p || stop >= end || *stop != '\t')
        return false;
    *p = stop + 1;
    return true;
}

/* A text no longer than size - 1 bytes (so under 64 KiB: *out_len is an
 * event's length field). */
static bool next_text(const char **p, const char *end, char *out, size_t size,
                      uint16_t *out_len)
{
    char *stop;
    unsigned long long len = strtoull(*p, &stop, 10);
    if (stop == *p || stop >= end || *stop != ':' || len >= size ||
        (size_t)(end - stop - 1) < len)
        return false;
    memcpy(out, stop + 1, (size_t)len);
    out[len] = '\0';
    *out_len = (uint16_t)len;
    *p = stop + 1 + len;
    return true;
}

static bool event_decode(const char *text, size_t len, rd_trace_event *e)
{
    const char *p = text, *end = text + len;
    long long f[8];
    memset(e, 0, sizeof *e);
    for (int i = 0; i < 8; i++)
        if (!next_number(&p, end, &f[i]))
            return false;
    e->type = (rd_event_type)f[0];
    e->retryability = (rd_retryability)f[1];
    e->breaker = (rd_breaker_status)f[2];
    e->retry_count = (uint32_t)f[3];
    e->decision = (rd_action)f[4];
    e->timestamp_ms = f[5];
    e->timeout_ms = f[6];
    e->executed = f[7] != 0;
    return next_text(&p, end, e->tool_id, sizeof e->tool_id, &e->tool_id_len) &&
           next_text(&p, end, e->error, sizeof e->error, &e->error_len) &&
           next_text(&p, end, e->detail, sizeof e->detail, &e->detail_len) && p == end;
}

/* Appends up to RD_EVENTS_PER_SCRIPT events in one script run. */
static int turn_append_chunk(redis_store *r, conn_slot *slot, const char *turn_id,
                             rd_trace_event *events, size_t n, int64_t now_ms,
                             int64_t *started, rd_status *st)
{
    char meta[RD_KEY_MAX], list[RD_KEY_MAX], now[24], ttl[24], max_events[24], count[24];
    key_turn(r, turn_id, "meta", meta);
    key_turn(r, turn_id, "events", list);
    time_arg(r, now_ms, now);
    fmt_i64(ttl, r->base.limits.turn_ttl_ms);
    fmt_i64(max_events, (int64_t)r->base.limits.max_events_per_turn);
    fmt_i64(count, (int64_t)n);
    char *texts = n ? malloc(n * RD_EVENT_TEXT_MAX) : NULL;
    if (n && !texts)
        return rd_status_set(st, RD_ERR_NOMEM, "turn_id: out of memory storing trace events");
    const char *argv[6 + RD_EVENTS_PER_SCRIPT] = {meta, list, now, ttl, max_events, count};
    size_t lens[6 + RD_EVENTS_PER_SCRIPT];
    for (int i = 0; i < 6; i++)
        lens[i] = strlen(argv[i]);
    for (size_t i = 0; i < n; i++) {
        argv[6 + i] = texts + i * RD_EVENT_TEXT_MAX;
        lens[6 + i] = event_encode(&events[i], texts + i * RD_EVENT_TEXT_MAX);
    }
    redisReply *reply =
        rd_redis_eval(r, slot, RD_SCRIPT_TURN_APPEND, 2, (int)(6 + n), argv, lens, st);
    free(texts);
    if (!reply)
        return st ? st->code : RD_ERR_UNAVAILABLE;
    bool ok = reply->type == REDIS_REPLY_ARRAY && reply->elements == 2 + n;
    if (ok) {
        *started = int_at(reply, 0);
        for (size_t i = 0; i < n; i++)
            events[i].sequence = (uint64_t)int_at(reply, 2 + i);
    }
    freeReplyObject(reply);
    return ok ? RD_OK : rd_status_set(st, RD_ERR_INTERNAL, "store: redis turn script: bad reply");
}

static int forget_turns(redis_store *r, conn_slot *slot, const redisReply *ids, rd_status *st)
{
    for (size_t i = 0; ids && i < ids->elements; i++) {
        char meta[RD_KEY_MAX], list[RD_KEY_MAX];
        key_turn(r, ids->element[i]->str, "meta", meta);
        key_turn(r, ids->element[i]->str, "events", list);
        const char *keys[] = {meta, list};
        int rc = delete_keys(r, slot, keys, 2, st);
        if (rc != RD_OK)
            return rc;
    }
    return RD_OK;
}

static int turn_append_on(redis_store *r, conn_slot *slot, const char *turn_id,
                          rd_trace_event *events, size_t n, int64_t now_ms,
                          int64_t *started_at_ms, rd_status *st)
{
    int64_t started = 0;
    size_t done = 0;
    int rc;
    do { /* at least once: a touch (n = 0) creates the turn */
        size_t chunk = n - done < RD_EVENTS_PER_SCRIPT ? n - done : RD_EVENTS_PER_SCRIPT;
        rc = turn_append_chunk(r, slot, turn_id, events + done, chunk, now_ms,
                               done ? &(int64_t){0} : &started, st);
        done += chunk;
    } while (rc == RD_OK && done < n);
    if (rc == RD_OK && started_at_ms)
        *started_at_ms = started;
    size_t cap = r->base.limits.max_turns;
    if (rc != RD_OK || cap == 0)
        return rc;
    redisReply *removed;
    rc = index_trim(r, slot, "turns", turn_id, now_ms, cap, &removed, st);
    if (rc == RD_OK && removed)
        rc = forget_turns(r, slot, removed, st);
    if (removed)
        freeReplyObject(removed);
    return rc;
}

static int rs_turn_append(rd_store *s, const char *turn_id, rd_trace_event *events, size_t n,
                          int64_t now_ms, int64_t *started_at_ms, rd_status *st)
{
    int rc = rd_store_check_id("turn_id", turn_id, st);
    if (rc != RD_OK)
        return rc;
    redis_store *r = as_redis(s);
    conn_slot *slot = rd_redis_slot_take(r);
    rc = turn_append_on(r, slot, turn_id, events, n, now_ms, started_at_ms, st);
    rd_redis_slot_give(slot);
    return rc;
}

static int rs_turn_touch(rd_store *s, const char *turn_id, int64_t now_ms,
                         int64_t *started_at_ms, rd_status *st)
{
    return rs_turn_append(s, turn_id, NULL, 0, now_ms, started_at_ms, st);
}

static int decode_events(const redisReply *list, rd_trace_event **events, size_t *n,
                         rd_status *st)
{
    if (list->type != REDIS_REPLY_ARRAY)
        return rd_status_set(st, RD_ERR_INTERNAL, "store: redis turn read: bad reply");
    if (list->elements == 0)
        return RD_OK;
    rd_trace_event *out = malloc(list->elements * sizeof *out);
    if (!out)
        return rd_status_set(st, RD_ERR_NOMEM, "turn_id: out of memory reading the trace");
    for (size_t i = 0; i < list->elements; i++) {
        const redisReply *e = list->element[i];
        if (e->type != REDIS_REPLY_STRING || !event_decode(e->str, e->len, &out[i])) {
            free(out);
            return rd_status_set(st, RD_ERR_INTERNAL,
                                 "turn_id: stored trace event %zu is malformed", i + 1);
        }
        out[i].sequence = i + 1; /* events are only appended: position = sequence */
    }
    *events = out;
    *n = list->elements;
    return RD_OK;
}

static int rs_turn_read(rd_store *s, const char *turn_id, int64_t now_ms,
                        rd_trace_event **events, size_t *n, int64_t *started_at_ms,
                        rd_status *st)
{
    *events = NULL;
    *n = 0;
    int rc = rd_store_check_id("turn_id", turn_id, st);
    if (rc != RD_OK)
        return rc;
    redis_store *r = as_redis(s);
    char meta[RD_KEY_MAX], list[RD_KEY_MAX], now[24], ttl[24];
    key_turn(r, turn_id, "meta", meta);
    key_turn(r, turn_id, "events", list);
    time_arg(r, now_ms, now);
    fmt_i64(ttl, r->base.limits.turn_ttl_ms);
    const char *argv[] = {meta, list, now, ttl};
    conn_slot *slot = rd_redis_slot_take(r);
    redisReply *reply = rd_redis_eval(r, slot, RD_SCRIPT_TURN_READ, 2, 4, argv, NULL, st);
    rd_redis_slot_give(slot);
    if (!reply)
        return st ? st->code : RD_ERR_UNAVAILABLE;
    if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 1) {
        freeReplyObject(reply);
        return rd_status_set(st, RD_ERR_NOT_FOUND, "turn_id: unknown turn");
    }
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 4) {
        freeReplyObject(reply);
        return rd_status_set(st, RD_ERR_INTERNAL, "store: redis turn read: bad reply");
    }
    rc = decode_events(reply->element[3], events, n, st);
    if (rc == RD_OK && started_at_ms)
        *started_at_ms = int_at(reply, 1);
    freeReplyObject(reply);
    return rc;
}

/* ---- eviction ---- */

/* Runs a one-key-family expiry script; *dropped = whether it dropped. */
static int expire_turn(redis_store *r, conn_slot *slot, const char *id, int64_t now_ms,
                       bool *dropped, rd_status *st)
{
    char meta[RD_KEY_MAX], list[RD_KEY_MAX], now[24], ttl[24];
    key_turn(r, id, "meta", meta);
    key_turn(r, id, "events", list);
    time_arg(r, now_ms, now);
    fmt_i64(ttl, r->base.limits.turn_ttl_ms);
    const char *argv[] = {meta, list, now, ttl};
    redisReply *reply = rd_redis_eval(r, slot, RD_SCRIPT_TURN_EXPIRE, 2, 4, argv, NULL, st);
    if (!reply)
        return st ? st->code : RD_ERR_UNAVAILABLE;
    *dropped = reply->type == REDIS_REPLY_INTEGER && reply->integer == 1;
    freeReplyObject(reply);
    return RD_OK;
}

static int expire_outcome(redis_store *r, conn_slot *slot, const char *id, int64_t now_ms,
                          bool *dropped, rd_status *st)
{
    redisReply *reply = eval_outcome(r, slot, RD_SCRIPT_OUTCOME_EXPIRE, id, now_ms, st);
    if (!reply)
        return st ? st->code : RD_ERR_UNAVAILABLE;
    *dropped = reply->type == REDIS_REPLY_INTEGER && reply->integer == 1;
    freeReplyObject(reply);
    return RD_OK;
}

static int expire_tool(redis_store *r, conn_slot *slot, const char *id, int64_t now_ms,
                       bool *dropped, rd_status *st)
{
    int64_t res;
    int rc = forget_tool(r, slot, id, now_ms, "idle", &res, st);
    *dropped = rc == RD_OK && res == 1;
    return rc;
}

typedef int (*expire_fn)(redis_store *r, conn_slot *slot, const char *id, int64_t now_ms,
                         bool *dropped, rd_status *st);

typedef struct key_family {
    const char *pattern;     /* after the prefix, for SCAN MATCH */
    const char *name;        /* tool, turn, outcome */
    const char *tail;        /* after the id */
    const char *index;       /* the capped index it may be in */
    size_t cap;              /* 0: no index kept */
    expire_fn expire;
} key_family;

/* Applies a family's eviction rule to each of its keys; returns how many
 * entries were dropped (and takes them out of the capped index). */
static size_t sweep_family(redis_store *r, conn_slot *slot, const key_family *f,
                           int64_t now_ms)
{
    rd_status st;
    key_list keys = {0};
    if (scan_keys(r, slot, f->pattern, &keys, &st) != RD_OK) {
        key_list_free(&keys);
        return 0;
    }
    size_t dropped = 0;
    for (size_t i = 0; i < keys.n; i++) {
        char id[RD_ID_MAX + 1];
        bool gone;
        if (!id_from_key(r, keys.keys[i], f->name, f->tail, id))
            continue;
        if (f->expire(r, slot, id, now_ms, &gone, &st) != RD_OK)
            break;
        if (!gone)
            continue;
        dropped++;
        char *member = id;
        if (f->cap)
            index_remove(r, slot, f->index, &member, 1, &st);
    }
    key_list_free(&keys);
    return dropped;
}

static size_t rs_evict(rd_store *s, int64_t now_ms)
{
    redis_store *r = as_redis(s);
    if (!r->evict_sweep)
        return 0; /* Redis TTLs do the work */
    const rd_store_limits *l = &r->base.limits;
    const key_family families[] = {
        {"{tool:*}:breaker", "tool", "}:breaker", "tools", l->max_tools, expire_tool},
        {"{turn:*}:meta", "turn", "}:meta", "turns", l->max_turns, expire_turn},
        {"{outcome:*}", "outcome", "}", "outcomes", l->max_outcomes, expire_outcome},
    };
    size_t dropped = 0;
    for (size_t i = 0; i < sizeof families / sizeof *families; i++) {
        conn_slot *slot = rd_redis_slot_take(r);
        dropped += sweep_family(r, slot, &families[i], now_ms);
        rd_redis_slot_give(slot);
    }
    return dropped;
}

/* ---- lifetime ---- */

static void rs_set_change_listener(rd_store *s, rd_store_change_fn fn, void *ctx)
{
    redis_store *r = as_redis(s);
    pthread_mutex_lock(&r->listener_lock);
    r->listener = fn;
    r->listener_ctx = ctx;
    pthread_mutex_unlock(&r->listener_lock);
}

static void rs_destroy(rd_store *s)
{
    redis_store *r = as_redis(s);
    rd_redis_batch_stop(r); /* its last flush needs the pool */
    rd_redis_subscriber_stop(r);
    pthread_mutex_destroy(&r->listener_lock);
    pthread_mutex_destroy(&r->error_lock);
    for (size_t i = 0; r->pool && i < r->pool_size; i++) {
        if (r->pool[i].ctx)
            redisFree(r->pool[i].ctx);
        pthread_mutex_destroy(&r->pool[i].lock);
    }
    free(r->pool);
    rd_redis_cache_destroy(&r->cache);
    rd_redis_target_free(&r->target);
    free(r->prefix);
    free(r->channel);
    free(r);
}

/* ---- fleet features: call windows, budgets, learning ---- */

/* Runs a script over one key and reads an array of up to n integers. */
static int eval_ints(redis_store *r, rd_script_id id, const char **argv, int nargs,
                     int64_t *out, size_t n, rd_status *st)
{
    conn_slot *slot = rd_redis_slot_take(r);
    redisReply *reply = rd_redis_eval(r, slot, id, 1, nargs, argv, NULL, st);
    rd_redis_slot_give(slot);
    if (!reply)
        return st ? st->code : RD_ERR_UNAVAILABLE;
    bool ok = reply->type == REDIS_REPLY_ARRAY && reply->elements == n;
    for (size_t i = 0; ok && i < n; i++)
        out[i] = int_at(reply, i);
    freeReplyObject(reply);
    return ok ? RD_OK : rd_status_set(st, RD_ERR_INTERNAL, "store: redis script: bad reply");
}

static int rs_stats(rd_store *s, const char *tool_id, const rd_breaker_policy *p,
                    int64_t now_ms, rd_breaker *breaker, rd_breaker_evidence *ev, bool *found,
                    rd_status *st)
{
    *ev = (rd_breaker_evidence){0};
    int rc = rs_get(s, tool_id, now_ms, breaker, found, st);
    if (rc != RD_OK || p->window_ms <= 0)
        return rc;
    redis_store *r = as_redis(s);
    char key[RD_KEY_MAX], now[24], window[24];
    key_tool(r, tool_id, "calls", key);
    time_arg(r, now_ms, now);
    fmt_i64(window, clamp_time(p->window_ms));
    const char *argv[] = {key, now, window};
    int64_t sum[3];
    rc = eval_ints(r, RD_SCRIPT_WINDOW_READ, argv, 3, sum, 3, st);
    if (rc == RD_OK)
        *ev = (rd_breaker_evidence){
            .calls = (uint64_t)sum[0], .failures = (uint64_t)sum[1], .slow = (uint64_t)sum[2]};
    return rc;
}

static int rs_budget(rd_store *s, const char *tool_id, const rd_retry_budget_policy *p,
                     int64_t now_ms, rd_budget_op op, rd_budget_result *out, rd_status *st)
{
    int rc = rd_store_check_id("tool_id", tool_id, st);
    if (rc != RD_OK)
        return rc;
    if (op < RD_BUDGET_COUNT_REQUEST || op > RD_BUDGET_PEEK)
        return rd_status_set(st, RD_ERR_INVALID, "op: unknown value %d", (int)op);
    redis_store *r = as_redis(s);
    char key[RD_KEY_MAX], now[24], ops[24], window[24], pct[40], minr[24];
    key_tool(r, tool_id, "budget", key);
    time_arg(r, now_ms, now);
    fmt_i64(ops, op);
    fmt_i64(window, clamp_time(p->window_ms));
    snprintf(pct, sizeof pct, "%.17g", p->budget_percent); /* exact, as the C arithmetic */
    fmt_i64(minr, p->min_retries_per_window);
    const char *argv[] = {key, now, ops, window, pct, minr};
    int64_t v[3];
    rc = eval_ints(r, RD_SCRIPT_BUDGET, argv, 6, v, 3, st);
    if (rc == RD_OK)
        *out = (rd_budget_result){
            .granted = v[0] != 0, .requests = (uint64_t)v[1], .retries = (uint64_t)v[2]};
    return rc;
}

static int check_signature_id(const char *id, bool required, rd_status *st)
{
    if (required && !id[0])
        return rd_status_set(st, RD_ERR_INVALID, "signature_id: empty");
    if (strlen(id) > RD_SIGNATURE_ID_LEN)
        return rd_status_set(st, RD_ERR_INVALID, "signature_id: longer than %d bytes",
                             RD_SIGNATURE_ID_LEN);
    for (const char *p = id; *p; p++)
        if (*p == ' ' || *p == '{' || *p == '}')
            return rd_status_set(st, RD_ERR_INVALID, "signature_id: bad character");
    return RD_OK;
}

/* Credits, debits (settle 1 / 2) or reads (0) one signature's record. */
static int learn_settle(redis_store *r, const char *tool_id, const char *signature_id,
                        int settle, int64_t now_ms, rd_learn_stats *out, rd_status *st)
{
    char key[RD_KEY_MAX], part[RD_KEY_MAX], now[24], how[24], ttl[24];
    snprintf(part, sizeof part, "learn:sig:%s", signature_id);
    key_tool(r, tool_id, part, key);
    time_arg(r, now_ms, now);
    fmt_i64(how, settle);
    fmt_i64(ttl, r->base.limits.signature_ttl_ms);
    const char *argv[] = {key, now, how, ttl};
    int64_t v[2];
    int rc = eval_ints(r, RD_SCRIPT_LEARN_SETTLE, argv, 4, v, 2, st);
    if (rc == RD_OK && out)
        *out = (rd_learn_stats){.successes = (uint64_t)v[0], .failures = (uint64_t)v[1]};
    return rc;
}

/* Two steps, each atomic: swap the link's pending signature (so only one
 * caller ever gets it back), then settle that signature. */
static int rs_learn_link(rd_store *s, const char *tool_id, const char *link,
                         const char *signature_id, rd_learn_settle settle, int64_t now_ms,
                         rd_status *st)
{
    int rc = rd_store_check_id("tool_id", tool_id, st);
    if (rc == RD_OK)
        rc = rd_store_check_id("link", link, st);
    if (rc == RD_OK)
        rc = check_signature_id(signature_id, false, st);
    if (rc != RD_OK)
        return rc;
    redis_store *r = as_redis(s);
    char key[RD_KEY_MAX], part[RD_KEY_MAX], now[24], ttl[24];
    snprintf(part, sizeof part, "learn:link:%s", link);
    key_tool(r, tool_id, part, key);
    time_arg(r, now_ms, now);
    fmt_i64(ttl, r->base.limits.turn_ttl_ms);
    const char *argv[] = {key, now, signature_id, ttl};
    conn_slot *slot = rd_redis_slot_take(r);
    redisReply *reply = rd_redis_eval(r, slot, RD_SCRIPT_LEARN_SWAP, 1, 4, argv, NULL, st);
    rd_redis_slot_give(slot);
    if (!reply)
        return st ? st->code : RD_ERR_UNAVAILABLE;
    char previous[RD_SIGNATURE_ID_LEN + 1] = "";
    bool ok = reply->type == REDIS_REPLY_STRING && reply->len <= RD_SIGNATURE_ID_LEN;
    if (ok)
        memcpy(previous, reply->str, reply->len + 1);
    freeReplyObject(reply);
    if (!ok)
        return rd_status_set(st, RD_ERR_INTERNAL, "store: redis learn script: bad reply");
    if (settle == RD_LEARN_KEEP || !previous[0])
        return RD_OK;
    return learn_settle(r, tool_id, previous, settle, now_ms, NULL, st);
}

static int rs_learn_stats(rd_store *s, const char *tool_id, const char *signature_id,
                          int64_t now_ms, rd_learn_stats *out, rd_status *st)
{
    int rc = rd_store_check_id("tool_id", tool_id, st);
    if (rc == RD_OK)
        rc = check_signature_id(signature_id, true, st);
    if (rc != RD_OK)
        return rc;
    return learn_settle(as_redis(s), tool_id, signature_id, 0, now_ms, out, st);
}

static const rd_store_ops redis_ops = {
    .name = "redis",
    .admit = rs_admit,
    .record = rs_record,
    .record_call = rs_record_call,
    .stats = rs_stats,
    .budget = rs_budget,
    .learn_link = rs_learn_link,
    .learn_stats = rs_learn_stats,
    .force = rs_force,
    .get = rs_get,
    .list = rs_list,
    .claim_outcome = rs_claim_outcome,
    .turn_append = rs_turn_append,
    .turn_touch = rs_turn_touch,
    .turn_read = rs_turn_read,
    .evict = rs_evict,
    .destroy = rs_destroy,
    .set_change_listener = rs_set_change_listener,
    .report = rs_report,
};

static int check_prefix(const char *prefix, rd_status *st)
{
    if (strpbrk(prefix, "{}"))
        return rd_status_set(st, RD_ERR_CONFIG,
                             "store.redis.key_prefix: must not contain '{' or '}' "
                             "(they would replace the per-tool hash tag)");
    if (strlen(prefix) > RD_PREFIX_MAX)
        return rd_status_set(st, RD_ERR_CONFIG, "store.redis.key_prefix: longer than %d bytes",
                             RD_PREFIX_MAX);
    return RD_OK;
}

static int init_pool(redis_store *r, size_t size, rd_status *st)
{
    r->pool = calloc(size, sizeof *r->pool);
    if (!r->pool)
        return rd_status_set(st, RD_ERR_NOMEM, "store.redis: out of memory");
    r->pool_size = size;
    for (size_t i = 0; i < size; i++) {
        pthread_mutex_init(&r->pool[i].lock, NULL);
        rd_rng_seed_os(&r->pool[i].rng);
    }
    return RD_OK;
}

static int init_store(redis_store *r, const rd_redis_options *opt, rd_status *st)
{
    const char *prefix = opt->key_prefix && opt->key_prefix[0] ? opt->key_prefix
                                                                : RD_REDIS_DEFAULT_PREFIX;
    int rc = check_prefix(prefix, st);
    if (rc != RD_OK)
        return rc;
    r->prefix = strdup(prefix);
    size_t channel_len = strlen(prefix) + sizeof "breaker-events";
    r->channel = malloc(channel_len);
    if (!r->prefix || !r->channel)
        return rd_status_set(st, RD_ERR_NOMEM, "store.redis: out of memory");
    snprintf(r->channel, channel_len, "%sbreaker-events", prefix);
    rc = rd_redis_target_init(&r->target, opt, st);
    if (rc != RD_OK)
        return rc;
    rc = init_pool(r, opt->pool_size ? opt->pool_size : RD_REDIS_DEFAULT_POOL_SIZE, st);
    if (rc != RD_OK)
        return rc;
    (void)rd_redis_scripts(); /* SHA-1 of every script, once per process */
    /* The subscriber thread also watches the sentinels for a failover. */
    if (r->local_cache || r->target.n_sentinels)
        rc = rd_redis_subscriber_start(r, st);
    if (rc == RD_OK)
        rc = rd_redis_batch_start(r, send_run, st);
    return rc;
}

/* hiredis writes with plain write(): a connection Redis closed would kill
 * the process with SIGPIPE. Ignored unless the program set its own handler. */
static void ignore_sigpipe(void)
{
    struct sigaction current;
    if (sigaction(SIGPIPE, NULL, &current) == 0 && current.sa_handler == SIG_DFL)
        signal(SIGPIPE, SIG_IGN);
}

rd_store *rd_store_redis_new(const rd_redis_options *opt, rd_status *st)
{
    ignore_sigpipe();
    redis_store *r = calloc(1, sizeof *r);
    if (!r) {
        rd_status_set(st, RD_ERR_NOMEM, "store.redis: out of memory");
        return NULL;
    }
    r->base.ops = &redis_ops;
    r->base.limits = opt->limits;
    r->use_caller_time = opt->use_caller_time;
    r->evict_sweep = opt->evict_sweep;
    r->local_cache = !opt->no_local_cache;
    r->closed_cache_ms = r->local_cache && !opt->use_caller_time && opt->closed_cache_ms > 0
                             ? opt->closed_cache_ms
                             : 0;
    r->read_cache_ms = r->local_cache && !opt->use_caller_time && opt->read_cache_ms > 0
                           ? opt->read_cache_ms
                           : 0;
    /* Batching needs the cache's word that the breaker is CLOSED. */
    r->batch_ms = r->closed_cache_ms > 0 && opt->outcome_batch_ms > 0
                              ? opt->outcome_batch_ms
                              : 0;
    rd_redis_cache_init(&r->cache);
    pthread_mutex_init(&r->listener_lock, NULL);
    pthread_mutex_init(&r->error_lock, NULL);
    atomic_init(&r->auth_refused, false);
    atomic_init(&r->stopping, false);
    atomic_init(&r->master_epoch, 0);
    if (init_store(r, opt, st) != RD_OK) {
        rs_destroy(&r->base);
        return NULL;
    }
    return &r->base;
}

bool rd_store_redis_stats(rd_store *s, rd_redis_stats *out)
{
    if (!s || s->ops != &redis_ops)
        return false;
    redis_store *r = as_redis(s);
    *out = (rd_redis_stats){
        .commands = atomic_load(&r->commands),
        .errors = atomic_load(&r->errors),
        .cache_hits = atomic_load(&r->cache_hits),
        .read_hits = atomic_load(&r->read_hits),
        .script_reloads = atomic_load(&r->script_reloads),
        .connects = atomic_load(&r->connects),
        .invalidations = atomic_load(&r->invalidations),
        .deferred = atomic_load(&r->deferred),
        .deferred_dropped = atomic_load(&r->deferred_dropped),
        .subscribed = atomic_load(&r->cache.usable),
        .auth_refused = atomic_load(&r->auth_refused),
    };
    pthread_mutex_lock(&r->error_lock);
    snprintf(out->last_error, sizeof out->last_error, "%s", r->last_error);
    pthread_mutex_unlock(&r->error_lock);
    return true;
}

static void rs_report(rd_store *s, rd_store_report *out)
{
    rd_redis_stats r;
    if (!rd_store_redis_stats(s, &r))
        return;
    out->shared = true;
    out->errors = r.errors;
    out->cache_answers = r.cache_hits;
    out->cache_reads = r.read_hits;
    out->outcomes_batched = r.deferred;
    out->outcomes_dropped = r.deferred_dropped;
    out->auth_refused = r.auth_refused;
    snprintf(out->last_error, sizeof out->last_error, "%s", r.last_error);
}
