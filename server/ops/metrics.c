/* Prometheus metrics: lock-free recording (the text exposition is
 * metrics_render.c).
 *
 * Per-tool series live in an open-addressing table whose slots are published
 * with release stores, so a lookup never locks; the insertion mutex is taken
 * only for a tool not seen before. The table has twice as many slots as the
 * cap on tools, so a probe always ends at an empty slot. Once the cap is
 * reached, unknown tools go to the shared "_other" series without locking.
 */
#include "ops/metrics.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain/breaker.h"
#include "domain/hash.h"
#include "ops/metrics_internal.h"
#include "domain/store.h"

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
    if (atomic_load_explicit(&m->full, memory_order_acquire)) {
        /* The miss above may predate this tool's insertion by another
         * thread, and the table may have filled since: look again (every
         * insertion is visible once the full flag is) before counting it
         * under "_other". */
        probe(m, tool_id, h, &t);
        return t ? t : other_series(m);
    }
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

void rd_metrics_rpc(rd_metrics *m, int method, const char *method_name, const char *grpc_type,
                    int grpc_status, int64_t latency_us)
{
    if (!m)
        return;
    method_series *ms = method_of(m, method, method_name);
    if (grpc_type && !atomic_load_explicit(&ms->type, memory_order_relaxed))
        atomic_store_explicit(&ms->type, grpc_type, memory_order_relaxed);
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
    /* Shadow mode counts the decision enforce mode made, as enforce would. */
    rd_action decided = d->shadow_action ? d->shadow_action : d->action;
    if (decided > RD_ACTION_UNSPECIFIED && decided < N_ACTIONS)
        count(&m->decisions[decided], 1);
    if (d->duplicate)
        return; /* a replayed report changed nothing, so it counts nothing */
    if (d->has_classification &&
        d->classification.classification.effect_safety == RD_EFFECT_SAFETY_UNKNOWN)
        count(d->action == RD_ACTION_VERIFY ? &m->refused_verify : &m->refused_escalate, 1);
    tool_series *t = tool_of(m, tool_id);
    if (d->has_classification)
        count_error(t, d->classification.classification.retryability);
    if (decided == RD_ACTION_RETRY)
        count(&t->c[TC_RETRIES], 1);
    if (decided != d->action)
        count(&t->c[TC_SHADOW_REFUSALS], 1);
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

void rd_metrics_spans(rd_metrics *m, uint64_t exported, uint64_t dropped_queue,
                      uint64_t dropped_export)
{
    if (!m)
        return;
    atomic_store(&m->spans_on, true);
    count(&m->spans_exported, exported);
    count(&m->spans_dropped_queue, dropped_queue);
    count(&m->spans_dropped_export, dropped_export);
}

void rd_metrics_set_build_info(rd_metrics *m, const char *version)
{
    if (m && version)
        snprintf(m->version, sizeof m->version, "%s", version);
}
