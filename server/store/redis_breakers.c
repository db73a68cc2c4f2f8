/* The Redis store's breakers: the breaker scripts' calls and replies,
 * outcomes, operator commands and reads; the calls that need no script are
 * in redis_in_place.c. */
#include <endian.h>

#include "store/redis_breaker_record.h"

/* ---- breakers ---- */

/* The scripts' numbers in and out are little-endian doubles (record.lua,
 * breaker_read.lua): integers below 2^53, exact. */
static int64_t le_number(const char *p)
{
    uint64_t bits;
    memcpy(&bits, p, sizeof bits);
    bits = le64toh(bits);
    double d;
    memcpy(&d, &bits, sizeof d);
    return (int64_t)d;
}

static void put_le_number(char *p, int64_t v)
{
    double d = (double)v;
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    bits = htole64(bits);
    memcpy(p, &bits, sizeof bits);
}


/* A breaker script's reply, {lead, record} (reply() in breaker_read.lua). */
static bool parse_breaker(const redisReply *a, rd_store_result *out, int64_t *version)
{
    if (a->type != REDIS_REPLY_ARRAY || a->elements != 2)
        return false;
    const redisReply *lead = a->element[0], *rec = a->element[1];
    if (lead->type != REDIS_REPLY_STRING || lead->len <= 8 * RD_REPLY_LEAD ||
        lead->len > 8 * RD_REPLY_LEAD + 20 || rec->type != REDIS_REPLY_STRING ||
        rec->len < 8 * RD_BREAKER_FIELDS)
        return false;
    int64_t n[RD_REPLY_LEAD], f[RD_BREAKER_FIELDS];
    for (int k = 0; k < RD_REPLY_LEAD; k++)
        n[k] = le_number(lead->str + 8 * k);
    record_fields(rec->str, f);
    rd_breaker b = breaker_from(f);
    b.probe_lease_until_ms = n[9];
    b.last_seen_ms = n[10];
    b.probe_token = strtoull(lead->str + 8 * RD_REPLY_LEAD, NULL, 10);
    rd_admission adm = (rd_admission)n[1];
    *out = (rd_store_result){
        .breaker = b,
        .transition = (rd_breaker_transition)n[2],
        .admission = adm,
        .permit_token = adm == RD_ADMIT_PROBE ? b.probe_token : 0,
        .now_ms = n[3],
        .evidence = {.calls = (uint64_t)n[4],
                     .failures = (uint64_t)n[5],
                     .slow = (uint64_t)n[6],
                     .failing_executors = (uint32_t)n[7],
                     .held_by_quorum = n[8] != 0},
    };
    *version = f[F_VER];
    return true;
}

/* The reply's code: 0 = done, 1 = unknown tool not created, 2 = not found. */
static int64_t reply_code(const redisReply *a)
{
    if (a->type != REDIS_REPLY_ARRAY || a->elements == 0)
        return -1;
    const redisReply *first = a->element[0];
    if (first->type == REDIS_REPLY_STRING && first->len >= 8)
        return le_number(first->str);
    return int_at(a, 0);
}


static const rd_breaker_policy no_policy = {0};

/* ARGV[6] and ARGV[7] of the admit and force scripts. */
static void script_details(const breaker_call *c, char sixth[24], char seventh[24])
{
    if (c->script == RD_SCRIPT_ADMIT) {
        fmt_i64(sixth, clamp_time(c->lease_ms));
        snprintf(seventh, 24, "%" PRIu64, c->token);
    } else {
        fmt_i64(sixth, c->mode);
        fmt_i64(seventh, clamp_time(c->hold_ttl_ms));
    }
}

/* The record script's numbers (record.lua), as little-endian doubles in
 * one argument: Redis hands each argument to a script as a Lua string of
 * its own, which costs it more than the script's unpacking of all of
 * them. A single outcome sends the first RD_RECORD_ONE_NUMS. */
#define RD_RECORD_ONE_NUMS 20
#define RD_RECORD_RUN_NUMS 26

static size_t record_numbers(const redis_store *r, const breaker_call *c, bool create,
                             int64_t idle_ms, char out[8 * RD_RECORD_RUN_NUMS])
{
    const rd_breaker_policy *p = c->policy;
    int64_t latency = c->call ? c->call->latency_ms : -1;
    const outcome_run none = {0}, *run = c->run ? c->run : &none;
    const int64_t nums[RD_RECORD_RUN_NUMS] = {
        r->use_caller_time ? clamp_time(c->now_ms) : -1, p->failure_threshold, p->success_threshold, clamp_time(p->open_timeout_ms), c->outcome,
        idle_ms, create, p->mode, p->failure_rate_threshold, p->minimum_calls,
        clamp_time(p->window_ms), clamp_time(p->slow_call_ms), p->slow_call_rate_threshold,
        p->quorum_min_executors, clamp_time(p->quorum_window_ms),
        latency < 0 ? -1 : clamp_time(latency), c->calls_sent ? c->calls_counted : -1,
        c->calls_counted ? c->calls_stamp : -1, c->calls_counted ? c->calls_version : -1,
        c->calls_counted ? c->calls_streak : -1,
        run->calls, run->failures, run->slow, run->trailing, run->reset, c->run_gen};
    size_t n = c->run ? RD_RECORD_RUN_NUMS : RD_RECORD_ONE_NUMS;
    for (size_t i = 0; i < n; i++)
        put_le_number(out + 8 * i, nums[i]);
    return 8 * n;
}

/* Runs the admit, force or record script once. *need_slot: the tool is
 * unknown and `create` was false. */
static int breaker_once(redis_store *r, conn_slot *slot, const breaker_call *c, bool create,
                        rd_store_result *out, bool *need_slot, rd_status *st)
{
    char bkey[RD_KEY_MAX], pkey[RD_KEY_MAX], qkey[RD_KEY_MAX], ckey[RD_KEY_MAX], now[24],
        fthr[24], sthr[24], timeout[24], sixth[24], seventh[24], idle[24], token[24],
        nums[8 * RD_RECORD_RUN_NUMS];
    int64_t idle_ms = r->base.limits.tool_idle_ttl_ms;
    key_tool(r, c->tool, "breaker", bkey);
    key_tool(r, c->tool, "probe", pkey);
    key_tool(r, c->tool, "calls", ckey);
    const char *argv[14];
    size_t lens[14];
    int n = 0, nkeys = 3;
    argv[n++] = bkey;
    argv[n++] = pkey;
    if (c->script == RD_SCRIPT_RECORD) {
        key_tool(r, c->tool, "quorum", qkey);
        snprintf(token, sizeof token, "%" PRIu64, c->token);
        argv[n++] = qkey;
        argv[n++] = ckey;
        nkeys = 4;
        lens[n] = record_numbers(r, c, create, idle_ms, nums);
        argv[n++] = nums;
        argv[n++] = token;
        argv[n++] = c->tool;
        argv[n++] = r->channel;
        /* the executor counts only towards a quorum */
        if (c->policy->quorum_min_executors > 1)
            argv[n++] = c->call && c->call->executor_id ? c->call->executor_id : "";
    } else {
        argv[n++] = ckey;
        time_arg(r, c->now_ms, now);
        fmt_i64(fthr, c->policy->failure_threshold);
        fmt_i64(sthr, c->policy->success_threshold);
        fmt_i64(timeout, clamp_time(c->policy->open_timeout_ms));
        script_details(c, sixth, seventh);
        fmt_i64(idle, idle_ms);
        const char *common[] = {now, c->tool, fthr, sthr, timeout, sixth, seventh, idle,
                                create ? "1" : "0", r->channel};
        for (size_t i = 0; i < sizeof common / sizeof common[0]; i++)
            argv[n++] = common[i];
    }
    for (int i = 0; i < n; i++)
        if (argv[i] != nums)
            lens[i] = strlen(argv[i]);
    int64_t mono_sent = rd_clock_mono_ms();
    uint64_t seq_sent = rd_redis_cache_seq(r);
    redisReply *reply = rd_redis_eval(r, slot, c->script, nkeys, n, argv, lens, st);
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
    bool done = false;
    if (rc == RD_OK && call.script == RD_SCRIPT_ADMIT)
        rc = rd_redis_admit_without_script(r, slot, &call, out, &done, st);
    else if (rc == RD_OK &&
             (rd_redis_success_in_place(r, &call) || rd_redis_failure_in_place(r, &call)))
        rc = rd_redis_record_without_script(r, slot, &call, out, &done, st);
    if (rc == RD_OK && !done)
        rc = breaker_once(r, slot, &call, !capped, out, &need_slot, st);
    if (rc == RD_OK && need_slot) {
        rc = rd_redis_reserve_tool(r, slot, call.tool, call.now_ms, st);
        if (rc == RD_OK)
            rc = breaker_once(r, slot, &call, true, out, &need_slot, st);
    }
    rd_redis_slot_give(slot);
    return rc;
}

int rd_redis_op_admit(rd_store *s, const char *tool_id, const rd_breaker_policy *p,
                      int64_t now_ms, int64_t lease_ms, rd_store_result *out, rd_status *st)
{
    redis_store *r = rd_redis_as_store(s);
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

int rd_redis_op_force(rd_store *s, const char *tool_id, rd_force_mode mode, int64_t now_ms,
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
    return run_breaker(rd_redis_as_store(s), &c, out, st);
}

int rd_redis_op_record_call(rd_store *s, const char *tool_id, const rd_breaker_policy *p,
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
    redis_store *r = rd_redis_as_store(s);
    if (rd_redis_batch_outcome(r, tool_id, p, call, now_ms, out)) {
        rd_store_mark_local_answer(st);
        return RD_OK;
    }
    breaker_call c = {.script = RD_SCRIPT_RECORD, .tool = tool_id, .policy = p,
                      .now_ms = now_ms, .outcome = outcome, .token = call->permit_token,
                      .call = call};
    return run_breaker(r, &c, out, st);
}

/* The batch's rd_redis_send_run_fn: a run of outcomes as one record, or a
 * run of one success as that success (its epoch checked as the script
 * checks a run's). */
int rd_redis_send_run(redis_store *r, conn_slot *slot, const char *tool_id,
                      const rd_breaker_policy *p, const outcome_run *run, uint64_t generation,
                      rd_status *st)
{
    rd_call_report call = {.outcome = RD_OUTCOME_SUCCESS, .executor_id = "", .latency_ms = -1};
    breaker_call c = {.script = RD_SCRIPT_RECORD, .tool = tool_id, .policy = p,
                      .now_ms = r->use_caller_time ? 0 : rd_clock_unix_ms(),
                      .outcome = RD_OUTCOME_SUCCESS, .call = &call, .run = run,
                      .run_gen = generation > INT64_MAX ? INT64_MAX : (int64_t)generation};
    rd_store_result out;
    bool done = false, unknown;
    int rc = RD_OK;
    if (rd_redis_success_in_place(r, &c))
        rc = rd_redis_record_without_script(r, slot, &c, &out, &done, st);
    if (rc != RD_OK || done)
        return rc;
    return breaker_once(r, slot, &c, false, &out, &unknown, st);
}

int rd_redis_op_record(rd_store *s, const char *tool_id, const rd_breaker_policy *p,
                       int64_t now_ms, rd_outcome outcome, uint64_t permit_token,
                       rd_store_result *out, rd_status *st)
{
    rd_call_report call = {.outcome = outcome, .permit_token = permit_token,
                           .executor_id = "", .latency_ms = -1};
    return rd_redis_op_record_call(s, tool_id, p, now_ms, &call, out, st);
}

/* Reads one breaker on `slot`; *found false when Redis has none. */
int rd_redis_read_breaker(redis_store *r, conn_slot *slot, const char *tool, int64_t now_ms,
                          rd_breaker *out, bool *found, rd_status *st)
{
    char bkey[RD_KEY_MAX], pkey[RD_KEY_MAX], ckey[RD_KEY_MAX], now[24];
    key_tool(r, tool, "breaker", bkey);
    key_tool(r, tool, "probe", pkey);
    key_tool(r, tool, "calls", ckey);
    time_arg(r, now_ms, now);
    const char *argv[] = {bkey, pkey, ckey, now};
    int64_t mono_sent = rd_clock_mono_ms();
    uint64_t seq_sent = rd_redis_cache_seq(r);
    redisReply *reply = rd_redis_eval(r, slot, RD_SCRIPT_READ, 3, 4, argv, NULL, st);
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

int rd_redis_op_get(rd_store *s, const char *tool_id, int64_t now_ms, rd_breaker *out,
                    bool *found, rd_status *st)
{
    int rc = rd_store_check_id("tool_id", tool_id, st);
    if (rc != RD_OK)
        return rc;
    redis_store *r = rd_redis_as_store(s);
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
        rc = rd_redis_read_breaker(r, slot, tool_id, now_ms, out, found, st);
    rd_redis_slot_give(slot);
    return rc;
}
