/* Prometheus metrics (issue 6, 000 8.1): per-tool counters from decisions
 * and outcomes, the cap on tool series, a well-formed text exposition,
 * histograms, the HTTP endpoint and exact totals under concurrency. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

#include "domain/breaker.h"
#include "ops/metrics.h"

#define NOW_MS 1700000000000LL

/* ---- reading the exposition ---- */

/* The value of the sample whose name-and-labels text is exactly `series`
 * (e.g. `recoveryd_tool_retries_total{tool="a"}`); NAN when absent. */
static double sample(const char *text, const char *series)
{
    size_t n = strlen(series);
    for (const char *line = text; line && *line;) {
        const char *eol = strchr(line, '\n');
        if (strncmp(line, series, n) == 0 && line[n] == ' ')
            return strtod(line + n + 1, NULL);
        line = eol ? eol + 1 : NULL;
    }
    return NAN;
}

static char *render(rd_metrics *m)
{
    char *text = rd_metrics_render(m, NULL, NULL, NOW_MS);
    assert_non_null(text);
    return text;
}

static void assert_sample(const char *text, const char *series, double expected)
{
    double v = sample(text, series);
    if (isnan(v) || v != expected)
        fail_msg("%s: expected %g, got %g in:\n%s", series, expected, v, text);
}

/* ---- a small parser for format 0.0.4 ---- */

typedef struct family {
    char name[128];
    char type[16];
    bool help, closed;
} family;

typedef struct parsed {
    family fams[64];
    size_t n_fams;
    family *current;
    size_t n_samples;
} parsed;

static family *family_get(parsed *p, const char *name, size_t len)
{
    for (size_t i = 0; i < p->n_fams; i++)
        if (strlen(p->fams[i].name) == len && strncmp(p->fams[i].name, name, len) == 0)
            return &p->fams[i];
    assert_true(p->n_fams < 64);
    family *f = &p->fams[p->n_fams++];
    snprintf(f->name, sizeof f->name, "%.*s", (int)len, name);
    return f;
}

static size_t metric_name_len(const char *s)
{
    size_t i = 0;
    if (!(isalpha((unsigned char)s[0]) || s[0] == '_' || s[0] == ':'))
        return 0;
    while (isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == ':')
        i++;
    return i;
}

/* {k="v",...}: returns the length consumed, 0 when malformed. */
static size_t labels_len(const char *s)
{
    size_t i = 1;
    if (s[i] == '}')
        return 2;
    for (;;) {
        size_t k = metric_name_len(s + i);
        if (!k || s[i + k] != '=' || s[i + k + 1] != '"')
            return 0;
        i += k + 2;
        while (s[i] != '"') {
            if (s[i] == '\0' || s[i] == '\n')
                return 0;
            if (s[i] == '\\') {
                if (s[i + 1] != '\\' && s[i + 1] != '"' && s[i + 1] != 'n')
                    return 0;
                i++;
            }
            i++;
        }
        i++;
        if (s[i] == '}')
            return i + 1;
        if (s[i] != ',')
            return 0;
        i++;
    }
}

static bool value_ok(const char *s)
{
    if (!strcmp(s, "+Inf") || !strcmp(s, "-Inf") || !strcmp(s, "NaN"))
        return true;
    char *end;
    strtod(s, &end);
    return end != s && *end == '\0';
}

/* The family a sample belongs to: a histogram's _bucket/_sum/_count go to
 * the histogram's name. */
static family *sample_family(parsed *p, const char *name, size_t len)
{
    static const char *const SUFFIX[] = {"_bucket", "_sum", "_count"};
    for (size_t i = 0; i < 3; i++) {
        size_t sl = strlen(SUFFIX[i]);
        if (len > sl && strncmp(name + len - sl, SUFFIX[i], sl) == 0) {
            family *f = family_get(p, name, len - sl);
            if (!strcmp(f->type, "histogram"))
                return f;
        }
    }
    return family_get(p, name, len);
}

static void parse_comment(parsed *p, const char *line)
{
    bool help = strncmp(line, "# HELP ", 7) == 0;
    bool type = strncmp(line, "# TYPE ", 7) == 0;
    if (!help && !type)
        return;
    size_t n = metric_name_len(line + 7);
    if (!n || line[7 + n] != ' ')
        fail_msg("malformed comment: %s", line);
    family *f = family_get(p, line + 7, n);
    if (f->closed)
        fail_msg("family %s is split: %s", f->name, line);
    if (p->current && p->current != f)
        p->current->closed = true;
    p->current = f;
    if (help)
        f->help = true;
    else
        snprintf(f->type, sizeof f->type, "%s", line + 8 + n);
}

static void parse_sample(parsed *p, const char *line)
{
    size_t n = metric_name_len(line);
    if (!n)
        fail_msg("sample without a metric name: %s", line);
    family *f = sample_family(p, line, n);
    if (!f->help || !f->type[0])
        fail_msg("sample before its HELP and TYPE: %s", line);
    if (f != p->current)
        fail_msg("sample outside its family block: %s", line);
    size_t i = n;
    if (line[i] == '{') {
        size_t l = labels_len(line + i);
        if (!l)
            fail_msg("malformed labels: %s", line);
        i += l;
    }
    if (line[i] != ' ' || !value_ok(line + i + 1))
        fail_msg("malformed value: %s", line);
    p->n_samples++;
}

/* Fails the test unless every line is a HELP/TYPE comment or a sample
 * `name{labels} value` of a family announced just before it. */
static size_t parse_exposition(const char *text)
{
    parsed *p = calloc(1, sizeof *p);
    assert_non_null(p);
    assert_true(text[0] && text[strlen(text) - 1] == '\n');
    char *copy = strdup(text);
    for (char *save, *line = strtok_r(copy, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#')
            parse_comment(p, line);
        else
            parse_sample(p, line);
    }
    for (size_t i = 0; i < p->n_fams; i++) {
        const char *t = p->fams[i].type;
        if (!p->fams[i].help || (strcmp(t, "counter") && strcmp(t, "gauge") &&
                                 strcmp(t, "histogram")))
            fail_msg("family %s lacks HELP or a valid TYPE ('%s')", p->fams[i].name, t);
        if (!strcmp(t, "counter") && !strstr(p->fams[i].name, "_total"))
            fail_msg("counter %s does not end in _total", p->fams[i].name);
    }
    size_t samples = p->n_samples;
    free(copy);
    free(p);
    return samples;
}

/* ---- synthetic decisions ---- */

static rd_decision decision(rd_action action, rd_retryability r, rd_trace_event *events,
                            size_t n_events)
{
    rd_decision d = {.action = action, .trace = events, .n_trace = n_events};
    if (r != RD_RETRYABILITY_UNSPECIFIED) {
        d.has_classification = true;
        d.classification.classification.retryability = r;
    }
    return d;
}

static rd_trace_event event(rd_event_type type, const char *tool_id)
{
    rd_trace_event ev = {.type = type};
    snprintf(ev.tool_id, sizeof ev.tool_id, "%s", tool_id);
    return ev;
}

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

/* ---- exposition ---- */

static int fake_breakers(void *ctx, int64_t now_ms, rd_store_visit visit, void *visit_ctx)
{
    rd_breaker closed, open, half_open;
    rd_breaker_init(&closed, now_ms);
    rd_breaker_init(&open, now_ms);
    open.stored = RD_BREAKER_OPEN;
    open.opened_at_ms = now_ms - 1000;
    open.open_until_ms = now_ms + 1000;
    half_open = open;
    half_open.open_until_ms = now_ms - 1;
    rd_breaker held_open = closed, held_closed = open, hold_expired = closed;
    assert_int_equal(rd_breaker_force(&held_open, RD_FORCE_OPEN, now_ms, 0), RD_OK);
    assert_int_equal(rd_breaker_force(&held_closed, RD_FORCE_CLOSED, now_ms, 60000), RD_OK);
    assert_int_equal(rd_breaker_force(&hold_expired, RD_FORCE_OPEN, now_ms - 2000, 1000), RD_OK);
    visit(visit_ctx, "closed-tool", &closed);
    visit(visit_ctx, "open-tool", &open);
    visit(visit_ctx, "half-tool", &half_open);
    visit(visit_ctx, "held-open", &held_open);
    visit(visit_ctx, "held-closed", &held_closed);
    visit(visit_ctx, "hold-expired", &hold_expired);
    return 0;
}

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

/* ---- HTTP ---- */

/* One HTTP/1.0 request over a raw socket; the whole response, malloc'd. */
static char *http_request(int port, const char *method, const char *path)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    char req[256];
    int n = snprintf(req, sizeof req, "%s %s HTTP/1.0\r\nHost: localhost\r\n\r\n", method, path);
    assert_int_equal(write(fd, req, (size_t)n), n);
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    ssize_t got;
    while ((got = read(fd, buf + len, cap - len - 1)) > 0) {
        len += (size_t)got;
        if (cap - len < 1024)
            buf = realloc(buf, cap *= 2);
    }
    buf[len] = '\0';
    close(fd);
    return buf;
}

static int status_of(const char *response)
{
    int status = 0;
    sscanf(response, "HTTP/1.%*d %d", &status);
    return status;
}

static void test_http_endpoint(void **state)
{
    rd_metrics *m = rd_metrics_new(10);
    rd_decision d = decision(RD_ACTION_RETRY, RD_TRANSIENT, NULL, 0);
    rd_metrics_decision(m, "web", &d);
    rd_status st = {0};
    rd_metrics_http *h = rd_metrics_http_start(m, "127.0.0.1:0", fake_breakers, NULL, NULL, &st);
    assert_non_null(h);
    int port = rd_metrics_http_port(h);
    assert_true(port > 0 && port < 65536);

    char *r = http_request(port, "GET", "/metrics");
    assert_int_equal(status_of(r), 200);
    assert_non_null(strstr(r, "text/plain; version=0.0.4"));
    char *body = strstr(r, "\r\n\r\n");
    assert_non_null(body);
    parse_exposition(body + 4);
    assert_sample(body + 4, "recoveryd_tool_retries_total{tool=\"web\"}", 1);
    assert_sample(body + 4, "recoveryd_breaker_state{tool=\"open-tool\",state=\"open\"}", 1);
    free(r);

    r = http_request(port, "GET", "/healthz");
    assert_int_equal(status_of(r), 200);
    assert_non_null(strstr(r, "\r\n\r\nok"));
    free(r);

    r = http_request(port, "GET", "/nope");
    assert_int_equal(status_of(r), 404);
    free(r);

    r = http_request(port, "POST", "/metrics");
    assert_int_equal(status_of(r), 405);
    assert_non_null(strstr(r, "Allow: GET, HEAD"));
    free(r);

    r = http_request(port, "DELETE", "/healthz");
    assert_int_equal(status_of(r), 405);
    free(r);

    rd_metrics_http_stop(h);
    rd_metrics_http_stop(NULL);
    rd_metrics_free(m);
}

static void test_http_bad_listen(void **state)
{
    rd_metrics *m = rd_metrics_new(10);
    rd_status st = {0};
    assert_null(rd_metrics_http_start(m, "no-port", NULL, NULL, NULL, &st));
    assert_int_equal(st.code, RD_ERR_INVALID);
    assert_non_null(strstr(st.msg, "metrics.listen"));
    assert_null(rd_metrics_http_start(m, "127.0.0.1:70000", NULL, NULL, NULL, &st));
    assert_int_equal(st.code, RD_ERR_INVALID);

    /* A port already taken is refused, naming the address. */
    rd_metrics_http *first = rd_metrics_http_start(m, "127.0.0.1:0", NULL, NULL, NULL, &st);
    assert_non_null(first);
    char taken[64];
    snprintf(taken, sizeof taken, "127.0.0.1:%d", rd_metrics_http_port(first));
    assert_null(rd_metrics_http_start(m, taken, NULL, NULL, NULL, &st));
    assert_int_equal(st.code, RD_ERR_UNAVAILABLE);
    assert_non_null(strstr(st.msg, taken));
    rd_metrics_http_stop(first);
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
        cmocka_unit_test(test_breaker_state_gauge),
        cmocka_unit_test(test_breaker_gauge_capped),
        cmocka_unit_test(test_exposition_parses),
        cmocka_unit_test(test_histogram_buckets),
        cmocka_unit_test(test_http_endpoint),
        cmocka_unit_test(test_http_bad_listen),
        cmocka_unit_test(test_concurrent_recording_exact),
        cmocka_unit_test(test_process_and_build_info),
        cmocka_unit_test(test_null_is_harmless),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
