/* Outcomes the Redis store counts locally and sends in batches, on a real
 * redis-server: exact for the replica that counted them, seen by the
 * others within the batch interval, the failure that trips sent at once,
 * a batch from an epoch that is over dropped, what a store being destroyed
 * counted sent, a batch of one success sent without a script, every
 * outcome counted once under many threads, and what is never batched
 * (probes, the failure-rate mode, quorum tripping). */
#include "store_redis_fixture.h"

#include <pthread.h>
#include <stdatomic.h>

#include "platform/clock.h"

static bool streak_is(rd_store *s, const char *tool, uint32_t want)
{
    return must_get(s, tool).consecutive_failures == want;
}

typedef struct streak_wait {
    rd_store *s;
    const char *tool;
    uint32_t want;
} streak_wait;

static bool streak_reached(void *arg)
{
    streak_wait *w = arg;
    return streak_is(w->s, w->tool, w->want);
}

/* Outcomes on a CLOSED breaker far from its threshold are counted locally:
 * the replica that counted them sees them at once, others within the batch
 * interval, and the failure that reaches the threshold on one replica is
 * recorded at once and opens the breaker, as in the memory store. */
static void test_batched_outcomes_keep_one_replica_exact(void **state)
{
    replica_pair pair = pair_new("batch", 1000, 200);
    rd_store *a = pair.a, *b = pair.b;

    must_admit(a, "api", &three_strikes, 100);
    uint64_t deferred = stats_of(a).deferred;
    rd_store_result r = must_record(a, "api", &three_strikes, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    assert_int_equal(r.breaker.consecutive_failures, 1);
    r = must_record(a, "api", &three_strikes, RD_OUTCOME_SUCCESS, 0);
    assert_int_equal(r.breaker.consecutive_failures, 0);
    r = must_record(a, "api", &three_strikes, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    assert_int_equal(r.breaker.consecutive_failures, 1);
    assert_int_equal(stats_of(a).deferred, deferred + 3);

    /* the other replica: within the batch interval */
    streak_wait w = {b, "api", 1};
    assert_true(wait_for(streak_reached, &w, 2000));
    /* this replica: at once, in order (failure, success, failure) */
    r = must_record(a, "api", &three_strikes, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    assert_int_equal(r.breaker.consecutive_failures, 2);
    assert_true(streak_is(a, "api", 2));

    /* the third failure in a row reaches the threshold: recorded at once */
    r = must_record(a, "api", &three_strikes, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    assert_int_equal(r.transition, RD_TRANSITION_OPENED);
    assert_int_equal(must_get(b, "api").stored, RD_BREAKER_OPEN);
    pair_free(&pair);
}

/* A batch counted in an epoch that is over (the breaker was reset
 * meanwhile) is dropped; a store being destroyed sends what it counted. */
static void test_batches_respect_epochs_and_survive_shutdown(void **state)
{
    replica_pair pair = pair_new("epoch", 5000, 1000);
    rd_store *a = pair.a, *b = pair.b;

    must_admit(a, "api", &three_strikes, 100);
    must_record(a, "api", &three_strikes, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    rd_store_result r;
    rd_status st = {0};
    assert_int_equal(b->ops->force(b, "api", RD_FORCE_RESET, 0, 0, &r, &st), RD_OK);
    assert_true(streak_is(a, "api", 0)); /* a's get sent the old epoch's batch: dropped */

    must_admit(a, "web", &three_strikes, 100);
    must_record(a, "web", &three_strikes, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    rd_store_destroy(a); /* sends what it counted */
    pair.a = redis_store_at(shared_redis.port, pair.prefix);
    assert_true(streak_is(b, "web", 1));
    pair_free(&pair);
}

/* A batch that holds one success, on an unchanging CLOSED breaker, is sent
 * as that success without a script; one from an epoch that is over is
 * still dropped, and each outcome counts once. */
typedef struct calls_wait {
    rd_store *s;
    const rd_breaker_policy *p;
    uint64_t want;
} calls_wait;

static bool calls_reached(void *arg)
{
    calls_wait *w = arg;
    return window_calls(w->s, "api", w->p, rd_clock_unix_ms()) == w->want;
}

static void test_single_success_batches_run_no_script(void **state)
{
    replica_pair pair = pair_new("one", 5000, 50);
    rd_store *a = pair.a, *b = pair.b;
    int port = shared_redis.port;
    const rd_breaker_policy p = {.failure_threshold = 3, .success_threshold = 1,
                                 .open_timeout_ms = 60000, .window_ms = 86400000};
    must_admit(a, "api", &p, 100);
    /* the first success of a bucket finds its slot empty: the script */
    must_record(a, "api", &p, RD_OUTCOME_SUCCESS, 0);
    calls_wait w = {b, &p, 1};
    assert_true(wait_for(calls_reached, &w, 2000));

    /* the next ones find it holding their bucket; one more run of the script
     * is allowed for a bucket that began meanwhile */
    long long fcalls = rd_harness_command_calls(port, "fcall");
    long long counts = rd_harness_command_calls(port, "incr");
    for (int i = 0; i < 2; i++) {
        must_record(a, "api", &p, RD_OUTCOME_SUCCESS, 0);
        rd_harness_sleep_ms(250); /* flushed: 50 ms batches */
    }
    assert_true(rd_harness_command_calls(port, "fcall") <= fcalls + 1);
    assert_int_equal(rd_harness_command_calls(port, "incr"), counts + 2);
    w.want = 3;
    assert_true(wait_for(calls_reached, &w, 2000));

    /* a success counted before a reset elsewhere is not counted after it */
    must_record(a, "api", &p, RD_OUTCOME_SUCCESS, 0);
    rd_store_result r;
    rd_status st = {0};
    assert_int_equal(b->ops->force(b, "api", RD_FORCE_RESET, 0, 0, &r, &st), RD_OK);
    rd_harness_sleep_ms(300);
    assert_int_equal(window_calls(b, "api", &p, rd_clock_unix_ms()), 3);
    pair_free(&pair);
}

/* Outcomes recorded by many threads while the flusher runs: every one is
 * counted in the window exactly once. */
static void test_batched_outcomes_under_concurrency(void **state)
{
    replica_pair pair = pair_new("batchrace", 5000, 2);
    const rd_breaker_policy p = {.failure_threshold = 1000000, .success_threshold = 1,
                                 .open_timeout_ms = 60000, .window_ms = 60000};
    must_admit(pair.a, "api", &p, 100);
    atomic_int errors = 0;
    batch_racer shared = {.s = pair.a, .p = &p, .errors = &errors};
    pthread_t threads[BATCH_THREADS];
    for (int i = 0; i < BATCH_THREADS; i++)
        assert_int_equal(pthread_create(&threads[i], NULL, batch_racer_main, &shared), 0);
    for (int i = 0; i < BATCH_THREADS; i++)
        pthread_join(threads[i], NULL);
    assert_int_equal(atomic_load(&errors), 0);
    assert_true(stats_of(pair.a).deferred > 0);

    rd_breaker b;
    rd_breaker_evidence ev;
    bool found;
    rd_status st = {0};
    assert_int_equal(pair.a->ops->stats(pair.a, "api", &p, 0, &b, &ev, &found, &st), RD_OK);
    assert_int_equal(ev.calls, BATCH_THREADS * BATCH_OUTCOMES);
    assert_int_equal(ev.failures, BATCH_THREADS * ((BATCH_OUTCOMES + 2) / 3));
    assert_int_equal(stats_of(pair.a).deferred_dropped, 0);
    pair_free(&pair);
}

/* Probes, the failure-rate mode and quorum tripping are never batched. */
static void test_what_is_never_batched(void **state)
{
    replica_pair pair = pair_new("never", 1000, 200);
    rd_store *a = pair.a;
    const rd_breaker_policy rate = {
        .failure_threshold = 3, .success_threshold = 1, .open_timeout_ms = 60000,
        .mode = RD_BREAKER_MODE_FAILURE_RATE, .failure_rate_threshold = 50,
        .minimum_calls = 10, .window_ms = 60000};
    const rd_breaker_policy quorum = {
        .failure_threshold = 3, .success_threshold = 1, .open_timeout_ms = 60000,
        .quorum_min_executors = 2, .quorum_window_ms = 60000};
    const rd_breaker_policy brief = {
        .failure_threshold = 1, .success_threshold = 1, .open_timeout_ms = 1};
    must_admit(a, "rate", &rate, 100);
    must_admit(a, "quorum", &quorum, 100);
    must_record(a, "probe", &brief, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    rd_harness_sleep_ms(5); /* half-open */
    rd_store_result permit = must_admit(a, "probe", &brief, 1000);
    assert_int_equal(permit.admission, RD_ADMIT_PROBE);

    uint64_t deferred = stats_of(a).deferred;
    must_record(a, "rate", &rate, RD_OUTCOME_SUCCESS, 0);
    must_record(a, "quorum", &quorum, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    rd_store_result closed =
        must_record(a, "probe", &brief, RD_OUTCOME_SUCCESS, permit.permit_token);
    assert_int_equal(closed.transition, RD_TRANSITION_CLOSED);
    assert_int_equal(stats_of(a).deferred, deferred);
    pair_free(&pair);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN); /* a write to a killed Redis is an error, not death */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batched_outcomes_keep_one_replica_exact),
        cmocka_unit_test(test_batches_respect_epochs_and_survive_shutdown),
        cmocka_unit_test(test_single_success_batches_run_no_script),
        cmocka_unit_test(test_batched_outcomes_under_concurrency),
        cmocka_unit_test(test_what_is_never_batched),
    };
    return cmocka_run_group_tests_name("store_redis_batches", tests, start_shared_redis,
                                       stop_shared_redis);
}
