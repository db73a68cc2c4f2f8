/* The Redis store's scripts on a real redis-server: how a store loads and
 * runs them (as one library of Redis Functions, by the names SCRIPT LOAD
 * gives them on a server without Functions, by their text when it refuses
 * both, loaded again after a flush), and what the breaker scripts write
 * (last_seen's slack, the key's TTL, the call window counted by bucket). */
#include "store_conformance_fixture.h"
#include "store_redis_fixture.h"

#include "store/redis_scripts.h"

/* ---- loading and running the scripts ---- */

/* Every embedded script compiles on its own (what a server without Redis
 * Functions runs), the library of all of them loads with one function per
 * script, and a store's connections call them with FCALL. */
static void test_scripts_load_as_functions_and_as_scripts(void **state)
{
    skip_without_redis();
    const rd_script *sc = rd_redis_scripts();
    for (int i = 0; i < RD_SCRIPT_COUNT; i++) {
        assert_non_null(sc[i].name);
        assert_int_equal(strlen(sc[i].source), sc[i].len);
        redisReply *r = rd_harness_cmd(shared_redis.port, "SCRIPT LOAD %b", sc[i].source,
                                       sc[i].len);
        assert_non_null(r);
        if (r->type != REDIS_REPLY_STRING)
            fail_msg("script %s does not load: %s", sc[i].name, r->str ? r->str : "?");
        freeReplyObject(r);
    }
    const rd_script_library *lib = rd_redis_script_library();
    assert_int_equal(strlen(lib->source), lib->len);
    assert_int_equal(strncmp(lib->name, "rd_", 3), 0);
    char prefix[32];
    fresh_prefix(prefix, sizeof prefix, "load");
    rd_store *s = redis_store_at(shared_redis.port, prefix);
    long long fcalls = rd_harness_command_calls(shared_redis.port, "fcall");
    long long evalshas = rd_harness_command_calls(shared_redis.port, "evalsha");
    must_admit(s, "x", &three_strikes, 100);
    must_record(s, "x", &three_strikes, RD_OUTCOME_TRANSIENT_FAILURE, 100);
    assert_int_equal(rd_harness_library_functions(shared_redis.port, lib->name), RD_SCRIPT_COUNT);
    const redis_store *rs = (const redis_store *)s;
    size_t connected = 0;
    for (size_t k = 0; k < rs->pool_size; k++) {
        if (!rs->pool[k].ctx)
            continue;
        connected++;
        assert_true(rs->pool[k].functions);
    }
    assert_true(connected >= 1);
    assert_true(rd_harness_command_calls(shared_redis.port, "fcall") >= fcalls + 2);
    assert_int_equal(rd_harness_command_calls(shared_redis.port, "evalsha"), evalshas);
    rd_store_destroy(s);
}

/* FUNCTION FLUSH behind a live connection: the next call finds no
 * function, loads the library again and runs. */
static void test_functions_reload_after_function_flush(void **state)
{
    skip_without_redis();
    char prefix[32];
    fresh_prefix(prefix, sizeof prefix, "flush");
    rd_store *s = redis_store_at(shared_redis.port, prefix);
    must_record(s, "x", &three_strikes, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    assert_true(rd_harness_cmd_is(shared_redis.port, "OK", "FUNCTION FLUSH"));
    assert_int_equal(rd_harness_library_functions(shared_redis.port, rd_redis_script_library()->name), 0);
    rd_store_result r = must_record(s, "x", &three_strikes, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    assert_int_equal(r.breaker.consecutive_failures, 2);
    rd_redis_stats stats;
    assert_true(rd_store_redis_stats(s, &stats));
    assert_true(stats.script_reloads >= 1);
    assert_int_equal(rd_harness_library_functions(shared_redis.port, rd_redis_script_library()->name),
                     RD_SCRIPT_COUNT);
    /* Redis time was used and reported */
    assert_true(r.now_ms > 1600000000000LL);
    rd_store_destroy(s);
}

/* A server without Redis Functions (the FUNCTION command renamed away, as
 * a server older than Redis 7 has none) runs every script by the name
 * SCRIPT LOAD gave it, and loads them again after SCRIPT FLUSH. */
static void test_scripts_by_name_without_functions(void **state)
{
    skip_without_redis();
    rd_redis_proc p;
    const char *const extra[] = {"--rename-command", "FUNCTION", "", NULL};
    assert_int_equal(rd_redis_proc_start(&p, 0, extra), 0);
    const rd_script *sc = rd_redis_scripts();
    char sha[RD_SCRIPT_COUNT][41];
    for (int i = 0; i < RD_SCRIPT_COUNT; i++) {
        redisReply *r = rd_harness_cmd(p.port, "SCRIPT LOAD %b", sc[i].source, sc[i].len);
        assert_true(r && r->type == REDIS_REPLY_STRING);
        snprintf(sha[i], sizeof sha[i], "%s", r->str);
        freeReplyObject(r);
    }
    rd_store *s = redis_store_at(p.port, "nofunc:");
    must_record(s, "x", &three_strikes, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    const redis_store *rs = (const redis_store *)s;
    size_t connected = 0;
    for (size_t k = 0; k < rs->pool_size; k++) {
        if (!rs->pool[k].ctx)
            continue;
        connected++;
        assert_false(rs->pool[k].functions);
        for (int i = 0; i < RD_SCRIPT_COUNT; i++)
            assert_string_equal(rs->pool[k].sha[i], sha[i]);
    }
    assert_true(connected >= 1);
    assert_true(rd_harness_command_calls(p.port, "evalsha") >= 1);
    assert_true(rd_harness_cmd_is(p.port, "OK", "SCRIPT FLUSH"));
    rd_store_result r = must_record(s, "x", &three_strikes, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    assert_int_equal(r.breaker.consecutive_failures, 2);
    rd_redis_stats stats;
    assert_true(rd_store_redis_stats(s, &stats));
    assert_true(stats.script_reloads >= 1);
    rd_store_destroy(s);
    rd_redis_proc_stop(&p);
}

/* A server that refuses both FUNCTION LOAD and SCRIPT LOAD (the commands
 * renamed away) still runs every script: a connection without a name for
 * one sends its text. */
static void test_scripts_run_by_text_without_script_load(void **state)
{
    skip_without_redis();
    rd_redis_proc p;
    const char *const extra[] = {"--rename-command", "SCRIPT", "", "--rename-command",
                                 "FUNCTION", "", NULL};
    assert_int_equal(rd_redis_proc_start(&p, 0, extra), 0);
    rd_store *s = redis_store_at(p.port, "noload:");
    must_record(s, "x", &three_strikes, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    rd_store_result r = must_record(s, "x", &three_strikes, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    assert_int_equal(r.breaker.consecutive_failures, 2);
    const redis_store *rs = (const redis_store *)s;
    for (size_t k = 0; k < rs->pool_size; k++) {
        assert_false(rs->pool[k].functions);
        assert_string_equal(rs->pool[k].sha[RD_SCRIPT_RECORD], "");
    }
    assert_true(rd_harness_command_calls(p.port, "eval") >= 2);
    rd_store_destroy(s);
    rd_redis_proc_stop(&p);
}

/* ---- what the breaker scripts write ---- */

/* A breaker that only sees time pass is not rewritten: its stored last_seen
 * (and an unheld CLOSED breaker's TTL) moves once it is older than the slack,
 * max(idle / 16, 1 s); any change writes it at once, and the TTL follows
 * every change of the kind of expiry, a timed hold running out included.
 * An idle breaker is then forgotten between idle - slack and idle after its
 * last use (docs/REDIS.md, "Eviction"). */
static void test_last_seen_slack_and_ttl(void **state)
{
    skip_without_redis();
    char prefix[32], key[128];
    fresh_prefix(prefix, sizeof prefix, "slack");
    api_key(key, prefix, "breaker");
    rd_redis_options o = {.port = shared_redis.port, .key_prefix = prefix,
                          .use_caller_time = true, .evict_sweep = true,
                          .command_timeout_ms = CALM_COMMAND_TIMEOUT_MS, .limits = test_limits()};
    o.limits.tool_idle_ttl_ms = 16000; /* slack 1 s */
    rd_status st = {0};
    rd_store *s = rd_store_redis_new(&o, &st);
    assert_non_null(s);
    rd_breaker_policy p = {.failure_threshold = 3, .success_threshold = 1,
                           .open_timeout_ms = 5000, .window_ms = 10000};
    rd_store_result r;
    bool found;

    r = conf_admit(s, "api", &p, 10000);
    assert_int_equal(r.breaker.last_seen_ms, 10000);
    assert_true(key_pttl(key) > 0);
    /* the calls key has the record's expiry while it is CLOSED without a
     * hold, and is gone otherwise */
    char calls[128];
    api_key(calls, prefix, "calls");
    assert_true(key_pttl(calls) > 0 && llabs(key_pttl(calls) - key_pttl(key)) < 1000);
    r = conf_admit(s, "api", &p, 10999);
    assert_int_equal(r.breaker.last_seen_ms, 10999); /* the reply: the call's time */
    assert_int_equal(conf_get(s, "api", 10999, &found).last_seen_ms, 10000);
    conf_admit(s, "api", &p, 11000);
    assert_int_equal(conf_get(s, "api", 11000, &found).last_seen_ms, 11000);

    /* a streak keeps the sliding TTL (an idle streak is forgotten too); the
     * first failure is written at once, the second counted in the calls
     * key, and the success's script folds it in before ending the streak */
    r = conf_record(s, "api", &p, 11100, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    assert_int_equal(r.breaker.consecutive_failures, 1);
    assert_int_equal(conf_get(s, "api", 11100, &found).last_seen_ms, 11100);
    assert_true(key_pttl(key) > 0);
    r = conf_record(s, "api", &p, 11200, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    assert_int_equal(r.breaker.consecutive_failures, 2);
    assert_int_equal(conf_get(s, "api", 11200, &found).consecutive_failures, 2);
    assert_true(key_pttl(key) > 0);
    assert_true(key_pttl(calls) > 0 && llabs(key_pttl(calls) - key_pttl(key)) < 1000);
    r = conf_record(s, "api", &p, 11300, RD_OUTCOME_SUCCESS, 0);
    assert_int_equal(r.breaker.consecutive_failures, 0);
    rd_breaker_evidence ev;
    assert_int_equal(s->ops->stats(s, "api", &p, 11300, &r.breaker, &ev, &found, &st), RD_OK);
    assert_int_equal(ev.calls, 3);
    assert_true(key_pttl(key) > 0);
    assert_true(key_pttl(calls) > 0);

    /* an endless hold has no TTL; released, its TTL slides again */
    conf_force(s, "api", RD_FORCE_OPEN, 11400, 0);
    assert_int_equal(key_pttl(key), -1);
    assert_int_equal(key_pttl(calls), -2);
    conf_force(s, "api", RD_FORCE_RELEASE, 11500, 0);
    assert_true(key_pttl(key) > 0);
    assert_true(key_pttl(calls) > 0);

    /* a streak under a timed hold expires with the hold and the idle TTL
     * after it; once the hold has run out, nothing is written but the TTL
     * goes back to the sliding one, from the last use */
    conf_record(s, "api", &p, 11600, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    conf_force(s, "api", RD_FORCE_CLOSED, 11700, 300);
    /* caller time: every real TTL has 600 s more (prelude.lua) */
    assert_true(key_pttl(key) > 600000 + 16000); /* 12000 + 16000 - 11700 */
    conf_admit(s, "api", &p, 12100);
    assert_true(key_pttl(key) > 0 && key_pttl(key) <= 600000 + 16000);

    /* eviction: not before idle - slack after the last use, by idle */
    conf_record(s, "api", &p, 12200, RD_OUTCOME_SUCCESS, 0);
    conf_admit(s, "api", &p, 12900);
    assert_int_equal(conf_get(s, "api", 12900, &found).last_seen_ms, 12200);
    assert_int_equal(s->ops->evict(s, 12900 + 16000 - 1000 - 1), 0);
    conf_get(s, "api", 12900 + 16000 - 1000 - 1, &found);
    assert_true(found);
    assert_int_equal(s->ops->evict(s, 12900 + 16000), 1);
    conf_get(s, "api", 12900 + 16000, &found);
    assert_false(found);
    assert_int_equal(key_pttl(calls), -2); /* the calls key goes with it */
    rd_store_destroy(s);
}

/* The consecutive mode counts an outcome by the current bucket's fields
 * alone (a new bucket reads the whole window): the counts stats() reads
 * are the window's all the same, over buckets started, added to, and left
 * behind (window 10 s: ten buckets of 1 s). */
static void test_consecutive_window_counted_by_bucket(void **state)
{
    skip_without_redis();
    char prefix[32];
    fresh_prefix(prefix, sizeof prefix, "bucket");
    rd_redis_options o = {.port = shared_redis.port, .key_prefix = prefix,
                          .use_caller_time = true,
                          .command_timeout_ms = CALM_COMMAND_TIMEOUT_MS, .limits = test_limits()};
    rd_status made = {0};
    rd_store *s = rd_store_redis_new(&o, &made);
    assert_non_null(s);
    rd_breaker_policy p = {.failure_threshold = 100, .success_threshold = 1,
                           .open_timeout_ms = 5000, .window_ms = 10000};
    const struct {
        int64_t at;
        rd_outcome outcome;
        uint64_t calls, failures; /* the window at `at`, this outcome counted */
    } steps[] = {
        {10000, RD_OUTCOME_TRANSIENT_FAILURE, 1, 1}, /* bucket 10 starts */
        {10400, RD_OUTCOME_SUCCESS, 2, 1},           /* bucket 10 again */
        {10999, RD_OUTCOME_TRANSIENT_FAILURE, 3, 2},
        {11000, RD_OUTCOME_SUCCESS, 4, 2},           /* bucket 11 */
        {19999, RD_OUTCOME_SUCCESS, 5, 2},           /* bucket 19: 10..19 count */
        {20000, RD_OUTCOME_TRANSIENT_FAILURE, 3, 1}, /* bucket 20: 10 has left */
        {20500, RD_OUTCOME_PERMANENT_FAILURE, 4, 1},
        {31000, RD_OUTCOME_SUCCESS, 1, 0},           /* a slot used again: 21 */
    };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        rd_store_result r = conf_record(s, "api", &p, steps[i].at, steps[i].outcome, 0);
        assert_int_equal(r.transition, RD_TRANSITION_NONE);
        rd_breaker b;
        rd_breaker_evidence ev;
        bool found;
        rd_status st = {0};
        assert_int_equal(s->ops->stats(s, "api", &p, steps[i].at, &b, &ev, &found, &st), RD_OK);
        assert_true(found);
        assert_int_equal(ev.calls, steps[i].calls);
        assert_int_equal(ev.failures, steps[i].failures);
    }
    rd_store_destroy(s);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN); /* a write to a killed Redis is an error, not death */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scripts_load_as_functions_and_as_scripts),
        cmocka_unit_test(test_functions_reload_after_function_flush),
        cmocka_unit_test(test_scripts_by_name_without_functions),
        cmocka_unit_test(test_scripts_run_by_text_without_script_load),
        cmocka_unit_test(test_last_seen_slack_and_ttl),
        cmocka_unit_test(test_consecutive_window_counted_by_bucket),
    };
    return cmocka_run_group_tests_name("store_redis_scripts", tests, start_shared_redis,
                                       stop_shared_redis);
}
