/* The Redis store: the store conformance suite against a real redis-server,
 * then what only a shared store shows (several store instances standing in
 * for replicas), what Redis trouble does (script cache flushed, restart,
 * outage with the resilient wrapper), Sentinel failover, and the bound on
 * the local cache's staleness.
 *
 * Every test starts from its own key prefix; tests that kill or restart
 * Redis use a redis-server of their own. Skipped (with a message) when
 * redis-server is not installed. */
#include "store_conformance.h"

#include <pthread.h>
#include <stdatomic.h>

#include "redis_harness.h"
#include "store/redis.h"
#include "store/redis_batch.h"
#include "store/redis_scripts.h"
#include "store/redis_subscriber.h"
#include "store/resilient.h"

static rd_redis_proc shared_redis;
static bool have_redis;
static atomic_int prefix_seq;

/* Under RD_NO_SKIP=1 (make test, whose install step puts redis-server on
 * the machine) a missing Redis fails the test instead of hiding. */
static void skip_without_redis(void)
{
    if (!have_redis) {
        const char *strict = getenv("RD_NO_SKIP");
        if (strict && strcmp(strict, "1") == 0)
            fail_msg("redis-server is not installed (scripts/install-deps.sh --test installs it)");
        print_message("redis-server is not installed: Redis store tests skipped\n");
        skip();
    }
}

static void fresh_prefix(char *buf, size_t size, const char *what)
{
    snprintf(buf, size, "%s%d:", what, atomic_fetch_add(&prefix_seq, 1));
}

static rd_store_limits test_limits(void)
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
static rd_store *redis_store_at(int port, const char *prefix)
{
    rd_redis_options o = {.port = port, .key_prefix = prefix,
                          .command_timeout_ms = CALM_COMMAND_TIMEOUT_MS, .limits = test_limits()};
    rd_status st = {0};
    rd_store *s = rd_store_redis_new(&o, &st);
    if (!s)
        fail_msg("rd_store_redis_new: %s", st.msg);
    return s;
}

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

/* ---- scripts ---- */

static const rd_breaker_policy three_strikes = {
    .failure_threshold = 3, .success_threshold = 1, .open_timeout_ms = 60000};

static rd_store_result must_record(rd_store *s, const char *tool, const rd_breaker_policy *p,
                                   rd_outcome o, uint64_t token)
{
    rd_store_result r;
    rd_status st = {0};
    int rc = s->ops->record(s, tool, p, 0, o, token, &r, &st);
    if (rc != RD_OK)
        fail_msg("record %s: %s", tool, st.msg);
    return r;
}

/* Whether the last admission made by must_admit or timed_admit was
 * answered degraded (its status says so). */
static bool last_admit_degraded;

static rd_store_result must_admit(rd_store *s, const char *tool, const rd_breaker_policy *p,
                                  int64_t lease_ms)
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

/* An admission that changes nothing (CLOSED, no hold, last_seen within the
 * slack) reads the record and Redis's TIME in one round trip and runs no
 * script, answering as the script does; any other admission runs it. */
static void test_unchanging_admission_runs_no_script(void **state)
{
    skip_without_redis();
    char prefix[32];
    fresh_prefix(prefix, sizeof prefix, "fast");
    /* no local cache: every admission asks Redis */
    rd_redis_options o = {.port = shared_redis.port, .key_prefix = prefix,
                          .no_local_cache = true, .command_timeout_ms = CALM_COMMAND_TIMEOUT_MS,
                          .limits = test_limits()};
    rd_status st = {0};
    rd_store *s = rd_store_redis_new(&o, &st);
    assert_non_null(s);
    int port = shared_redis.port;
    long long fcalls = rd_harness_command_calls(port, "fcall");
    rd_store_result first = must_admit(s, "x", &three_strikes, 100); /* creates it */
    assert_int_equal(rd_harness_command_calls(port, "fcall"), fcalls + 1);
    must_record(s, "x", &three_strikes, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    fcalls = rd_harness_command_calls(port, "fcall");
    long long times = rd_harness_command_calls(port, "time");
    rd_store_result r = must_admit(s, "x", &three_strikes, 100);
    assert_int_equal(rd_harness_command_calls(port, "fcall"), fcalls);
    assert_int_equal(rd_harness_command_calls(port, "time"), times + 1);
    assert_int_equal(r.admission, RD_ADMIT_YES);
    assert_int_equal(r.transition, RD_TRANSITION_NONE);
    assert_int_equal(r.breaker.stored, RD_BREAKER_CLOSED);
    assert_int_equal(r.breaker.consecutive_failures, 1); /* the streak as stored */
    assert_int_equal(r.breaker.generation, first.breaker.generation);
    assert_true(r.now_ms >= first.now_ms && r.now_ms < first.now_ms + 60000); /* Redis time */
    assert_int_equal(r.breaker.last_seen_ms, r.now_ms); /* the time of the call */

    /* a value not of the record's layout (a hash of an older one) is the
     * script's: it starts the breaker afresh and writes the record whole */
    char key[128];
    snprintf(key, sizeof key, "%s{tool:x}:breaker", prefix);
    redisReply *del = rd_harness_cmd(port, "DEL %s", key);
    freeReplyObject(del);
    redisReply *hash = rd_harness_cmd(port, "HSET %s st 1 cf 1 cs 0 oa 0 ou 0 gen 0", key);
    assert_true(hash && hash->type == REDIS_REPLY_INTEGER);
    freeReplyObject(hash);
    fcalls = rd_harness_command_calls(port, "fcall");
    assert_int_equal(must_admit(s, "x", &three_strikes, 100).admission, RD_ADMIT_YES);
    assert_int_equal(rd_harness_command_calls(port, "fcall"), fcalls + 1);
    int64_t cf = -1;
    assert_true(rd_harness_record_field(port, key, RD_REC_CF, &cf));
    assert_int_equal(cf, 0);

    /* an OPEN breaker and a hold are the script's to decide */
    for (int i = 0; i < 3; i++)
        must_record(s, "x", &three_strikes, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    fcalls = rd_harness_command_calls(port, "fcall");
    assert_int_equal(must_admit(s, "x", &three_strikes, 100).admission, RD_ADMIT_NO);
    assert_int_equal(rd_harness_command_calls(port, "fcall"), fcalls + 1);
    rd_store_result held;
    assert_int_equal(s->ops->force(s, "y", RD_FORCE_CLOSED, 0, 0, &held, &st), RD_OK);
    fcalls = rd_harness_command_calls(port, "fcall");
    assert_int_equal(must_admit(s, "y", &three_strikes, 100).admission, RD_ADMIT_YES);
    assert_int_equal(rd_harness_command_calls(port, "fcall"), fcalls + 1);
    rd_store_destroy(s);
}

/* A success on a CLOSED breaker without a streak or hold (its last_seen
 * within the slack) counts one call in its window slot in place and runs no
 * script; any other success (the first in a new bucket included) runs the
 * record script, which takes that count back and applies the rules, so
 * that every outcome is counted once, and none while OPEN. Caller time:
 * the buckets are the test's. */
static rd_store_result record_at(rd_store *s, const char *tool, const rd_breaker_policy *p,
                                 int64_t now, rd_outcome o)
{
    rd_store_result r;
    rd_status st = {0};
    if (s->ops->record(s, tool, p, now, o, 0, &r, &st) != RD_OK)
        fail_msg("record %s: %s", tool, st.msg);
    return r;
}

/* The tool's call window as stats() reads it. */
static rd_breaker_evidence window_of(rd_store *s, const char *tool, const rd_breaker_policy *p,
                                     int64_t now)
{
    rd_breaker b;
    rd_breaker_evidence ev;
    bool found = false;
    rd_status st = {0};
    assert_int_equal(s->ops->stats(s, tool, p, now, &b, &ev, &found, &st), RD_OK);
    assert_true(found);
    return ev;
}

static uint64_t window_calls(rd_store *s, const char *tool, const rd_breaker_policy *p,
                             int64_t now)
{
    return window_of(s, tool, p, now).calls;
}

static void test_pristine_success_runs_no_script(void **state)
{
    skip_without_redis();
    char prefix[32];
    fresh_prefix(prefix, sizeof prefix, "ok");
    rd_redis_options o = {.port = shared_redis.port, .key_prefix = prefix,
                          .use_caller_time = true, .no_local_cache = true,
                          .command_timeout_ms = CALM_COMMAND_TIMEOUT_MS, .limits = test_limits()};
    o.limits.max_tools = 2;
    o.limits.tool_idle_ttl_ms = 160000; /* slack 10 s */
    rd_status st = {0};
    rd_store *s = rd_store_redis_new(&o, &st);
    assert_non_null(s);
    int port = shared_redis.port;
    /* buckets of 6 s: 6000..11999 is bucket 1 */
    const rd_breaker_policy p = {.failure_threshold = 3, .success_threshold = 1,
                                 .open_timeout_ms = 60000, .window_ms = 60000};
    conf_admit(s, "x", &p, 6000); /* creates it */
    long long fcalls = rd_harness_command_calls(port, "fcall");
    record_at(s, "x", &p, 6001, RD_OUTCOME_SUCCESS); /* the bucket's first: the script */
    assert_int_equal(rd_harness_command_calls(port, "fcall"), fcalls + 1);

    fcalls = rd_harness_command_calls(port, "fcall");
    long long counts = rd_harness_command_calls(port, "bitfield");
    rd_store_result r = record_at(s, "x", &p, 6002, RD_OUTCOME_SUCCESS);
    record_at(s, "x", &p, 6003, RD_OUTCOME_SUCCESS);
    assert_int_equal(rd_harness_command_calls(port, "fcall"), fcalls);
    assert_int_equal(rd_harness_command_calls(port, "bitfield"), counts + 2);
    assert_int_equal(r.breaker.stored, RD_BREAKER_CLOSED);
    assert_int_equal(r.transition, RD_TRANSITION_NONE);
    assert_int_equal(r.now_ms, 6002);
    assert_int_equal(r.breaker.last_seen_ms, 6002); /* the time of the call */
    assert_int_equal(window_calls(s, "x", &p, 6003), 3);

    /* a streak: the script resets it and the success counts once */
    record_at(s, "x", &p, 6100, RD_OUTCOME_TRANSIENT_FAILURE);
    fcalls = rd_harness_command_calls(port, "fcall");
    r = record_at(s, "x", &p, 6200, RD_OUTCOME_SUCCESS);
    assert_int_equal(rd_harness_command_calls(port, "fcall"), fcalls + 1);
    assert_int_equal(r.breaker.consecutive_failures, 0);
    assert_int_equal(window_calls(s, "x", &p, 6200), 5);

    /* the slack run out: the script writes last_seen, counting once */
    r = record_at(s, "x", &p, 16300, RD_OUTCOME_SUCCESS); /* bucket 2's first */
    r = record_at(s, "x", &p, 16400, RD_OUTCOME_SUCCESS);
    fcalls = rd_harness_command_calls(port, "fcall");
    r = record_at(s, "x", &p, 26500, RD_OUTCOME_SUCCESS); /* bucket 4, slack out */
    r = record_at(s, "x", &p, 26600, RD_OUTCOME_SUCCESS);
    assert_int_equal(rd_harness_command_calls(port, "fcall"), fcalls + 1);
    bool found;
    assert_int_equal(conf_get(s, "x", 26600, &found).last_seen_ms, 26500);
    assert_int_equal(window_calls(s, "x", &p, 26600), 9);

    /* OPEN: the new period's window counts nothing, the success included */
    for (int i = 0; i < 3; i++)
        r = record_at(s, "x", &p, 26700 + i, RD_OUTCOME_TRANSIENT_FAILURE);
    assert_int_equal(r.transition, RD_TRANSITION_OPENED);
    fcalls = rd_harness_command_calls(port, "fcall");
    r = record_at(s, "x", &p, 26800, RD_OUTCOME_SUCCESS);
    assert_int_equal(rd_harness_command_calls(port, "fcall"), fcalls + 1);
    assert_int_equal(r.breaker.stored, RD_BREAKER_OPEN);
    assert_int_equal(window_calls(s, "x", &p, 26800), 0);

    /* no record: created by the script, the success counted once */
    record_at(s, "y", &p, 27000, RD_OUTCOME_SUCCESS);
    assert_int_equal(window_calls(s, "y", &p, 27000), 1);

    /* a tool over max_tools, with no CLOSED breaker to make room, is refused
     * and leaves nothing behind */
    for (int i = 0; i < 3; i++)
        record_at(s, "y", &p, 27010 + i, RD_OUTCOME_TRANSIENT_FAILURE);
    rd_store_result refused;
    rd_status_clear(&st);
    assert_int_equal(s->ops->record(s, "z", &p, 27100, RD_OUTCOME_SUCCESS, 0, &refused, &st),
                     RD_ERR_EXHAUSTED);
    char key[128];
    snprintf(key, sizeof key, "%s{tool:z}:breaker", prefix);
    redisReply *exists = rd_harness_cmd(port, "EXISTS %s", key);
    assert_true(exists && exists->type == REDIS_REPLY_INTEGER && exists->integer == 0);
    freeReplyObject(exists);
    rd_store_destroy(s);
}

static int64_t key_pttl(const char *key)
{
    redisReply *r = rd_harness_cmd(shared_redis.port, "PTTL %s", key);
    assert_non_null(r);
    int64_t v = r->type == REDIS_REPLY_INTEGER ? r->integer : -3;
    freeReplyObject(r);
    return v;
}

/* A store on the shared Redis driven by the caller's time, without local
 * caches, whose tools are forgotten after 160 s idle (slack 10 s). */
static rd_store *in_place_store(const char *prefix)
{
    rd_redis_options o = {.port = shared_redis.port, .key_prefix = prefix,
                          .use_caller_time = true, .no_local_cache = true,
                          .command_timeout_ms = CALM_COMMAND_TIMEOUT_MS, .limits = test_limits()};
    o.limits.tool_idle_ttl_ms = 160000;
    rd_status st = {0};
    rd_store *s = rd_store_redis_new(&o, &st);
    assert_non_null(s);
    return s;
}

/* A transient failure that leaves the streak below the threshold is
 * counted by one BITFIELD and read back by one GETEX, which takes away the
 * TTL a streak must not keep (a pristine record's, or any other); the one
 * that trips and one while OPEN run the script, which counts each exactly
 * once and gives the key back the expiry its record needs. */
static void test_failures_below_threshold_run_no_script(void **state)
{
    skip_without_redis();
    char prefix[32], key[128];
    fresh_prefix(prefix, sizeof prefix, "streak");
    snprintf(key, sizeof key, "%s{tool:x}:breaker", prefix);
    rd_store *s = in_place_store(prefix);
    rd_status st = {0};
    int port = shared_redis.port;
    const rd_breaker_policy p = {.failure_threshold = 5, .success_threshold = 1,
                                 .open_timeout_ms = 60000, .window_ms = 60000};
    conf_admit(s, "x", &p, 6000); /* pristine: a sliding TTL */
    /* a success that starts the window's current bucket (a script) */
    record_at(s, "x", &p, 6000, RD_OUTCOME_SUCCESS);
    assert_true(key_pttl(key) > 0);

    /* the first of a streak and the next two: no script; the first takes
     * the pristine TTL away */
    long long fcalls = rd_harness_command_calls(port, "fcall");
    long long counts = rd_harness_command_calls(port, "bitfield");
    rd_store_result r = record_at(s, "x", &p, 6001, RD_OUTCOME_TRANSIENT_FAILURE);
    assert_int_equal(r.breaker.consecutive_failures, 1);
    assert_int_equal(key_pttl(key), -1);
    r = record_at(s, "x", &p, 6002, RD_OUTCOME_TRANSIENT_FAILURE);
    assert_int_equal(r.breaker.consecutive_failures, 2);
    assert_int_equal(r.breaker.stored, RD_BREAKER_CLOSED);
    assert_int_equal(r.transition, RD_TRANSITION_NONE);
    assert_int_equal(r.breaker.last_seen_ms, 6002);
    r = record_at(s, "x", &p, 6003, RD_OUTCOME_TRANSIENT_FAILURE);
    assert_int_equal(r.breaker.consecutive_failures, 3);
    assert_int_equal(rd_harness_command_calls(port, "fcall"), fcalls);
    assert_int_equal(rd_harness_command_calls(port, "bitfield"), counts + 3);
    bool found;
    assert_int_equal(conf_get(s, "x", 6003, &found).consecutive_failures, 3);
    assert_int_equal(window_calls(s, "x", &p, 6003), 4);
    assert_int_equal(window_of(s, "x", &p, 6003).failures, 3);

    /* a TTL the record must not keep goes with the next failure's read */
    freeReplyObject(rd_harness_cmd(port, "PEXPIRE %s 100000", key));
    fcalls = rd_harness_command_calls(port, "fcall");
    r = record_at(s, "x", &p, 6004, RD_OUTCOME_TRANSIENT_FAILURE);
    assert_int_equal(rd_harness_command_calls(port, "fcall"), fcalls);
    assert_int_equal(r.breaker.consecutive_failures, 4);
    assert_int_equal(key_pttl(key), -1);
    assert_int_equal(window_of(s, "x", &p, 6004).failures, 4);
    assert_int_equal(window_calls(s, "x", &p, 6004), 5);

    /* the threshold: the script opens the breaker, whose record expires */
    fcalls = rd_harness_command_calls(port, "fcall");
    r = record_at(s, "x", &p, 6005, RD_OUTCOME_TRANSIENT_FAILURE);
    assert_int_equal(rd_harness_command_calls(port, "fcall"), fcalls + 1);
    assert_int_equal(r.transition, RD_TRANSITION_OPENED);
    assert_int_equal(r.breaker.consecutive_failures, 5);
    assert_true(key_pttl(key) > 0);

    /* OPEN: the count made in place is taken back, none is counted, and
     * the TTL the read took away is set again */
    fcalls = rd_harness_command_calls(port, "fcall");
    r = record_at(s, "x", &p, 6006, RD_OUTCOME_TRANSIENT_FAILURE);
    assert_int_equal(rd_harness_command_calls(port, "fcall"), fcalls + 1);
    assert_int_equal(r.breaker.stored, RD_BREAKER_OPEN);
    assert_int_equal(r.transition, RD_TRANSITION_NONE);
    assert_true(key_pttl(key) > 0);
    assert_int_equal(conf_get(s, "x", 6006, &found).consecutive_failures, 5);
    assert_int_equal(window_calls(s, "x", &p, 6006), 0);
    assert_int_equal(window_of(s, "x", &p, 6006).failures, 0);
    int64_t opens = conf_get(s, "x", 6006, &found).opens_total;

    /* a reset starts a pristine record with an empty window: the failure
     * that starts the window's current bucket runs the script, the next
     * one does not */
    rd_store_result forced;
    assert_int_equal(s->ops->force(s, "x", RD_FORCE_RESET, 6007, 0, &forced, &st), RD_OK);
    assert_true(key_pttl(key) > 0);
    fcalls = rd_harness_command_calls(port, "fcall");
    record_at(s, "x", &p, 6008, RD_OUTCOME_TRANSIENT_FAILURE);
    r = record_at(s, "x", &p, 6009, RD_OUTCOME_TRANSIENT_FAILURE);
    assert_int_equal(rd_harness_command_calls(port, "fcall"), fcalls + 1);
    assert_int_equal(r.breaker.consecutive_failures, 2);
    assert_int_equal(key_pttl(key), -1);
    assert_int_equal(conf_get(s, "x", 6009, &found).opens_total, opens);
    rd_store_destroy(s);
}

/* What redis_in_place.c's BITFIELD does for a transient failure in slot 1
 * (bucket 1 of 6-s buckets): the streak and the slot's calls and failures
 * counted; *ver as it was at that instant, *cf the streak counted. */
static void count_failure_in_place(int port, const char *key, int64_t *cf, int64_t *ver)
{
    redisReply *r = rd_harness_cmd(port, "BITFIELD %s GET i64 #8 GET i64 #15 "
                                         "INCRBY i64 #1 1 INCRBY i64 #16 1 INCRBY i64 #17 1",
                                   key);
    assert_true(r && r->type == REDIS_REPLY_ARRAY && r->elements == 5);
    *ver = r->element[0]->integer;
    assert_int_equal(r->element[1]->integer, 1); /* the slot holds bucket 1 */
    *cf = r->element[2]->integer;
    freeReplyObject(r);
}

/* Its read after the count, which takes the key's TTL away. */
static void read_after_count(int port, const char *key)
{
    redisReply *r = rd_harness_cmd(port, "GETEX %s PERSIST", key);
    assert_true(r && r->type == REDIS_REPLY_STRING);
    freeReplyObject(r);
}

/* The record script for that failure, told it was counted (record.lua's
 * numbers as redis_breakers.c packs them); returns the transition. */
static int record_script_after_count(int port, const char *prefix, const char *tool,
                                     const rd_breaker_policy *p, int64_t now, int64_t cf,
                                     int64_t ver)
{
    const double nums[21] = {(double)now, (double)p->failure_threshold,
                             (double)p->success_threshold, (double)p->open_timeout_ms,
                             RD_OUTCOME_TRANSIENT_FAILURE, 160000, 1, 0, 0, 0,
                             (double)p->window_ms, 0, 0, 0, 0, -1, 1, 1, (double)cf,
                             (double)ver, 0};
    char packed[sizeof nums], bkey[128], pkey[128], qkey[128];
    for (int i = 0; i < 21; i++) {
        uint64_t bits;
        memcpy(&bits, &nums[i], sizeof bits);
        bits = htole64(bits);
        memcpy(packed + 8 * i, &bits, sizeof bits);
    }
    snprintf(bkey, sizeof bkey, "%s{tool:%s}:breaker", prefix, tool);
    snprintf(pkey, sizeof pkey, "%s{tool:%s}:probe", prefix, tool);
    snprintf(qkey, sizeof qkey, "%s{tool:%s}:quorum", prefix, tool);
    redisReply *r = rd_harness_cmd(port, "FCALL %s 3 %s %s %s %b 0 %s unused-channel",
                                   rd_redis_scripts()[RD_SCRIPT_RECORD].function, bkey, pkey,
                                   qkey, packed, sizeof packed, tool);
    assert_true(r && r->type == REDIS_REPLY_ARRAY && r->elements == 2);
    assert_true(r->element[0]->type == REDIS_REPLY_STRING && r->element[0]->len >= 24);
    uint64_t bits;
    memcpy(&bits, r->element[0]->str + 16, sizeof bits);
    bits = le64toh(bits);
    double tr;
    memcpy(&tr, &bits, sizeof tr);
    freeReplyObject(r);
    return (int)tr;
}

/* The script's side of a failure counted in place, for the interleavings
 * a test cannot time: a failure that reached the threshold opens the
 * breaker even though a success ended the streak after the count; one
 * counted before a reset is not counted again. Either way the key gets
 * back the TTL its record needs, which the count's read took away. */
static void test_failure_counted_in_place_then_interleaved(void **state)
{
    skip_without_redis();
    char prefix[32], key[128];
    fresh_prefix(prefix, sizeof prefix, "inter");
    snprintf(key, sizeof key, "%s{tool:x}:breaker", prefix);
    rd_store *s = in_place_store(prefix);
    rd_status st = {0};
    int port = shared_redis.port;
    const rd_breaker_policy p = {.failure_threshold = 3, .success_threshold = 1,
                                 .open_timeout_ms = 60000, .window_ms = 60000};
    record_at(s, "x", &p, 6000, RD_OUTCOME_TRANSIENT_FAILURE);
    record_at(s, "x", &p, 6001, RD_OUTCOME_TRANSIENT_FAILURE);
    int64_t cf, ver;
    count_failure_in_place(port, key, &cf, &ver); /* the third: the threshold */
    assert_int_equal(cf, 3);
    rd_store_result r = record_at(s, "x", &p, 6003, RD_OUTCOME_SUCCESS);
    assert_int_equal(r.breaker.consecutive_failures, 0);
    assert_int_equal(r.transition, RD_TRANSITION_NONE);
    read_after_count(port, key);
    assert_int_equal(record_script_after_count(port, prefix, "x", &p, 6004, cf, ver),
                     RD_TRANSITION_OPENED);
    bool found;
    assert_int_equal(conf_get(s, "x", 6004, &found).stored, RD_BREAKER_OPEN);
    assert_true(key_pttl(key) > 0);

    /* counted, then reset: the reset came after it */
    record_at(s, "y", &p, 7000, RD_OUTCOME_TRANSIENT_FAILURE);
    record_at(s, "y", &p, 7001, RD_OUTCOME_TRANSIENT_FAILURE);
    snprintf(key, sizeof key, "%s{tool:y}:breaker", prefix);
    count_failure_in_place(port, key, &cf, &ver);
    rd_store_result forced;
    assert_int_equal(s->ops->force(s, "y", RD_FORCE_RESET, 7003, 0, &forced, &st), RD_OK);
    read_after_count(port, key); /* takes the reset's pristine TTL away */
    assert_int_equal(key_pttl(key), -1);
    assert_int_equal(record_script_after_count(port, prefix, "y", &p, 7004, cf, ver),
                     RD_TRANSITION_NONE);
    rd_breaker b = conf_get(s, "y", 7004, &found);
    assert_int_equal(b.stored, RD_BREAKER_CLOSED);
    assert_int_equal(b.consecutive_failures, 0);
    assert_true(key_pttl(key) > 0); /* the script gave it back */
    rd_store_destroy(s);
}

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

/* ---- several replicas sharing one Redis ---- */

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

static bool wait_for(bool (*cond)(void *), void *arg, int timeout_ms)
{
    int64_t until = rd_harness_now_ms() + timeout_ms;
    while (rd_harness_now_ms() < until) {
        if (cond(arg))
            return true;
        rd_harness_sleep_ms(50);
    }
    return false;
}

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

/* ---- the local cache ---- */

static bool subscribed(void *arg)
{
    rd_redis_stats stats;
    return rd_store_redis_stats(arg, &stats) && stats.subscribed;
}

static uint64_t cache_hits(rd_store *s)
{
    rd_redis_stats stats;
    rd_store_redis_stats(s, &stats);
    return stats.cache_hits;
}

static bool invalidated(void *arg)
{
    rd_redis_stats stats;
    return rd_store_redis_stats(arg, &stats) && stats.invalidations > 0;
}

/* The name of tool "api"'s key `part` under prefix. */
static void api_key(char out[128], const char *prefix, const char *part)
{
    snprintf(out, 128, "%s{tool:api}:%s", prefix, part);
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

/* ---- what the breaker scripts write ---- */

/* A breaker that only sees time pass is not rewritten: its stored last_seen
 * (and a pristine breaker's TTL) moves once it is older than the slack,
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
    r = conf_admit(s, "api", &p, 10999);
    assert_int_equal(r.breaker.last_seen_ms, 10999); /* the reply: the call's time */
    assert_int_equal(conf_get(s, "api", 10999, &found).last_seen_ms, 10000);
    conf_admit(s, "api", &p, 11000);
    assert_int_equal(conf_get(s, "api", 11000, &found).last_seen_ms, 11000);

    /* a streak is written at once and has no TTL; it ends pristine again */
    r = conf_record(s, "api", &p, 11100, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    assert_int_equal(r.breaker.consecutive_failures, 1);
    assert_int_equal(conf_get(s, "api", 11100, &found).last_seen_ms, 11100);
    assert_int_equal(key_pttl(key), -1);
    conf_record(s, "api", &p, 11200, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    assert_int_equal(key_pttl(key), -1);
    r = conf_record(s, "api", &p, 11300, RD_OUTCOME_SUCCESS, 0);
    assert_int_equal(r.breaker.consecutive_failures, 0);
    rd_breaker_evidence ev;
    assert_int_equal(s->ops->stats(s, "api", &p, 11300, &r.breaker, &ev, &found, &st), RD_OK);
    assert_int_equal(ev.calls, 3);
    assert_true(key_pttl(key) > 0);

    /* an endless hold has no TTL; released, the breaker is pristine again */
    conf_force(s, "api", RD_FORCE_OPEN, 11400, 0);
    assert_int_equal(key_pttl(key), -1);
    conf_force(s, "api", RD_FORCE_RELEASE, 11500, 0);
    assert_true(key_pttl(key) > 0);

    /* a streak under a timed hold expires with the hold; once the hold has
     * run out, nothing is written but the TTL must go */
    conf_record(s, "api", &p, 11600, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    conf_force(s, "api", RD_FORCE_CLOSED, 11700, 300);
    assert_true(key_pttl(key) > 0);
    conf_admit(s, "api", &p, 12100);
    assert_int_equal(key_pttl(key), -1);

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

/* ---- CLOSED answered from the cache; outcomes sent in batches ---- */

/* A Redis store with o, once it hears the invalidations its cache needs. */
static rd_store *subscribed_store(const rd_redis_options *o)
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
static rd_store *reading_store_at(int port, const char *prefix, int closed_ms, int batch_ms,
                                  int read_ms)
{
    rd_redis_options o = {.port = port, .key_prefix = prefix, .closed_cache_ms = closed_ms,
                          .outcome_batch_ms = batch_ms, .read_cache_ms = read_ms,
                          .command_timeout_ms = CALM_COMMAND_TIMEOUT_MS, .limits = test_limits()};
    return subscribed_store(&o);
}

static rd_store *cached_store_at(int port, const char *prefix, int closed_ms, int batch_ms)
{
    return reading_store_at(port, prefix, closed_ms, batch_ms, 0);
}

/* Two replicas on one prefix: `a` as recoveryd runs (closed cache,
 * batches), `b` without either. */
typedef struct replica_pair {
    char prefix[32];
    rd_store *a, *b;
} replica_pair;

static replica_pair pair_new(const char *tag, int closed_ms, int batch_ms)
{
    skip_without_redis();
    replica_pair p;
    fresh_prefix(p.prefix, sizeof p.prefix, tag);
    p.a = cached_store_at(shared_redis.port, p.prefix, closed_ms, batch_ms);
    p.b = redis_store_at(shared_redis.port, p.prefix);
    return p;
}

static void pair_free(replica_pair *p)
{
    rd_store_destroy(p->b);
    rd_store_destroy(p->a);
}

static rd_redis_stats stats_of(rd_store *s)
{
    rd_redis_stats stats;
    assert_true(rd_store_redis_stats(s, &stats));
    return stats;
}

/* Reads the tool's breaker; false when the store has none. */
static bool read_tool(rd_store *s, const char *tool, rd_breaker *b)
{
    bool found;
    rd_status st = {0};
    if (s->ops->get(s, tool, 0, b, &found, &st) != RD_OK)
        fail_msg("get: %s", st.msg);
    return found;
}

static rd_breaker must_get(rd_store *s, const char *tool)
{
    rd_breaker b;
    assert_true(read_tool(s, tool, &b));
    return b;
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
    long long counts = rd_harness_command_calls(port, "bitfield");
    for (int i = 0; i < 2; i++) {
        must_record(a, "api", &p, RD_OUTCOME_SUCCESS, 0);
        rd_harness_sleep_ms(250); /* flushed: 50 ms batches */
    }
    assert_true(rd_harness_command_calls(port, "fcall") <= fcalls + 1);
    assert_int_equal(rd_harness_command_calls(port, "bitfield"), counts + 2);
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

#define BATCH_THREADS 8
#define BATCH_OUTCOMES 400

typedef struct batch_racer {
    rd_store *s;
    const rd_breaker_policy *p;
    atomic_int *errors;
} batch_racer;

/* Every third outcome a transient failure, the rest successes. */
static void *batch_racer_main(void *arg)
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

static int start_shared_redis(void **state)
{
    have_redis = rd_harness_have_redis();
    if (have_redis && rd_redis_proc_start(&shared_redis, 0, NULL) != 0) {
        print_error("redis-server is installed but did not start\n");
        return -1;
    }
    return 0;
}

static int stop_shared_redis(void **state)
{
    rd_redis_proc_stop(&shared_redis);
    return 0;
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN); /* a write to a killed Redis is an error, not death */
    const struct CMUnitTest tests[] = {
        RD_STORE_CONFORMANCE_TESTS(&redis_backend),
        cmocka_unit_test(test_scripts_load_as_functions_and_as_scripts),
        cmocka_unit_test(test_functions_reload_after_function_flush),
        cmocka_unit_test(test_scripts_by_name_without_functions),
        cmocka_unit_test(test_unchanging_admission_runs_no_script),
        cmocka_unit_test(test_pristine_success_runs_no_script),
        cmocka_unit_test(test_failures_below_threshold_run_no_script),
        cmocka_unit_test(test_failure_counted_in_place_then_interleaved),
        cmocka_unit_test(test_scripts_run_by_text_without_script_load),
        cmocka_unit_test(test_recovers_after_restart),
        cmocka_unit_test(test_replicas_share_breaker),
        cmocka_unit_test(test_one_probe_across_replicas),
        cmocka_unit_test(test_expired_lease_frees_permit),
        cmocka_unit_test(test_old_generation_outcome_discarded),
        cmocka_unit_test(test_outcome_dedup_across_replicas),
        cmocka_unit_test(test_turn_read_from_other_replica),
        cmocka_unit_test(test_degraded_mode_and_return),
        cmocka_unit_test(test_sentinel_follows_failover),
        cmocka_unit_test(test_cache_staleness_bound),
        cmocka_unit_test(test_closed_cache_staleness_bound),
        cmocka_unit_test(test_batched_outcomes_keep_one_replica_exact),
        cmocka_unit_test(test_batches_respect_epochs_and_survive_shutdown),
        cmocka_unit_test(test_single_success_batches_run_no_script),
        cmocka_unit_test(test_batched_outcomes_under_concurrency),
        cmocka_unit_test(test_what_is_never_batched),
        cmocka_unit_test(test_local_answers_do_not_delay_the_trip),
        cmocka_unit_test(test_read_cache_staleness_bound),
        cmocka_unit_test(test_reads_race_batched_outcomes),
        cmocka_unit_test(test_read_cache_remembers_absent_tools),
        cmocka_unit_test(test_last_seen_slack_and_ttl),
        cmocka_unit_test(test_consecutive_window_counted_by_bucket),
        cmocka_unit_test(test_password_and_bad_options),
        cmocka_unit_test(test_destroy_null_and_name),
    };
    return cmocka_run_group_tests_name("store_redis", tests, start_shared_redis,
                                       stop_shared_redis);
}
