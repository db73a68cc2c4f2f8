/* Prometheus metrics: lock-free recording, text exposition on demand.
 *
 * Per-tool series live in an open-addressing table whose slots are published
 * with release stores, so a lookup never locks; the insertion mutex is taken
 * only for a tool not seen before. The table has twice as many slots as the
 * cap on tools, so a probe always ends at an empty slot. Once the cap is
 * reached, unknown tools go to the shared "_other" series without locking.
 *
 * Histogram buckets are stored non-cumulative and summed at render time, so
 * a scrape racing with recording still sees monotonic buckets and a _count
 * equal to the +Inf bucket. */
#include "ops/metrics.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain/breaker.h"
#include "domain/hash.h"
#include "ops/metrics_text.h"
#include "domain/store.h"

/* ---- series ---- */

enum {
    TC_ERRORS_TRANSIENT,
    TC_ERRORS_PERMANENT,
    TC_ERRORS_UNKNOWN,      /* no retryability known (should not happen) */
    TC_RETRIES,
    TC_RETRY_SUCCESSES,
    TC_BREAKER_OPENS,
    TC_TIMEOUTS,
    TC_COUNT
};

typedef struct tool_series {
    char *tool_id;                       /* owned */
    atomic_uint_fast64_t c[TC_COUNT];
} tool_series;

/* Latency buckets in microseconds, exported in seconds: 100 us .. 10 s. */
static const int64_t BUCKET_US[] = {
    100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000,
    100000, 250000, 500000, 1000000, 2500000, 5000000, 10000000,
};
#define N_BUCKETS (sizeof BUCKET_US / sizeof BUCKET_US[0])

#define GRPC_CODES 17            /* OK .. UNAUTHENTICATED */
#define METHOD_SLOTS 64          /* method indexes tracked by name */

typedef struct method_series {
    _Atomic(char *) name;                /* owned; published once */
    atomic_uint_fast64_t by_code[GRPC_CODES + 1]; /* last: out-of-range codes */
    atomic_uint_fast64_t buckets[N_BUCKETS + 1];  /* last: above the largest bound */
    atomic_uint_fast64_t sum_us;
} method_series;

#define N_ACTIONS (RD_ACTION_VERIFY + 1)

struct rd_metrics {
    size_t max_tools;
    size_t n_slots;                      /* power of two, >= 2 * max_tools */
    _Atomic(tool_series *) *slots;
    tool_series **ordered;               /* insertion order, for stable output */
    atomic_size_t n_tools;
    atomic_bool full;
    tool_series other;                   /* "_other": tools beyond the cap */
    atomic_bool other_used;
    pthread_mutex_t insert_lock;

    atomic_uint_fast64_t decisions[N_ACTIONS];
    /* Failures that would have been retried but whose effect may have
     * happened (domain/effects.h), by the answer given instead. */
    atomic_uint_fast64_t refused_verify, refused_escalate;
    method_series methods[METHOD_SLOTS];
    method_series unknown_method;        /* method -1 or out of range */

    atomic_uint_fast64_t store_errors;
    atomic_bool degraded;
    atomic_int_fast64_t tls_not_after;
    atomic_bool shared_store;            /* the counters below were set */
    atomic_uint_fast64_t shared_cache_answers, shared_cache_reads, shared_batched, shared_dropped;
    atomic_bool shared_auth_refused;
    atomic_uint_fast64_t reloads_ok;
    atomic_uint_fast64_t reloads_failed;
};

static void count(atomic_uint_fast64_t *c, uint64_t n)
{
    atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

static uint64_t read_count(atomic_uint_fast64_t *c)
{
    return atomic_load_explicit(c, memory_order_relaxed);
}

/* ---- lifecycle ---- */

rd_metrics *rd_metrics_new(size_t max_tools)
{
    if (max_tools == 0)
        max_tools = 1;
    rd_metrics *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->max_tools = max_tools;
    m->n_slots = 16;
    while (m->n_slots < 2 * max_tools)
        m->n_slots *= 2;
    m->slots = calloc(m->n_slots, sizeof *m->slots);
    m->ordered = calloc(max_tools, sizeof *m->ordered);
    m->other.tool_id = strdup("_other");
    if (!m->slots || !m->ordered || !m->other.tool_id ||
        pthread_mutex_init(&m->insert_lock, NULL) != 0) {
        free(m->slots);
        free(m->ordered);
        free(m->other.tool_id);
        free(m);
        return NULL;
    }
    return m;
}

void rd_metrics_free(rd_metrics *m)
{
    if (!m)
        return;
    size_t n = atomic_load(&m->n_tools);
    for (size_t i = 0; i < n; i++) {
        free(m->ordered[i]->tool_id);
        free(m->ordered[i]);
    }
    for (size_t i = 0; i < METHOD_SLOTS; i++)
        free(atomic_load(&m->methods[i].name));
    free(m->slots);
    free(m->ordered);
    free(m->other.tool_id);
    pthread_mutex_destroy(&m->insert_lock);
    free(m);
}

/* ---- the per-tool table ---- */

/* The slot holding tool_id, or the empty slot where it would go. */
static size_t probe(rd_metrics *m, const char *tool_id, uint64_t h, tool_series **found)
{
    size_t mask = m->n_slots - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        tool_series *t = atomic_load_explicit(&m->slots[i], memory_order_acquire);
        if (!t || strcmp(t->tool_id, tool_id) == 0) {
            *found = t;
            return i;
        }
    }
}

static tool_series *other_series(rd_metrics *m)
{
    if (!atomic_load_explicit(&m->other_used, memory_order_relaxed))
        atomic_store_explicit(&m->other_used, true, memory_order_relaxed);
    return &m->other;
}

static tool_series *insert_tool(rd_metrics *m, const char *tool_id, uint64_t h)
{
    tool_series *t = NULL;
    pthread_mutex_lock(&m->insert_lock);
    size_t slot = probe(m, tool_id, h, &t); /* another thread may have won */
    size_t n = atomic_load_explicit(&m->n_tools, memory_order_relaxed);
    if (!t && n < m->max_tools && (t = calloc(1, sizeof *t))) {
        if ((t->tool_id = strdup(tool_id))) {
            m->ordered[n] = t;
            atomic_store_explicit(&m->n_tools, n + 1, memory_order_release);
            atomic_store_explicit(&m->slots[slot], t, memory_order_release);
        } else {
            free(t);
            t = NULL;
        }
    }
    if (!t && atomic_load_explicit(&m->n_tools, memory_order_relaxed) >= m->max_tools)
        atomic_store(&m->full, true);
    pthread_mutex_unlock(&m->insert_lock);
    return t ? t : other_series(m);
}

/* The series of tool_id: its own while under the cap, else "_other". */
static tool_series *tool_of(rd_metrics *m, const char *tool_id)
{
    if (!tool_id || !tool_id[0])
        return other_series(m);
    uint64_t h = rd_hash_text(tool_id, 0);
    tool_series *t;
    probe(m, tool_id, h, &t);
    if (t)
        return t;
    if (atomic_load_explicit(&m->full, memory_order_relaxed))
        return other_series(m);
    return insert_tool(m, tool_id, h);
}

/* ---- recording ---- */

static void count_error(tool_series *t, rd_retryability r)
{
    int which = r == RD_TRANSIENT ? TC_ERRORS_TRANSIENT
              : r == RD_PERMANENT ? TC_ERRORS_PERMANENT
                                  : TC_ERRORS_UNKNOWN;
    count(&t->c[which], 1);
}

static method_series *method_of(rd_metrics *m, int method, const char *method_name)
{
    if (method < 0 || method >= METHOD_SLOTS || !method_name || !method_name[0])
        return &m->unknown_method;
    method_series *ms = &m->methods[method];
    if (!atomic_load_explicit(&ms->name, memory_order_acquire)) {
        /* First call of this method: publish its name once. */
        pthread_mutex_lock(&m->insert_lock);
        if (!atomic_load_explicit(&ms->name, memory_order_relaxed)) {
            char *copy = strdup(method_name);
            if (copy)
                atomic_store_explicit(&ms->name, copy, memory_order_release);
        }
        pthread_mutex_unlock(&m->insert_lock);
        if (!atomic_load_explicit(&ms->name, memory_order_acquire))
            return &m->unknown_method;
    }
    return ms;
}

void rd_metrics_rpc(rd_metrics *m, int method, const char *method_name, int grpc_status,
                    int64_t latency_us)
{
    if (!m)
        return;
    method_series *ms = method_of(m, method, method_name);
    count(&ms->by_code[grpc_status >= 0 && grpc_status < GRPC_CODES ? grpc_status
                                                                      : GRPC_CODES], 1);
    if (latency_us < 0)
        latency_us = 0;
    size_t b = 0;
    while (b < N_BUCKETS && latency_us > BUCKET_US[b])
        b++;
    count(&ms->buckets[b], 1);
    count(&ms->sum_us, (uint64_t)latency_us);
}

void rd_metrics_decision(rd_metrics *m, const char *tool_id, const rd_decision *d)
{
    if (!m || !d)
        return;
    if (d->action > RD_ACTION_UNSPECIFIED && d->action < N_ACTIONS)
        count(&m->decisions[d->action], 1);
    if (d->duplicate)
        return; /* a replayed report changed nothing, so it counts nothing */
    if (d->has_classification &&
        d->classification.classification.effect_safety == RD_EFFECT_SAFETY_UNKNOWN)
        count(d->action == RD_ACTION_VERIFY ? &m->refused_verify : &m->refused_escalate, 1);
    tool_series *t = tool_of(m, tool_id);
    if (d->has_classification)
        count_error(t, d->classification.classification.retryability);
    if (d->action == RD_ACTION_RETRY)
        count(&t->c[TC_RETRIES], 1);
    for (size_t i = 0; i < d->n_trace; i++) {
        const rd_trace_event *ev = &d->trace[i];
        if (ev->type != RD_EV_CIRCUIT_OPENED && ev->type != RD_EV_TOOL_TIMEOUT)
            continue;
        /* Events name their own tool; a cascade may mention others. */
        tool_series *et = ev->tool_id[0] && strcmp(ev->tool_id, tool_id ? tool_id : "") != 0
                              ? tool_of(m, ev->tool_id) : t;
        count(&et->c[ev->type == RD_EV_CIRCUIT_OPENED ? TC_BREAKER_OPENS : TC_TIMEOUTS], 1);
    }
}

void rd_metrics_outcome(rd_metrics *m, const char *tool_id, const rd_outcome_input *in,
                        const rd_classification *c_or_null, bool opened)
{
    if (!m || !in)
        return;
    tool_series *t = tool_of(m, tool_id);
    if (in->success) {
        if (in->attempt > 1)
            count(&t->c[TC_RETRY_SUCCESSES], 1);
    } else {
        /* A failure reported without detail is transient (as the engine treats it). */
        count_error(t, c_or_null ? c_or_null->retryability : RD_TRANSIENT);
        if (c_or_null && c_or_null->kind == RD_KIND_TIMEOUT)
            count(&t->c[TC_TIMEOUTS], 1);
    }
    if (opened)
        count(&t->c[TC_BREAKER_OPENS], 1);
}

void rd_metrics_store_error(rd_metrics *m)
{
    if (m)
        count(&m->store_errors, 1);
}

void rd_metrics_set_tls_not_after(rd_metrics *m, int64_t not_after)
{
    if (m)
        atomic_store_explicit(&m->tls_not_after, not_after, memory_order_relaxed);
}

void rd_metrics_set_degraded(rd_metrics *m, bool degraded)
{
    if (m)
        atomic_store_explicit(&m->degraded, degraded, memory_order_relaxed);
}

void rd_metrics_set_shared_store(rd_metrics *m, const rd_shared_store_counts *c)
{
    if (!m)
        return;
    atomic_store_explicit(&m->shared_cache_answers, c->cache_answers, memory_order_relaxed);
    atomic_store_explicit(&m->shared_cache_reads, c->cache_reads, memory_order_relaxed);
    atomic_store_explicit(&m->shared_batched, c->outcomes_batched, memory_order_relaxed);
    atomic_store_explicit(&m->shared_dropped, c->outcomes_dropped, memory_order_relaxed);
    atomic_store_explicit(&m->shared_auth_refused, c->auth_refused, memory_order_relaxed);
    atomic_store_explicit(&m->shared_store, true, memory_order_release);
}

void rd_metrics_config_reload(rd_metrics *m, bool ok)
{
    if (m)
        count(ok ? &m->reloads_ok : &m->reloads_failed, 1);
}

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
    sb_family(sb, "recoveryd_decisions_total", "counter", "Decide answers by action.");
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
        sb_tool_sample(&scan->states, "recoveryd_breaker_state", tool_id, "", (uint64_t)gauge);
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
              "Circuit breaker state per tool: 0 closed, 1 open, 2 half_open.");
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

/* service="recovery.v1.RecoveryService",method="Decide" from the path. */
static void sb_method_labels(strbuf *sb, const char *path)
{
    if (!path) {
        sb_puts(sb, "service=\"_unknown\",method=\"_unknown\"");
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
    sb_puts(sb, "service=\"");
    sb_label_value(sb, service);
    sb_puts(sb, "\",method=\"");
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
        sb_puts(sb, "recoveryd_rpc_handled_total{");
        sb_method_labels(sb, path);
        sb_printf(sb, ",code=\"%s\"} %" PRIu64 "\n", GRPC_CODE_NAME[c], n);
    }
}

static void render_method_histogram(strbuf *sb, method_series *ms, const char *path)
{
    const char *name = "recoveryd_rpc_duration_seconds";
    uint64_t cumulative = 0;
    for (size_t b = 0; b <= N_BUCKETS; b++) {
        cumulative += read_count(&ms->buckets[b]);
        sb_printf(sb, "%s_bucket{", name);
        sb_method_labels(sb, path);
        if (b < N_BUCKETS)
            sb_printf(sb, ",le=\"%g\"} %" PRIu64 "\n", (double)BUCKET_US[b] / 1e6, cumulative);
        else
            sb_printf(sb, ",le=\"+Inf\"} %" PRIu64 "\n", cumulative);
    }
    sb_printf(sb, "%s_sum{", name);
    sb_method_labels(sb, path);
    sb_printf(sb, "} %.6f\n", (double)read_count(&ms->sum_us) / 1e6);
    sb_printf(sb, "%s_count{", name);
    sb_method_labels(sb, path);
    sb_printf(sb, "} %" PRIu64 "\n", cumulative);
}

static void render_rpcs(strbuf *sb, rd_metrics *m)
{
    sb_family(sb, "recoveryd_rpc_handled_total", "counter",
              "Finished RPCs by method and gRPC status code.");
    for (size_t i = 0; i < METHOD_SLOTS; i++) {
        char *path = atomic_load_explicit(&m->methods[i].name, memory_order_acquire);
        if (path)
            render_method_codes(sb, &m->methods[i], path);
    }
    if (method_used(&m->unknown_method))
        render_method_codes(sb, &m->unknown_method, NULL);

    sb_family(sb, "recoveryd_rpc_duration_seconds", "histogram",
              "RPC latency from the call's arrival to its status being sent.");
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
}

char *rd_metrics_render(rd_metrics *m, rd_breaker_lister lister, void *lister_ctx, int64_t now_ms)
{
    if (!m)
        return NULL;
    strbuf sb = {0};
    render_tools(&sb, m);
    render_decisions(&sb, m);
    render_breakers(&sb, m, lister, lister_ctx, now_ms);
    render_rpcs(&sb, m);
    render_process(&sb, m);
    if (sb.failed) {
        free(sb.data);
        return NULL;
    }
    return sb.data;
}
