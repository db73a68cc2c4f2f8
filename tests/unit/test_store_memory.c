/* The in-memory store: the conformance suite, plus what only many threads
 * in one process can show (issue 3: "correct under many worker threads"). */
#include "store_conformance.h"

#include <pthread.h>
#include <stdatomic.h>

#include "domain/retry.h"

#define THREADS 8
#define OPS_PER_THREAD 10000

static const rd_breaker_policy hot_policy = {
    .failure_threshold = 5,
    .success_threshold = 1,
    .open_timeout_ms = 200,
};
#define HOT_LEASE_MS 50

static rd_store_limits roomy_limits(void)
{
    return (rd_store_limits){
        .tool_idle_ttl_ms = 60000,
        .turn_ttl_ms = 60000,
        .max_events_per_turn = THREADS * 1000,
        .outcome_ttl_ms = 60000,
    };
}

/* ---- many threads on one breaker ---- */

typedef struct hammer_shared {
    rd_store *store;
    atomic_llong clock;     /* every operation takes the next tick */
    atomic_int errors;
} hammer_shared;

typedef struct hammer_tally {
    hammer_shared *shared;
    unsigned seed;
    size_t opened, reopened, closed, probes, admitted, refused;
    size_t bad_results;     /* a result that contradicts itself */
} hammer_tally;

static void tally_transition(hammer_tally *t, rd_breaker_transition tr)
{
    t->opened += tr == RD_TRANSITION_OPENED;
    t->reopened += tr == RD_TRANSITION_REOPENED;
    t->closed += tr == RD_TRANSITION_CLOSED;
}

static void hammer_record(hammer_tally *t, rd_rng *rng, uint64_t token, double fail_rate)
{
    hammer_shared *sh = t->shared;
    rd_store_result r;
    rd_status st;
    int64_t now = atomic_fetch_add(&sh->clock, 1);
    rd_outcome o = rd_rng_unit(rng) < fail_rate ? RD_OUTCOME_TRANSIENT_FAILURE
                                                : RD_OUTCOME_SUCCESS;
    if (sh->store->ops->record(sh->store, "hot", &hot_policy, now, o, token, &r, &st) != RD_OK) {
        atomic_fetch_add(&sh->errors, 1);
        return;
    }
    tally_transition(t, r.transition);
}

static void *hammer_thread(void *arg)
{
    hammer_tally *t = arg;
    hammer_shared *sh = t->shared;
    rd_rng rng;
    rd_rng_seed(&rng, t->seed);
    for (int i = 0; i < OPS_PER_THREAD; i++) {
        rd_store_result r;
        rd_status st;
        int64_t now = atomic_fetch_add(&sh->clock, 1);
        if (sh->store->ops->admit(sh->store, "hot", &hot_policy, now, HOT_LEASE_MS, &r, &st) !=
            RD_OK) {
            atomic_fetch_add(&sh->errors, 1);
            continue;
        }
        switch (r.admission) {
        case RD_ADMIT_YES:
            t->admitted++;
            t->bad_results += r.permit_token != 0 || r.breaker.stored != RD_BREAKER_CLOSED;
            hammer_record(t, &rng, 0, 0.7);
            break;
        case RD_ADMIT_PROBE:
            t->probes++;
            t->bad_results += r.permit_token == 0 || r.breaker.probe_token != r.permit_token ||
                              r.transition != RD_TRANSITION_PROBE_GRANTED;
            hammer_record(t, &rng, r.permit_token, 0.5);
            break;
        default:
            t->refused++;
            t->bad_results += r.permit_token != 0;
            break;
        }
    }
    return NULL;
}

/* Counts seen by the callers add up to the breaker's own record: every
 * open or re-open is one epoch, and opening from CLOSED alternates with
 * closing. */
static void test_hammer_one_tool(void **state)
{
    rd_store_limits lim = roomy_limits();
    hammer_shared shared = {.store = rd_store_memory_new(&lim)};
    assert_non_null(shared.store);
    atomic_init(&shared.clock, 1);
    atomic_init(&shared.errors, 0);
    hammer_tally tallies[THREADS] = {{0}};
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++) {
        tallies[i].shared = &shared;
        tallies[i].seed = 1000 + i;
        assert_int_equal(pthread_create(&threads[i], NULL, hammer_thread, &tallies[i]), 0);
    }
    hammer_tally sum = {0};
    for (int i = 0; i < THREADS; i++) {
        pthread_join(threads[i], NULL);
        sum.opened += tallies[i].opened;
        sum.reopened += tallies[i].reopened;
        sum.closed += tallies[i].closed;
        sum.probes += tallies[i].probes;
        sum.admitted += tallies[i].admitted;
        sum.refused += tallies[i].refused;
        sum.bad_results += tallies[i].bad_results;
    }
    assert_int_equal(atomic_load(&shared.errors), 0);
    assert_int_equal(sum.bad_results, 0);
    assert_int_equal(sum.admitted + sum.probes + sum.refused, THREADS * OPS_PER_THREAD);

    bool found;
    rd_breaker b;
    rd_status st;
    assert_int_equal(shared.store->ops->get(shared.store, "hot", 0, &b, &found, &st), RD_OK);
    assert_true(found);
    size_t opens = sum.opened + sum.reopened;
    assert_true(sum.opened > 10 && sum.closed > 10); /* the run went round the cycle */
    assert_int_equal(b.opens_total, opens);
    assert_int_equal(b.generation, opens);
    /* CLOSED -> OPEN and HALF_OPEN -> CLOSED alternate; re-opens lie between */
    assert_int_equal(sum.opened, sum.closed + (b.stored == RD_BREAKER_OPEN ? 1 : 0));
    assert_true(sum.probes >= sum.closed + sum.reopened);
    rd_store_destroy(shared.store);
}

/* ---- many threads at the same instant on a half-open breaker ---- */

#define RACERS 16
#define TRIALS 200

typedef struct race_shared {
    rd_store *store;
    pthread_barrier_t start, done;
    char tool[32];
    int64_t at_ms;
    atomic_int probes, refused, errors;
} race_shared;

static void *racer_thread(void *arg)
{
    race_shared *rs = arg;
    for (int trial = 0; trial < TRIALS; trial++) {
        pthread_barrier_wait(&rs->start);
        rd_store_result r;
        rd_status st;
        if (rs->store->ops->admit(rs->store, rs->tool, &hot_policy, rs->at_ms, 1000, &r, &st) !=
            RD_OK)
            atomic_fetch_add(&rs->errors, 1);
        else if (r.admission == RD_ADMIT_PROBE)
            atomic_fetch_add(&rs->probes, 1);
        else if (r.admission == RD_ADMIT_NO)
            atomic_fetch_add(&rs->refused, 1);
        pthread_barrier_wait(&rs->done);
    }
    return NULL;
}

static void test_half_open_race_grants_one_probe(void **state)
{
    rd_store_limits lim = roomy_limits();
    race_shared rs = {.store = rd_store_memory_new(&lim)};
    assert_non_null(rs.store);
    pthread_barrier_init(&rs.start, NULL, RACERS + 1);
    pthread_barrier_init(&rs.done, NULL, RACERS + 1);
    pthread_t threads[RACERS];
    for (int i = 0; i < RACERS; i++)
        assert_int_equal(pthread_create(&threads[i], NULL, racer_thread, &rs), 0);

    int failed_trials = 0;
    for (int trial = 0; trial < TRIALS; trial++) {
        snprintf(rs.tool, sizeof rs.tool, "race_%d", trial % 4); /* reuse breakers too */
        int64_t t0 = (int64_t)trial * 10000;
        rd_store_result r;
        rd_status st;
        for (int i = 0; i < 5; i++)
            rs.store->ops->record(rs.store, rs.tool, &hot_policy, t0,
                                  RD_OUTCOME_TRANSIENT_FAILURE, 0, &r, &st);
        assert_int_equal(r.breaker.stored, RD_BREAKER_OPEN);
        rs.at_ms = t0 + hot_policy.open_timeout_ms;
        atomic_store(&rs.probes, 0);
        atomic_store(&rs.refused, 0);
        atomic_store(&rs.errors, 0);
        pthread_barrier_wait(&rs.start);
        pthread_barrier_wait(&rs.done);
        failed_trials += atomic_load(&rs.probes) != 1 || atomic_load(&rs.refused) != RACERS - 1 ||
                         atomic_load(&rs.errors) != 0;
        /* settle it: the probe succeeds and closes it for the next trial */
        rd_breaker b;
        bool found;
        rs.store->ops->get(rs.store, rs.tool, rs.at_ms, &b, &found, &st);
        rs.store->ops->record(rs.store, rs.tool, &hot_policy, rs.at_ms,
                              RD_OUTCOME_SUCCESS, b.probe_token, &r, &st);
        assert_int_equal(r.transition, RD_TRANSITION_CLOSED);
    }
    for (int i = 0; i < RACERS; i++)
        pthread_join(threads[i], NULL);
    pthread_barrier_destroy(&rs.start);
    pthread_barrier_destroy(&rs.done);
    rd_store_destroy(rs.store);
    assert_int_equal(failed_trials, 0);
}

/* ---- outcome ids and turns under contention ---- */

#define SHARED_IDS 1000

typedef struct claim_shared {
    rd_store *store;
    atomic_int fresh, errors;
} claim_shared;

static void *claim_thread(void *arg)
{
    claim_shared *cs = arg;
    for (int i = 0; i < SHARED_IDS; i++) {
        char id[32];
        snprintf(id, sizeof id, "outcome-%d", i);
        bool dup;
        rd_status st;
        if (cs->store->ops->claim_outcome(cs->store, id, 1, &dup, &st) != RD_OK)
            atomic_fetch_add(&cs->errors, 1);
        else if (!dup)
            atomic_fetch_add(&cs->fresh, 1);
    }
    return NULL;
}

/* Each id claimed by all threads is new for exactly one of them. */
static void test_concurrent_claims_count_once(void **state)
{
    rd_store_limits lim = roomy_limits();
    claim_shared cs = {.store = rd_store_memory_new(&lim)};
    atomic_init(&cs.fresh, 0);
    atomic_init(&cs.errors, 0);
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&threads[i], NULL, claim_thread, &cs);
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    assert_int_equal(atomic_load(&cs.errors), 0);
    assert_int_equal(atomic_load(&cs.fresh), SHARED_IDS);
    rd_store_destroy(cs.store);
}

static void *append_thread(void *arg)
{
    rd_store *s = arg;
    for (int i = 0; i < 1000; i++) {
        rd_trace_event e = conf_event(RD_EV_RETRY, "t", i);
        rd_status st;
        if (s->ops->turn_append(s, "busy", &e, 1, i, NULL, &st) != RD_OK)
            return (void *)1;
    }
    return NULL;
}

/* Concurrent appends to one turn: every event kept, sequences 1..n. */
static void test_concurrent_appends_keep_sequence(void **state)
{
    rd_store_limits lim = roomy_limits();
    rd_store *s = rd_store_memory_new(&lim);
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&threads[i], NULL, append_thread, s);
    for (int i = 0; i < THREADS; i++) {
        void *rc;
        pthread_join(threads[i], &rc);
        assert_null(rc);
    }
    rd_trace_event *events;
    size_t n;
    int64_t started;
    rd_status st;
    assert_int_equal(s->ops->turn_read(s, "busy", 1000, &events, &n, &started, &st), RD_OK);
    assert_int_equal(n, THREADS * 1000);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(events[i].sequence, i + 1);
    free(events);
    rd_store_destroy(s);
}

#define CAPPED_TURNS 16

typedef struct churn_arg {
    rd_store *store;
    int thread;
    int errors;
} churn_arg;

static void *churn_thread(void *arg)
{
    churn_arg *a = arg;
    for (int i = 0; i < 1000; i++) {
        char id[32];
        snprintf(id, sizeof id, "turn-%d-%d", a->thread, i);
        int64_t started;
        rd_status st;
        a->errors += a->store->ops->turn_touch(a->store, id, i, &started, &st) != RD_OK;
    }
    return NULL;
}

/* Many threads creating turns past max_turns: each new turn finds room
 * (older ones make way) and the cap holds. */
static void test_turn_cap_under_contention(void **state)
{
    rd_store_limits lim = roomy_limits();
    lim.max_turns = CAPPED_TURNS;
    rd_store *s = rd_store_memory_new(&lim);
    pthread_t threads[THREADS];
    churn_arg args[THREADS];
    for (int i = 0; i < THREADS; i++) {
        args[i] = (churn_arg){.store = s, .thread = i};
        pthread_create(&threads[i], NULL, churn_thread, &args[i]);
    }
    int errors = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(threads[i], NULL);
        errors += args[i].errors;
    }
    assert_int_equal(errors, 0);
    size_t alive = 0;
    for (int t = 0; t < THREADS; t++)
        for (int i = 0; i < 1000; i++) {
            char id[32];
            snprintf(id, sizeof id, "turn-%d-%d", t, i);
            alive += conf_turn_exists(s, id, 1000);
        }
    assert_int_equal(alive, CAPPED_TURNS);
    rd_store_destroy(s);
}

static void test_destroy_accepts_null(void **state)
{
    rd_store_destroy(NULL);
    rd_store_limits lim = roomy_limits();
    rd_store *s = rd_store_memory_new(&lim);
    assert_string_equal(s->ops->name, "memory");
    rd_store_destroy(s);
}

static rd_store_conformance memory_backend = {.make = rd_store_memory_new};

int main(void)
{
    const struct CMUnitTest tests[] = {
        RD_STORE_CONFORMANCE_TESTS(&memory_backend),
        cmocka_unit_test(test_hammer_one_tool),
        cmocka_unit_test(test_half_open_race_grants_one_probe),
        cmocka_unit_test(test_concurrent_claims_count_once),
        cmocka_unit_test(test_concurrent_appends_keep_sequence),
        cmocka_unit_test(test_turn_cap_under_contention),
        cmocka_unit_test(test_destroy_accepts_null),
    };
    return cmocka_run_group_tests_name("store_memory", tests, NULL, NULL);
}
