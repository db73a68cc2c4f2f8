/* What Redis trouble does to the Redis store: a restart on the same port
 * (fails fast, then recovers), a hung or dead server under the resilient
 * wrapper (degraded mode, answered in time, shared again once it is back),
 * a Sentinel failover followed, and calls answered from the local cache
 * not delaying the wrapper's trip. Every test starts, kills and stops a
 * redis-server (and sentinels) of its own. */
#include "store_redis_fixture.h"

#include "store/resilient.h"

/* ---- Redis restarted on the same port ---- */

static int retry_record_until_ok(rd_store *s, const char *tool, int timeout_ms,
                                 rd_store_result *r)
{
    int64_t until = rd_harness_now_ms() + timeout_ms;
    rd_status st;
    int rc;
    do {
        rc = s->ops->record(s, tool, &three_strikes, 0, RD_OUTCOME_TRANSIENT_FAILURE, 0, r, &st);
        if (rc == RD_OK)
            return rc;
        rd_harness_sleep_ms(20);
    } while (rd_harness_now_ms() < until);
    return rc;
}

static void test_recovers_after_restart(void **state)
{
    skip_without_redis();
    rd_redis_proc p;
    assert_int_equal(rd_redis_proc_start(&p, 0, NULL), 0);
    rd_store *s = redis_store_at(p.port, "restart:");
    must_record(s, "x", &three_strikes, RD_OUTCOME_TRANSIENT_FAILURE, 0);

    rd_redis_proc_kill(&p);
    rd_store_result r;
    rd_status st = {0};
    int64_t t0 = rd_harness_now_ms();
    assert_int_equal(s->ops->record(s, "x", &three_strikes, 0, RD_OUTCOME_TRANSIENT_FAILURE, 0,
                                    &r, &st),
                     RD_ERR_UNAVAILABLE);
    assert_true(rd_harness_now_ms() - t0 < 1000);
    assert_non_null(strstr(st.msg, "redis"));

    assert_int_equal(rd_redis_proc_restart(&p), 0);
    assert_int_equal(retry_record_until_ok(s, "x", 3000, &r), RD_OK);
    /* nothing was persisted: the breaker starts over (and scripts reload) */
    assert_int_equal(r.breaker.consecutive_failures, 1);
    rd_store_destroy(s);
    rd_redis_proc_stop(&p);
}

/* ---- degraded mode ---- */

static int timed_admit(rd_store *s, const char *tool, int64_t *elapsed_ms)
{
    rd_store_result r;
    rd_status st;
    rd_status_clear(&st);
    int64_t t0 = rd_harness_now_ms();
    int rc = s->ops->admit(s, tool, &three_strikes, 0, 100, &r, &st);
    *elapsed_ms = rd_harness_now_ms() - t0;
    last_admit_degraded = st.store_degraded;
    return rc;
}

static bool wait_until_shared(rd_store *s, int timeout_ms)
{
    int64_t until = rd_harness_now_ms() + timeout_ms;
    while (rd_store_degraded(s) && rd_harness_now_ms() < until)
        rd_harness_sleep_ms(20);
    return !rd_store_degraded(s);
}

#define DEGRADED_TIMEOUT_MS 50

/* Calls made while Redis cannot answer: all succeed, and once the outage
 * is known each is answered well within the command budget. */
static void calls_during_outage(rd_store *s)
{
    int64_t slowest_after_detection = 0;
    for (int i = 0; i < 100; i++) {
        int64_t ms;
        assert_int_equal(timed_admit(s, "payments", &ms), RD_OK);
        if (i >= 2 && ms > slowest_after_detection)
            slowest_after_detection = ms;
    }
    assert_true(rd_store_degraded(s));
    assert_true(last_admit_degraded);
    assert_true(slowest_after_detection < 2 * DEGRADED_TIMEOUT_MS);
}

static void test_degraded_mode_and_return(void **state)
{
    skip_without_redis();
    rd_redis_proc p;
    assert_int_equal(rd_redis_proc_start(&p, 0, NULL), 0);
    rd_redis_options o = {.port = p.port, .key_prefix = "deg:",
                          .command_timeout_ms = DEGRADED_TIMEOUT_MS, .limits = test_limits()};
    rd_status st;
    rd_store *redis = rd_store_redis_new(&o, &st);
    rd_store_limits lim = test_limits();
    rd_resilience_options ro = {.failure_threshold = 2, .probe_interval_ms = 100};
    rd_store *s = rd_store_resilient_new(redis, rd_store_memory_new(&lim), &ro);
    int64_t ms;
    assert_int_equal(timed_admit(s, "payments", &ms), RD_OK);
    assert_false(rd_store_degraded(s));
    assert_false(last_admit_degraded);

    kill(p.pid, SIGSTOP); /* hung: every command times out */
    calls_during_outage(s);
    uint64_t errors = rd_store_error_count(s);
    assert_true(errors >= 2);
    kill(p.pid, SIGCONT);
    assert_true(wait_until_shared(s, 3000));

    rd_redis_proc_kill(&p); /* gone: connections refused */
    calls_during_outage(s);
    assert_true(rd_store_error_count(s) > errors);
    assert_int_equal(rd_redis_proc_restart(&p), 0);
    assert_true(wait_until_shared(s, 3000));

    /* shared again: what this replica writes, another one reads */
    rd_store_result r;
    rd_status_clear(&st);
    assert_int_equal(s->ops->record(s, "payments", &three_strikes, 0,
                                    RD_OUTCOME_TRANSIENT_FAILURE, 0, &r, &st),
                     RD_OK);
    assert_false(st.store_degraded);
    rd_store *other = redis_store_at(p.port, "deg:");
    rd_breaker b;
    bool found;
    assert_int_equal(other->ops->get(other, "payments", 0, &b, &found, &st), RD_OK);
    assert_true(found);
    assert_int_equal(b.consecutive_failures, 1);
    rd_store_destroy(other);
    rd_store_destroy(s);
    rd_redis_proc_stop(&p);
}

/* ---- Sentinel ---- */

static bool sentinel_knows_replica(void *arg)
{
    redisReply *r = rd_harness_cmd(*(int *)arg, "SENTINEL replicas mymaster");
    bool known = r && r->type == REDIS_REPLY_ARRAY && r->elements > 0;
    if (r)
        freeReplyObject(r);
    return known;
}

/* A sentinel refuses (NOGOODSLAVE) until it has seen the replica healthy
 * for a while; ask again until it accepts. */
static bool failover_accepted(void *arg)
{
    redisReply *r = rd_harness_cmd(*(int *)arg, "SENTINEL FAILOVER mymaster");
    bool ok = r && r->type == REDIS_REPLY_STATUS && strcmp(r->str, "OK") == 0;
    if (r && !ok && r->type == REDIS_REPLY_ERROR)
        print_message("sentinel: %s\n", r->str);
    if (r)
        freeReplyObject(r);
    return ok;
}

typedef struct master_check {
    int sentinel_port;
    int want_port;
} master_check;

static bool sentinel_names_master(void *arg)
{
    master_check *m = arg;
    redisReply *r = rd_harness_cmd(m->sentinel_port, "SENTINEL get-master-addr-by-name mymaster");
    bool ok = r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
              atoi(r->element[1]->str) == m->want_port;
    if (r)
        freeReplyObject(r);
    return ok;
}

static bool replica_linked(void *arg)
{
    redisReply *r = rd_harness_cmd(*(int *)arg, "ROLE");
    bool ok = r && r->type == REDIS_REPLY_ARRAY && r->elements >= 4 &&
              strcmp(r->element[3]->str, "connected") == 0;
    if (r)
        freeReplyObject(r);
    return ok;
}

typedef struct follow_check {
    rd_store *store;
    int new_master_port;
} follow_check;

/* A write through the store lands on the new master. */
static bool store_writes_to(void *arg)
{
    follow_check *f = arg;
    rd_store_result r;
    rd_status st;
    if (f->store->ops->record(f->store, "after", &three_strikes, 0,
                              RD_OUTCOME_TRANSIENT_FAILURE, 0, &r, &st) != RD_OK) {
        print_message("during failover: %s\n", st.msg);
        return false;
    }
    int64_t cf;
    return rd_harness_record_field(f->new_master_port, "sent:{tool:after}:breaker", RD_REC_CF,
                                   &cf) &&
           cf == (int64_t)r.breaker.consecutive_failures;
}

static void test_sentinel_follows_failover(void **state)
{
    skip_without_redis();
    rd_redis_proc master, replica, sentinels[3];
    assert_int_equal(rd_redis_proc_start(&master, 0, NULL), 0);
    char master_port[16];
    snprintf(master_port, sizeof master_port, "%d", master.port);
    const char *replica_args[] = {"--replicaof", "127.0.0.1", master_port, NULL};
    assert_int_equal(rd_redis_proc_start(&replica, 0, replica_args), 0);
    assert_true(wait_for(replica_linked, &replica.port, 10000));
    char spec[3][32];
    const char *specs[3];
    for (int i = 0; i < 3; i++) {
        assert_int_equal(rd_sentinel_proc_start(&sentinels[i], master.port), 0);
        snprintf(spec[i], sizeof spec[i], "127.0.0.1:%d", sentinels[i].port);
        specs[i] = spec[i];
    }
    assert_true(wait_for(sentinel_knows_replica, &sentinels[0].port, 10000));

    rd_redis_options o = {.sentinels = specs, .n_sentinels = 3, .master_name = "mymaster",
                          .key_prefix = "sent:", .limits = test_limits()};
    rd_status st;
    rd_store *s = rd_store_redis_new(&o, &st);
    assert_non_null(s);
    rd_store_result r = must_record(s, "before", &three_strikes, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    assert_int_equal(r.breaker.consecutive_failures, 1);
    redisReply *on_master = rd_harness_cmd(master.port, "EXISTS sent:{tool:before}:breaker");
    assert_int_equal(on_master->integer, 1);
    freeReplyObject(on_master);

    assert_true(wait_for(failover_accepted, &sentinels[0].port, 10000));
    master_check promoted = {.sentinel_port = sentinels[0].port, .want_port = replica.port};
    assert_true(wait_for(sentinel_names_master, &promoted, 10000));
    follow_check follow = {.store = s, .new_master_port = replica.port};
    assert_true(wait_for(store_writes_to, &follow, 10000));

    rd_store_destroy(s);
    for (int i = 0; i < 3; i++)
        rd_redis_proc_stop(&sentinels[i]);
    rd_redis_proc_stop(&replica);
    rd_redis_proc_stop(&master);
}

/* ---- the local cache in an outage ---- */

/* A call answered from the closed cache never reached Redis, so it says
 * nothing about Redis: between two calls that time out, it must not reset
 * the resilient wrapper's count of failures in a row and delay the trip. */
static void test_local_answers_do_not_delay_the_trip(void **state)
{
    skip_without_redis();
    rd_redis_proc p;
    assert_int_equal(rd_redis_proc_start(&p, 0, NULL), 0);
    rd_redis_options o = {.port = p.port, .key_prefix = "trip:", .closed_cache_ms = 60000,
                          .command_timeout_ms = DEGRADED_TIMEOUT_MS, .limits = test_limits()};
    rd_store *redis = subscribed_store(&o);
    rd_store_limits lim = test_limits();
    rd_resilience_options ro = {.failure_threshold = 2, .probe_interval_ms = 60000};
    rd_store *s = rd_store_resilient_new(redis, rd_store_memory_new(&lim), &ro);
    must_admit(s, "cached", &three_strikes, 100);
    uint64_t hits = cache_hits(redis);
    must_admit(s, "cached", &three_strikes, 100);
    assert_int_equal(cache_hits(redis), hits + 1);

    kill(p.pid, SIGSTOP); /* hung: every command times out */
    must_admit(s, "unseen-1", &three_strikes, 100);
    assert_true(last_admit_degraded);
    assert_false(rd_store_degraded(s));
    must_admit(s, "cached", &three_strikes, 100);
    assert_int_equal(cache_hits(redis), hits + 2);
    assert_false(last_admit_degraded);
    must_admit(s, "unseen-2", &three_strikes, 100);
    assert_true(rd_store_degraded(s)); /* the second failure in a row */
    must_admit(s, "cached", &three_strikes, 100);
    assert_int_equal(cache_hits(redis), hits + 2); /* tripped: straight to memory */
    assert_true(last_admit_degraded);

    kill(p.pid, SIGCONT);
    rd_store_destroy(s);
    rd_redis_proc_stop(&p);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN); /* a write to a killed Redis is an error, not death */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recovers_after_restart),
        cmocka_unit_test(test_degraded_mode_and_return),
        cmocka_unit_test(test_sentinel_follows_failover),
        cmocka_unit_test(test_local_answers_do_not_delay_the_trip),
    };
    return cmocka_run_group_tests_name("store_redis_outages", tests, check_redis, NULL);
}
