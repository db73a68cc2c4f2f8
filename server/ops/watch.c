/* The breaker change bus (see watch.h). One mutex guards the subscriber
 * list and every queue: changes are rare (a breaker changes state, an
 * operator acts), so contention is not a concern and one lock keeps the
 * overflow and unsubscribe rules simple. */
#include "ops/watch.h"

#include "domain/scope.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rd_watch_sub {
    rd_watch_bus *bus;
    rd_watch_sub *prev, *next;
    char **tools;                /* owned; n_tools == 0: all */
    size_t n_tools;
    /* "<tenant>/": the subscriber sees only keys with it, without it; ""
     * (no tenant): every key as published */
    char prefix[RD_TENANT_ID_MAX + 2];
    size_t prefix_len;
    rd_breaker_change *ring;     /* queue_cap entries */
    size_t head, len;
    bool resync;
    rd_watch_wake_fn wake;
    void *wake_arg;
};

struct rd_watch_bus {
    pthread_mutex_t lock;
    rd_watch_sub *subs;
    size_t queue_cap;
    uint64_t dropped;
};

rd_watch_bus *rd_watch_bus_new(size_t queue_cap)
{
    rd_watch_bus *bus = calloc(1, sizeof *bus);
    if (!bus)
        return NULL;
    pthread_mutex_init(&bus->lock, NULL);
    bus->queue_cap = queue_cap ? queue_cap : 1;
    return bus;
}

void rd_watch_bus_free(rd_watch_bus *bus)
{
    if (!bus)
        return;
    pthread_mutex_destroy(&bus->lock);
    free(bus);
}

static void sub_free(rd_watch_sub *sub)
{
    for (size_t i = 0; i < sub->n_tools; i++)
        free(sub->tools[i]);
    free(sub->tools);
    free(sub->ring);
    free(sub);
}

static bool copy_tools(rd_watch_sub *sub, const char *const *tool_ids, size_t n)
{
    if (n == 0)
        return true;
    sub->tools = calloc(n, sizeof *sub->tools);
    if (!sub->tools)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (!(sub->tools[i] = strdup(tool_ids[i])))
            return false;
        sub->n_tools = i + 1;
    }
    return true;
}

rd_watch_sub *rd_watch_subscribe(rd_watch_bus *bus, const char *const *tool_ids, size_t n,
                                 rd_watch_wake_fn wake, void *wake_arg)
{
    return rd_watch_subscribe_tenant(bus, "", tool_ids, n, wake, wake_arg);
}

rd_watch_sub *rd_watch_subscribe_tenant(rd_watch_bus *bus, const char *tenant,
                                        const char *const *tool_ids, size_t n,
                                        rd_watch_wake_fn wake, void *wake_arg)
{
    size_t tenant_len = tenant ? strlen(tenant) : 0;
    if (tenant_len > RD_TENANT_ID_MAX)
        return NULL;
    rd_watch_sub *sub = calloc(1, sizeof *sub);
    if (!sub)
        return NULL;
    if (tenant_len) {
        memcpy(sub->prefix, tenant, tenant_len);
        sub->prefix[tenant_len] = '/';
        sub->prefix_len = tenant_len + 1;
    }
    sub->bus = bus;
    sub->wake = wake;
    sub->wake_arg = wake_arg;
    sub->ring = calloc(bus->queue_cap, sizeof *sub->ring);
    if (!sub->ring || !copy_tools(sub, tool_ids, n)) {
        sub_free(sub);
        return NULL;
    }
    pthread_mutex_lock(&bus->lock);
    sub->next = bus->subs;
    if (bus->subs)
        bus->subs->prev = sub;
    bus->subs = sub;
    pthread_mutex_unlock(&bus->lock);
    return sub;
}

void rd_watch_unsubscribe(rd_watch_sub *sub)
{
    if (!sub)
        return;
    rd_watch_bus *bus = sub->bus;
    pthread_mutex_lock(&bus->lock);
    if (sub->prev)
        sub->prev->next = sub->next;
    else
        bus->subs = sub->next;
    if (sub->next)
        sub->next->prev = sub->prev;
    pthread_mutex_unlock(&bus->lock);
    sub_free(sub);
}

static bool sub_watches(const rd_watch_sub *sub, const char *key)
{
    if (strncmp(key, sub->prefix, sub->prefix_len) != 0)
        return false;
    const char *tool_id = key + sub->prefix_len;
    if (sub->n_tools == 0)
        return true;
    for (size_t i = 0; i < sub->n_tools; i++)
        if (strcmp(sub->tools[i], tool_id) == 0)
            return true;
    return false;
}

static void change_fill(rd_breaker_change *c, const rd_breaker_view *view, const char *cause,
                        int64_t at_ms)
{
    snprintf(c->tool_id, sizeof c->tool_id, "%s", view->tool_id ? view->tool_id : "");
    c->view = *view;
    c->view.tool_id = c->tool_id;
    /* the level names a part of the key: point it into this copy */
    c->view.scope_level = rd_scope_level_name(c->tool_id, &c->view.scope_level_len);
    snprintf(c->cause, sizeof c->cause, "%s", cause);
    c->at_ms = at_ms;
}

/* Under the bus lock. A full queue is dropped as a whole: the subscriber
 * resyncs from a snapshot, which supersedes everything that was queued. */
static void enqueue_locked(rd_watch_sub *sub, const rd_breaker_view *view, const char *cause,
                           int64_t at_ms)
{
    rd_watch_bus *bus = sub->bus;
    if (sub->len == bus->queue_cap) {
        bus->dropped += sub->len;
        sub->len = 0;
        sub->head = 0;
        sub->resync = true;
    } else {
        size_t tail = (sub->head + sub->len) % bus->queue_cap;
        change_fill(&sub->ring[tail], view, cause, at_ms);
        sub->len++;
    }
    if (sub->wake)
        sub->wake(sub->wake_arg);
}

void rd_watch_publish(rd_watch_bus *bus, const rd_breaker_view *view, const char *cause,
                      int64_t at_ms)
{
    if (!bus || !view || !view->tool_id)
        return;
    rd_breaker_view own = *view;
    pthread_mutex_lock(&bus->lock);
    for (rd_watch_sub *s = bus->subs; s; s = s->next) {
        if (!sub_watches(s, view->tool_id))
            continue;
        own.tool_id = view->tool_id + s->prefix_len;
        enqueue_locked(s, &own, cause, at_ms);
    }
    pthread_mutex_unlock(&bus->lock);
}

void rd_watch_push(rd_watch_sub *sub, const rd_breaker_view *view, const char *cause,
                   int64_t at_ms)
{
    pthread_mutex_lock(&sub->bus->lock);
    enqueue_locked(sub, view, cause, at_ms);
    pthread_mutex_unlock(&sub->bus->lock);
}

bool rd_watch_next(rd_watch_sub *sub, rd_breaker_change *out, bool *resync)
{
    rd_watch_bus *bus = sub->bus;
    pthread_mutex_lock(&bus->lock);
    *resync = sub->resync;
    sub->resync = false;
    bool have = sub->len > 0;
    if (have) {
        *out = sub->ring[sub->head];
        out->view.tool_id = out->tool_id;
        out->view.scope_level = rd_scope_level_name(out->tool_id, &out->view.scope_level_len);
        sub->head = (sub->head + 1) % bus->queue_cap;
        sub->len--;
    }
    pthread_mutex_unlock(&bus->lock);
    return have;
}

const char *const *rd_watch_tools(const rd_watch_sub *sub, size_t *n)
{
    *n = sub->n_tools;
    return (const char *const *)sub->tools;
}

uint64_t rd_watch_dropped(const rd_watch_bus *bus)
{
    rd_watch_bus *b = (rd_watch_bus *)bus;
    pthread_mutex_lock(&b->lock);
    uint64_t n = b->dropped;
    pthread_mutex_unlock(&b->lock);
    return n;
}
