/* Several Redis stores on one prefix, standing in for replicas of
 * recoveryd sharing one redis-server: one breaker for all of them, exactly
 * one half-open probe among 50 concurrent admissions, a dead executor's
 * lease running out in Redis, stale probe tokens refused, outcome ids and
 * turns shared. What a single in-memory store cannot show. */
#include "store_conformance_fixture.h"
#include "store_redis_fixture.h"

#include <pthread.h>
#include <stdatomic.h>

static void test_replicas_share_breaker(void **state)
{
    skip_without_redis();
    char prefix[32];
    fresh_prefix(prefix, sizeof prefix, "share");
    rd_store *a = redis_store_at(shared_redis.port, prefix);
    rd_store *b = redis_store_at(shared_redis.port, prefix);
    rd_breaker_policy four = three_strikes;
    four.failure_threshold = 4;
    must_record(a, "api", &four, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    must_record(b, "api", &four, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    must_record(a, "api", &four, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    rd_store_result r = must_record(b, "api", &four, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    assert_int_equal(r.transition, RD_TRANSITION_OPENED);

    assert_int_equal(must_admit(a, "api", &four, 100).admission, RD_ADMIT_NO);
    assert_int_equal(must_admit(b, "api", &four, 100).admission, RD_ADMIT_NO);
    rd_breaker ba, bb;
    bool found;
    rd_status st;
    assert_int_equal(a->ops->get(a, "api", 0, &ba, &found, &st), RD_OK);
    assert_true(found);
    assert_int_equal(b->ops->get(b, "api", 0, &bb, &found, &st), RD_OK);
    assert_int_equal(ba.stored, RD_BREAKER_OPEN);
    assert_int_equal(bb.stored, RD_BREAKER_OPEN);
    assert_int_equal(ba.generation, bb.generation);
    assert_int_equal(ba.open_until_ms, bb.open_until_ms);
    rd_store_destroy(a);
    rd_store_destroy(b);
}

#define RACE_THREADS 50
#define RACE_STORES 3
#define RACE_TRIALS 50

typedef struct race {
    rd_store *stores[RACE_STORES];
    pthread_barrier_t start, done;
    char tool[32];
    atomic_int probes, refused, errors;
    char last_error[RD_STATUS_MSG_MAX]; /* for the failure message only */
} race;

typedef struct racer {
    race *shared;
    int index;
} racer;

static const rd_breaker_policy half_open_at_once = {
    .failure_threshold = 1, .success_threshold = 1, .open_timeout_ms = 0};

static void *racer_main(void *arg)
{
    racer *me = arg;
    race *rc = me->shared;
    rd_store *s = rc->stores[me->index % RACE_STORES];
    for (int trial = 0; trial < RACE_TRIALS; trial++) {
        pthread_barrier_wait(&rc->start);
        rd_store_result r;
        rd_status st;
        if (s->ops->admit(s, rc->tool, &half_open_at_once, 0, 10000, &r, &st) != RD_OK) {
            atomic_fetch_add(&rc->errors, 1);
            snprintf(rc->last_error, sizeof rc->last_error, "%s", st.msg);
        }
        else if (r.admission == RD_ADMIT_PROBE)
            atomic_fetch_add(&rc->probes, 1);
        else if (r.admission == RD_ADMIT_NO)
            atomic_fetch_add(&rc->refused, 1);
        pthread_barrier_wait(&rc->done);
    }
    return NULL;
}

/* 50 concurrent admission checks on a half-open breaker, spread over three
 * stores: exactly one probe, every trial. */
static void test_one_probe_across_replicas(void **state)
{
    skip_without_redis();
    char prefix[32];
    fresh_prefix(prefix, sizeof prefix, "race");
    race *rc = calloc(1, sizeof *rc);
    /* This is about atomicity, and 50 threads under the sanitizers keep a
     * 50 ms budget from being met. */
    rd_redis_options o = {.port = shared_redis.port, .key_prefix = prefix,
                          .command_timeout_ms = CALM_COMMAND_TIMEOUT_MS, .limits = test_limits()};
    rd_status st;
    for (int i = 0; i < RACE_STORES; i++)
        assert_non_null(rc->stores[i] = rd_store_redis_new(&o, &st));
    pthread_barrier_init(&rc->start, NULL, RACE_THREADS + 1);
    pthread_barrier_init(&rc->done, NULL, RACE_THREADS + 1);
    pthread_t threads[RACE_THREADS];
    racer racers[RACE_THREADS];
    for (int i = 0; i < RACE_THREADS; i++) {
        racers[i] = (racer){.shared = rc, .index = i};
        assert_int_equal(pthread_create(&threads[i], NULL, racer_main, &racers[i]), 0);
    }
    int bad_trials = 0;
    for (int trial = 0; trial < RACE_TRIALS; trial++) {
        snprintf(rc->tool, sizeof rc->tool, "tool_%d", trial);
        rd_store_result r = must_record(rc->stores[trial % RACE_STORES], rc->tool,
                                        &half_open_at_once, RD_OUTCOME_TRANSIENT_FAILURE, 0);
        assert_int_equal(r.transition, RD_TRANSITION_OPENED);
        atomic_store(&rc->probes, 0);
        atomic_store(&rc->refused, 0);
        atomic_store(&rc->errors, 0);
        pthread_barrier_wait(&rc->start);
        pthread_barrier_wait(&rc->done);
        bool bad = atomic_load(&rc->probes) != 1 ||
                   atomic_load(&rc->refused) != RACE_THREADS - 1 ||
                   atomic_load(&rc->errors) != 0;
        if (bad)
            print_message("trial %d: %d probes, %d refused, %d errors (%s)\n", trial,
                          atomic_load(&rc->probes), atomic_load(&rc->refused),
                          atomic_load(&rc->errors), rc->last_error);
        bad_trials += bad;
    }
    for (int i = 0; i < RACE_THREADS; i++)
        pthread_join(threads[i], NULL);
    pthread_barrier_destroy(&rc->start);
    pthread_barrier_destroy(&rc->done);
    for (int i = 0; i < RACE_STORES; i++)
        rd_store_destroy(rc->stores[i]);
    free(rc);
    assert_int_equal(bad_trials, 0);
}

/* The executor holding the probe dies: the lease runs out in Redis and the
 * next caller probes; the dead executor's late outcome is stale. */
static void test_expired_lease_frees_permit(void **state)
{
    skip_without_redis();
    char prefix[32];
    fresh_prefix(prefix, sizeof prefix, "lease");
    rd_store *a = redis_store_at(shared_redis.port, prefix);
    rd_store *b = redis_store_at(shared_redis.port, prefix);
    must_record(a, "db", &half_open_at_once, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    rd_store_result first = must_admit(a, "db", &half_open_at_once, 150);
    assert_int_equal(first.admission, RD_ADMIT_PROBE);
    assert_int_equal(must_admit(b, "db", &half_open_at_once, 150).admission, RD_ADMIT_NO);

    char key[128];
    snprintf(key, sizeof key, "%s{tool:db}:probe", prefix);
    redisReply *ttl = rd_harness_cmd(shared_redis.port, "PTTL %s", key);
    assert_non_null(ttl);
    assert_true(ttl->integer > 0 && ttl->integer <= 150); /* reclaimed by its TTL */
    freeReplyObject(ttl);

    rd_harness_sleep_ms(200);
    rd_store_result second = must_admit(b, "db", &half_open_at_once, 5000);
    assert_int_equal(second.admission, RD_ADMIT_PROBE);
    assert_true(second.permit_token != first.permit_token);
    rd_store_result late = must_record(a, "db", &half_open_at_once, RD_OUTCOME_SUCCESS,
                                       first.permit_token);
    assert_int_equal(late.transition, RD_TRANSITION_NONE);
    assert_int_equal(late.breaker.stored, RD_BREAKER_OPEN);
    rd_store_result closed = must_record(b, "db", &half_open_at_once, RD_OUTCOME_SUCCESS,
                                         second.permit_token);
    assert_int_equal(closed.transition, RD_TRANSITION_CLOSED);
    rd_store_destroy(a);
    rd_store_destroy(b);
}

/* A probe token from an older epoch is refused even if it is presented
 * while a probe of the new epoch is live. */
static void test_old_generation_outcome_discarded(void **state)
{
    skip_without_redis();
    char prefix[32];
    fresh_prefix(prefix, sizeof prefix, "gen");
    rd_store *s = redis_store_at(shared_redis.port, prefix);
    must_record(s, "t", &half_open_at_once, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    rd_store_result p1 = must_admit(s, "t", &half_open_at_once, 5000);
    rd_store_result re = must_record(s, "t", &half_open_at_once, RD_OUTCOME_TRANSIENT_FAILURE,
                                     p1.permit_token);
    assert_int_equal(re.transition, RD_TRANSITION_REOPENED);
    assert_int_equal(re.breaker.generation, 2);
    rd_store_result p2 = must_admit(s, "t", &half_open_at_once, 5000);
    assert_int_equal(p2.admission, RD_ADMIT_PROBE);
    rd_store_result stale = must_record(s, "t", &half_open_at_once, RD_OUTCOME_SUCCESS,
                                        p1.permit_token);
    assert_int_equal(stale.transition, RD_TRANSITION_NONE);
    assert_int_equal(stale.breaker.probe_token, p2.permit_token);
    rd_store_destroy(s);
}

static void test_outcome_dedup_across_replicas(void **state)
{
    skip_without_redis();
    char prefix[32];
    fresh_prefix(prefix, sizeof prefix, "dedup");
    rd_store *a = redis_store_at(shared_redis.port, prefix);
    rd_store *b = redis_store_at(shared_redis.port, prefix);
    bool dup = true;
    rd_status st;
    assert_int_equal(a->ops->claim_outcome(a, "out-1", 0, &dup, &st), RD_OK);
    assert_false(dup);
    assert_int_equal(b->ops->claim_outcome(b, "out-1", 0, &dup, &st), RD_OK);
    assert_true(dup);
    assert_int_equal(b->ops->claim_outcome(b, "out-2", 0, &dup, &st), RD_OK);
    assert_false(dup);
    rd_store_destroy(a);
    rd_store_destroy(b);
}

static void test_turn_read_from_other_replica(void **state)
{
    skip_without_redis();
    char prefix[32];
    fresh_prefix(prefix, sizeof prefix, "turn");
    rd_store *a = redis_store_at(shared_redis.port, prefix);
    rd_store *b = redis_store_at(shared_redis.port, prefix);
    rd_trace_event ev[2] = {conf_event(RD_EV_TOOL_ERROR, "search", 5),
                            conf_event(RD_EV_RETRY, "search", 6)};
    snprintf(ev[0].error, sizeof ev[0].error, "tab\there, newline\nthere, 5:colon");
    ev[0].retryability = RD_TRANSIENT;
    ev[0].executed = true;
    ev[1].retry_count = 2;
    ev[1].timeout_ms = 1234;
    int64_t started = 0;
    rd_status st;
    assert_int_equal(a->ops->turn_append(a, "T1", ev, 2, 0, &started, &st), RD_OK);
    assert_true(started > 1600000000000LL);

    rd_trace_event *out = NULL;
    size_t n = 0;
    int64_t started_b = 0;
    assert_int_equal(b->ops->turn_read(b, "T1", 0, &out, &n, &started_b, &st), RD_OK);
    assert_int_equal(n, 2);
    assert_int_equal(started_b, started);
    assert_string_equal(out[0].error, ev[0].error);
    assert_int_equal(out[0].retryability, RD_TRANSIENT);
    assert_true(out[0].executed);
    assert_int_equal(out[1].retry_count, 2);
    assert_int_equal(out[1].timeout_ms, 1234);
    assert_int_equal(out[1].sequence, 2);
    free(out);

    char key[128];
    snprintf(key, sizeof key, "%s{turn:T1}:events", prefix);
    redisReply *ttl = rd_harness_cmd(shared_redis.port, "PTTL %s", key);
    assert_true(ttl && ttl->integer > 0 && ttl->integer <= 60000); /* the turn TTL */
    freeReplyObject(ttl);
    rd_store_destroy(a);
    rd_store_destroy(b);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN); /* a write to a killed Redis is an error, not death */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replicas_share_breaker),
        cmocka_unit_test(test_one_probe_across_replicas),
        cmocka_unit_test(test_expired_lease_frees_permit),
        cmocka_unit_test(test_old_generation_outcome_discarded),
        cmocka_unit_test(test_outcome_dedup_across_replicas),
        cmocka_unit_test(test_turn_read_from_other_replica),
    };
    return cmocka_run_group_tests_name("store_redis_replicas", tests, start_shared_redis,
                                       stop_shared_redis);
}
