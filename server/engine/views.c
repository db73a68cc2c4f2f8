/* Breakers as the API reports them: one view, GetBreakerState, ForceBreaker
 * and GetTurnTrace. */
#include "engine/engine_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- breaker views ---- */

void eng_fill_view(rd_breaker_view *v, const char *tool_id, const rd_breaker *b,
                   const rd_tool_config *cfg, int64_t now_ms)
{
    rd_breaker_status status = rd_breaker_status_at(b, now_ms);
    *v = (rd_breaker_view){
        .tool_id = tool_id,
        .status = status,
        .consecutive_failures = b->consecutive_failures,
        .consecutive_successes = b->consecutive_successes,
        .failure_threshold = cfg->breaker.failure_threshold,
        .success_threshold = cfg->breaker.success_threshold,
        .opened_at_ms = b->opened_at_ms,
        .open_until_ms = status == RD_BREAKER_OPEN ? b->open_until_ms : 0,
        .probe_in_flight = rd_breaker_probe_live(b, now_ms),
        .opens_total = b->opens_total,
        .generation = b->generation,
    };
    v->scope_level = rd_scope_level_name(tool_id, &v->scope_level_len);
    if (rd_breaker_hold_live(b, now_ms)) {
        v->forced = b->forced;
        v->forced_until_ms = b->forced_until_ms;
    }
}

/* ---- GetBreakerState ---- */

typedef struct view_list {
    const rd_engine *e;
    const rd_call_ctx *ctx;
    rd_breaker_view *items;
    size_t n, cap;
    bool out_of_memory;
} view_list;

static rd_breaker_view *view_add(view_list *l)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        /* uninitialized: fill_view sets every field of each view added */
        rd_breaker_view *items = rd_arena_alloc_uninit(l->ctx->arena, cap * sizeof *items);
        if (!items)
            return NULL;
        if (l->n)
            memcpy(items, l->items, l->n * sizeof *items);
        l->items = items;
        l->cap = cap;
    }
    return &l->items[l->n++];
}

/* Adds one tool's view; the tool id is copied (the store's may not last). */
static bool view_push(view_list *l, const char *tool_id, const rd_breaker *b)
{
    const char *id = rd_arena_strdup(l->ctx->arena, tool_id);
    rd_breaker_view *v = id ? view_add(l) : NULL;
    if (!v) {
        l->out_of_memory = true;
        return false;
    }
    eng_fill_view(v, id, b, rd_policy_tool_of_key(l->e->policy, id), l->ctx->now_ms);
    return true;
}

static int visit_tracked(void *ctx, const char *tool_id, const rd_breaker *b)
{
    return view_push(ctx, tool_id, b) ? 0 : 1;
}

static int views_named(view_list *l, const char *const *tool_ids, size_t n, rd_status *st)
{
    rd_store *s = l->e->store;
    for (size_t i = 0; i < n; i++) {
        int rc = eng_check_id("tool_ids", tool_ids[i], true, st);
        if (rc != RD_OK)
            return rc;
        rd_breaker b;
        bool found;
        if ((rc = s->ops->get(s, tool_ids[i], l->ctx->now_ms, &b, &found, st)) != RD_OK)
            return rc;
        if (!view_push(l, tool_ids[i], &b))
            break;
    }
    return RD_OK;
}

/* The percentiles of a tool that keeps its latencies (read after the
 * store's list is done: never from inside its visit). */
static int latency_view(const rd_engine *e, rd_breaker_view *v, int64_t now_ms, rd_status *st)
{
    const rd_tool_config *cfg = rd_policy_tool_or_defaults(e->policy, v->tool_id);
    if (!cfg->latency.enabled)
        return RD_OK;
    rd_latency_hist h;
    bool enough;
    int rc = eng_latency_read(e, cfg, v->tool_id, now_ms, &h, &enough, st);
    v->latency_samples = rd_latency_total(&h);
    if (rc != RD_OK || v->latency_samples == 0)
        return rc;
    v->latency_p50_ms = rd_latency_percentile(&h, 0.5);
    v->latency_p90_ms = rd_latency_percentile(&h, 0.9);
    v->latency_p99_ms = rd_latency_percentile(&h, 0.99);
    return RD_OK;
}

int rd_engine_breakers(const rd_engine *e, const char *const *tool_ids, size_t n_tool_ids,
                       const rd_call_ctx *ctx, rd_breaker_view **out, size_t *n_out,
                       rd_status *st)
{
    *out = NULL;
    *n_out = 0;
    view_list l = {.e = e, .ctx = ctx};
    int rc = n_tool_ids > 0
                 ? views_named(&l, tool_ids, n_tool_ids, st)
                 : e->store->ops->list(e->store, ctx->now_ms, visit_tracked, &l, st);
    if (rc != RD_OK)
        return rc;
    if (l.out_of_memory)
        return rd_status_set(st, RD_ERR_NOMEM, "breakers: out of memory");
    for (size_t i = 0; i < l.n && rc == RD_OK; i++)
        rc = latency_view(e, &l.items[i], ctx->now_ms, st);
    if (rc != RD_OK)
        return rc;
    *out = l.items;
    *n_out = l.n;
    return RD_OK;
}

/* ---- ForceBreaker ---- */

#define FORCE_TTL_MAX_MS (30LL * 24 * 3600 * 1000)

int rd_engine_force(const rd_engine *e, const char *tool_id, rd_force_mode mode, int64_t ttl_ms,
                    const rd_call_ctx *ctx, rd_breaker_view *out, rd_status *st)
{
    int rc = eng_check_tool(e, tool_id, NULL, st);
    if (rc != RD_OK)
        return rc;
    if (mode < RD_FORCE_OPEN || mode > RD_FORCE_RELEASE)
        return rd_status_set(st, RD_ERR_INVALID, "mode: required (open, closed, reset, release)");
    if (ttl_ms < 0 || ttl_ms > FORCE_TTL_MAX_MS)
        return rd_status_set(st, RD_ERR_INVALID, "ttl_ms: must be 0..%lld",
                             (long long)FORCE_TTL_MAX_MS);
    rd_store_result res;
    rc = e->store->ops->force(e->store, tool_id, mode, ctx->now_ms, ttl_ms, &res, st);
    if (rc != RD_OK)
        return rc;
    eng_fill_view(out, tool_id, &res.breaker, rd_policy_tool_of_key(e->policy, tool_id),
                  ctx->now_ms);
    return RD_OK;
}

/* ---- GetTurnTrace ---- */

int rd_engine_turn_trace(const rd_engine *e, const char *turn_id, const rd_call_ctx *ctx,
                         rd_turn_trace *out, rd_status *st)
{
    *out = (rd_turn_trace){0};
    int rc = eng_check_id("turn_id", turn_id, true, st);
    if (rc != RD_OK)
        return rc;
    rd_trace_event *events = NULL; /* malloc'd by the store; freed here */
    size_t n = 0;
    int64_t started_at_ms;
    rc = e->store->ops->turn_read(e->store, turn_id, ctx->now_ms, &events, &n,
                                  &started_at_ms, st);
    if (rc == RD_ERR_NOT_FOUND)
        return rd_status_set(st, RD_ERR_NOT_FOUND, "turn_id: unknown turn '%s'", turn_id);
    if (rc != RD_OK)
        return rc;
    if (n > 0) {
        out->events = rd_arena_alloc(ctx->arena, n * sizeof *events);
        if (out->events)
            memcpy(out->events, events, n * sizeof *events);
    }
    free(events);
    if (n > 0 && !out->events)
        return rd_status_set(st, RD_ERR_NOMEM, "turn trace: out of memory");
    out->n_events = n;
    rc = rd_turn_summarize(out->events, n, ctx->arena, &out->summary);
    if (rc != RD_OK)
        return rd_status_set(st, rc, "turn trace: out of memory");
    return RD_OK;
}
