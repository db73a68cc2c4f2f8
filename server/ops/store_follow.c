#include "ops/store_follow.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "domain/scope.h"
#include "engine/tenant.h"
#include "ops/live_config.h"
#include "ops/watch.h"
#include "platform/clock.h"
#include "domain/hash.h"

/* The last state published per tool, to name the change. Direct-mapped: a
 * collision only costs a less precise cause ("changed"). */
#define SEEN_SLOTS 1024

typedef struct seen_state {
    char tool_id[RD_ID_MAX + 1];
    rd_breaker_status status;
    rd_breaker_status forced;
    uint64_t generation;
} seen_state;

struct rd_store_follower {
    const rd_services *svc;
    rd_arena arena;              /* used only on the store's notifying thread */
    rd_rng rng;
    seen_state seen[SEEN_SLOTS];
};

static size_t slot_of(const char *tool_id)
{
    return (size_t)(rd_hash_text(tool_id, 0) % SEEN_SLOTS);
}

static const char *forced_cause(rd_breaker_status forced)
{
    return forced == RD_BREAKER_OPEN ? "forced_open" : "forced_closed";
}

/* Names the change from the state before (if this slot knew the tool). */
static const char *infer_cause(const seen_state *before, bool known, const rd_breaker_view *v)
{
    if (v->forced && (!known || before->forced != v->forced))
        return forced_cause(v->forced);
    if (known && before->forced && !v->forced)
        return "released";
    if (v->status == RD_BREAKER_OPEN)
        return known && before->status != RD_BREAKER_CLOSED ? "reopened" : "opened";
    if (v->status == RD_BREAKER_CLOSED)
        return known && before->generation != v->generation && before->status == RD_BREAKER_CLOSED
                   ? "reset" : "closed";
    return "changed";
}

static void publish_change(rd_store_follower *f, const rd_breaker_view *v, int64_t now_ms)
{
    seen_state *s = &f->seen[slot_of(v->tool_id)];
    bool known = strcmp(s->tool_id, v->tool_id) == 0;
    rd_watch_publish(f->svc->watch, v, infer_cause(s, known, v), now_ms);
    snprintf(s->tool_id, sizeof s->tool_id, "%s", v->tool_id);
    s->status = v->status;
    s->forced = v->forced;
    s->generation = v->generation;
}

/* Runs on the store's notifying thread: read the breaker back through the
 * engine (so the view carries this config's thresholds) and publish it. */
static void on_store_change(void *ctx, const char *tool_id)
{
    rd_store_follower *f = ctx;
    rd_config_snap *snap = rd_live_config_acquire(f->svc->config);
    rd_engine engine = {.policy = &snap->cfg->policy, .store = f->svc->store};
    rd_call_ctx call = {.now_ms = rd_clock_unix_ms(), .arena = &f->arena, .rng = &f->rng};
    rd_breaker_view *views = NULL;
    size_t n = 0;
    rd_status st;
    /* A tenant's key is read through its namespace, so the view finds the
     * tool's settings, and published under the whole key (the bus's). */
    char tenant[RD_TENANT_ID_MAX + 1];
    const char *id = tool_id;
    rd_tenant_store tenant_store;
    if (snap->cfg->server.n_tenants && rd_tenant_split(tool_id, tenant, &id) &&
        rd_config_tenant_by_id(&snap->cfg->server, tenant, strlen(tenant))) {
        (void)rd_tenant_store_init(&tenant_store, f->svc->store, tenant, 0, 0, &st);
        engine.store = &tenant_store.base;
    } else {
        id = tool_id;
    }
    const char *ids[] = {id};
    if (rd_engine_breakers(&engine, ids, 1, &call, &views, &n, &st) == RD_OK && n == 1) {
        views[0].tool_id = tool_id;
        views[0].scope_level = rd_scope_level_name(tool_id, &views[0].scope_level_len);
        publish_change(f, &views[0], call.now_ms);
    }
    rd_arena_reset(&f->arena);
    rd_config_snap_release(snap);
}

rd_store_follower *rd_store_follow_start(const rd_services *svc)
{
    rd_store *store = svc->store;
    if (!store->ops->set_change_listener)
        return NULL;
    rd_store_follower *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->svc = svc;
    rd_arena_init(&f->arena, 4096);
    rd_rng_seed_os(&f->rng);
    store->ops->set_change_listener(store, on_store_change, f);
    return f;
}

void rd_store_follow_stop(rd_store_follower *f)
{
    if (!f)
        return;
    rd_store *store = f->svc->store;
    store->ops->set_change_listener(store, NULL, NULL); /* waits out a running callback */
    rd_arena_free(&f->arena);
    free(f);
}
