/* recovery.v1.RecoveryService/WatchBreakers: a "snapshot" message per
 * watched tool (every tracked tool when none is named), then one
 * BreakerChange per change as the watch bus delivers it. After an overflow
 * of its queue the stream sends a fresh snapshot ("resync"). */
#include <stdatomic.h>
#include <stdlib.h>

#include "domain/trace.h"
#include "ops/watch.h"
#include "transport/codec.h"
#include "transport/services.h"

#define WATCH_TOOLS_MAX 1000   /* tools one request may name */

/* Streams open now, against server.max_watch_streams: each holds a queue
 * and, with many long ids, hundreds of KB. */
static atomic_size_t open_streams;

typedef struct breaker_stream {
    rd_watch_sub *sub;
    rd_store *store;
} breaker_stream;

/* Queues the current state of the watched tools for this stream only. */
static int push_snapshot(breaker_stream *bs, const rd_rpc *rpc, const char *cause,
                         rd_status *st)
{
    size_t n_tools;
    const char *const *tools = rd_watch_tools(bs->sub, &n_tools);
    rd_breaker_view *views;
    size_t n;
    int rc = rd_engine_breakers(rpc->engine, tools, n_tools, &rpc->ctx, &views, &n, st);
    if (rc != RD_OK)
        return rc;
    for (size_t i = 0; i < n; i++)
        rd_watch_push(bs->sub, &views[i], cause, rpc->ctx.now_ms);
    return RD_OK;
}

static int watch_open(const rd_rpc *rpc, const ProtobufCMessage *req, rd_wake_fn wake,
                      void *wake_arg, void **stream, rd_status *st)
{
    const Recovery__V1__WatchBreakersRequest *r = (const void *)req;
    int rc = rd_codec_tool_ids_in(r->tool_ids, r->n_tool_ids, WATCH_TOOLS_MAX, st);
    if (rc != RD_OK)
        return rc;
    size_t limit = rpc->config->server.max_watch_streams;
    if (atomic_fetch_add(&open_streams, 1) >= limit) {
        atomic_fetch_sub(&open_streams, 1);
        return rd_status_set(st, RD_ERR_EXHAUSTED,
                             "WatchBreakers: %zu streams are open, the limit of "
                             "server.max_watch_streams", limit);
    }
    breaker_stream *bs = calloc(1, sizeof *bs);
    if (!bs) {
        atomic_fetch_sub(&open_streams, 1);
        return rd_status_set(st, RD_ERR_NOMEM, "watch: out of memory");
    }
    /* Subscribe before the snapshot: a change racing with it is sent twice
     * rather than lost. */
    bs->sub = rd_watch_subscribe_tenant(rpc->svc->watch, rpc->ctx.tenant,
                                        (const char *const *)r->tool_ids, r->n_tool_ids, wake,
                                        wake_arg);
    rc = bs->sub ? push_snapshot(bs, rpc, "snapshot", st)
                 : rd_status_set(st, RD_ERR_NOMEM, "watch: out of memory");
    if (rc != RD_OK) {
        rd_watch_unsubscribe(bs->sub);
        free(bs);
        atomic_fetch_sub(&open_streams, 1);
        return rc;
    }
    *stream = bs;
    return RD_OK;
}

static Recovery__V1__BreakerChange *change_out(rd_arena *a, const rd_breaker_change *c)
{
    Recovery__V1__BreakerChange *m = rd_arena_alloc(a, sizeof *m);
    char *when = rd_arena_alloc(a, 40);
    if (!m || !when)
        return NULL;
    recovery__v1__breaker_change__init(m);
    rd_format_rfc3339(when, 40, c->at_ms);
    m->breaker = rd_codec_breaker_state_out(a, &c->view);
    m->cause = rd_arena_strdup(a, c->cause);
    m->timestamp = when;
    return m->breaker && m->cause ? m : NULL;
}

static ProtobufCMessage *watch_next(void *stream, const rd_rpc *rpc)
{
    breaker_stream *bs = stream;
    rd_breaker_change *c = rd_arena_alloc(rpc->ctx.arena, sizeof *c);
    bool resync;
    if (!c)
        return NULL;
    bool have = rd_watch_next(bs->sub, c, &resync);
    if (resync) {
        rd_status st;
        push_snapshot(bs, rpc, "resync", &st); /* after the queue was emptied */
        if (!have)
            have = rd_watch_next(bs->sub, c, &resync);
    }
    return have ? (ProtobufCMessage *)change_out(rpc->ctx.arena, c) : NULL;
}

static void watch_close(void *stream)
{
    breaker_stream *bs = stream;
    if (!bs)
        return;
    rd_watch_unsubscribe(bs->sub);
    free(bs);
    atomic_fetch_sub(&open_streams, 1);
}

const rd_stream_ops rd_breaker_watch_stream = {
    .open = watch_open,
    .next = watch_next,
    .close = watch_close,
};
