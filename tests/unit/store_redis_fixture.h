/* What the tests of the Redis store (test_store_redis*.c, one program per
 * theme) share: a redis-server of the program's own on a free 127.0.0.1
 * port (redis_harness.h), started once per program by start_shared_redis,
 * a fresh key prefix per test, stores on it, and the helpers more than one
 * program drives stores with. Tests that kill, hang or restart Redis start
 * a redis-server of their own.
 *
 * Skipped (with a message) when redis-server is not installed, failed
 * instead under RD_NO_SKIP=1. Static and static inline: include it from a
 * test program, which may use only some of it. */
#ifndef RD_TESTS_STORE_REDIS_FIXTURE_H
#define RD_TESTS_STORE_REDIS_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redis_harness.h"
#include "domain/store.h"
#include "store/redis.h"

static rd_redis_proc shared_redis;
static bool have_redis;
static atomic_int prefix_seq;

/* Under RD_NO_SKIP=1 (make test, whose install step puts redis-server on
 * the machine) a missing Redis fails the test instead of hiding. */
static inline void skip_without_redis(void)
{
    if (!have_redis) {
        const char *strict = getenv("RD_NO_SKIP");
        if (strict && strcmp(strict, "1") == 0)
            fail_msg("redis-server is not installed (scripts/install-deps.sh --test installs it)");
        print_message("redis-server is not installed: Redis store tests skipped\n");
        skip();
    }
}

static inline void fresh_prefix(char *buf, size_t size, const char *what)
{
    snprintf(buf, size, "%s%d:", what, atomic_fetch_add(&prefix_seq, 1));
}

static inline rd_store_limits test_limits(void)
{
    return (rd_store_limits){
        .tool_idle_ttl_ms = 60000,
        .turn_ttl_ms = 60000,
        .max_events_per_turn = 1000,
        .outcome_ttl_ms = 60000,
    };
}

/* The command budget of stores whose tests are not about timeouts: the
 * 50 ms default is for production, and a shared test machine (or the
 * sanitizers) can hold one Redis reply up for longer now and then. */
#define CALM_COMMAND_TIMEOUT_MS 2000

/* A store on 127.0.0.1:port with Redis time (as in production). */
static inline rd_store *redis_store_at(int port, const char *prefix)
{
    rd_redis_options o = {.port = port, .key_prefix = prefix,
                          .command_timeout_ms = CALM_COMMAND_TIMEOUT_MS, .limits = test_limits()};
    rd_status st = {0};
    rd_store *s = rd_store_redis_new(&o, &st);
    if (!s)
        fail_msg("rd_store_redis_new: %s", st.msg);
    return s;
}

static const rd_breaker_policy three_strikes = {
    .failure_threshold = 3, .success_threshold = 1, .open_timeout_ms = 60000};

static inline rd_store_result must_record(rd_store *s, const char *tool,
                                          const rd_breaker_policy *p, rd_outcome o,
                                          uint64_t token)
{
    rd_store_result r;
    rd_status st = {0};
    int rc = s->ops->record(s, tool, p, 0, o, token, &r, &st);
    if (rc != RD_OK)
        fail_msg("record %s: %s", tool, st.msg);
    return r;
}

/* Whether the last admission made by must_admit or timed_admit
 * (test_store_redis_outages.c) was answered degraded (its status says
 * so). */
static bool last_admit_degraded;

static inline rd_store_result must_admit(rd_store *s, const char *tool,
                                         const rd_breaker_policy *p, int64_t lease_ms)
{
    rd_store_result r;
    rd_status st;
    rd_status_clear(&st);
    int rc = s->ops->admit(s, tool, p, 0, lease_ms, &r, &st);
    if (rc != RD_OK)
        fail_msg("admit %s: %s", tool, st.msg);
    last_admit_degraded = st.store_degraded;
    return r;
}

/* Asks cond(arg) every 50 ms until it holds; false when timeout_ms pass
 * first. */
static inline bool wait_for(bool (*cond)(void *), void *arg, int timeout_ms)
{
    int64_t until = rd_harness_now_ms() + timeout_ms;
    while (rd_harness_now_ms() < until) {
        if (cond(arg))
            return true;
        rd_harness_sleep_ms(50);
    }
    return false;
}

/* The tool's call window as stats() reads it. */
static inline rd_breaker_evidence window_of(rd_store *s, const char *tool,
                                            const rd_breaker_policy *p, int64_t now)
{
    rd_breaker b;
    rd_breaker_evidence ev;
    bool found = false;
    rd_status st = {0};
    assert_int_equal(s->ops->stats(s, tool, p, now, &b, &ev, &found, &st), RD_OK);
    assert_true(found);
    return ev;
}

static inline uint64_t window_calls(rd_store *s, const char *tool,
                                    const rd_breaker_policy *p, int64_t now)
{
    return window_of(s, tool, p, now).calls;
}

/* The PTTL of key on the shared Redis: -1 without an expiry, -2 without
 * the key. */
static inline int64_t key_pttl(const char *key)
{
    redisReply *r = rd_harness_cmd(shared_redis.port, "PTTL %s", key);
    assert_non_null(r);
    int64_t v = r->type == REDIS_REPLY_INTEGER ? r->integer : -3;
    freeReplyObject(r);
    return v;
}

/* ---- the local caches and outcome batches ---- */

static inline bool subscribed(void *arg)
{
    rd_redis_stats stats;
    return rd_store_redis_stats(arg, &stats) && stats.subscribed;
}

static inline uint64_t cache_hits(rd_store *s)
{
    rd_redis_stats stats;
    rd_store_redis_stats(s, &stats);
    return stats.cache_hits;
}

/* The name of tool "api"'s key `part` under prefix. */
static inline void api_key(char out[128], const char *prefix, const char *part)
{
    snprintf(out, 128, "%s{tool:api}:%s", prefix, part);
}

/* A Redis store with o, once it hears the invalidations its cache needs. */
static inline rd_store *subscribed_store(const rd_redis_options *o)
{
    rd_status st = {0};
    rd_store *s = rd_store_redis_new(o, &st);
    if (!s)
        fail_msg("rd_store_redis_new: %s", st.msg);
    assert_true(wait_for(subscribed, s, 3000));
    return s;
}

/* A store as recoveryd runs it: Redis time, a closed cache, batches and
 * (read_ms > 0) reads from the cache. */
static inline rd_store *reading_store_at(int port, const char *prefix, int closed_ms,
                                         int batch_ms, int read_ms)
{
    rd_redis_options o = {.port = port, .key_prefix = prefix, .closed_cache_ms = closed_ms,
                          .outcome_batch_ms = batch_ms, .read_cache_ms = read_ms,
                          .command_timeout_ms = CALM_COMMAND_TIMEOUT_MS, .limits = test_limits()};
    return subscribed_store(&o);
}

static inline rd_store *cached_store_at(int port, const char *prefix, int closed_ms, int batch_ms)
{
    return reading_store_at(port, prefix, closed_ms, batch_ms, 0);
}

/* Two replicas on one prefix: `a` as recoveryd runs (closed cache,
 * batches), `b` without either. */
typedef struct replica_pair {
    char prefix[32];
    rd_store *a, *b;
} replica_pair;

static inline replica_pair pair_new(const char *tag, int closed_ms, int batch_ms)
{
    skip_without_redis();
    replica_pair p;
    fresh_prefix(p.prefix, sizeof p.prefix, tag);
    p.a = cached_store_at(shared_redis.port, p.prefix, closed_ms, batch_ms);
    p.b = redis_store_at(shared_redis.port, p.prefix);
    return p;
}

static inline void pair_free(replica_pair *p)
{
    rd_store_destroy(p->b);
    rd_store_destroy(p->a);
}

static inline rd_redis_stats stats_of(rd_store *s)
{
    rd_redis_stats stats;
    assert_true(rd_store_redis_stats(s, &stats));
    return stats;
}

/* Reads the tool's breaker; false when the store has none. */
static inline bool read_tool(rd_store *s, const char *tool, rd_breaker *b)
{
    bool found;
    rd_status st = {0};
    if (s->ops->get(s, tool, 0, b, &found, &st) != RD_OK)
        fail_msg("get: %s", st.msg);
    return found;
}

static inline rd_breaker must_get(rd_store *s, const char *tool)
{
    rd_breaker b;
    assert_true(read_tool(s, tool, &b));
    return b;
}

#define BATCH_THREADS 8
#define BATCH_OUTCOMES 400

typedef struct batch_racer {
    rd_store *s;
    const rd_breaker_policy *p;
    atomic_int *errors;
} batch_racer;

/* Every third outcome a transient failure, the rest successes. */
static inline void *batch_racer_main(void *arg)
{
    batch_racer *b = arg;
    for (int i = 0; i < BATCH_OUTCOMES; i++) {
        rd_outcome o = i % 3 == 0 ? RD_OUTCOME_TRANSIENT_FAILURE : RD_OUTCOME_SUCCESS;
        rd_store_result r;
        rd_status st = {0};
        if (b->s->ops->record(b->s, "api", b->p, 0, o, 0, &r, &st) != RD_OK)
            atomic_fetch_add(b->errors, 1);
    }
    return NULL;
}

/* ---- group setup: skip_without_redis needs one of them ---- */

/* The group setup of a program whose tests all start a redis-server of
 * their own: no shared one to start, only whether there is one to run. */
static inline int check_redis(void **state)
{
    have_redis = rd_harness_have_redis();
    return 0;
}

static inline int start_shared_redis(void **state)
{
    have_redis = rd_harness_have_redis();
    if (have_redis && rd_redis_proc_start(&shared_redis, 0, NULL) != 0) {
        print_error("redis-server is installed but did not start\n");
        return -1;
    }
    return 0;
}

static inline int stop_shared_redis(void **state)
{
    rd_redis_proc_stop(&shared_redis);
    return 0;
}

#endif
