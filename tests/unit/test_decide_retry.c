/* Retries in the decision engine (003 sections 2, 4 and 6): backoff per
 * attempt with jitter, the attempt and total-time budgets, a manifest's
 * retry policy and retry_after hints, over the in-memory store with an
 * injected clock and a seeded random source. Configuration:
 * tests/unit/fixtures/decide/. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "decide_calls.h"

static void assert_delay_within(int64_t delay, int64_t base, int64_t spread)
{
    if (delay < base - spread || delay > base + spread)
        fail_msg("delay %lld outside %lld +- %lld", (long long)delay, (long long)base,
                 (long long)spread);
}

/* ---- 6.2, 4.1, 4.3, 4.4: a transient timeout is retried ---- */

static void test_transient_timeout_retries(void **state)
{
    fixture *f = *state;
    rd_tool_error err = timeout_error();
    rd_decision d = fail_once(f, "flight_search", &err, 1, 0);
    assert_int_equal(d.action, RD_ACTION_RETRY);
    assert_delay_within(d.delay_ms, 100, 10);
    assert_int_equal(d.timeout_ms, 30000);
    assert_true(d.has_classification);
    assert_int_equal(d.classification.classification.retryability, RD_TRANSIENT);
    assert_int_equal(d.breaker.status, RD_BREAKER_CLOSED);
    assert_int_equal(d.breaker.consecutive_failures, 1);
    assert_int_equal(d.n_cascade, 0);
    assert_string_equal(d.permit_id, "");

    const rd_trace_event *timeout = event_of(&d, RD_EV_TOOL_TIMEOUT, "flight_search");
    assert_int_equal(timeout->timeout_ms, 30000);
    assert_int_equal(timeout->timestamp_ms, T0);
    assert_true(timeout->executed);
    const rd_trace_event *error = event_of(&d, RD_EV_TOOL_ERROR, "flight_search");
    assert_string_equal(error->error, "Tool timeout after 30s");
    assert_int_equal(error->retryability, RD_TRANSIENT);
    assert_int_equal(error->breaker, RD_BREAKER_CLOSED);
    assert_int_equal(error->decision, RD_ACTION_RETRY);
    assert_int_equal(error->retry_count, 0);
    const rd_trace_event *retry = event_of(&d, RD_EV_RETRY, "flight_search");
    assert_int_equal(retry->retry_count, 1);
    char detail[64];
    snprintf(detail, sizeof detail, "retry 1 of 4 after %lld ms", (long long)d.delay_ms);
    assert_string_equal(retry->detail, detail);
}

/* ---- 2.1, 2.3: backoff per attempt, then the attempt budget ---- */

static void test_backoff_per_attempt_then_give_up(void **state)
{
    fixture *f = *state;
    rd_tool_error err = error_text("Connection reset by peer");
    const int64_t base[] = {100, 200, 400, 800};
    int64_t elapsed = 0;
    for (uint32_t attempt = 1; attempt <= 4; attempt++) {
        rd_decision d = fail_once(f, "search_api", &err, attempt, elapsed);
        assert_int_equal(d.action, RD_ACTION_RETRY);
        assert_delay_within(d.delay_ms, base[attempt - 1], base[attempt - 1] / 10);
        /* the model hears of a failure only when the tool is given up */
        assert_true(d.has_classification);
        assert_null(d.classification.llm_message);
        assert_int_equal(d.classification.llm_message_len, 0);
        elapsed += d.delay_ms;
    }
    rd_decision d = fail_once(f, "search_api", &err, 5, elapsed);
    assert_int_equal(d.action, RD_ACTION_GIVE_UP);
    assert_string_equal(d.reason, "max attempts (5) reached");
    assert_string_equal(d.classification.llm_message,
                        "Tool Execution Failed\nTool: search_api\n"
                        "Error Type: transient\nMessage: Connection reset by peer\n\n"
                        "The tool failed and cannot be used for this request.");
    assert_int_equal(d.classification.llm_message_len, strlen(d.classification.llm_message));
    assert_int_equal(event_of(&d, RD_EV_GAVE_UP, "search_api")->decision, RD_ACTION_GIVE_UP);
    assert_int_equal(d.delay_ms, 0);
}

static int compare_int64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static size_t count_distinct(int64_t *values, size_t n)
{
    qsort(values, n, sizeof *values, compare_int64);
    size_t distinct = n > 0;
    for (size_t i = 1; i < n; i++)
        distinct += values[i] != values[i - 1];
    return distinct;
}

/* Jitter spreads the delays: over many draws both halves of the band occur,
 * and to the microsecond (delay_us) the draws hardly ever coincide, where
 * whole milliseconds (21 values for 100 ms +-10 %) would collide often. */
static void test_jitter_spreads_delays(void **state)
{
    fixture *f = *state;
    rd_tool_error err = error_text("Connection reset by peer");
    enum { DRAWS = 40 };
    int below = 0, above = 0;
    int64_t us[DRAWS];
    char ids[DRAWS][16];
    for (int i = 0; i < DRAWS; i++) {
        rd_decide_input in = input("search_api", &err, 1);
        snprintf(ids[i], sizeof ids[i], "o-%d", i); /* each failure its own report */
        in.outcome_id = ids[i];
        rd_outcome_input ok = outcome("search_api", true, 1); /* no streak builds up */
        record_ok(f, &ok);
        rd_decision d = decide_ok(f, &in);
        assert_delay_within(d.delay_ms, 100, 10);
        assert_delay_within(d.delay_us, 100000, 10000);
        assert_int_equal(rd_us_to_ms(d.delay_us), d.delay_ms);
        below += d.delay_ms < 100;
        above += d.delay_ms > 100;
        us[i] = d.delay_us;
    }
    assert_true(below > 0 && above > 0);
    assert_true(count_distinct(us, DRAWS) >= DRAWS - 2);
}

/* With the default threshold the fifth failure opens the breaker, and an
 * open breaker answers before the attempt budget does. */
static void test_fifth_failure_with_default_threshold_fails_fast(void **state)
{
    fixture *f = *state;
    rd_tool_error err = timeout_error();
    for (uint32_t attempt = 1; attempt <= 4; attempt++)
        assert_int_equal(fail_once(f, "flight_search", &err, attempt, 0).action,
                         RD_ACTION_RETRY);
    rd_decision d = fail_once(f, "flight_search", &err, 5, 0);
    assert_int_equal(d.action, RD_ACTION_FAIL_FAST);
}

static void test_attempt_zero_counts_as_first(void **state)
{
    fixture *f = *state;
    rd_tool_error err = timeout_error();
    rd_decision d = fail_once(f, "flight_search", &err, 0, 0);
    assert_int_equal(d.action, RD_ACTION_RETRY);
    assert_delay_within(d.delay_ms, 100, 10);
}

/* A report sent again with its outcome_id is counted once and answered
 * with the first answer's delay. */
static void test_repeated_outcome_id_gets_the_same_delay(void **state)
{
    fixture *f = *state;
    rd_tool_error err = error_text("Connection reset by peer");
    rd_decide_input in = input("search_api", &err, 2);
    in.outcome_id = "report-1";
    rd_decision first = decide_ok(f, &in);
    for (int i = 0; i < 5; i++) {
        rd_decision again = decide_ok(f, &in);
        assert_true(again.duplicate);
        assert_int_equal(again.action, first.action);
        assert_int_equal(again.delay_us, first.delay_us);
        assert_int_equal(again.delay_ms, first.delay_ms);
        assert_string_equal(again.reason, first.reason);
    }
}

/* ---- 2.4: the total time budget ---- */

static void test_max_total_time(void **state)
{
    fixture *f = *state;
    rd_tool_error err = timeout_error();
    const int64_t elapsed[] = {0, 600, 1200};
    for (uint32_t i = 0; i < 3; i++)
        assert_int_equal(fail_once(f, "flight_search", &err, i + 1, elapsed[i]).action,
                         RD_ACTION_RETRY);
    rd_decision d = fail_once(f, "flight_search", &err, 4, 1800);
    assert_int_equal(d.action, RD_ACTION_GIVE_UP);
    assert_string_equal(d.reason, "max total retry time (2000 ms) would be exceeded");
}

/* ---- 2.5: a manifest's retry policy ---- */

static void test_manifest_retry_overrides(void **state)
{
    fixture *f = *state;
    rd_tool_error err = timeout_error();
    rd_decision d = fail_once(f, "custom_api", &err, 1, 0);
    assert_int_equal(d.action, RD_ACTION_RETRY);
    assert_delay_within(d.delay_ms, 50, 5);
    assert_int_equal(d.timeout_ms, 5000);
    d = fail_once(f, "custom_api", &err, 2, 50);
    assert_int_equal(d.action, RD_ACTION_RETRY);
    assert_delay_within(d.delay_ms, 100, 10);
    d = fail_once(f, "custom_api", &err, 3, 150);
    assert_int_equal(d.action, RD_ACTION_GIVE_UP);
    assert_string_equal(d.reason, "max attempts (3) reached");
}

/* ---- retry_after ---- */

static void test_retry_after_honoured(void **state)
{
    fixture *f = *state;
    rd_tool_error err = error_text("Rate limit exceeded (429)");
    err.retry_after_ms = 1500;
    rd_decision d = fail_once(f, "flight_search", &err, 1, 0);
    assert_int_equal(d.action, RD_ACTION_RETRY);
    assert_int_equal(d.delay_ms, 1500);
    assert_int_equal(d.delay_us, 1500000);

    /* a hint beyond the total budget ends the retries */
    err.retry_after_ms = 5000;
    d = fail_once(f, "flight_search", &err, 1, 0);
    assert_int_equal(d.action, RD_ACTION_GIVE_UP);

    /* a hint shorter than the backoff does not shorten it */
    err.retry_after_ms = 1;
    d = fail_once(f, "flight_search", &err, 1, 0);
    assert_delay_within(d.delay_ms, 100, 10);
    assert_delay_within(d.delay_us, 100000, 10000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_transient_timeout_retries),
        T(test_backoff_per_attempt_then_give_up),
        T(test_jitter_spreads_delays),
        T(test_fifth_failure_with_default_threshold_fails_fast),
        T(test_attempt_zero_counts_as_first),
        T(test_repeated_outcome_id_gets_the_same_delay),
        T(test_max_total_time),
        T(test_manifest_retry_overrides),
        T(test_retry_after_honoured),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
