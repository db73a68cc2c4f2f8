/* The Redis store against a real redis-server: the store conformance
 * suite (caller's time, sweeping evict, a fresh key prefix per test), then
 * its options: AUTH with a password (never in a message), the options it
 * refuses, its name and stats.
 *
 * The rest of the Redis store's tests are one program per theme:
 * test_store_redis_scripts.c (how the scripts are loaded and run, what
 * they write), test_store_redis_in_place.c (the calls that need no script),
 * test_store_redis_replicas.c (several stores sharing one Redis),
 * test_store_redis_outages.c (restart, outage, Sentinel failover),
 * test_store_redis_cache.c (the local caches' staleness bounds),
 * test_store_redis_batches.c (outcomes sent in batches), all on
 * store_redis_fixture.h; test_store_redis_cluster.c on a Redis Cluster. */
#include "store_conformance.h"
#include "store_redis_fixture.h"

#include "store/resilient.h"

/* ---- the conformance suite: caller's time, sweeping evict ---- */

static rd_store *conformance_make(const rd_store_limits *limits)
{
    skip_without_redis();
    char prefix[32];
    fresh_prefix(prefix, sizeof prefix, "conf");
    rd_redis_options o = {
        .port = shared_redis.port,
        .key_prefix = prefix,
        .use_caller_time = true,
        .evict_sweep = true,
        .command_timeout_ms = CALM_COMMAND_TIMEOUT_MS,
        .limits = *limits,
    };
    rd_status st = {0};
    return rd_store_redis_new(&o, &st);
}

static rd_store_conformance redis_backend = {.make = conformance_make};

/* ---- options ---- */

static void test_password_and_bad_options(void **state)
{
    skip_without_redis();
    rd_redis_proc p;
    const char *args[] = {"--requirepass", "s3cret-pw", NULL};
    assert_int_equal(rd_redis_proc_start(&p, 0, args), 0);
    rd_redis_options o = {.port = p.port, .password = "s3cret-pw", .limits = test_limits()};
    rd_status st = {0};
    rd_store *s = rd_store_redis_new(&o, &st);
    must_record(s, "x", &three_strikes, RD_OUTCOME_SUCCESS, 0);
    rd_store_destroy(s);

    o.password = "wrong-pw";
    s = rd_store_redis_new(&o, &st);
    rd_store_result r;
    assert_int_equal(s->ops->record(s, "x", &three_strikes, 0, RD_OUTCOME_SUCCESS, 0, &r, &st),
                     RD_ERR_UNAVAILABLE);
    assert_null(strstr(st.msg, "wrong-pw")); /* never in a message */
    assert_non_null(strstr(st.msg, "AUTH"));
    rd_store_destroy(s);

    o.password = NULL;
    o.key_prefix = "a{b";
    assert_null(rd_store_redis_new(&o, &st));
    assert_int_equal(st.code, RD_ERR_CONFIG);
    assert_non_null(strstr(st.msg, "key_prefix"));
    o.key_prefix = NULL;
    const char *bad[] = {"no-port-here"};
    o.sentinels = bad;
    o.n_sentinels = 1;
    assert_null(rd_store_redis_new(&o, &st));
    assert_non_null(strstr(st.msg, "sentinels"));
    rd_redis_proc_stop(&p);
}

static void test_destroy_null_and_name(void **state)
{
    skip_without_redis();
    rd_store_destroy(NULL);
    rd_store *s = redis_store_at(shared_redis.port, "name:");
    assert_string_equal(s->ops->name, "redis");
    rd_redis_stats stats;
    assert_true(rd_store_redis_stats(s, &stats));
    assert_false(rd_store_redis_stats(NULL, &stats));
    assert_false(rd_store_degraded(s));
    rd_store_destroy(s);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN); /* a write to a killed Redis is an error, not death */
    const struct CMUnitTest tests[] = {
        RD_STORE_CONFORMANCE_TESTS(&redis_backend),
        cmocka_unit_test(test_password_and_bad_options),
        cmocka_unit_test(test_destroy_null_and_name),
    };
    return cmocka_run_group_tests_name("store_redis", tests, start_shared_redis,
                                       stop_shared_redis);
}
