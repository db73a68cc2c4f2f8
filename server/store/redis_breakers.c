/* The Redis store's breakers: the breaker scripts' calls and replies,
 * admission and successes without a script when they change nothing but a
 * count, outcomes, operator commands and reads. */
#include <endian.h>
#include <errno.h>

#include "domain/window.h"
#include "store/redis_ops.h"

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

/* The record (breaker_read.lua): big-endian 64-bit integers, the 11
 * fields in REC_HEAD's order, then RD_WINDOW_BUCKETS slots of (bucket,
 * calls, failures, slow). The numbers that lead a reply (REPLY_LEAD):
 * code, admission, transition, now, calls, failures, slow, failing
 * executors, held by quorum, the probe's lease end, last_seen; the token's
 * digits follow them. */
#define RD_BREAKER_FIELDS 11
#define RD_RECORD_NUMBERS (RD_BREAKER_FIELDS + 4 * RD_WINDOW_BUCKETS)
#define RD_RECORD_LEN (8 * RD_RECORD_NUMBERS)
#define RD_REPLY_LEAD 11
enum { F_ST, F_CF, F_CS, F_OA, F_OU, F_GEN, F_OT, F_LS, F_VER, F_FO, F_FU };

static int64_t record_number(const char *rec, int k)
{
    uint64_t bits;
    memcpy(&bits, rec + 8 * k, sizeof bits);
    return (int64_t)be64toh(bits);
}

static void record_fields(const char *rec, int64_t f[RD_BREAKER_FIELDS])
{
    for (int k = 0; k < RD_BREAKER_FIELDS; k++)
        f[k] = record_number(rec, k);
}

static rd_breaker breaker_from(const int64_t f[RD_BREAKER_FIELDS])
{
    return (rd_breaker){
        .stored = (rd_breaker_status)f[F_ST],
        .consecutive_failures = (uint32_t)f[F_CF],
        .consecutive_successes = (uint32_t)f[F_CS],
        .opened_at_ms = f[F_OA],
        .open_until_ms = f[F_OU],
        .generation = (uint64_t)f[F_GEN],
        .opens_total = (uint64_t)f[F_OT],
        .last_seen_ms = f[F_LS],
        .forced = (rd_breaker_status)f[F_FO],
        .forced_until_ms = f[F_FU],
    };
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
    bool counted;            /* record: counted in place already, in: */
    int64_t counted_slot, counted_bucket; /* this window slot, holding this bucket */
} breaker_call;

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
#define RD_RECORD_ONE_NUMS 18
#define RD_RECORD_RUN_NUMS 24

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
        latency < 0 ? -1 : clamp_time(latency), c->counted ? c->counted_slot : -1,
        c->counted ? c->counted_bucket : -1, run->calls, run->failures, run->slow,
        run->trailing, run->reset, c->run_gen};
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
    char bkey[RD_KEY_MAX], pkey[RD_KEY_MAX], qkey[RD_KEY_MAX], now[24], fthr[24], sthr[24],
        timeout[24], sixth[24], seventh[24], idle[24], token[24],
        nums[8 * RD_RECORD_RUN_NUMS];
    int64_t idle_ms = r->base.limits.tool_idle_ttl_ms;
    key_tool(r, c->tool, "breaker", bkey);
    key_tool(r, c->tool, "probe", pkey);
    const char *argv[13];
    size_t lens[13];
    int n = 0, nkeys = 2;
    argv[n++] = bkey;
    argv[n++] = pkey;
    if (c->script == RD_SCRIPT_RECORD) {
        key_tool(r, c->tool, "quorum", qkey);
        snprintf(token, sizeof token, "%" PRIu64, c->token);
        argv[n++] = qkey;
        nkeys = 3;
        lens[n] = record_numbers(r, c, create, idle_ms, nums);
        argv[n++] = nums;
        argv[n++] = token;
        argv[n++] = c->tool;
        argv[n++] = r->channel;
        /* the executor counts only towards a quorum */
        if (c->policy->quorum_min_executors > 1)
            argv[n++] = c->call && c->call->executor_id ? c->call->executor_id : "";
    } else {
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

/* ---- admission without a script ----
 *
 * An admission of a CLOSED breaker without a hold whose stored last_seen is
 * younger than the slack changes nothing and writes nothing (admit.lua:
 * admit_rule admits, save() returns before writing), so it needs no script:
 * the record's fields and Redis's TIME, pipelined in one round trip to the
 * node holding the record, and the same rule decide it here. Every other
 * case (no record or not one of this layout, OPEN, a hold, a slack run out, an
 * error reply such as MOVED) goes to the admit script, which reads again
 * and decides atomically; nothing is written here, so nothing is lost by
 * the extra round trip. TIME is the node's clock, as the script's is, so
 * replicas' clocks play no part. */

static bool field_i64(const redisReply *e, int64_t *v)
{
    if (e->type != REDIS_REPLY_STRING || e->len == 0)
        return false;
    char *end;
    errno = 0;
    long long x = strtoll(e->str, &end, 10);
    if (errno || *end != '\0')
        return false;
    *v = x;
    return true;
}

/* TIME's reply in ms, as clock() in prelude.lua computes it. */
static bool time_ms(const redisReply *t, int64_t *now)
{
    int64_t sec, usec;
    if (t->type != REDIS_REPLY_ARRAY || t->elements != 2 || !field_i64(t->element[0], &sec) ||
        !field_i64(t->element[1], &usec))
        return false;
    *now = clamp_time(sec * 1000 + usec / 1000);
    return true;
}

/* save()'s slack in breaker_write.lua. */
static int64_t last_seen_slack(int64_t idle_ms)
{
    int64_t slack = idle_ms / 16;
    return slack < 1000 ? 1000 : slack;
}

/* The answer, from the record (GET's reply) at now, when the rule is the
 * one described above; false when the script must decide. */
static bool admit_unchanged(const redisReply *rec, int64_t now, int64_t idle_ms,
                            rd_store_result *out, int64_t *version)
{
    if (rec->type != REDIS_REPLY_STRING || rec->len != RD_RECORD_LEN)
        return false;
    int64_t f[RD_BREAKER_FIELDS];
    record_fields(rec->str, f);
    if (f[F_ST] != RD_BREAKER_CLOSED || f[F_FO] != 0 || idle_ms <= 0 || now < f[F_LS] ||
        now - f[F_LS] >= last_seen_slack(idle_ms))
        return false;
    rd_breaker b = breaker_from(f);
    b.last_seen_ms = now; /* as the script's reply: the time of the call */
    *out = (rd_store_result){.breaker = b, .admission = RD_ADMIT_YES, .now_ms = now};
    *version = f[F_VER];
    return true;
}

/* TIME (not with the caller's time: replies[0] stays NULL), GET of the
 * record and, when `extra` is given, one more command on it, pipelined in
 * one round trip to the node that holds the record; the replies are the
 * caller's to free (free_round_trip). */
static int record_round_trip(redis_store *r, conn_slot *slot, const char *bkey,
                             const char *const *extra, int extra_argc, redisReply *replies[3],
                             rd_status *st)
{
    const char *time_cmd[] = {"TIME"};
    const char *get[] = {"GET", bkey};
    const char *const *argvs[] = {time_cmd, get, extra};
    const int argcs[] = {1, 2, extra_argc};
    size_t first = r->use_caller_time ? 1 : 0, n = extra ? 3 : 2;
    replies[0] = replies[1] = replies[2] = NULL;
    return rd_redis_pipeline(r, slot, bkey, n - first, argcs + first, argvs + first,
                             replies + first, st);
}

static void free_round_trip(redisReply *replies[3])
{
    for (int i = 0; i < 3; i++)
        if (replies[i])
            freeReplyObject(replies[i]);
}

/* *done: answered here; otherwise the admit script decides. */
static int admit_without_script(redis_store *r, conn_slot *slot, const breaker_call *c,
                                rd_store_result *out, bool *done, rd_status *st)
{
    *done = false;
    char bkey[RD_KEY_MAX];
    key_tool(r, c->tool, "breaker", bkey);
    redisReply *replies[3];
    int64_t mono_sent = rd_clock_mono_ms();
    uint64_t seq_sent = rd_redis_cache_seq(r);
    int rc = record_round_trip(r, slot, bkey, NULL, 0, replies, st);
    if (rc != RD_OK)
        return rc;
    int64_t now = clamp_time(c->now_ms), version = 0;
    *done = (r->use_caller_time || time_ms(replies[0], &now)) &&
            admit_unchanged(replies[1], now, r->base.limits.tool_idle_ttl_ms, out, &version);
    free_round_trip(replies);
    if (*done)
        rd_redis_cache_note(r, c->tool, &out->breaker, version, out->now_ms, mono_sent,
                            seq_sent);
    return RD_OK;
}

/* ---- a success without a script ----
 *
 * A success on a CLOSED breaker without a hold and without a streak, whose
 * stored last_seen is younger than the slack, changes nothing but its
 * window's count of calls (record.lua: closed_outcome leaves cf at 0 and
 * save() writes nothing but that slot). Such a success needs no script:
 * TIME, the record and a BITFIELD INCRBY of the current slot's calls go in
 * one round trip to the node holding the record, and the record as read
 * decides here by admit_unchanged's rule and cf = 0. The count is made
 * before the record is seen, in the slot of this replica's clock; when the
 * record says otherwise (a streak, OPEN, a hold, the slack run out, the
 * slot holding another bucket or Redis's clock in another one, no record)
 * the record script runs told which slot and bucket were counted: it takes
 * the count back and applies the rules as for any outcome. A count that
 * lands in the instant between another replica's transition and this
 * read stays in the next period's window: the consecutive mode judges by
 * the streak, not the window. The failure-rate mode, which judges by the
 * window, and a quorum always run the script. */

static bool success_in_place(const redis_store *r, const breaker_call *c)
{
    const rd_breaker_policy *p = c->policy;
    /* a batch that holds one success is that success, of its epoch */
    bool one = !c->run || (c->run->calls == 1 && c->run->failures == 0 && c->run->slow == 0 &&
                           c->run->trailing == 0);
    return c->script == RD_SCRIPT_RECORD && one && c->outcome == RD_OUTCOME_SUCCESS &&
           c->token == 0 && p->mode == RD_BREAKER_MODE_CONSECUTIVE && p->window_ms > 0 &&
           p->quorum_min_executors <= 1 && r->base.limits.tool_idle_ttl_ms > 0;
}

/* *done: answered here; otherwise c->counted says whether the record
 * script must take a count back. */
static int record_success_without_script(redis_store *r, conn_slot *slot, breaker_call *c,
                                         rd_store_result *out, bool *done, rd_status *st)
{
    *done = false;
    c->counted = false;
    char bkey[RD_KEY_MAX], field[24];
    key_tool(r, c->tool, "breaker", bkey);
    int64_t width = rd_window_width_ms(clamp_time(c->policy->window_ms));
    int64_t bucket = clamp_time(c->now_ms) / width;
    int64_t slot_at = RD_BREAKER_FIELDS + 4 * (bucket % RD_WINDOW_BUCKETS);
    snprintf(field, sizeof field, "#%" PRId64, slot_at + 1);
    const char *count[] = {"BITFIELD", bkey, "INCRBY", "i64", field, "1"};
    redisReply *replies[3];
    int64_t mono_sent = rd_clock_mono_ms();
    uint64_t seq_sent = rd_redis_cache_seq(r);
    int rc = record_round_trip(r, slot, bkey, count, 6, replies, st);
    if (rc != RD_OK)
        return rc;
    const redisReply *rec = replies[1], *added = replies[2];
    bool valid = rec->type == REDIS_REPLY_STRING && rec->len == RD_RECORD_LEN;
    /* a count made where there was a record is taken back by the script;
     * without one, the script replaces what the count left */
    if (added->type == REDIS_REPLY_ARRAY && added->elements == 1 &&
        added->element[0]->type == REDIS_REPLY_INTEGER && valid) {
        c->counted = true;
        c->counted_slot = bucket % RD_WINDOW_BUCKETS;
        c->counted_bucket = record_number(rec->str, (int)slot_at);
    }
    int64_t now = clamp_time(c->now_ms), version = 0;
    *done = c->counted && (r->use_caller_time || time_ms(replies[0], &now)) &&
            now / width == bucket && c->counted_bucket == bucket &&
            record_number(rec->str, F_CF) == 0 &&
            (!c->run || record_number(rec->str, F_GEN) == c->run_gen) &&
            admit_unchanged(rec, now, r->base.limits.tool_idle_ttl_ms, out, &version);
    free_round_trip(replies);
    if (*done) {
        out->admission = (rd_admission)0; /* as the record script replies */
        rd_redis_cache_note(r, c->tool, &out->breaker, version, out->now_ms, mono_sent,
                            seq_sent);
    }
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
        rc = admit_without_script(r, slot, &call, out, &done, st);
    else if (rc == RD_OK && success_in_place(r, &call))
        rc = record_success_without_script(r, slot, &call, out, &done, st);
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
    if (success_in_place(r, &c))
        rc = record_success_without_script(r, slot, &c, &out, &done, st);
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
