/* The breaker calls that need no script on the Redis store: an admission
 * that changes nothing, a success that only counts a call and a failure
 * that leaves the streak below the threshold, each decided in C from what
 * one round trip read and counted, every other case left to the script
 * (redis_breakers.c). */
#include "store/redis_breaker_record.h"

/* ---- admission without a script ----
 *
 * An admission of a CLOSED breaker without a hold whose stored last_seen is
 * younger than the slack changes nothing and writes nothing (admit.lua:
 * admit_rule admits, save() returns before writing), so it needs no script:
 * the record's fields, read in one round trip to the node holding the
 * record, Redis's time then and the same rule decide it here. Every other
 * case (no record or not one of this layout, OPEN, a hold, a slack run
 * out or not surely within it, an error reply such as MOVED) goes to the
 * admit script, which reads again and decides atomically; nothing is
 * written here, so nothing is lost by the extra round trip. Redis's time
 * is the node's clock, as the script's is: TIME in the same round trip,
 * or the window a recent TIME on the same connection gives
 * (store/redis_clock.h), so replicas' clocks play no part. */

/* save()'s slack in breaker_write.lua. */
static int64_t last_seen_slack(int64_t idle_ms)
{
    int64_t slack = idle_ms / 16;
    return slack < 1000 ? 1000 : slack;
}

/* The answer, from the record (GET's reply) at Redis's time in [lo, hi],
 * when the rule is the one described above; false when the script must
 * decide. A script wrote last_seen before the read, so the call's time is
 * no earlier (unless Redis's clock went back: the script's to judge). */
static bool admit_unchanged(const redisReply *rec, int64_t lo, int64_t hi, int64_t idle_ms,
                            rd_store_result *out, int64_t *version)
{
    if (rec->type != REDIS_REPLY_STRING || rec->len != RD_RECORD_LEN)
        return false;
    int64_t f[RD_BREAKER_FIELDS];
    record_fields(rec->str, f);
    if (f[F_ST] != RD_BREAKER_CLOSED || f[F_FO] != 0 || idle_ms <= 0 || hi < f[F_LS] ||
        hi - f[F_LS] >= last_seen_slack(idle_ms))
        return false;
    int64_t now = lo > f[F_LS] ? lo : f[F_LS];
    rd_breaker b = breaker_from(f);
    b.last_seen_ms = now; /* as the script's reply: the time of the call */
    *out = (rd_store_result){.breaker = b, .admission = RD_ADMIT_YES, .now_ms = now};
    *version = f[F_VER];
    return true;
}

/* One round trip about a tool's record: the commands given, pipelined to
 * the node that holds the record, and Redis's time then (the caller's
 * with use_caller_time); when it was sent, for the cache's note of the
 * answer; and the tool's window slot at the caller's time. trip_begin
 * names the key, trip_send sends, trip_end frees. */
#define ROUND_TRIP_MAX 2
typedef struct record_trip {
    char bkey[RD_KEY_MAX], ckey[RD_KEY_MAX];
    redisReply *replies[ROUND_TRIP_MAX];
    rd_redis_when when;
    int64_t mono_sent;
    uint64_t seq_sent;
    int64_t width, bucket, slot_at; /* the window's, at the caller's time */
} record_trip;

static void trip_begin(redis_store *r, const breaker_call *c, record_trip *t)
{
    key_tool(r, c->tool, "breaker", t->bkey);
    key_tool(r, c->tool, "calls", t->ckey);
    for (int i = 0; i < ROUND_TRIP_MAX; i++)
        t->replies[i] = NULL;
    t->width = rd_window_width_ms(clamp_time(c->policy->window_ms));
    t->bucket = clamp_time(c->now_ms) / t->width;
    t->slot_at = RD_BREAKER_FIELDS + 4 * (t->bucket % RD_WINDOW_BUCKETS);
    int64_t now = clamp_time(c->now_ms);
    t->when = (rd_redis_when){.known = r->use_caller_time, .lo_ms = now, .hi_ms = now};
}

/* Sends cmds[0..n), whose replies land in replies[0..n). */
static int trip_send(redis_store *r, conn_slot *slot, record_trip *t,
                     const char *const *const *cmds, const int *cmd_argc, int n,
                     rd_status *st)
{
    t->mono_sent = rd_clock_mono_ms();
    t->seq_sent = rd_redis_cache_seq(r);
    if (r->use_caller_time)
        return rd_redis_pipeline(r, slot, t->bkey, (size_t)n, cmd_argc, cmds, t->replies, st);
    int rc = rd_redis_pipeline_timed(r, slot, t->bkey, (size_t)n, cmd_argc, cmds, t->replies,
                                     &t->when, st);
    /* as the scripts' times: exact as Lua numbers, whatever the server's clock says */
    t->when.lo_ms = clamp_time(t->when.lo_ms);
    t->when.hi_ms = clamp_time(t->when.hi_ms);
    return rc;
}

/* Frees the replies; when answered here, the answer goes to the cache. */
static void trip_end(redis_store *r, const breaker_call *c, record_trip *t, bool done,
                     const rd_store_result *out, int64_t version)
{
    for (int i = 0; i < ROUND_TRIP_MAX; i++)
        if (t->replies[i])
            freeReplyObject(t->replies[i]);
    if (done)
        rd_redis_cache_note(r, c->tool, &out->breaker, version, out->now_ms, t->mono_sent,
                            t->seq_sent);
}

/* *done: answered here; otherwise the admit script decides. */
int rd_redis_admit_without_script(redis_store *r, conn_slot *slot, const breaker_call *c,
                                  rd_store_result *out, bool *done, rd_status *st)
{
    *done = false;
    record_trip t;
    trip_begin(r, c, &t);
    const char *get[] = {"GET", t.bkey};
    const char *const *cmds[] = {get};
    const int cmd_argc[] = {2};
    int rc = trip_send(r, slot, &t, cmds, cmd_argc, 1, st);
    if (rc != RD_OK)
        return rc;
    int64_t version = 0;
    *done = t.when.known && admit_unchanged(t.replies[0], t.when.lo_ms, t.when.hi_ms,
                                            r->base.limits.tool_idle_ttl_ms, out, &version);
    trip_end(r, c, &t, *done, out, version);
    return RD_OK;
}

/* ---- outcomes without a script ----
 *
 * A success, or a transient failure that leaves the streak below the
 * threshold, on a CLOSED breaker without a hold whose stored last_seen is
 * younger than the slack, changes nothing but its window slot's counts
 * and, for a failure, the streak (record.lua: closed_outcome; save() writes
 * nothing else, and the record's sliding expiry stays as it is). Such an
 * outcome needs no script: it is counted by one INCR (a success) or INCRBY
 * RD_CALLS_FAILURE (a failure) of the tool's calls key, which the scripts
 * fold into the window and the streak later (fold_calls in
 * breaker_write.lua). The key, written by the breaker scripts that change
 * the window, the streak, the state or the record's expiry while the
 * record is CLOSED without a hold (and deleted by them otherwise), with the
 * record's expiry, holds the record's version, the window bucket the
 * pending outcomes belong to and how many calls and failures are pending
 * (redis_breaker_record.h), so the reply says where the outcome was
 * counted and what the streak now is: the record's plus the failures
 * pending. The record and the count go in one round trip to the node
 * holding the record, with TIME when the connection has no recent reading
 * of Redis's clock (as an admission's).
 *
 * The outcome is answered here when the key is valid and of the record's
 * version, its tag is the current bucket (surely so by Redis's clock, and
 * by this replica's: the caller's time in tests), whose window slot the record
 * holds, and the record is CLOSED without a hold, within the slack
 * (admit_unchanged's rule); a success besides when there is no streak (none
 * in the record, no failure pending), a failure when the streak it makes
 * stays below the threshold. Otherwise (a streak a success ends, the
 * threshold reached, OPEN, a hold, the slack run out, another bucket, no
 * key or no record) the record script runs, told whether the outcome was
 * counted in the key, the key's stamp then, the record's version read
 * beside it and the streak the count made: an outcome still pending there
 * is counted as any outcome, the others are folded in where they were
 * counted; one a script has folded in since is in the window and the
 * streak already, and a failure's count then decides the trip by the
 * streak it made. Either way the script applies the rules. The record's
 * read and the count are not one instant, so a count that lands just after
 * another replica's transition stays in the new period's window, and a
 * success ends the streak when its script runs, not when it was counted:
 * the consecutive mode's streak is exact for outcomes one after another
 * and approximate by a round trip for concurrent ones. The failure-rate
 * mode, which judges by the window, a quorum and a slow call always run the
 * script. */

static bool outcome_in_place(const redis_store *r, const breaker_call *c)
{
    const rd_breaker_policy *p = c->policy;
    int64_t latency = c->call ? c->call->latency_ms : -1;
    bool slow = p->slow_call_ms > 0 && latency >= p->slow_call_ms;
    return c->script == RD_SCRIPT_RECORD && c->token == 0 && !slow &&
           p->mode == RD_BREAKER_MODE_CONSECUTIVE && p->window_ms > 0 &&
           p->quorum_min_executors <= 1 && r->base.limits.tool_idle_ttl_ms > 0;
}

bool rd_redis_success_in_place(const redis_store *r, const breaker_call *c)
{
    /* a batch that holds one success is that success, of its epoch */
    bool one = !c->run || (c->run->calls == 1 && c->run->failures == 0 && c->run->slow == 0 &&
                           c->run->trailing == 0);
    return one && c->outcome == RD_OUTCOME_SUCCESS && outcome_in_place(r, c);
}

bool rd_redis_failure_in_place(const redis_store *r, const breaker_call *c)
{
    return !c->run && c->outcome == RD_OUTCOME_TRANSIENT_FAILURE && outcome_in_place(r, c);
}

/* *done: answered here; otherwise c->calls_* tell the record script what
 * the count did. */
int rd_redis_record_without_script(redis_store *r, conn_slot *slot, breaker_call *c,
                                   rd_store_result *out, bool *done, rd_status *st)
{
    *done = false;
    c->calls_sent = c->calls_counted = false;
    bool failure = c->outcome == RD_OUTCOME_TRANSIENT_FAILURE;
    record_trip t;
    trip_begin(r, c, &t);
    char by[24];
    snprintf(by, sizeof by, "%" PRId64, RD_CALLS_FAILURE);
    const char *get[] = {"GET", t.bkey};
    const char *count[] = {failure ? "INCRBY" : "INCR", t.ckey, by};
    const char *const *cmds[] = {get, count};
    const int cmd_argc[] = {2, failure ? 3 : 2};
    int rc = trip_send(r, slot, &t, cmds, cmd_argc, 2, st);
    if (rc != RD_OK)
        return rc;
    c->calls_sent = true;
    const redisReply *rec = t.replies[0], *counted = t.replies[1];
    calls_value k = {0};
    if (counted->type == REDIS_REPLY_INTEGER)
        k = calls_decode(counted->integer);
    bool known = rec->type == REDIS_REPLY_STRING && rec->len == RD_RECORD_LEN;
    int64_t ver = known ? record_number(rec->str, F_VER) : -1;
    int64_t streak = known ? record_number(rec->str, F_CF) + k.failures : 0;
    c->calls_counted = k.valid;
    c->calls_stamp = k.stamp;
    c->calls_version = ver;
    c->calls_streak = failure ? streak : -1;
    const rd_breaker_policy *p = c->policy;
    int64_t threshold = p->failure_threshold ? p->failure_threshold : 1;
    int64_t version = 0;
    *done = k.valid && known && k.version == ver % RD_CALLS_VERSIONS &&
            k.pending < RD_CALLS_PENDING_MAX && k.failures < RD_CALLS_FAILURES_MAX &&
            (failure ? streak < threshold : streak == 0) && t.when.known &&
            t.when.lo_ms / t.width == t.bucket && t.when.hi_ms / t.width == t.bucket &&
            k.tag == t.bucket % RD_CALLS_TAGS &&
            record_number(rec->str, (int)t.slot_at) == t.bucket &&
            (!c->run || record_number(rec->str, F_GEN) == c->run_gen) &&
            admit_unchanged(rec, t.when.lo_ms, t.when.hi_ms, r->base.limits.tool_idle_ttl_ms,
                            out, &version);
    if (*done) {
        out->breaker.consecutive_failures = (uint32_t)streak;
        out->admission = (rd_admission)0; /* as the record script replies */
    }
    trip_end(r, c, &t, *done, out, version);
    return RD_OK;
}
