/* The Prometheus text exposition (format 0.0.4) of the metrics, built at
 * scrape time from the series metrics.c records.
 *
 * Histogram buckets are stored non-cumulative and summed here, so a scrape
 * racing with recording still sees monotonic buckets and a _count equal to
 * the +Inf bucket. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain/breaker.h"
#include "domain/store.h"
#include "engine/tenant.h"
#include "ops/metrics_internal.h"
#include "ops/metrics_process.h"
#include "ops/metrics_text.h"

/* ---- text exposition ---- */

static void sb_tool_sample(strbuf *sb, const char *name, const char *tool_id,
                           const char *extra_labels, uint64_t value)
{
    sb_printf(sb, "%s{tool=\"", name);
    sb_label_value(sb, tool_id);
    sb_printf(sb, "\"%s} %" PRIu64 "\n", extra_labels, value);
}

/* Every tracked tool (and "_other" once used), in first-seen order; out
 * has room for max_tools + 1 entries. */
static size_t tool_list(rd_metrics *m, tool_series **out)
{
    size_t n = atomic_load_explicit(&m->n_tools, memory_order_acquire);
    for (size_t i = 0; i < n; i++)
        out[i] = m->ordered[i];
    if (atomic_load_explicit(&m->other_used, memory_order_relaxed))
        out[n++] = &m->other;
    return n;
}

static void render_tool_counter(strbuf *sb, tool_series **tools, size_t n, const char *name,
                                int which, const char *help)
{
    sb_family(sb, name, "counter", help);
    for (size_t i = 0; i < n; i++)
        sb_tool_sample(sb, name, tools[i]->tool_id, "", read_count(&tools[i]->c[which]));
}

static void render_tools(strbuf *sb, rd_metrics *m)
{
    tool_series **tools = malloc((m->max_tools + 1) * sizeof *tools);
    if (!tools) {
        sb->failed = true;
        return;
    }
    size_t n = tool_list(m, tools);
    const char *errors = "recoveryd_tool_errors_total";
    sb_family(sb, errors, "counter",
              "Tool errors reported through Decide or RecordOutcome, by retryability.");
    for (size_t i = 0; i < n; i++) {
        sb_tool_sample(sb, errors, tools[i]->tool_id, ",retryability=\"transient\"",
                       read_count(&tools[i]->c[TC_ERRORS_TRANSIENT]));
        sb_tool_sample(sb, errors, tools[i]->tool_id, ",retryability=\"permanent\"",
                       read_count(&tools[i]->c[TC_ERRORS_PERMANENT]));
        uint64_t unknown = read_count(&tools[i]->c[TC_ERRORS_UNKNOWN]);
        if (unknown)
            sb_tool_sample(sb, errors, tools[i]->tool_id, ",retryability=\"unknown\"", unknown);
    }
    render_tool_counter(sb, tools, n, "recoveryd_tool_retries_total", TC_RETRIES,
                        "Decide answers that told the executor to retry the tool.");
    render_tool_counter(sb, tools, n, "recoveryd_tool_retry_successes_total",
                        TC_RETRY_SUCCESSES, "Successful outcomes reported after a retry (attempt > 1).");
    render_tool_counter(sb, tools, n, "recoveryd_tool_breaker_opens_total", TC_BREAKER_OPENS,
                        "Times the tool's circuit breaker opened.");
    render_tool_counter(sb, tools, n, "recoveryd_tool_timeouts_total", TC_TIMEOUTS,
                        "Tool calls reported as timed out.");
    render_tool_counter(sb, tools, n, "recoveryd_tool_shadow_refusals_total", TC_SHADOW_REFUSALS,
                        "Decisions of a tool in shadow mode that enforce mode would have "
                        "refused, answered permissively instead.");
    free(tools);
    sb_family(sb, "recoveryd_metrics_tools_tracked", "gauge",
              "Tools with their own series; further tools share the series of tool _other.");
    sb_printf(sb, "recoveryd_metrics_tools_tracked %zu\n",
              atomic_load_explicit(&m->n_tools, memory_order_relaxed));
    sb_family(sb, "recoveryd_metrics_tools_max", "gauge",
              "The cap on tools with their own series (metrics.max_tools).");
    sb_printf(sb, "recoveryd_metrics_tools_max %zu\n", m->max_tools);
}

static const char *action_label(int a)
{
    static const char *const NAMES[N_ACTIONS] = {
        [RD_ACTION_PROCEED] = "proceed",         [RD_ACTION_RETRY] = "retry",
        [RD_ACTION_USE_ALTERNATIVE] = "use_alternative",
        [RD_ACTION_FAIL_FAST] = "fail_fast",     [RD_ACTION_ESCALATE] = "escalate",
        [RD_ACTION_GIVE_UP] = "give_up",         [RD_ACTION_PARTIAL] = "partial",
        [RD_ACTION_VERIFY] = "verify",
    };
    return NAMES[a];
}

static void render_decisions(strbuf *sb, rd_metrics *m)
{
    sb_family(sb, "recoveryd_decisions_total", "counter", "Decide decisions by action (in shadow mode, the enforce decision).");
    for (int a = RD_ACTION_PROCEED; a < N_ACTIONS; a++)
        sb_printf(sb, "recoveryd_decisions_total{action=\"%s\"} %" PRIu64 "\n", action_label(a),
                  read_count(&m->decisions[a]));
    sb_family(sb, "recoveryd_retries_refused_for_safety_total", "counter",
              "Failures of non-idempotent tools not retried because the effect may have "
              "happened, by the answer given instead.");
    sb_printf(sb, "recoveryd_retries_refused_for_safety_total{action=\"verify\"} %" PRIu64 "\n",
              read_count(&m->refused_verify));
    sb_printf(sb,
              "recoveryd_retries_refused_for_safety_total{action=\"escalate\"} %" PRIu64 "\n",
              read_count(&m->refused_escalate));
}

/* ---- breakers, read from the store at scrape time ---- */

typedef struct breaker_scan {
    strbuf states;               /* recoveryd_breaker_state lines */
    strbuf holds;                /* recoveryd_breaker_forced lines */
    size_t emitted, max_emitted;
    uint64_t by_state[3];        /* closed, open, half_open */
    uint64_t held;               /* breakers under an operator's hold */
    int64_t now_ms;
} breaker_scan;

static const char *const STATE_LABEL[3] = {"closed", "open", "half_open"};

static int scan_breaker(void *ctx, const char *tool_id, const rd_breaker *b)
{
    breaker_scan *scan = ctx;
    rd_breaker_status s = rd_breaker_status_at(b, scan->now_ms);
    int gauge = s == RD_BREAKER_OPEN ? 1 : s == RD_BREAKER_HALF_OPEN ? 2 : 0;
    bool held = rd_breaker_hold_live(b, scan->now_ms);
    int hold = !held ? 0 : b->forced == RD_BREAKER_OPEN ? 1 : 2;
    scan->by_state[gauge]++;
    scan->held += held;
    if (scan->emitted < scan->max_emitted) {
        for (int i = 0; i < 3; i++) {
            char state[32];
            snprintf(state, sizeof state, ",state=\"%s\"", STATE_LABEL[i]);
            sb_tool_sample(&scan->states, "recoveryd_breaker_state", tool_id, state,
                           (uint64_t)(gauge == i));
        }
        sb_tool_sample(&scan->holds, "recoveryd_breaker_forced", tool_id, "", (uint64_t)hold);
        scan->emitted++;
    }
    return 0;
}

static void sb_take(strbuf *sb, strbuf *part, bool include)
{
    if (include && part->data)
        sb_append(sb, part->data, part->len);
    if (part->failed)
        sb->failed = true;
    free(part->data);
}

/* Per-tool samples stop at max_tools; the counts by state cover every tool. */
static void render_breakers(strbuf *sb, rd_metrics *m, rd_breaker_lister lister, void *ctx,
                            int64_t now_ms)
{
    breaker_scan scan = {.max_emitted = m->max_tools, .now_ms = now_ms};
    bool listed = lister && lister(ctx, now_ms, scan_breaker, &scan) == 0;
    sb_family(sb, "recoveryd_breaker_state", "gauge",
              "Circuit breaker state per tool: 1 for the state it is in, 0 for the others.");
    sb_take(sb, &scan.states, listed);
    sb_family(sb, "recoveryd_breaker_forced", "gauge",
              "Operator hold per tool: 0 none, 1 held open, 2 held closed.");
    sb_take(sb, &scan.holds, listed);
    sb_family(sb, "recoveryd_breakers", "gauge", "Tracked circuit breakers by state.");
    if (listed)
        for (int i = 0; i < 3; i++)
            sb_printf(sb, "recoveryd_breakers{state=\"%s\"} %" PRIu64 "\n", STATE_LABEL[i],
                      scan.by_state[i]);
    sb_family(sb, "recoveryd_breakers_forced", "gauge",
              "Tracked circuit breakers under an operator's hold.");
    if (listed)
        sb_printf(sb, "recoveryd_breakers_forced %" PRIu64 "\n", scan.held);
}

/* ---- RPCs ---- */

static const char *const GRPC_CODE_NAME[GRPC_CODES + 1] = {
    "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
    "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
    "UNAUTHENTICATED", "OTHER",
};

/* grpc_type="unary",grpc_service="recovery.v1.RecoveryService",
 * grpc_method="Decide": the labels of the gRPC ecosystem's server metrics
 * (go-grpc-prometheus, grpc-java's and the OpenTelemetry exporters' names),
 * so stock dashboards work. */
static void sb_method_labels(strbuf *sb, method_series *ms, const char *path)
{
    const char *type = atomic_load_explicit(&ms->type, memory_order_relaxed);
    sb_printf(sb, "grpc_type=\"%s\",", type ? type : "unary");
    if (!path) {
        sb_puts(sb, "grpc_service=\"_unknown\",grpc_method=\"_unknown\"");
        return;
    }
    if (path[0] == '/')
        path++;
    const char *slash = strrchr(path, '/');
    char service[256];
    const char *method = path;
    service[0] = '\0';
    if (slash) {
        snprintf(service, sizeof service, "%.*s", (int)(slash - path), path);
        method = slash + 1;
    }
    sb_puts(sb, "grpc_service=\"");
    sb_label_value(sb, service);
    sb_puts(sb, "\",grpc_method=\"");
    sb_label_value(sb, method);
    sb_puts(sb, "\"");
}

static bool method_used(method_series *ms)
{
    for (size_t b = 0; b <= N_BUCKETS; b++)
        if (read_count(&ms->buckets[b]))
            return true;
    return false;
}

static void render_method_codes(strbuf *sb, method_series *ms, const char *path)
{
    for (int c = 0; c <= GRPC_CODES; c++) {
        uint64_t n = read_count(&ms->by_code[c]);
        if (!n)
            continue;
        sb_puts(sb, "grpc_server_handled_total{");
        sb_method_labels(sb, ms, path);
        sb_printf(sb, ",grpc_code=\"%s\"} %" PRIu64 "\n", GRPC_CODE_NAME[c], n);
    }
}

static void render_method_histogram(strbuf *sb, method_series *ms, const char *path)
{
    const char *name = "grpc_server_handling_seconds";
    uint64_t cumulative = 0;
    for (size_t b = 0; b <= N_BUCKETS; b++) {
        cumulative += read_count(&ms->buckets[b]);
        sb_printf(sb, "%s_bucket{", name);
        sb_method_labels(sb, ms, path);
        if (b < N_BUCKETS)
            sb_printf(sb, ",le=\"%g\"} %" PRIu64 "\n", (double)BUCKET_US[b] / 1e6, cumulative);
        else
            sb_printf(sb, ",le=\"+Inf\"} %" PRIu64 "\n", cumulative);
    }
    sb_printf(sb, "%s_sum{", name);
    sb_method_labels(sb, ms, path);
    sb_printf(sb, "} %.6f\n", (double)read_count(&ms->sum_us) / 1e6);
    sb_printf(sb, "%s_count{", name);
    sb_method_labels(sb, ms, path);
    sb_printf(sb, "} %" PRIu64 "\n", cumulative);
}

static void render_rpcs(strbuf *sb, rd_metrics *m)
{
    sb_family(sb, "grpc_server_handled_total", "counter",
              "Total number of RPCs completed on the server, regardless of success or failure.");
    for (size_t i = 0; i < METHOD_SLOTS; i++) {
        char *path = atomic_load_explicit(&m->methods[i].name, memory_order_acquire);
        if (path)
            render_method_codes(sb, &m->methods[i], path);
    }
    if (method_used(&m->unknown_method))
        render_method_codes(sb, &m->unknown_method, NULL);

    sb_family(sb, "grpc_server_handling_seconds", "histogram",
              "Response latency (seconds) of gRPC that had been application-level handled by "
              "the server: from the call's arrival to its status being sent.");
    for (size_t i = 0; i < METHOD_SLOTS; i++) {
        char *path = atomic_load_explicit(&m->methods[i].name, memory_order_acquire);
        if (path)
            render_method_histogram(sb, &m->methods[i], path);
    }
    if (method_used(&m->unknown_method))
        render_method_histogram(sb, &m->unknown_method, NULL);
}

/* A family of one unlabelled counter. */
static void render_counter(strbuf *sb, const char *name, const char *help,
                           atomic_uint_fast64_t *value)
{
    sb_family(sb, name, "counter", help);
    sb_printf(sb, "%s %" PRIu64 "\n", name, read_count(value));
}

typedef struct tenant_lines {
    strbuf *sb;
    bool started;
} tenant_lines;

static void tenant_refusal_lines(void *ctx, const char *tenant, uint64_t tools, uint64_t turns)
{
    tenant_lines *t = ctx;
    if (!t->started)
        sb_family(t->sb, "recoveryd_tenant_limit_refusals_total", "counter",
                  "Calls refused because the tenant reached a limit "
                  "(server.tenants[].max_tools, max_turns), by tenant and limit.");
    t->started = true;
    const char *limit[2] = {"max_tools", "max_turns"};
    uint64_t value[2] = {tools, turns};
    for (int i = 0; i < 2; i++) {
        sb_printf(t->sb, "recoveryd_tenant_limit_refusals_total{tenant=\"");
        sb_label_value(t->sb, tenant);
        sb_printf(t->sb, "\",limit=\"%s\"} %" PRIu64 "\n", limit[i], value[i]);
    }
}

/* One series per configured tenant with a limit, once it was seen. */
static void render_tenant_refusals(strbuf *sb)
{
    tenant_lines t = {sb, false};
    rd_tenant_refusals_visit(tenant_refusal_lines, &t);
}

static void render_shared_store(strbuf *sb, rd_metrics *m)
{
    if (!atomic_load_explicit(&m->shared_store, memory_order_acquire))
        return;
    render_counter(sb, "recoveryd_redis_cache_answers_total",
                   "Admission checks answered from the local cache of breaker states.",
                   &m->shared_cache_answers);
    render_counter(sb, "recoveryd_redis_cache_reads_total",
                   "Breaker reads of a named tool answered from the local cache.",
                   &m->shared_cache_reads);
    render_counter(sb, "recoveryd_redis_outcomes_batched_total",
                   "Outcomes on CLOSED breakers counted locally and sent to Redis in batches.",
                   &m->shared_batched);
    render_counter(sb, "recoveryd_redis_outcomes_dropped_total",
                   "Batched outcomes lost because Redis failed their batch.",
                   &m->shared_dropped);
    sb_family(sb, "recoveryd_redis_auth_refused", "gauge",
              "1 while Redis refuses the configured password (the log says why).");
    sb_printf(sb, "recoveryd_redis_auth_refused %d\n",
              atomic_load_explicit(&m->shared_auth_refused, memory_order_relaxed) ? 1 : 0);
}

static void render_process(strbuf *sb, rd_metrics *m)
{
    render_counter(sb, "recoveryd_store_errors_total",
                   "Store operations that failed (the store could not answer).", &m->store_errors);
    sb_family(sb, "recoveryd_store_breakers_displaced_total", "counter",
              "CLOSED breakers forgotten, least recently used first, to make room for a new "
              "tool when the breaker table was full (store.max_tools).");
    sb_printf(sb, "recoveryd_store_breakers_displaced_total %" PRIu64 "\n",
              rd_store_displaced_total());
    sb_family(sb, "recoveryd_store_degraded", "gauge",
              "1 while the shared store is unreachable and decisions run on local state.");
    sb_printf(sb, "recoveryd_store_degraded %d\n",
              atomic_load_explicit(&m->degraded, memory_order_relaxed) ? 1 : 0);
    render_shared_store(sb, m);
    render_tenant_refusals(sb);
    int64_t not_after = atomic_load_explicit(&m->tls_not_after, memory_order_relaxed);
    if (not_after > 0) {
        sb_family(sb, "recoveryd_tls_certificate_expiry_timestamp_seconds", "gauge",
                  "notAfter of the server certificate in use (picked up again when its files "
                  "change).");
        sb_printf(sb, "recoveryd_tls_certificate_expiry_timestamp_seconds %" PRId64 "\n",
                  not_after);
    }
    sb_family(sb, "recoveryd_config_reloads_total", "counter",
              "Configuration reloads by result (a failed reload keeps the previous config).");
    sb_printf(sb, "recoveryd_config_reloads_total{result=\"success\"} %" PRIu64 "\n",
              read_count(&m->reloads_ok));
    sb_printf(sb, "recoveryd_config_reloads_total{result=\"failure\"} %" PRIu64 "\n",
              read_count(&m->reloads_failed));
    if (!atomic_load(&m->spans_on))
        return;
    sb_family(sb, "recoveryd_otlp_spans_exported_total", "counter",
              "Decision spans the OTLP collector accepted.");
    sb_printf(sb, "recoveryd_otlp_spans_exported_total %" PRIu64 "\n",
              read_count(&m->spans_exported));
    sb_family(sb, "recoveryd_otlp_spans_dropped_total", "counter",
              "Decision spans not exported: the queue was full, or the collector did not "
              "accept their batch.");
    sb_printf(sb, "recoveryd_otlp_spans_dropped_total{reason=\"queue_full\"} %" PRIu64 "\n",
              read_count(&m->spans_dropped_queue));
    sb_printf(sb, "recoveryd_otlp_spans_dropped_total{reason=\"export_failed\"} %" PRIu64 "\n",
              read_count(&m->spans_dropped_export));
}

static void render_build_info(strbuf *sb, rd_metrics *m)
{
    if (!m->version[0])
        return;
    sb_family(sb, "recoveryd_build_info", "gauge",
              "Always 1; the version of the running binary as a label.");
    sb_puts(sb, "recoveryd_build_info{version=\"");
    sb_label_value(sb, m->version);
    sb_puts(sb, "\"} 1\n");
}

char *rd_metrics_render(rd_metrics *m, rd_breaker_lister lister, void *lister_ctx, int64_t now_ms)
{
    if (!m)
        return NULL;
    strbuf sb = {0};
    render_build_info(&sb, m);
    render_tools(&sb, m);
    render_decisions(&sb, m);
    render_breakers(&sb, m, lister, lister_ctx, now_ms);
    render_rpcs(&sb, m);
    render_process(&sb, m);
    rd_metrics_render_process_collector(&sb);
    if (sb.failed) {
        free(sb.data);
        return NULL;
    }
    return sb.data;
}
