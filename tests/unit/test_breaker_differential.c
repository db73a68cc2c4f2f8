/* The breaker rules exist twice: in C (domain/breaker.c, applied by the
 * memory store) and in Lua (server/store/lua, run by Redis). This test
 * drives a memory store and a Redis store (caller's time, no local cache)
 * with the same random operations and compares, after every step, what the
 * operation answered and the full view of every tool (breaker record and
 * call-window counts).
 *
 * Operations: admission checks with various leases, outcomes of every kind
 * (with the live permit, an old one, a made-up one or none; from several
 * executors; fast and slow), operator holds, resets and releases, and time
 * advancing by small and large steps, over tools whose policies cover the
 * consecutive and failure-rate modes, quorum tripping and thresholds of 0.
 *
 * The two stores draw their own probe tokens, so a token granted by both in
 * the same step is remembered as a pair, and the Redis side is compared
 * through that pair. The Redis store writes last_seen lazily (docs/REDIS.md,
 * "Slack"): a read may show it up to the slack earlier; answers of admit,
 * record and force carry it exactly.
 *
 * On a difference the test prints the seed, the step, the operations that
 * led there and both sides. RD_DIFF_SEED=<n> replays one sequence,
 * RD_DIFF_STEPS=<n> sets its length. Needs redis-server (skipped without
 * it, failed under RD_NO_SKIP=1). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redis_harness.h"
#include "store/redis.h"
#include "domain/store.h"

#define IDLE_TTL_MS 10000 /* a slack of 1 s (max(idle / 16, 1 s)) */
#define SLACK_MS 1000
#define DEFAULT_STEPS 4000
#define HISTORY 12

static rd_redis_proc redis;
static bool have_redis;

typedef struct tool_case {
    const char *id;
    rd_breaker_policy policy;
} tool_case;

static const tool_case tools[] = {
    {"consecutive", {.failure_threshold = 3, .success_threshold = 2, .open_timeout_ms = 1000}},
    {"rate",
     {.failure_threshold = 5, .success_threshold = 1, .open_timeout_ms = 700,
      .mode = RD_BREAKER_MODE_FAILURE_RATE, .failure_rate_threshold = 50, .minimum_calls = 4,
      .window_ms = 1995, .slow_call_ms = 300, .slow_call_rate_threshold = 60}},
    {"quorum",
     {.failure_threshold = 2, .success_threshold = 1, .open_timeout_ms = 1500,
      .window_ms = 1003, .quorum_min_executors = 2, .quorum_window_ms = 1200}},
    {"zero", {.failure_threshold = 0, .success_threshold = 0, .open_timeout_ms = 300}},
};
#define N_TOOLS (sizeof tools / sizeof *tools)

/* splitmix64: small, and the same sequence on every platform. */
static uint64_t next_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static uint64_t below(uint64_t *s, uint64_t n)
{
    return next_rand(s) % n;
}

/* Probe tokens granted by both stores in the same step. */
#define MAX_PERMITS 64
typedef struct permit_pair {
    uint64_t mem, redis;
} permit_pair;

typedef struct run {
    uint64_t seed;
    long step;
    int64_t now;
    rd_store *mem, *red;
    permit_pair permits[MAX_PERMITS];
    size_t n_permits;              /* the newest last; the oldest drop out */
    char history[HISTORY][160];    /* the last operations, for the report */
    /* What the sequence went through (both sides agreed on it). */
    long transitions[RD_TRANSITION_CLOSED + 1];
    long quorum_holds, stale_permits;
    /* Times of each tool's latest transient failures: their quorum and call
     * windows end at edges too. */
    int64_t failures_at[N_TOOLS][4];
    const tool_case *focus;        /* the tool whose deadline time just moved onto */
} run;

static void remember_op(run *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *slot = r->history[r->step % HISTORY];
    int n = snprintf(slot, sizeof r->history[0], "step %ld, t=%" PRId64 ": ", r->step, r->now);
    vsnprintf(slot + n, sizeof r->history[0] - (size_t)n, fmt, ap);
    va_end(ap);
}

static void print_breaker(const char *side, const rd_breaker *b)
{
    print_message("  %-5s stored=%d cf=%" PRIu32 " cs=%" PRIu32 " opened_at=%" PRId64
                  " open_until=%" PRId64 " gen=%" PRIu64 " opens=%" PRIu64 " probe=%" PRIu64
                  " lease_until=%" PRId64 " last_seen=%" PRId64 " forced=%d forced_until=%" PRId64
                  "\n",
                  side, (int)b->stored, b->consecutive_failures, b->consecutive_successes,
                  b->opened_at_ms, b->open_until_ms, b->generation, b->opens_total,
                  b->probe_token, b->probe_lease_until_ms, b->last_seen_ms, (int)b->forced,
                  b->forced_until_ms);
}

static void diverged(run *r, const char *what, const rd_breaker *mb, const rd_breaker *rb)
{
    print_message("C and Lua breakers differ: seed %" PRIu64 ", step %ld: %s\n", r->seed,
                  r->step, what);
    print_message("operations up to it:\n");
    for (long i = r->step - HISTORY + 1; i <= r->step; i++)
        if (i >= 0)
            print_message("  %s\n", r->history[i % HISTORY]);
    if (mb && rb) {
        print_breaker("C", mb);
        print_breaker("Lua", rb);
    }
    print_message("replay with RD_DIFF_SEED=%" PRIu64 "\n", r->seed);
    fail_msg("first divergence at step %ld of seed %" PRIu64, r->step, r->seed);
}

/* The Redis token that corresponds to a memory token (0 stays 0); a memory
 * token that was never granted to both maps to itself. */
static uint64_t redis_token_for(const run *r, uint64_t mem_token)
{
    if (mem_token == 0)
        return 0;
    for (size_t i = 0; i < r->n_permits; i++)
        if (r->permits[i].mem == mem_token)
            return r->permits[i].redis;
    return mem_token;
}

/* Compares two breaker records; `lazy_seen`: rb comes from a read, whose
 * last_seen may lag by up to the slack. */
static void compare_breakers(run *r, const char *what, const rd_breaker *mb,
                             const rd_breaker *rb, bool lazy_seen)
{
    char why[200];
    const char *field = NULL;
    if (mb->stored != rb->stored)
        field = "stored status";
    else if (mb->consecutive_failures != rb->consecutive_failures)
        field = "consecutive_failures";
    else if (mb->consecutive_successes != rb->consecutive_successes)
        field = "consecutive_successes";
    else if (mb->opened_at_ms != rb->opened_at_ms)
        field = "opened_at_ms";
    else if (mb->open_until_ms != rb->open_until_ms)
        field = "open_until_ms";
    else if (mb->generation != rb->generation)
        field = "generation";
    else if (mb->opens_total != rb->opens_total)
        field = "opens_total";
    else if (redis_token_for(r, mb->probe_token) != rb->probe_token)
        field = "probe_token";
    else if (mb->probe_lease_until_ms != rb->probe_lease_until_ms)
        field = "probe_lease_until_ms";
    else if (mb->forced != rb->forced)
        field = "forced";
    else if (mb->forced_until_ms != rb->forced_until_ms)
        field = "forced_until_ms";
    else if (!lazy_seen && mb->last_seen_ms != rb->last_seen_ms)
        field = "last_seen_ms";
    else if (lazy_seen && (rb->last_seen_ms > mb->last_seen_ms ||
                           mb->last_seen_ms - rb->last_seen_ms >= SLACK_MS))
        field = "last_seen_ms (beyond the slack)";
    if (!field)
        return;
    snprintf(why, sizeof why, "%s: %s", what, field);
    diverged(r, why, mb, rb);
}

/* evidence: compare the quorum's figures; sums: the window's sums too,
 * which the Redis store reports only where the rule reads them (the
 * failure-rate mode); compare_views checks the windows after every step
 * in every mode. */
static void compare_results(run *r, const char *what, const rd_store_result *m,
                            const rd_store_result *x, bool evidence, bool sums)
{
    char why[400];
    const char *field = NULL;
    if (m->admission != x->admission)
        field = "admission";
    else if (m->transition != x->transition)
        field = "transition";
    else if (m->now_ms != x->now_ms)
        field = "now_ms";
    else if (sums && m->evidence.calls != x->evidence.calls)
        field = "evidence.calls";
    else if (sums && m->evidence.failures != x->evidence.failures)
        field = "evidence.failures";
    else if (sums && m->evidence.slow != x->evidence.slow)
        field = "evidence.slow";
    else if (evidence && m->evidence.failing_executors != x->evidence.failing_executors)
        field = "evidence.failing_executors";
    else if (evidence && m->evidence.held_by_quorum != x->evidence.held_by_quorum)
        field = "evidence.held_by_quorum";
    if (field) {
        snprintf(why, sizeof why,
                 "%s: %s (admission/transition/calls/failures/slow/executors/held: C %d/%d/%" PRIu64
                 "/%" PRIu64 "/%" PRIu64 "/%" PRIu32 "/%d, Lua %d/%d/%" PRIu64 "/%" PRIu64
                 "/%" PRIu64 "/%" PRIu32 "/%d)",
                 what, field, (int)m->admission, (int)m->transition, m->evidence.calls,
                 m->evidence.failures, m->evidence.slow, m->evidence.failing_executors,
                 (int)m->evidence.held_by_quorum, (int)x->admission, (int)x->transition,
                 x->evidence.calls, x->evidence.failures, x->evidence.slow,
                 x->evidence.failing_executors, (int)x->evidence.held_by_quorum);
        diverged(r, why, &m->breaker, &x->breaker);
    }
    compare_breakers(r, what, &m->breaker, &x->breaker, false);
}

static void must_ok(run *r, int rc, const rd_status *st, const char *side)
{
    if (rc != RD_OK) {
        char why[sizeof st->msg + 40];
        snprintf(why, sizeof why, "the %s store failed: %s", side, st->msg);
        diverged(r, why, NULL, NULL);
    }
}

static void forget_oldest_permit(run *r)
{
    memmove(r->permits, r->permits + 1, (r->n_permits - 1) * sizeof *r->permits);
    r->n_permits--;
}

static void op_admit(run *r, const tool_case *t, uint64_t *rng)
{
    static const int64_t leases[] = {0, 1, 80, 400, 900};
    int64_t lease = leases[below(rng, 5)];
    remember_op(r, "admit %s lease %" PRId64, t->id, lease);
    rd_store_result m, x;
    rd_status st = {0};
    must_ok(r, r->mem->ops->admit(r->mem, t->id, &t->policy, r->now, lease, &m, &st), &st, "C");
    must_ok(r, r->red->ops->admit(r->red, t->id, &t->policy, r->now, lease, &x, &st), &st,
            "Lua");
    if ((m.permit_token != 0) != (x.permit_token != 0))
        diverged(r, "admit: a permit on one side only", &m.breaker, &x.breaker);
    if (m.permit_token) {
        if (r->n_permits == MAX_PERMITS)
            forget_oldest_permit(r);
        r->permits[r->n_permits++] = (permit_pair){m.permit_token, x.permit_token};
    }
    compare_results(r, "admit", &m, &x, false, false);
    r->transitions[m.transition]++;
}

static void op_record(run *r, const tool_case *t, uint64_t *rng)
{
    static const char *const executors[] = {"", "exec-a", "exec-b", "exec-c"};
    static const int64_t latencies[] = {-1, 5, 299, 300, 1000};
    rd_outcome outcome = (rd_outcome)(1 + below(rng, 3));
    /* Mostly the newest permit (the live probe, if any), else an older one,
     * none, or one nobody was granted. */
    permit_pair p = {0, 0};
    uint64_t pick = below(rng, 10);
    if (pick < 5 && r->n_permits)
        p = r->permits[r->n_permits - 1];
    else if (pick < 7 && r->n_permits)
        p = r->permits[below(rng, r->n_permits)];
    else if (pick == 7)
        p = (permit_pair){0x5eed5eed5eedULL, 0x5eed5eed5eedULL};
    rd_call_report mc = {.outcome = outcome, .permit_token = p.mem,
                         .executor_id = executors[below(rng, 4)],
                         .latency_ms = latencies[below(rng, 5)]};
    if (outcome == RD_OUTCOME_TRANSIENT_FAILURE) {
        int64_t *at = r->failures_at[t - tools];
        memmove(at + 1, at, 3 * sizeof *at);
        at[0] = r->now;
    }
    rd_call_report xc = mc;
    xc.permit_token = p.redis;
    remember_op(r, "record %s outcome %d permit %s executor '%s' latency %" PRId64, t->id,
                (int)outcome, p.mem == 0 ? "none" : "given", mc.executor_id, mc.latency_ms);
    rd_store_result m, x;
    rd_status st = {0};
    must_ok(r, r->mem->ops->record_call(r->mem, t->id, &t->policy, r->now, &mc, &m, &st), &st,
            "C");
    must_ok(r, r->red->ops->record_call(r->red, t->id, &t->policy, r->now, &xc, &x, &st), &st,
            "Lua");
    compare_results(r, "record", &m, &x, true,
                    t->policy.mode == RD_BREAKER_MODE_FAILURE_RATE);
    r->transitions[m.transition]++;
    r->quorum_holds += m.evidence.held_by_quorum;
    r->stale_permits += p.mem != 0 && m.transition == RD_TRANSITION_NONE;
}

static void op_force(run *r, const tool_case *t, uint64_t *rng)
{
    static const int64_t ttls[] = {0, 150, 1200};
    rd_force_mode mode = (rd_force_mode)(1 + below(rng, 4));
    int64_t ttl = ttls[below(rng, 3)];
    remember_op(r, "force %s mode %d ttl %" PRId64, t->id, (int)mode, ttl);
    rd_store_result m, x;
    rd_status st = {0};
    must_ok(r, r->mem->ops->force(r->mem, t->id, mode, r->now, ttl, &m, &st), &st, "C");
    must_ok(r, r->red->ops->force(r->red, t->id, mode, r->now, ttl, &x, &st), &st, "Lua");
    compare_results(r, "force", &m, &x, false, false);
}

/* Moves time onto (or just before) a deadline of one tool: the end of its
 * open period, lease or hold, of a failure's quorum or call window, or the
 * next window bucket. Where a rule compares with < or <=, the two sides
 * must agree at the edge. */
static bool advance_to_edge(run *r, uint64_t *rng)
{
    const tool_case *t = &tools[below(rng, N_TOOLS)];
    rd_breaker b;
    bool found;
    rd_status st = {0};
    must_ok(r, r->mem->ops->get(r->mem, t->id, r->now, &b, &found, &st), &st, "C");
    const int64_t *at = r->failures_at[t - tools];
    int64_t qw = t->policy.quorum_window_ms, cw = t->policy.window_ms;
    int64_t edges[] = {b.open_until_ms, b.probe_lease_until_ms, b.forced_until_ms,
                       at[0] + qw, at[1] + qw, at[2] + qw, at[3] + qw,
                       at[0] + cw, cw > 10 ? (r->now / (cw / 10) + 1) * (cw / 10) : 0};
    int64_t ahead[sizeof edges / sizeof *edges];
    size_t n = 0;
    for (size_t i = 0; i < sizeof edges / sizeof *edges; i++)
        if (edges[i] > r->now)
            ahead[n++] = edges[i];
    if (n == 0)
        return false;
    int64_t next = ahead[below(rng, n)];
    int64_t to = next - (int64_t)below(rng, 2);
    if (to <= r->now)
        to = next;
    remember_op(r, "advance %" PRId64 " ms to an edge of %s", to - r->now, t->id);
    r->now = to;
    r->focus = t;
    return true;
}

static void op_advance(run *r, uint64_t *rng)
{
    if (below(rng, 3) == 0 && advance_to_edge(r, rng))
        return;
    static const int64_t steps[] = {0, 1, 7, 40, 150, 299, 300, 650, 1000, 2500};
    int64_t d = steps[below(rng, 10)];
    if (below(rng, 4) == 0)
        d = (int64_t)below(rng, 1200);
    r->now += d;
    remember_op(r, "advance %" PRId64 " ms", d);
}

/* The full view of every tool: breaker record, whether it exists, and its
 * call-window counts. */
static void compare_views(run *r)
{
    for (size_t i = 0; i < N_TOOLS; i++) {
        const tool_case *t = &tools[i];
        rd_breaker mb, xb;
        rd_breaker_evidence me, xe;
        bool mf, xf;
        rd_status st = {0};
        must_ok(r, r->mem->ops->stats(r->mem, t->id, &t->policy, r->now, &mb, &me, &mf, &st),
                &st, "C");
        must_ok(r, r->red->ops->stats(r->red, t->id, &t->policy, r->now, &xb, &xe, &xf, &st),
                &st, "Lua");
        char what[120];
        snprintf(what, sizeof what, "view of %s", t->id);
        if (mf != xf)
            diverged(r, mf ? "a tool only C knows" : "a tool only Lua knows", &mb, &xb);
        if (me.calls != xe.calls || me.failures != xe.failures || me.slow != xe.slow) {
            char why[200];
            snprintf(why, sizeof why,
                     "%s: window counts C %" PRIu64 "/%" PRIu64 "/%" PRIu64 ", Lua %" PRIu64
                     "/%" PRIu64 "/%" PRIu64,
                     what, me.calls, me.failures, me.slow, xe.calls, xe.failures, xe.slow);
            diverged(r, why, &mb, &xb);
        }
        compare_breakers(r, what, &mb, &xb, true);
        /* what the rules derive from the record */
        if (rd_breaker_status_at(&mb, r->now) != rd_breaker_status_at(&xb, r->now) ||
            rd_breaker_probe_live(&mb, r->now) != rd_breaker_probe_live(&xb, r->now) ||
            rd_breaker_hold_live(&mb, r->now) != rd_breaker_hold_live(&xb, r->now))
            diverged(r, "derived status, probe or hold", &mb, &xb);
    }
}

static rd_store_limits diff_limits(void)
{
    return (rd_store_limits){.tool_idle_ttl_ms = IDLE_TTL_MS, .turn_ttl_ms = 60000,
                             .max_events_per_turn = 100, .outcome_ttl_ms = 60000};
}

static void run_sequence(uint64_t seed, long steps)
{
    run *r = calloc(1, sizeof *r);
    assert_non_null(r);
    r->seed = seed;
    r->now = 1000;
    rd_store_limits lim = diff_limits();
    r->mem = rd_store_memory_new(&lim);
    char prefix[48];
    snprintf(prefix, sizeof prefix, "diff%" PRIu64 ":", seed);
    rd_redis_options o = {.port = redis.port, .key_prefix = prefix, .use_caller_time = true,
                          .no_local_cache = true, .pool_size = 1, .command_timeout_ms = 5000,
                          .limits = lim};
    rd_status st = {0};
    r->red = rd_store_redis_new(&o, &st);
    if (!r->mem || !r->red)
        fail_msg("stores: %s", st.msg);
    print_message("seed %" PRIu64 ", %ld steps\n", seed, steps);
    uint64_t rng = seed;
    for (r->step = 0; r->step < steps; r->step++) {
        /* mostly the tool at whose edge time now stands, if any */
        const tool_case *t = &tools[below(&rng, N_TOOLS)];
        if (r->focus && below(&rng, 4) != 0)
            t = r->focus;
        r->focus = NULL;
        uint64_t kind = below(&rng, 100);
        if (kind < 30)
            op_admit(r, t, &rng);
        else if (kind < 70)
            op_record(r, t, &rng);
        else if (kind < 77)
            op_force(r, t, &rng);
        else
            op_advance(r, &rng);
        compare_views(r);
    }
    print_message("  opened %ld, reopened %ld, probes %ld, closed %ld, held by quorum %ld, "
                  "permits without effect %ld\n",
                  r->transitions[RD_TRANSITION_OPENED], r->transitions[RD_TRANSITION_REOPENED],
                  r->transitions[RD_TRANSITION_PROBE_GRANTED],
                  r->transitions[RD_TRANSITION_CLOSED], r->quorum_holds, r->stale_permits);
    /* A sequence that never reaches these would compare little. */
    if (steps >= 1000) {
        assert_true(r->transitions[RD_TRANSITION_OPENED] > 0);
        assert_true(r->transitions[RD_TRANSITION_REOPENED] > 0);
        assert_true(r->transitions[RD_TRANSITION_PROBE_GRANTED] > 0);
        assert_true(r->transitions[RD_TRANSITION_CLOSED] > 0);
        assert_true(r->quorum_holds > 0);
    }
    rd_store_destroy(r->mem);
    rd_store_destroy(r->red);
    free(r);
}

static long env_long(const char *name, long fallback)
{
    const char *v = getenv(name);
    return v && v[0] ? strtol(v, NULL, 10) : fallback;
}

static void skip_without_redis(void)
{
    if (have_redis)
        return;
    const char *strict = getenv("RD_NO_SKIP");
    if (strict && strcmp(strict, "1") == 0)
        fail_msg("redis-server is not installed (scripts/install-deps.sh --test installs it)");
    print_message("redis-server is not installed: differential test skipped\n");
    skip();
}

/* Fixed seeds, so that a run is repeatable; RD_DIFF_SEED picks another. */
static void test_c_and_lua_breakers_agree(void **state)
{
    skip_without_redis();
    long steps = env_long("RD_DIFF_STEPS", DEFAULT_STEPS);
    const char *one = getenv("RD_DIFF_SEED");
    if (one && one[0]) {
        run_sequence(strtoull(one, NULL, 10), steps);
        return;
    }
    static const uint64_t seeds[] = {1, 2, 3, 20261127};
    for (size_t i = 0; i < sizeof seeds / sizeof *seeds; i++)
        run_sequence(seeds[i], steps);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    have_redis = rd_harness_have_redis() && rd_redis_proc_start(&redis, 0, NULL) == 0;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_c_and_lua_breakers_agree),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    if (have_redis)
        rd_redis_proc_stop(&redis);
    return failed;
}
