/* The breaker calls the Redis store answers without a script
 * (store/redis_in_place.c), on a real redis-server: an admission that
 * changes nothing, a success and a failure below the threshold (each
 * counted in the tool's calls key), and the script's side of a count made
 * there for interleavings a test cannot time. Each must answer as the script would and count every
 * outcome once; the command counts (INFO commandstats) show which ran. */
#include "store_conformance_fixture.h"
#include "store_redis_fixture.h"

#include "store/redis_breaker_record.h"
#include "store/redis_scripts.h"

/* Redis's time, in ms, by its TIME. */
static int64_t redis_time_ms(int port)
{
    redisReply *t = rd_harness_cmd(port, "TIME");
    assert_true(t && t->type == REDIS_REPLY_ARRAY && t->elements == 2);
    int64_t ms = atoll(t->element[0]->str) * 1000 + atoll(t->element[1]->str) / 1000;
    freeReplyObject(t);
    return ms;
}

/* An admission that changes nothing (CLOSED, no hold, last_seen within the
 * slack) reads the record in one round trip and runs no script, answering
 * as the script does; any other admission runs it. Redis's time comes from
 * a TIME in that round trip only when the connection read none within a
 * second. */
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
    int64_t before = redis_time_ms(port);
    long long times = rd_harness_command_calls(port, "time");
    rd_store_result r = must_admit(s, "x", &three_strikes, 100);
    /* the first admission's round trip read Redis's clock just now */
    assert_int_equal(rd_harness_command_calls(port, "time"), times);
    int64_t after = redis_time_ms(port);
    assert_int_equal(rd_harness_command_calls(port, "fcall"), fcalls);
    assert_true(r.now_ms >= before - 20 && r.now_ms <= after + 20);
    assert_int_equal(r.admission, RD_ADMIT_YES);
    assert_int_equal(r.transition, RD_TRANSITION_NONE);
    assert_int_equal(r.breaker.stored, RD_BREAKER_CLOSED);
    assert_int_equal(r.breaker.consecutive_failures, 1); /* the streak as stored */
    assert_int_equal(r.breaker.generation, first.breaker.generation);
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

/* Redis's time in ms by INFO (not by TIME, whose calls the test counts). */
static int64_t redis_info_time_ms(int port)
{
    redisReply *r = rd_harness_cmd(port, "INFO server");
    assert_true(r && r->type == REDIS_REPLY_STRING);
    const char *at = strstr(r->str, "server_time_usec:");
    assert_non_null(at);
    int64_t ms = atoll(at + strlen("server_time_usec:")) / 1000;
    freeReplyObject(r);
    return ms;
}

static void pause_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Admissions one after another read Redis's clock once a second on their
 * connection: the first after a second without a reading sends TIME, the
 * others none, and every answer's time is Redis's around the call. */
static void test_redis_clock_read_once_a_second(void **state)
{
    skip_without_redis();
    char prefix[32];
    fresh_prefix(prefix, sizeof prefix, "clock");
    rd_redis_options o = {.port = shared_redis.port, .key_prefix = prefix,
                          .no_local_cache = true, .pool_size = 1,
                          .command_timeout_ms = CALM_COMMAND_TIMEOUT_MS, .limits = test_limits()};
    o.limits.tool_idle_ttl_ms = 160000; /* a slack of 10 s: the pauses keep within it */
    rd_status st = {0};
    rd_store *s = rd_store_redis_new(&o, &st);
    assert_non_null(s);
    int port = shared_redis.port;
    must_admit(s, "c", &three_strikes, 100); /* creates it */
    for (int round = 0; round < 2; round++) {
        pause_ms(1100); /* the connection's reading is older than a second */
        long long fcalls = rd_harness_command_calls(port, "fcall");
        long long times = rd_harness_command_calls(port, "time");
        for (int i = 0; i < 20; i++) {
            int64_t before = redis_info_time_ms(port);
            rd_store_result r = must_admit(s, "c", &three_strikes, 100);
            int64_t after = redis_info_time_ms(port);
            assert_int_equal(r.admission, RD_ADMIT_YES);
            /* the window's ends are a few ms apart on loopback */
            assert_true(r.now_ms >= before - 5 && r.now_ms <= after + 5);
            pause_ms(10);
        }
        assert_int_equal(rd_harness_command_calls(port, "fcall"), fcalls);
        assert_int_equal(rd_harness_command_calls(port, "time"), times + 1);
    }
    rd_store_destroy(s);
}

/* A success on a CLOSED breaker without a streak or hold (its last_seen
 * within the slack) counts its call in the tool's calls key and runs no
 * script; any other success (the first in a new bucket included) runs the
 * record script, which folds the calls counted there into the window and
 * applies the rules, so that every outcome is counted once, and none while
 * OPEN. Caller time: the buckets are the test's. */
static rd_store_result record_at(rd_store *s, const char *tool, const rd_breaker_policy *p,
                                 int64_t now, rd_outcome o)
{
    rd_store_result r;
    rd_status st = {0};
    if (s->ops->record(s, tool, p, now, o, 0, &r, &st) != RD_OK)
        fail_msg("record %s: %s", tool, st.msg);
    return r;
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

/* The consecutive mode with a window of 60 s (buckets of 6 s), opening
 * after `threshold` transient failures. */
static rd_breaker_policy in_place_policy(uint32_t threshold)
{
    return (rd_breaker_policy){.failure_threshold = threshold, .success_threshold = 1,
                               .open_timeout_ms = 60000, .window_ms = 60000};
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
    const rd_breaker_policy p = in_place_policy(3);
    conf_admit(s, "x", &p, 6000); /* creates it */
    long long fcalls = rd_harness_command_calls(port, "fcall");
    record_at(s, "x", &p, 6001, RD_OUTCOME_SUCCESS); /* the bucket's first: the script */
    assert_int_equal(rd_harness_command_calls(port, "fcall"), fcalls + 1);

    fcalls = rd_harness_command_calls(port, "fcall");
    long long counts = rd_harness_command_calls(port, "incr");
    rd_store_result r = record_at(s, "x", &p, 6002, RD_OUTCOME_SUCCESS);
    record_at(s, "x", &p, 6003, RD_OUTCOME_SUCCESS);
    assert_int_equal(rd_harness_command_calls(port, "fcall"), fcalls);
    assert_int_equal(rd_harness_command_calls(port, "incr"), counts + 2);
    /* the record's window has not been written: the reader adds what the
     * calls key holds */
    char key[128], calls_key[128];
    snprintf(key, sizeof key, "%s{tool:x}:breaker", prefix);
    snprintf(calls_key, sizeof calls_key, "%s{tool:x}:calls", prefix);
    int64_t slot_calls = -1;
    assert_true(rd_harness_record_field(port, key, RD_REC_FU + 1 + 4 * 1 + 1, &slot_calls));
    assert_int_equal(slot_calls, 1);
    assert_true(key_pttl(calls_key) > 0 && llabs(key_pttl(calls_key) - key_pttl(key)) < 1000);
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
    snprintf(key, sizeof key, "%s{tool:z}:breaker", prefix);
    snprintf(calls_key, sizeof calls_key, "%s{tool:z}:calls", prefix);
    redisReply *exists = rd_harness_cmd(port, "EXISTS %s %s", key, calls_key);
    assert_true(exists && exists->type == REDIS_REPLY_INTEGER && exists->integer == 0);
    freeReplyObject(exists);
    rd_store_destroy(s);
}

/* Calls counted in the calls key belong to the window bucket they were
 * counted in: those answered there stay in it, and one sent on to the
 * script because a new bucket has begun is counted in the new one (buckets
 * of 6 s over a window of 60 s). */
static void test_counted_calls_keep_their_bucket(void **state)
{
    skip_without_redis();
    char prefix[32];
    fresh_prefix(prefix, sizeof prefix, "bucket");
    rd_store *s = in_place_store(prefix);
    int port = shared_redis.port;
    const rd_breaker_policy p = in_place_policy(3);
    record_at(s, "x", &p, 6000, RD_OUTCOME_SUCCESS); /* bucket 1's first: a script */
    long long fcalls = rd_harness_command_calls(port, "fcall");
    record_at(s, "x", &p, 6001, RD_OUTCOME_SUCCESS);
    record_at(s, "x", &p, 6002, RD_OUTCOME_SUCCESS);
    assert_int_equal(rd_harness_command_calls(port, "fcall"), fcalls);
    /* bucket 2's first: sent on to the script, which folds the two in */
    record_at(s, "x", &p, 12000, RD_OUTCOME_SUCCESS);
    assert_int_equal(rd_harness_command_calls(port, "fcall"), fcalls + 1);
    assert_int_equal(window_calls(s, "x", &p, 12001), 4);
    /* and answers the next ones there */
    fcalls = rd_harness_command_calls(port, "fcall");
    record_at(s, "x", &p, 12002, RD_OUTCOME_SUCCESS);
    assert_int_equal(rd_harness_command_calls(port, "fcall"), fcalls);
    assert_int_equal(window_calls(s, "x", &p, 12003), 5);
    /* bucket 1 has left the window at bucket 11 (66 s); bucket 2 has not */
    assert_int_equal(window_calls(s, "x", &p, 66000), 2);
    /* a failure's script folds the pending call in before its own count */
    record_at(s, "x", &p, 66001, RD_OUTCOME_TRANSIENT_FAILURE);
    assert_int_equal(window_calls(s, "x", &p, 66002), 3);
    assert_int_equal(window_of(s, "x", &p, 66002).failures, 1);
    rd_store_destroy(s);
}

/* The streak a read reports, and the window's calls and failures, at now. */
static void assert_counted(rd_store *s, const char *tool, const rd_breaker_policy *p,
                           int64_t now, uint32_t streak, uint64_t calls, uint64_t failures)
{
    bool found;
    assert_int_equal(conf_get(s, tool, now, &found).consecutive_failures, streak);
    assert_true(found);
    assert_int_equal(window_calls(s, tool, p, now), calls);
    assert_int_equal(window_of(s, tool, p, now).failures, failures);
}

/* A value of the calls key's older layout (binary fields, below 2^53), as
 * a replica of the previous release writes it during an upgrade, holds
 * nothing: the next outcome runs the script, which counts it once and
 * writes the key anew, and the one after is counted there again. */
static void test_calls_key_of_an_older_layout_holds_nothing(void **state)
{
    skip_without_redis();
    char prefix[32], calls_key[128];
    fresh_prefix(prefix, sizeof prefix, "older");
    snprintf(calls_key, sizeof calls_key, "%s{tool:x}:calls", prefix);
    rd_store *s = in_place_store(prefix);
    int port = shared_redis.port;
    const rd_breaker_policy p = in_place_policy(3);
    record_at(s, "x", &p, 6000, RD_OUTCOME_SUCCESS); /* bucket 1's first: a script */
    /* version 5, one write, tag 1, valid, 5 calls pending, in that layout:
     * read as this layout's digits, it would be 23,328,261 calls and 562
     * failures of version 0 */
    long long older = (((5LL * 1024 + 1) << 14) + 1) * (1LL << 21) + (1LL << 20) + 5;
    freeReplyObject(rd_harness_cmd(port, "SET %s %lld", calls_key, older));
    long long fcalls = rd_harness_command_calls(port, "fcall");
    rd_store_result r = record_at(s, "x", &p, 6001, RD_OUTCOME_TRANSIENT_FAILURE);
    assert_int_equal(rd_harness_command_calls(port, "fcall"), fcalls + 1);
    assert_int_equal(r.breaker.consecutive_failures, 1);
    assert_counted(s, "x", &p, 6001, 1, 2, 1);
    fcalls = rd_harness_command_calls(port, "fcall");
    r = record_at(s, "x", &p, 6002, RD_OUTCOME_TRANSIENT_FAILURE);
    assert_int_equal(rd_harness_command_calls(port, "fcall"), fcalls);
    assert_int_equal(r.breaker.consecutive_failures, 2);
    rd_store_destroy(s);
}

/* A transient failure that leaves the streak below the threshold is
 * counted by one INCRBY of the calls key, like a success's INCR, and keeps
 * the record's sliding TTL (an idle streak is forgotten too); the reader
 * adds the failures pending there to the record's streak. The one that
 * trips and one while OPEN run the script, which counts each exactly once. */
static void test_failures_below_threshold_run_no_script(void **state)
{
    skip_without_redis();
    char prefix[32], key[128], calls_key[128];
    fresh_prefix(prefix, sizeof prefix, "streak");
    snprintf(key, sizeof key, "%s{tool:x}:breaker", prefix);
    snprintf(calls_key, sizeof calls_key, "%s{tool:x}:calls", prefix);
    rd_store *s = in_place_store(prefix);
    rd_status st = {0};
    int port = shared_redis.port;
    const rd_breaker_policy p = in_place_policy(5);
    conf_admit(s, "x", &p, 6000);
    /* a success that starts the window's current bucket (a script) */
    record_at(s, "x", &p, 6000, RD_OUTCOME_SUCCESS);
    assert_true(key_pttl(key) > 0);

    /* the first of a streak and the next three: no script */
    long long fcalls = rd_harness_command_calls(port, "fcall");
    long long counts = rd_harness_command_calls(port, "incrby");
    rd_store_result r = record_at(s, "x", &p, 6001, RD_OUTCOME_TRANSIENT_FAILURE);
    assert_int_equal(r.breaker.consecutive_failures, 1);
    r = record_at(s, "x", &p, 6002, RD_OUTCOME_TRANSIENT_FAILURE);
    assert_int_equal(r.breaker.consecutive_failures, 2);
    assert_int_equal(r.breaker.stored, RD_BREAKER_CLOSED);
    assert_int_equal(r.transition, RD_TRANSITION_NONE);
    assert_int_equal(r.breaker.last_seen_ms, 6002);
    r = record_at(s, "x", &p, 6003, RD_OUTCOME_TRANSIENT_FAILURE);
    assert_int_equal(r.breaker.consecutive_failures, 3);
    assert_int_equal(rd_harness_command_calls(port, "fcall"), fcalls);
    assert_int_equal(rd_harness_command_calls(port, "incrby"), counts + 3);
    /* the record is untouched, its TTL the sliding one; the calls key holds
     * the streak, and the reads add it */
    int64_t cf = -1;
    assert_true(rd_harness_record_field(port, key, RD_REC_CF, &cf));
    assert_int_equal(cf, 0);
    assert_true(key_pttl(key) > 0);
    assert_true(llabs(key_pttl(calls_key) - key_pttl(key)) < 1000);
    assert_counted(s, "x", &p, 6003, 3, 4, 3);
    bool found;
    fcalls = rd_harness_command_calls(port, "fcall");
    r = record_at(s, "x", &p, 6004, RD_OUTCOME_TRANSIENT_FAILURE);
    assert_int_equal(rd_harness_command_calls(port, "fcall"), fcalls);
    assert_int_equal(r.breaker.consecutive_failures, 4);

    /* the threshold: the script folds the streak in and opens the breaker;
     * the calls key goes */
    r = record_at(s, "x", &p, 6005, RD_OUTCOME_TRANSIENT_FAILURE);
    assert_int_equal(rd_harness_command_calls(port, "fcall"), fcalls + 1);
    assert_int_equal(r.transition, RD_TRANSITION_OPENED);
    assert_int_equal(r.breaker.consecutive_failures, 5);
    assert_true(key_pttl(key) > 0);
    assert_int_equal(key_pttl(calls_key), -2);

    /* OPEN: the script decides and counts nothing; what the count left in
     * the calls key goes */
    fcalls = rd_harness_command_calls(port, "fcall");
    r = record_at(s, "x", &p, 6006, RD_OUTCOME_TRANSIENT_FAILURE);
    assert_int_equal(rd_harness_command_calls(port, "fcall"), fcalls + 1);
    assert_int_equal(r.breaker.stored, RD_BREAKER_OPEN);
    assert_int_equal(r.transition, RD_TRANSITION_NONE);
    assert_int_equal(key_pttl(calls_key), -2);
    assert_int_equal(conf_get(s, "x", 6006, &found).consecutive_failures, 5);
    assert_int_equal(window_calls(s, "x", &p, 6006), 0);
    assert_int_equal(window_of(s, "x", &p, 6006).failures, 0);
    int64_t opens = conf_get(s, "x", 6006, &found).opens_total;

    /* a reset starts a clean record: the failure that
     * starts the window's current bucket runs the script, the next one does
     * not, and a success's script ends the streak */
    rd_store_result forced;
    assert_int_equal(s->ops->force(s, "x", RD_FORCE_RESET, 6007, 0, &forced, &st), RD_OK);
    fcalls = rd_harness_command_calls(port, "fcall");
    record_at(s, "x", &p, 6008, RD_OUTCOME_TRANSIENT_FAILURE);
    r = record_at(s, "x", &p, 6009, RD_OUTCOME_TRANSIENT_FAILURE);
    assert_int_equal(rd_harness_command_calls(port, "fcall"), fcalls + 1);
    assert_int_equal(r.breaker.consecutive_failures, 2);
    assert_int_equal(conf_get(s, "x", 6009, &found).opens_total, opens);
    fcalls = rd_harness_command_calls(port, "fcall");
    r = record_at(s, "x", &p, 6010, RD_OUTCOME_SUCCESS);
    assert_int_equal(rd_harness_command_calls(port, "fcall"), fcalls + 1);
    assert_int_equal(r.breaker.consecutive_failures, 0);
    assert_int_equal(window_calls(s, "x", &p, 6010), 3);
    assert_int_equal(window_of(s, "x", &p, 6010).failures, 2);

    /* an outcome the script counts (a permanent failure) folds the streak
     * pending in the key in before its rules end it */
    r = record_at(s, "x", &p, 6011, RD_OUTCOME_TRANSIENT_FAILURE);
    assert_int_equal(r.breaker.consecutive_failures, 1);
    r = record_at(s, "x", &p, 6012, RD_OUTCOME_PERMANENT_FAILURE);
    assert_int_equal(r.breaker.consecutive_failures, 0);
    r = record_at(s, "x", &p, 6013, RD_OUTCOME_TRANSIENT_FAILURE);
    assert_int_equal(r.breaker.consecutive_failures, 1);
    assert_int_equal(window_calls(s, "x", &p, 6013), 6);
    assert_int_equal(window_of(s, "x", &p, 6013).failures, 4);
    rd_store_destroy(s);
}

/* What redis_in_place.c sends after GET of the record: INCR (a success) or
 * INCRBY RD_CALLS_FAILURE (a transient failure) of the calls key; returns
 * what the key held then, and the record's version beside it. */
static calls_value count_in_place(int port, const char *prefix, const char *tool,
                                  bool failure, int64_t *version)
{
    char ckey[128], bkey[128];
    snprintf(ckey, sizeof ckey, "%s{tool:%s}:calls", prefix, tool);
    snprintf(bkey, sizeof bkey, "%s{tool:%s}:breaker", prefix, tool);
    assert_true(rd_harness_record_field(port, bkey, RD_REC_VER, version));
    redisReply *r = failure ? rd_harness_cmd(port, "INCRBY %s %lld", ckey,
                                             (long long)RD_CALLS_FAILURE)
                            : rd_harness_cmd(port, "INCR %s", ckey);
    assert_true(r && r->type == REDIS_REPLY_INTEGER);
    calls_value k = calls_decode(r->integer);
    freeReplyObject(r);
    assert_true(k.valid); /* a key a script wrote */
    assert_int_equal(k.version, *version % RD_CALLS_VERSIONS);
    return k;
}

/* Runs the record script on `tool` with record.lua's 20 numbers, packed as
 * redis_breakers.c packs them; returns the transition it replies. */
static int record_script(int port, const char *prefix, const char *tool, const double nums[20])
{
    char packed[8 * 20], bkey[128], pkey[128], qkey[128], ckey[128];
    for (int i = 0; i < 20; i++) {
        uint64_t bits;
        memcpy(&bits, &nums[i], sizeof bits);
        bits = htole64(bits);
        memcpy(packed + 8 * i, &bits, sizeof bits);
    }
    snprintf(bkey, sizeof bkey, "%s{tool:%s}:breaker", prefix, tool);
    snprintf(pkey, sizeof pkey, "%s{tool:%s}:probe", prefix, tool);
    snprintf(qkey, sizeof qkey, "%s{tool:%s}:quorum", prefix, tool);
    snprintf(ckey, sizeof ckey, "%s{tool:%s}:calls", prefix, tool);
    redisReply *r = rd_harness_cmd(port, "FCALL %s 4 %s %s %s %s %b 0 %s unused-channel",
                                   rd_redis_scripts()[RD_SCRIPT_RECORD].function, bkey, pkey,
                                   qkey, ckey, packed, sizeof packed, tool);
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

/* The record script for an outcome counted in the calls key (`k`, beside
 * the record's `version`; `streak` the one a failure's count made, -1 for
 * a success), as redis_in_place.c sends it on. */
static int script_after_count(int port, const char *prefix, const char *tool,
                              const rd_breaker_policy *p, int64_t now, rd_outcome outcome,
                              calls_value k, int64_t version, int64_t streak)
{
    const double nums[20] = {(double)now, (double)p->failure_threshold,
                             (double)p->success_threshold, (double)p->open_timeout_ms,
                             outcome, 160000, 1, 0, 0, 0, (double)p->window_ms, 0, 0, 0, 0, -1,
                             1, (double)k.stamp, (double)version, (double)streak};
    return record_script(port, prefix, tool, nums);
}

/* The script's side of a failure counted in the calls key, for the
 * interleavings a test cannot time: still pending there, it is counted
 * once by its own script; folded in first by a success's script, its count
 * decides the trip (a failure that reached the threshold opens the breaker
 * even though a success ended the streak after the count); counted before
 * a reset, it is not counted again. */
static void test_failure_counted_in_place_then_interleaved(void **state)
{
    skip_without_redis();
    char prefix[32];
    fresh_prefix(prefix, sizeof prefix, "inter");
    rd_store *s = in_place_store(prefix);
    rd_status st = {0};
    int port = shared_redis.port;
    const rd_breaker_policy p = in_place_policy(3);
    bool found;
    int64_t ver;

    /* still pending: its own script counts it, once */
    record_at(s, "w", &p, 6000, RD_OUTCOME_TRANSIENT_FAILURE);
    calls_value k = count_in_place(port, prefix, "w", true, &ver);
    assert_int_equal(k.failures, 1);
    assert_int_equal(script_after_count(port, prefix, "w", &p, 6001,
                                        RD_OUTCOME_TRANSIENT_FAILURE, k, ver, 2),
                     RD_TRANSITION_NONE);
    assert_counted(s, "w", &p, 6002, 2, 2, 2);

    /* the third failure counted (the threshold), then a success's script
     * folds it in and ends the streak before the failure's script runs */
    record_at(s, "x", &p, 6000, RD_OUTCOME_TRANSIENT_FAILURE);
    record_at(s, "x", &p, 6001, RD_OUTCOME_TRANSIENT_FAILURE);
    k = count_in_place(port, prefix, "x", true, &ver);
    assert_int_equal(k.failures, 2);
    rd_store_result r = record_at(s, "x", &p, 6003, RD_OUTCOME_SUCCESS);
    assert_int_equal(r.breaker.consecutive_failures, 0);
    assert_int_equal(r.transition, RD_TRANSITION_NONE);
    assert_int_equal(script_after_count(port, prefix, "x", &p, 6004,
                                        RD_OUTCOME_TRANSIENT_FAILURE, k, ver, 3),
                     RD_TRANSITION_OPENED);
    assert_int_equal(conf_get(s, "x", 6004, &found).stored, RD_BREAKER_OPEN);

    /* counted, then reset: the reset came after it */
    record_at(s, "y", &p, 7000, RD_OUTCOME_TRANSIENT_FAILURE);
    k = count_in_place(port, prefix, "y", true, &ver);
    rd_store_result forced;
    assert_int_equal(s->ops->force(s, "y", RD_FORCE_RESET, 7003, 0, &forced, &st), RD_OK);
    assert_int_equal(script_after_count(port, prefix, "y", &p, 7004,
                                        RD_OUTCOME_TRANSIENT_FAILURE, k, ver, 2),
                     RD_TRANSITION_NONE);
    rd_breaker b = conf_get(s, "y", 7004, &found);
    assert_int_equal(b.stored, RD_BREAKER_CLOSED);
    assert_int_equal(b.consecutive_failures, 0);
    assert_int_equal(window_calls(s, "y", &p, 7004), 2); /* once each: a reset keeps it */
    rd_store_destroy(s);
}

/* The script's side of a success whose call was counted in the calls key:
 * still pending there, it is counted once by its own script; folded in
 * first by another script (a new bucket's), it is not counted again, and
 * its rules still end the streak. */
static void test_call_counted_in_place_then_interleaved(void **state)
{
    skip_without_redis();
    char prefix[32];
    fresh_prefix(prefix, sizeof prefix, "calls");
    rd_store *s = in_place_store(prefix);
    int port = shared_redis.port;
    const rd_breaker_policy p = in_place_policy(5);
    bool found;
    int64_t ver;
    /* still pending: its own script counts it */
    record_at(s, "x", &p, 6000, RD_OUTCOME_TRANSIENT_FAILURE); /* a streak */
    calls_value k = count_in_place(port, prefix, "x", false, &ver);
    assert_int_equal(script_after_count(port, prefix, "x", &p, 6001, RD_OUTCOME_SUCCESS, k,
                                        ver, -1),
                     RD_TRANSITION_NONE);
    assert_int_equal(conf_get(s, "x", 6002, &found).consecutive_failures, 0);
    assert_int_equal(window_calls(s, "x", &p, 6002), 2);

    /* folded in first by the script of a new bucket's first call */
    record_at(s, "y", &p, 6000, RD_OUTCOME_TRANSIENT_FAILURE);
    k = count_in_place(port, prefix, "y", false, &ver);
    record_at(s, "y", &p, 12000, RD_OUTCOME_TRANSIENT_FAILURE);
    assert_int_equal(window_calls(s, "y", &p, 12000), 3);
    assert_int_equal(conf_get(s, "y", 12000, &found).consecutive_failures, 2);
    assert_int_equal(script_after_count(port, prefix, "y", &p, 12001, RD_OUTCOME_SUCCESS, k,
                                        ver, -1),
                     RD_TRANSITION_NONE);
    assert_counted(s, "y", &p, 12002, 0, 3, 2);
    rd_store_destroy(s);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN); /* a write to a killed Redis is an error, not death */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unchanging_admission_runs_no_script),
        cmocka_unit_test(test_redis_clock_read_once_a_second),
        cmocka_unit_test(test_pristine_success_runs_no_script),
        cmocka_unit_test(test_counted_calls_keep_their_bucket),
        cmocka_unit_test(test_calls_key_of_an_older_layout_holds_nothing),
        cmocka_unit_test(test_failures_below_threshold_run_no_script),
        cmocka_unit_test(test_failure_counted_in_place_then_interleaved),
        cmocka_unit_test(test_call_counted_in_place_then_interleaved),
    };
    return cmocka_run_group_tests_name("store_redis_in_place", tests, start_shared_redis,
                                       stop_shared_redis);
}
