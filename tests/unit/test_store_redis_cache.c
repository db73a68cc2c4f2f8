/* The Redis store's local caches on a real redis-server, and the bound on
 * their staleness: an OPEN breaker refused from the cache until its
 * open_until, a CLOSED one admitted locally for at most closed_cache_ms,
 * reads answered from the last reply for at most read_cache_ms (tools
 * without a breaker included), a published change dropping an entry at
 * once, and reads racing outcomes that are batched and flushed. */
#include "store_redis_fixture.h"

#include <pthread.h>
#include <stdatomic.h>

static bool invalidated(void *arg)
{
    rd_redis_stats stats;
    return rd_store_redis_stats(arg, &stats) && stats.invalidations > 0;
}

/* An OPEN breaker is refused from the cache; a published change drops the
 * entry at once; a change nobody published is served stale at most until
 * the open_until the entry holds. */
static void test_cache_staleness_bound(void **state)
{
    skip_without_redis();
    char prefix[32], key[128], channel[64];
    fresh_prefix(prefix, sizeof prefix, "cache");
    api_key(key, prefix, "breaker");
    snprintf(channel, sizeof channel, "%sbreaker-events", prefix);
    rd_store *s = redis_store_at(shared_redis.port, prefix);
    assert_true(wait_for(subscribed, s, 3000));
    const rd_breaker_policy p = {.failure_threshold = 1, .success_threshold = 1,
                                 .open_timeout_ms = 800};

    must_record(s, "api", &p, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    uint64_t hits = cache_hits(s);
    assert_int_equal(must_admit(s, "api", &p, 100).admission, RD_ADMIT_NO);
    assert_int_equal(cache_hits(s), hits + 1);

    /* an operator's reset elsewhere, published */
    redisReply *r = rd_harness_cmd(shared_redis.port, "DEL %s", key);
    freeReplyObject(r);
    r = rd_harness_cmd(shared_redis.port, "PUBLISH %s %s", channel, "99 1 api");
    freeReplyObject(r);
    assert_true(wait_for(invalidated, s, 2000));
    assert_int_equal(must_admit(s, "api", &p, 100).admission, RD_ADMIT_YES);

    /* the same reset, unpublished: stale NO until open_until, then Redis */
    rd_store_result opened = must_record(s, "api", &p, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    int64_t t0 = rd_harness_now_ms();
    r = rd_harness_cmd(shared_redis.port, "DEL %s", key);
    freeReplyObject(r);
    hits = cache_hits(s);
    assert_int_equal(must_admit(s, "api", &p, 100).admission, RD_ADMIT_NO);
    assert_int_equal(cache_hits(s), hits + 1);
    int64_t open_for = opened.breaker.open_until_ms - opened.now_ms;
    rd_harness_sleep_ms((int)(open_for - (rd_harness_now_ms() - t0)) + 20);
    assert_int_equal(must_admit(s, "api", &p, 100).admission, RD_ADMIT_YES);
    rd_store_destroy(s);
}

/* Writes an OPEN record straight into Redis, as a change nobody published. */
static void open_behind_the_cache(const char *prefix, const char *tool)
{
    char key[128];
    snprintf(key, sizeof key, "%s{tool:%s}:breaker", prefix, tool);
    assert_true(rd_harness_record_put(shared_redis.port, key, RD_REC_ST, RD_BREAKER_OPEN));
    /* open until the year 2255 */
    assert_true(rd_harness_record_put(shared_redis.port, key, RD_REC_OU, 9000000000000));
    assert_true(rd_harness_record_put(shared_redis.port, key, RD_REC_GEN, 7));
}

/* An admission check on a CLOSED breaker is answered locally; a published
 * change drops the entry at once; an unpublished one is served stale for
 * at most closed_cache_ms. */
static void test_closed_cache_staleness_bound(void **state)
{
    replica_pair pair = pair_new("closed", 300, 0);
    rd_store *a = pair.a, *b = pair.b;
    const rd_breaker_policy once = {.failure_threshold = 1, .success_threshold = 1,
                                    .open_timeout_ms = 60000};

    assert_int_equal(must_admit(a, "api", &once, 100).admission, RD_ADMIT_YES);
    uint64_t hits = cache_hits(a);
    assert_int_equal(must_admit(a, "api", &once, 100).admission, RD_ADMIT_YES);
    assert_int_equal(cache_hits(a), hits + 1);

    /* opened through another replica: published, so refused at once */
    assert_int_equal(must_record(b, "api", &once, RD_OUTCOME_TRANSIENT_FAILURE, 0).transition,
                     RD_TRANSITION_OPENED);
    assert_true(wait_for(invalidated, a, 2000));
    assert_int_equal(must_admit(a, "api", &once, 100).admission, RD_ADMIT_NO);

    /* opened behind the cache's back: stale YES for at most 300 ms */
    assert_int_equal(must_admit(a, "web", &once, 100).admission, RD_ADMIT_YES);
    int64_t read_at = rd_harness_now_ms();
    open_behind_the_cache(pair.prefix, "web");
    rd_store_result stale = must_admit(a, "web", &once, 100);
    if (rd_harness_now_ms() - read_at < 250)
        assert_int_equal(stale.admission, RD_ADMIT_YES);
    rd_harness_sleep_ms((int)(read_at + 320 - rd_harness_now_ms()));
    assert_int_equal(must_admit(a, "web", &once, 100).admission, RD_ADMIT_NO);
    pair_free(&pair);
}

static uint64_t read_hits(rd_store *s)
{
    return stats_of(s).read_hits;
}

/* `a` reads from the cache for 300 ms (closed cache 5 s, batches every
 * batch_ms); `b` has no cache. */
static replica_pair reading_pair_new(const char *tag, int batch_ms)
{
    replica_pair p = pair_new(tag, 0, 0);
    rd_store_destroy(p.a);
    p.a = reading_store_at(shared_redis.port, p.prefix, 5000, batch_ms, 300);
    return p;
}

/* A read of a named tool is answered from the last reply for at most
 * read_cache_ms; this replica's own outcomes and published changes are
 * seen at once; with read_cache_ms 0 every read asks Redis. */
static void test_read_cache_staleness_bound(void **state)
{
    replica_pair pair = reading_pair_new("reads", 1000);
    rd_store *a = pair.a, *b = pair.b;

    int64_t noted_at = rd_harness_now_ms();
    must_admit(a, "api", &three_strikes, 100);
    uint64_t hits = read_hits(a);
    assert_int_equal(must_get(a, "api").consecutive_failures, 0);
    assert_int_equal(read_hits(a), hits + 1);

    /* another replica's failure publishes nothing: stale for <= 300 ms */
    must_record(b, "api", &three_strikes, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    uint32_t seen = must_get(a, "api").consecutive_failures;
    if (rd_harness_now_ms() - noted_at < 250)
        assert_int_equal(seen, 0);
    rd_harness_sleep_ms((int)(noted_at + 400 - rd_harness_now_ms()));
    hits = read_hits(a);
    assert_int_equal(must_get(a, "api").consecutive_failures, 1);
    assert_int_equal(read_hits(a), hits); /* asked Redis, and noted the reply */
    assert_int_equal(must_get(a, "api").consecutive_failures, 1);
    assert_int_equal(read_hits(a), hits + 1);

    /* this replica's batched outcome: the read goes to Redis, after it */
    rd_store_result r = must_record(a, "api", &three_strikes, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    assert_int_equal(r.breaker.consecutive_failures, 2);
    hits = read_hits(a);
    assert_int_equal(must_get(a, "api").consecutive_failures, 2);
    assert_int_equal(read_hits(a), hits);

    /* opened elsewhere: published, so the next read shows OPEN */
    assert_int_equal(must_record(b, "api", &three_strikes, RD_OUTCOME_TRANSIENT_FAILURE, 0)
                         .transition,
                     RD_TRANSITION_OPENED);
    assert_true(wait_for(invalidated, a, 2000));
    assert_int_equal(must_get(a, "api").stored, RD_BREAKER_OPEN);
    hits = read_hits(a);
    assert_int_equal(must_get(a, "api").stored, RD_BREAKER_OPEN);
    assert_int_equal(read_hits(a), hits + 1);

    /* read_cache_ms 0: every read asks Redis */
    rd_store *exact = cached_store_at(shared_redis.port, pair.prefix, 5000, 1000);
    must_get(exact, "api");
    must_get(exact, "api");
    assert_int_equal(read_hits(exact), 0);
    rd_store_destroy(exact);
    pair_free(&pair);
}

static bool tool_found(rd_store *s, const char *tool)
{
    rd_breaker b;
    return read_tool(s, tool, &b);
}

/* A read that finds no breaker is remembered for reads only: admission
 * still asks Redis (and creates the breaker), and this replica's own write
 * replaces the entry at once. */
static void test_read_cache_remembers_absent_tools(void **state)
{
    replica_pair pair = reading_pair_new("absent", 1000);
    rd_store *a = pair.a, *b = pair.b;

    int64_t noted_at = rd_harness_now_ms();
    assert_false(tool_found(a, "ghost"));
    uint64_t hits = read_hits(a);
    assert_false(tool_found(a, "ghost"));
    assert_int_equal(read_hits(a), hits + 1);

    /* created elsewhere without a transition: unseen for <= 300 ms */
    must_record(b, "ghost", &three_strikes, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    bool seen = tool_found(a, "ghost");
    if (rd_harness_now_ms() - noted_at < 250)
        assert_false(seen);
    rd_harness_sleep_ms((int)(noted_at + 400 - rd_harness_now_ms()));
    assert_true(tool_found(a, "ghost"));
    assert_int_equal(must_get(a, "ghost").consecutive_failures, 1);

    /* admission is not answered from an absent entry: it creates the breaker */
    assert_false(tool_found(a, "own"));
    assert_int_equal(must_admit(a, "own", &three_strikes, 100).admission, RD_ADMIT_YES);
    assert_true(tool_found(b, "own"));
    assert_true(tool_found(a, "own"));

    /* opened elsewhere: the published change ends the absent entry */
    const rd_breaker_policy once = {.failure_threshold = 1, .success_threshold = 1,
                                    .open_timeout_ms = 60000};
    assert_false(tool_found(a, "later"));
    uint64_t dropped = stats_of(a).invalidations;
    assert_int_equal(must_record(b, "later", &once, RD_OUTCOME_TRANSIENT_FAILURE, 0).transition,
                     RD_TRANSITION_OPENED);
    for (int i = 0; i < 200 && tool_found(a, "later") == false; i++)
        rd_harness_sleep_ms(1);
    assert_int_equal(must_get(a, "later").stored, RD_BREAKER_OPEN);
    assert_true(stats_of(a).invalidations > dropped);
    pair_free(&pair);
}

#define READ_THREADS 4
#define READS_PER_THREAD 400

typedef struct read_racer {
    rd_store *s;
    atomic_int *errors;
    atomic_bool *writers_done;
} read_racer;

/* Reads while the writers run, and some more after they are done (those
 * find the entry fresh, so the cache answers under the same threads). */
static void *reader_main(void *arg)
{
    read_racer *r = arg;
    int after = 0;
    for (int i = 0; i < READS_PER_THREAD || after < 50; i++) {
        after += atomic_load(r->writers_done);
        rd_breaker b;
        bool found;
        rd_status st = {0};
        if (r->s->ops->get(r->s, "api", 0, &b, &found, &st) != RD_OK || !found)
            atomic_fetch_add(r->errors, 1);
    }
    return NULL;
}

typedef struct streak_seen {
    rd_store *s;
    uint32_t streak;
} streak_seen;

static bool reads_streak(void *arg)
{
    const streak_seen *w = arg;
    return must_get(w->s, "api").consecutive_failures == w->streak;
}

/* Reads from the cache while outcomes are batched and flushed: none fails,
 * and once the writers are done and the last batch is flushed (every
 * batch_ms, later on a loaded machine) the other replica reads from Redis
 * the streak this one answers with. */
static void test_reads_race_batched_outcomes(void **state)
{
    replica_pair pair = reading_pair_new("readrace", 2);
    const rd_breaker_policy p = {.failure_threshold = 1000000, .success_threshold = 1,
                                 .open_timeout_ms = 60000};
    must_admit(pair.a, "api", &p, 100);
    atomic_int errors = 0;
    atomic_bool writers_done = false;
    batch_racer shared = {.s = pair.a, .p = &p, .errors = &errors};
    read_racer reading = {.s = pair.a, .errors = &errors, .writers_done = &writers_done};
    pthread_t writers[BATCH_THREADS], readers[READ_THREADS];
    for (int i = 0; i < BATCH_THREADS; i++)
        assert_int_equal(pthread_create(&writers[i], NULL, batch_racer_main, &shared), 0);
    for (int i = 0; i < READ_THREADS; i++)
        assert_int_equal(pthread_create(&readers[i], NULL, reader_main, &reading), 0);
    for (int i = 0; i < BATCH_THREADS; i++)
        pthread_join(writers[i], NULL);
    atomic_store(&writers_done, true);
    for (int i = 0; i < READ_THREADS; i++)
        pthread_join(readers[i], NULL);
    assert_int_equal(atomic_load(&errors), 0);
    assert_true(read_hits(pair.a) > 0);

    uint32_t mine = must_get(pair.a, "api").consecutive_failures;
    streak_seen in_redis = {.s = pair.b, .streak = mine};
    assert_true(wait_for(reads_streak, &in_redis, 3000));
    assert_int_equal(must_get(pair.a, "api").consecutive_failures, mine);
    pair_free(&pair);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN); /* a write to a killed Redis is an error, not death */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cache_staleness_bound),
        cmocka_unit_test(test_closed_cache_staleness_bound),
        cmocka_unit_test(test_read_cache_staleness_bound),
        cmocka_unit_test(test_reads_race_batched_outcomes),
        cmocka_unit_test(test_read_cache_remembers_absent_tools),
    };
    return cmocka_run_group_tests_name("store_redis_cache", tests, start_shared_redis,
                                       stop_shared_redis);
}
