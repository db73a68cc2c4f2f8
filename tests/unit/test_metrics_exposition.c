/* Prometheus metrics (issue 6, 000 8.1), what is rendered: a well-formed
 * text exposition with escaped label values, the breaker state gauges,
 * histograms whose buckets never decrease, the process collector and
 * build_info. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <time.h>

#include "metrics_exposition.h"

static int failing_lister(void *ctx, int64_t now_ms, rd_store_visit visit, void *visit_ctx)
{
    return -4;
}

static void test_breaker_state_gauge(void **state)
{
    rd_metrics *m = rd_metrics_new(100);
    char *t = rd_metrics_render(m, fake_breakers, NULL, NOW_MS);
    assert_non_null(t);
    /* One series per state, 1 for the state the breaker is in. A live hold
     * is the state callers see; the forced gauge says why. */
    struct { const char *tool, *state; } want[] = {
        {"closed-tool", "closed"}, {"open-tool", "open"},     {"half-tool", "half_open"},
        {"held-open", "open"},     {"held-closed", "closed"}, {"hold-expired", "closed"},
    };
    static const char *const STATES[] = {"closed", "open", "half_open"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        for (size_t j = 0; j < 3; j++) {
            char name[128];
            snprintf(name, sizeof name, "recoveryd_breaker_state{tool=\"%s\",state=\"%s\"}",
                     want[i].tool, STATES[j]);
            assert_sample(t, name, strcmp(STATES[j], want[i].state) == 0);
        }
    assert_sample(t, "recoveryd_breaker_forced{tool=\"held-open\"}", 1);
    assert_sample(t, "recoveryd_breaker_forced{tool=\"held-closed\"}", 2);
    assert_sample(t, "recoveryd_breaker_forced{tool=\"hold-expired\"}", 0);
    assert_sample(t, "recoveryd_breaker_forced{tool=\"open-tool\"}", 0);
    assert_sample(t, "recoveryd_breakers{state=\"closed\"}", 3);
    assert_sample(t, "recoveryd_breakers{state=\"open\"}", 2);
    assert_sample(t, "recoveryd_breakers{state=\"half_open\"}", 1);
    assert_sample(t, "recoveryd_breakers_forced", 2);
    parse_exposition(t);
    free(t);

    /* A store that cannot list leaves the families empty, the scrape intact. */
    t = rd_metrics_render(m, failing_lister, NULL, NOW_MS);
    assert_non_null(t);
    assert_null(strstr(t, "recoveryd_breaker_state{"));
    parse_exposition(t);
    free(t);
    rd_metrics_free(m);
}

static void test_breaker_gauge_capped(void **state)
{
    rd_metrics *m = rd_metrics_new(2);
    char *t = rd_metrics_render(m, fake_breakers, NULL, NOW_MS);
    assert_non_null(t);
    assert_true(isnan(sample(t, "recoveryd_breaker_state{tool=\"half-tool\",state=\"half_open\"}")));
    assert_sample(t, "recoveryd_breakers{state=\"half_open\"}", 1); /* still counted */
    free(t);
    rd_metrics_free(m);
}

static void test_exposition_parses(void **state)
{
    rd_metrics *m = rd_metrics_new(100);
    rd_trace_event ev[] = {event(RD_EV_TOOL_TIMEOUT, "plain")};
    rd_decision d = decision(RD_ACTION_RETRY, RD_TRANSIENT, ev, 1);
    rd_metrics_decision(m, "plain", &d);
    rd_metrics_decision(m, "quote\"back\\slash\nnewline", &d);
    rd_metrics_decision(m, "bad-utf8-\xff\xc3", &d);
    rd_metrics_decision(m, "caf\xc3\xa9", &d);
    rd_metrics_rpc(m, 1, "/recovery.v1.RecoveryService/Decide", "unary", 0, 1500);
    rd_metrics_rpc(m, 1, "/recovery.v1.RecoveryService/Decide", "unary", 3, 20);
    rd_metrics_rpc(m, -1, "/evil/{\"}", NULL, 12, 5);
    rd_metrics_store_error(m);
    rd_metrics_set_degraded(m, true);
    rd_metrics_config_reload(m, true);
    rd_metrics_config_reload(m, false);
    rd_metrics_config_reload(m, false);

    char *t = rd_metrics_render(m, fake_breakers, NULL, NOW_MS);
    assert_non_null(t);
    assert_true(parse_exposition(t) > 40);
    assert_sample(t, "recoveryd_tool_retries_total{tool=\"quote\\\"back\\\\slash\\nnewline\"}", 1);
    assert_sample(t, "recoveryd_tool_retries_total{tool=\"bad-utf8-\xef\xbf\xbd\xef\xbf\xbd\"}",
                  1);
    assert_sample(t, "recoveryd_tool_retries_total{tool=\"caf\xc3\xa9\"}", 1);
    assert_sample(t, "grpc_server_handled_total{grpc_type=\"unary\",grpc_service=\"recovery.v1."
                     "RecoveryService\",grpc_method=\"Decide\",grpc_code=\"OK\"}", 1);
    assert_sample(t, "grpc_server_handled_total{grpc_type=\"unary\",grpc_service=\"recovery.v1."
                     "RecoveryService\",grpc_method=\"Decide\",grpc_code=\"INVALID_ARGUMENT\"}", 1);
    /* Unknown methods never turn a caller's path into a label value. */
    assert_null(strstr(t, "evil"));
    assert_sample(t, "grpc_server_handled_total{grpc_type=\"unary\",grpc_service=\"_unknown\","
                     "grpc_method=\"_unknown\",grpc_code=\"UNIMPLEMENTED\"}", 1);
    assert_sample(t, "recoveryd_store_errors_total", 1);
    assert_sample(t, "recoveryd_store_degraded", 1);
    assert_sample(t, "recoveryd_config_reloads_total{result=\"success\"}", 1);
    assert_sample(t, "recoveryd_config_reloads_total{result=\"failure\"}", 2);
    free(t);

    rd_metrics_set_degraded(m, false);
    t = render(m);
    assert_sample(t, "recoveryd_store_degraded", 0);
    free(t);
    rd_metrics_free(m);
}

static void test_histogram_buckets(void **state)
{
    rd_metrics *m = rd_metrics_new(10);
    const char *path = "/recovery.v1.RecoveryService/Classify";
    static const int64_t latencies_us[] = {0, 50, 100, 101, 999, 1000, 1001, 40000,
                                           750000, 3000000, 60000000};
    double sum = 0;
    for (size_t i = 0; i < sizeof latencies_us / sizeof *latencies_us; i++) {
        rd_metrics_rpc(m, 0, path, "unary", 0, latencies_us[i]);
        sum += (double)latencies_us[i] / 1e6;
    }
    char *t = render(m);
    parse_exposition(t);
#define BUCKET(le) "grpc_server_handling_seconds_bucket{grpc_type=\"unary\",grpc_service=" \
                   "\"recovery.v1.RecoveryService\",grpc_method=\"Classify\",le=\"" le "\"}"
    assert_sample(t, BUCKET("0.0001"), 3);  /* bounds are inclusive: 100 us is in le=0.0001 */
    assert_sample(t, BUCKET("0.001"), 6);
    assert_sample(t, BUCKET("0.0025"), 7);
    assert_sample(t, BUCKET("0.05"), 8);
    assert_sample(t, BUCKET("1"), 9);
    assert_sample(t, BUCKET("5"), 10);
    assert_sample(t, BUCKET("10"), 10);
    assert_sample(t, BUCKET("+Inf"), 11);
#undef BUCKET
    const char *labels = "{grpc_type=\"unary\",grpc_service=\"recovery.v1.RecoveryService\","
                         "grpc_method=\"Classify\"}";
    char name[256];
    snprintf(name, sizeof name, "grpc_server_handling_seconds_count%s", labels);
    assert_sample(t, name, 11);
    snprintf(name, sizeof name, "grpc_server_handling_seconds_sum%s", labels);
    assert_true(fabs(sample(t, name) - sum) < 1e-6);

    /* Buckets never decrease, and le values increase to +Inf. */
    double last_count = -1, last_le = -1;
    const char *prefix = "grpc_server_handling_seconds_bucket{";
    for (const char *line = strstr(t, prefix); line; line = strstr(line + 1, prefix)) {
        const char *le = strstr(line, "le=\"");
        assert_non_null(le);
        double bound = strncmp(le + 4, "+Inf", 4) == 0 ? INFINITY : strtod(le + 4, NULL);
        double value = strtod(strchr(line, ' ') + 1, NULL);
        assert_true(bound > last_le);
        assert_true(value >= last_count);
        last_le = bound;
        last_count = value;
    }
    assert_true(isinf(last_le));
    free(t);
    rd_metrics_free(m);
}

/* The families stock dashboards and alerts expect: the client libraries'
 * process collector and a build_info gauge. */
static void test_process_and_build_info(void **state)
{
    rd_metrics *m = rd_metrics_new(10);
    char *t = render(m);
    assert_null(strstr(t, "recoveryd_build_info")); /* no version given: no series */
    free(t);
    rd_metrics_set_build_info(m, "1.2.3");
    t = render(m);
    parse_exposition(t);
    assert_sample(t, "recoveryd_build_info{version=\"1.2.3\"}", 1);
    assert_true(sample(t, "process_resident_memory_bytes") > 1e5);
    assert_true(sample(t, "process_virtual_memory_bytes") >= sample(t, "process_resident_memory_bytes"));
    assert_true(sample(t, "process_cpu_seconds_total") >= 0);
    assert_true(sample(t, "process_open_fds") >= 3); /* stdin, stdout, stderr at least */
    assert_true(sample(t, "process_max_fds") >= sample(t, "process_open_fds"));
    double started = sample(t, "process_start_time_seconds");
    double now = (double)time(NULL);
    assert_true(started > now - 3600 && started <= now + 1);
    assert_non_null(strstr(t, "# TYPE process_cpu_seconds_total counter"));
    free(t);
    rd_metrics_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_breaker_state_gauge),
        cmocka_unit_test(test_breaker_gauge_capped),
        cmocka_unit_test(test_exposition_parses),
        cmocka_unit_test(test_histogram_buckets),
        cmocka_unit_test(test_process_and_build_info),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
