/* The Redis store's local cache of breakers (store/redis_cache.c) on its
 * own: which of two replies about one tool an entry keeps, whatever order
 * they are noted in. Replies of one version differ only in what moves
 * without moving the version (a CLOSED breaker's streak), so the entry
 * keeps the reply to the command sent last; a reply of a newer version
 * always wins, one of an older version never does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "domain/breaker.h"
#include "platform/clock.h"
#include "store/redis_cache.h"

enum { CACHE_MS = 60000, REDIS_NOW = 1000000, VERSION = 7 };

static redis_store *cache_new(void)
{
    redis_store *r = calloc(1, sizeof *r);
    assert_non_null(r);
    rd_redis_cache_init(&r->cache);
    r->local_cache = true;
    r->closed_cache_ms = CACHE_MS;
    r->read_cache_ms = CACHE_MS;
    atomic_store(&r->cache.usable, true);
    return r;
}

static void cache_free(redis_store *r)
{
    rd_redis_cache_destroy(&r->cache);
    free(r);
}

/* A reply showing the tool CLOSED with this streak, to a command sent at
 * mono_sent_ms. */
static void note_streak(redis_store *r, int64_t version, uint32_t streak, int64_t mono_sent_ms)
{
    rd_breaker b;
    rd_breaker_init(&b, REDIS_NOW);
    b.consecutive_failures = streak;
    rd_redis_cache_note(r, "api", &b, version, REDIS_NOW, mono_sent_ms,
                        rd_redis_cache_seq(r));
}

static uint32_t read_streak(redis_store *r)
{
    rd_breaker out;
    bool found = false;
    assert_true(rd_redis_cache_read(r, "api", REDIS_NOW, &out, &found));
    assert_true(found);
    return out.consecutive_failures;
}

/* A read sent before this replica's batch landed is answered after the
 * batch's own reply was noted: the batch's streak stays. */
static void test_reply_to_an_earlier_command_does_not_replace(void **state)
{
    (void)state;
    redis_store *r = cache_new();
    int64_t now = rd_clock_mono_ms();
    note_streak(r, VERSION, 5, now);       /* the batch, sent last */
    note_streak(r, VERSION, 3, now - 10); /* the read, sent before it */
    assert_int_equal(read_streak(r), 5);
    cache_free(r);
}

static void test_reply_to_a_later_command_replaces(void **state)
{
    (void)state;
    redis_store *r = cache_new();
    int64_t now = rd_clock_mono_ms();
    note_streak(r, VERSION, 3, now - 10);
    note_streak(r, VERSION, 5, now);
    assert_int_equal(read_streak(r), 5);
    cache_free(r);
}

/* A transition moves the version: its reply wins even to a command sent
 * earlier, and an older version never comes back. */
static void test_versions_decide_before_send_times(void **state)
{
    (void)state;
    redis_store *r = cache_new();
    int64_t now = rd_clock_mono_ms();
    note_streak(r, VERSION, 3, now);
    note_streak(r, VERSION + 1, 0, now - 10);
    assert_int_equal(read_streak(r), 0);
    note_streak(r, VERSION, 9, now + 10);
    assert_int_equal(read_streak(r), 0);
    cache_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reply_to_an_earlier_command_does_not_replace),
        cmocka_unit_test(test_reply_to_a_later_command_replaces),
        cmocka_unit_test(test_versions_decide_before_send_times),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
