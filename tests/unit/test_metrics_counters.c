/* Prometheus metrics (issue 6, 000 8.1), what is counted: per-tool counters
 * from decisions and outcomes, replays counted once, the cap on tool series,
 * the Redis store's counters, exact totals under concurrency, and a NULL
 * metrics handle that records nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>

#include "metrics_exposition.h"

static void test_decision_counters(void **state)
{
    rd_metrics *m = rd_metrics_new(100);
    rd_trace_event timeout[] = {event(RD_EV_TOOL_TIMEOUT, "flight"),
                                event(RD_EV_TOOL_ERROR, "flight"), event(RD_EV_RETRY, "flight")};
    rd_decision retry = decision(RD_ACTION_RETRY, RD_TRANSIENT, timeout, 3);
    rd_metrics_decision(m, "flight", &retry);
    rd_metrics_decision(m, "flight", &retry);

    rd_trace_event opened[] = {event(RD_EV_TOOL_ERROR, "flight"),
                               event(RD_EV_CIRCUIT_OPENED, "flight"),
                               event(RD_EV_FAIL_FAST, "flight")};
    rd_decision fail_fast = decision(RD_ACTION_FAIL_FAST, RD_TRANSIENT, opened, 3);
    rd_metrics_decision(m, "flight", &fail_fast);

    rd_decision escalate = decision(RD_ACTION_ESCALATE, RD_PERMANENT, NULL, 0);
    rd_metrics_decision(m, "hotel", &escalate);
    rd_decision proceed = decision(RD_ACTION_PROCEED, RD_RETRYABILITY_UNSPECIFIED, NULL, 0);
    rd_metrics_decision(m, "hotel", &proceed);

    char *t = render(m);
    assert_sample(t, "recoveryd_tool_errors_total{tool=\"flight\",retryability=\"transient\"}", 3);
    assert_sample(t, "recoveryd_tool_errors_total{tool=\"flight\",retryability=\"permanent\"}", 0);
    assert_sample(t, "recoveryd_tool_errors_total{tool=\"hotel\",retryability=\"permanent\"}", 1);
    assert_sample(t, "recoveryd_tool_retries_total{tool=\"flight\"}", 2);
    assert_sample(t, "recoveryd_tool_retries_total{tool=\"hotel\"}", 0);
    assert_sample(t, "recoveryd_tool_timeouts_total{tool=\"flight\"}", 2);
    assert_sample(t, "recoveryd_tool_breaker_opens_total{tool=\"flight\"}", 1);
    assert_sample(t, "recoveryd_decisions_total{action=\"retry\"}", 2);
    assert_sample(t, "recoveryd_decisions_total{action=\"fail_fast\"}", 1);
    assert_sample(t, "recoveryd_decisions_total{action=\"escalate\"}", 1);
    assert_sample(t, "recoveryd_decisions_total{action=\"proceed\"}", 1);
    assert_sample(t, "recoveryd_decisions_total{action=\"give_up\"}", 0);
    free(t);
    rd_metrics_free(m);
}

/* A replayed outcome_id recorded nothing in the engine; the answer still
 * counts as a decision, but no error, retry or open is counted twice. */
static void test_duplicate_decision_counts_only_the_answer(void **state)
{
    rd_metrics *m = rd_metrics_new(100);
    rd_trace_event opened[] = {event(RD_EV_CIRCUIT_OPENED, "search")};
    rd_decision d = decision(RD_ACTION_RETRY, RD_TRANSIENT, opened, 1);
    rd_metrics_decision(m, "search", &d);
    d.duplicate = true;
    rd_metrics_decision(m, "search", &d);
    char *t = render(m);
    assert_sample(t, "recoveryd_decisions_total{action=\"retry\"}", 2);
    assert_sample(t, "recoveryd_tool_errors_total{tool=\"search\",retryability=\"transient\"}", 1);
    assert_sample(t, "recoveryd_tool_retries_total{tool=\"search\"}", 1);
    assert_sample(t, "recoveryd_tool_breaker_opens_total{tool=\"search\"}", 1);
    free(t);
    rd_metrics_free(m);
}

/* An event about another tool (a cascade) counts against that tool. */
static void test_events_count_against_their_own_tool(void **state)
{
    rd_metrics *m = rd_metrics_new(100);
    rd_trace_event ev[] = {event(RD_EV_CIRCUIT_OPENED, "backup")};
    rd_decision d = decision(RD_ACTION_USE_ALTERNATIVE, RD_TRANSIENT, ev, 1);
    rd_metrics_decision(m, "primary", &d);
    char *t = render(m);
    assert_sample(t, "recoveryd_tool_breaker_opens_total{tool=\"backup\"}", 1);
    assert_sample(t, "recoveryd_tool_breaker_opens_total{tool=\"primary\"}", 0);
    free(t);
    rd_metrics_free(m);
}

static void test_outcome_counters(void **state)
{
    rd_metrics *m = rd_metrics_new(100);
    rd_outcome_input ok_first = {.tool_id = "db", .success = true, .attempt = 1};
    rd_outcome_input ok_retry = {.tool_id = "db", .success = true, .attempt = 3};
    rd_outcome_input failed = {.tool_id = "db", .success = false, .attempt = 1};
    rd_classification timeout = {.retryability = RD_TRANSIENT, .kind = RD_KIND_TIMEOUT};
    rd_classification denied = {.retryability = RD_PERMANENT, .kind = RD_KIND_NOT_PERMITTED};

    rd_metrics_outcome(m, "db", &ok_first, NULL, false);
    rd_metrics_outcome(m, "db", &ok_retry, NULL, false);
    rd_metrics_outcome(m, "db", &failed, NULL, false);     /* no detail: transient */
    rd_metrics_outcome(m, "db", &failed, &timeout, true);
    rd_metrics_outcome(m, "db", &failed, &denied, false);

    char *t = render(m);
    assert_sample(t, "recoveryd_tool_retry_successes_total{tool=\"db\"}", 1);
    assert_sample(t, "recoveryd_tool_errors_total{tool=\"db\",retryability=\"transient\"}", 2);
    assert_sample(t, "recoveryd_tool_errors_total{tool=\"db\",retryability=\"permanent\"}", 1);
    assert_sample(t, "recoveryd_tool_timeouts_total{tool=\"db\"}", 1);
    assert_sample(t, "recoveryd_tool_breaker_opens_total{tool=\"db\"}", 1);
    free(t);
    rd_metrics_free(m);
}

static void test_cardinality_cap(void **state)
{
    rd_metrics *m = rd_metrics_new(3);
    rd_decision d = decision(RD_ACTION_RETRY, RD_TRANSIENT, NULL, 0);
    char tool[32];
    for (int i = 0; i < 10; i++) {
        snprintf(tool, sizeof tool, "tool-%d", i);
        rd_metrics_decision(m, tool, &d);
    }
    rd_metrics_decision(m, "tool-0", &d); /* an early tool keeps its own series */
    char *t = render(m);
    assert_sample(t, "recoveryd_tool_retries_total{tool=\"tool-0\"}", 2);
    assert_sample(t, "recoveryd_tool_retries_total{tool=\"tool-2\"}", 1);
    assert_true(isnan(sample(t, "recoveryd_tool_retries_total{tool=\"tool-3\"}")));
    assert_sample(t, "recoveryd_tool_retries_total{tool=\"_other\"}", 7);
    assert_sample(t, "recoveryd_metrics_tools_tracked", 3);
    assert_sample(t, "recoveryd_metrics_tools_max", 3);
    free(t);
    rd_metrics_free(m);
}

static void test_other_absent_until_used(void **state)
{
    rd_metrics *m = rd_metrics_new(3);
    rd_decision d = decision(RD_ACTION_RETRY, RD_TRANSIENT, NULL, 0);
    rd_metrics_decision(m, "a", &d);
    char *t = render(m);
    assert_null(strstr(t, "tool=\"_other\""));
    free(t);
    rd_metrics_free(m);
}

/* The Redis store's counters appear once the store reports them, and
 * never for a memory-store deployment. */
static void test_shared_store_counters(void **state)
{
    rd_metrics *m = rd_metrics_new(3);
    char *t = render(m);
    assert_null(strstr(t, "recoveryd_redis_"));
    free(t);
    rd_metrics_set_shared_store(m, &(rd_shared_store_counts){
                                       .cache_answers = 7, .cache_reads = 11, .outcomes_batched = 40,
                                       .outcomes_dropped = 2});
    t = render(m);
    assert_sample(t, "recoveryd_redis_cache_answers_total", 7);
    assert_sample(t, "recoveryd_redis_cache_reads_total", 11);
    assert_sample(t, "recoveryd_redis_outcomes_batched_total", 40);
    assert_sample(t, "recoveryd_redis_outcomes_dropped_total", 2);
    free(t);
    rd_metrics_free(m);
}

/* ---- concurrency ---- */

#define THREADS 8
#define ROUNDS 20000
#define TOOLS 40

static void *record_many(void *arg)
{
    rd_metrics *m = arg;
    rd_trace_event ev[] = {event(RD_EV_CIRCUIT_OPENED, "")};
    char tool[32];
    for (int i = 0; i < ROUNDS; i++) {
        snprintf(tool, sizeof tool, "t%d", i % TOOLS);
        snprintf(ev[0].tool_id, sizeof ev[0].tool_id, "%s", tool);
        rd_decision d = decision(RD_ACTION_RETRY, RD_TRANSIENT, ev, 1);
        rd_metrics_decision(m, tool, &d);
        rd_outcome_input ok = {.tool_id = tool, .success = true, .attempt = 2};
        rd_metrics_outcome(m, tool, &ok, NULL, false);
        rd_metrics_rpc(m, 2, "/recovery.v1.RecoveryService/Decide", "unary", 0, i % 3000);
    }
    return NULL;
}

/* 8 threads on 40 tools with a cap of 30: every count lands exactly once,
 * and 10 tools share "_other". */
static void test_concurrent_recording_exact(void **state)
{
    rd_metrics *m = rd_metrics_new(30);
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, record_many, m), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);

    char *t = render(m);
    double retries = 0, successes = 0, opens = 0;
    const char *prefix = "recoveryd_tool_retries_total{tool=\"";
    size_t series = 0;
    for (const char *p = strstr(t, prefix); p; p = strstr(p + 1, prefix)) {
        retries += strtod(strchr(p, ' ') + 1, NULL);
        series++;
    }
    prefix = "recoveryd_tool_retry_successes_total{tool=\"";
    for (const char *p = strstr(t, prefix); p; p = strstr(p + 1, prefix))
        successes += strtod(strchr(p, ' ') + 1, NULL);
    prefix = "recoveryd_tool_breaker_opens_total{tool=\"";
    for (const char *p = strstr(t, prefix); p; p = strstr(p + 1, prefix))
        opens += strtod(strchr(p, ' ') + 1, NULL);
    const double total = (double)THREADS * ROUNDS;
    assert_int_equal(series, 31); /* 30 tools + _other */
    assert_true(retries == total);
    assert_true(successes == total);
    assert_true(opens == total);
    assert_sample(t, "recoveryd_tool_retries_total{tool=\"_other\"}", total * 10 / TOOLS);
    assert_sample(t, "recoveryd_decisions_total{action=\"retry\"}", total);
    assert_sample(t, "grpc_server_handling_seconds_count{grpc_type=\"unary\",grpc_service="
                     "\"recovery.v1.RecoveryService\",grpc_method=\"Decide\"}", total);
    assert_sample(t, "recoveryd_metrics_tools_tracked", 30);
    free(t);
    rd_metrics_free(m);
}

static void test_null_is_harmless(void **state)
{
    rd_decision d = {0};
    rd_metrics_decision(NULL, "x", &d);
    rd_metrics_rpc(NULL, 0, "x", "unary", 0, 1);
    rd_metrics_store_error(NULL);
    rd_metrics_set_degraded(NULL, true);
    rd_metrics_config_reload(NULL, true);
    assert_null(rd_metrics_render(NULL, NULL, NULL, 0));
    assert_int_equal(rd_metrics_http_port(NULL), -1);
    rd_metrics_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decision_counters),
        cmocka_unit_test(test_duplicate_decision_counts_only_the_answer),
        cmocka_unit_test(test_events_count_against_their_own_tool),
        cmocka_unit_test(test_outcome_counters),
        cmocka_unit_test(test_cardinality_cap),
        cmocka_unit_test(test_other_absent_until_used),
        cmocka_unit_test(test_shared_store_counters),
        cmocka_unit_test(test_concurrent_recording_exact),
        cmocka_unit_test(test_null_is_harmless),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
