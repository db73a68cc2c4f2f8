/* The decision-span exporter: a bounded queue and its thread (see otlp.h). */
#include "ops/otlp.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "domain/log.h"
#include "domain/retry.h"
#include "ops/otlp_internal.h"

struct rd_otlp {
    otlp_endpoint endpoint;
    char *service_name;
    size_t batch_max;
    int64_t flush_interval_ms, timeout_ms;
    rd_metrics *metrics;

    pthread_mutex_t lock;        /* guards the ring and `stopping` */
    pthread_cond_t wake;
    otlp_span *ring;
    size_t cap, head, count;
    bool stopping;
    pthread_t thread;

    otlp_span *batch;            /* the thread's own: the spans being sent */
    rd_rng rng;                  /* the thread's own: span and trace ids */
    bool collector_down;         /* the last batch failed (logged once per outage) */
};

/* ---- the request path ---- */

static void copy_text(char *dst, size_t cap, const char *src)
{
    size_t n = src ? strnlen(src, cap - 1) : 0;
    memcpy(dst, src ? src : "", n);
    dst[n] = '\0';
}

static int64_t unix_ns_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The span is written straight into its ring slot under the lock (a
 * memcpy's worth of work), so nothing is copied twice. */
static void fill_span(otlp_span *s, const rd_call_ctx *ctx, const rd_decide_input *in,
                      const rd_decision *d)
{
    const rd_trace_ctx *t = ctx->trace && ctx->trace->valid ? ctx->trace : NULL;
    copy_text(s->trace_id, sizeof s->trace_id, t ? t->trace_id : "");
    copy_text(s->parent_span_id, sizeof s->parent_span_id, t ? t->span_id : "");
    s->span_id[0] = '\0';
    if (t)
        memcpy(s->trace_state, t->state, t->state_len + 1);
    else
        s->trace_state[0] = '\0';
    copy_text(s->tool_id, sizeof s->tool_id, in->tool_id);
    copy_text(s->turn_id, sizeof s->turn_id, in->turn_id);
    const rd_classification *c = d->has_classification ? &d->classification.classification
                                                       : NULL;
    copy_text(s->rule_id, sizeof s->rule_id, c ? c->rule_id : "");
    s->category = c ? c->category : RD_CAT_UNSPECIFIED;
    s->action = d->action;
    s->shadow_action = d->shadow_action;
    s->breaker = d->breaker.status;
    s->failure = in->error != NULL;
    s->attempt = in->attempt;
    s->start_unix_ns = ctx->now_ms * 1000000;
    s->end_unix_ns = unix_ns_now();
}

void rd_otlp_decision(rd_otlp *o, const rd_call_ctx *ctx, const rd_decide_input *in,
                      const rd_decision *d)
{
    if (!o)
        return;
    bool dropped = false;
    pthread_mutex_lock(&o->lock);
    if (o->count == o->cap || o->stopping) {
        dropped = true;
    } else {
        fill_span(&o->ring[(o->head + o->count) % o->cap], ctx, in, d);
        if (++o->count == o->batch_max)
            pthread_cond_signal(&o->wake);
    }
    pthread_mutex_unlock(&o->lock);
    if (dropped)
        rd_metrics_spans(o->metrics, 0, 1, 0);
}

/* ---- the exporter thread ---- */

static void hex_id(rd_rng *rng, char *out, size_t digits)
{
    static const char HEX[] = "0123456789abcdef";
    uint64_t bits = 0;
    for (size_t i = 0; i < digits; i++) {
        if (i % 16 == 0)
            while (!(bits = rd_rng_next(rng)))
                ; /* an all-zero id is invalid */
        out[i] = HEX[bits & 15];
        bits >>= 4;
    }
    out[digits] = '\0';
}

/* Up to batch_max spans off the ring into o->batch; waits for a full batch
 * or the flush interval. Returns how many. */
static size_t take_batch(rd_otlp *o, bool *stop)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    int64_t ns = until.tv_nsec + (o->flush_interval_ms % 1000) * 1000000;
    until.tv_sec += o->flush_interval_ms / 1000 + ns / 1000000000;
    until.tv_nsec = ns % 1000000000;
    pthread_mutex_lock(&o->lock);
    while (!o->stopping && o->count < o->batch_max &&
           pthread_cond_timedwait(&o->wake, &o->lock, &until) != ETIMEDOUT)
        ;
    size_t n = o->count < o->batch_max ? o->count : o->batch_max;
    for (size_t i = 0; i < n; i++)
        o->batch[i] = o->ring[(o->head + i) % o->cap];
    o->head = (o->head + n) % o->cap;
    o->count -= n;
    *stop = o->stopping && o->count == 0;
    pthread_mutex_unlock(&o->lock);
    return n;
}

static void send_batch(rd_otlp *o, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!o->batch[i].trace_id[0])
            hex_id(&o->rng, o->batch[i].trace_id, RD_TRACE_ID_HEX);
        hex_id(&o->rng, o->batch[i].span_id, RD_SPAN_ID_HEX);
    }
    strbuf body = {0};
    otlp_json_batch(&body, o->service_name, o->batch, n);
    bool ok = !body.failed && otlp_http_post(&o->endpoint, body.data, body.len, o->timeout_ms);
    free(body.data);
    rd_metrics_spans(o->metrics, ok ? n : 0, 0, ok ? 0 : n);
    if (ok == !o->collector_down)
        return;
    o->collector_down = !ok;
    char fields[1200] = "";
    rd_log_kv(fields, sizeof fields, "endpoint", o->endpoint.host);
    rd_log(ok ? RD_LOG_INFO : RD_LOG_WARN,
           ok ? "OTLP collector accepts spans again"
              : "OTLP collector did not accept spans; dropping them until it does", fields);
}

/* Stopping with the collector away: what is left is dropped at once
 * rather than each batch waiting out its timeout. */
static bool drop_rest_when_stopping(rd_otlp *o)
{
    pthread_mutex_lock(&o->lock);
    bool drop = o->stopping && o->collector_down;
    size_t n = drop ? o->count : 0;
    if (drop)
        o->count = 0;
    pthread_mutex_unlock(&o->lock);
    if (n)
        rd_metrics_spans(o->metrics, 0, 0, n);
    return drop;
}

static void *exporter_main(void *arg)
{
    rd_otlp *o = arg;
    bool stop = false;
    while (!stop) {
        size_t n = take_batch(o, &stop);
        if (n)
            send_batch(o, n);
        if (!stop && drop_rest_when_stopping(o))
            break;
    }
    return NULL;
}

/* ---- lifetime ---- */

static void otlp_free(rd_otlp *o)
{
    free(o->ring);
    free(o->batch);
    free(o->service_name);
    pthread_cond_destroy(&o->wake);
    pthread_mutex_destroy(&o->lock);
    free(o);
}

rd_otlp *rd_otlp_start(const rd_otlp_config *cfg, rd_metrics *metrics, rd_status *st)
{
    if (!cfg->endpoint)
        return NULL;
    rd_otlp *o = calloc(1, sizeof *o);
    if (!o) {
        rd_status_set(st, RD_ERR_NOMEM, "tracing.otlp: out of memory");
        return NULL;
    }
    pthread_mutex_init(&o->lock, NULL);
    pthread_cond_init(&o->wake, NULL);
    o->cap = cfg->queue_spans;
    o->batch_max = cfg->batch_spans < cfg->queue_spans ? cfg->batch_spans : cfg->queue_spans;
    o->flush_interval_ms = cfg->flush_interval_ms;
    o->timeout_ms = cfg->timeout_ms;
    o->metrics = metrics;
    o->ring = malloc(o->cap * sizeof *o->ring);
    o->batch = malloc(o->batch_max * sizeof *o->batch);
    o->service_name = strdup(cfg->service_name ? cfg->service_name : "recoveryd");
    rd_rng_seed_os(&o->rng);
    if (!o->ring || !o->batch || !o->service_name) {
        otlp_free(o);
        rd_status_set(st, RD_ERR_NOMEM, "tracing.otlp: out of memory");
        return NULL;
    }
    if (!otlp_endpoint_parse(cfg->endpoint, &o->endpoint)) {
        otlp_free(o);
        rd_status_set(st, RD_ERR_INVALID, "tracing.otlp.endpoint: not http://host:port/path");
        return NULL;
    }
    if (pthread_create(&o->thread, NULL, exporter_main, o) != 0) {
        otlp_free(o);
        rd_status_set(st, RD_ERR_INTERNAL, "tracing.otlp: cannot start the exporter thread");
        return NULL;
    }
    rd_metrics_spans(metrics, 0, 0, 0); /* the series show from the start */
    return o;
}

void rd_otlp_stop(rd_otlp *o)
{
    if (!o)
        return;
    pthread_mutex_lock(&o->lock);
    o->stopping = true;
    pthread_cond_signal(&o->wake);
    pthread_mutex_unlock(&o->lock);
    pthread_join(o->thread, NULL);
    otlp_free(o);
}
