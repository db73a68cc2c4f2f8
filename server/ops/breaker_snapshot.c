#include "ops/breaker_snapshot.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "platform/clock.h"
#include "domain/log.h"

typedef struct entry {
    char *tool_id;
    rd_breaker breaker;
} entry;

typedef struct listing {
    entry *items;
    size_t n, cap;
    bool failed;                 /* out of memory while collecting */
} listing;

struct rd_breaker_snapshot {
    rd_store *store;
    int64_t refresh_ms;
    pthread_t thread;
    pthread_mutex_t lock;        /* guards current, stopping */
    pthread_cond_t wake;
    listing current;
    bool have;                   /* a listing has succeeded */
    bool stopping;
    atomic_uint_fast64_t refreshes;
};

static void listing_free(listing *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->items[i].tool_id);
    free(l->items);
    *l = (listing){0};
}

static int collect(void *ctx, const char *tool_id, const rd_breaker *b)
{
    listing *l = ctx;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        entry *items = realloc(l->items, cap * sizeof *items);
        if (!items) {
            l->failed = true;
            return 1;
        }
        l->items = items;
        l->cap = cap;
    }
    char *id = strdup(tool_id);
    if (!id) {
        l->failed = true;
        return 1;
    }
    l->items[l->n++] = (entry){.tool_id = id, .breaker = *b};
    return 0;
}

static void refresh(rd_breaker_snapshot *s)
{
    listing next = {0};
    rd_status st;
    rd_status_clear(&st);
    int rc = s->store->ops->list(s->store, rd_clock_unix_ms(), collect, &next, &st);
    if (rc != RD_OK || next.failed) {
        listing_free(&next);
        return; /* the previous snapshot stays; the store reports its own health */
    }
    pthread_mutex_lock(&s->lock);
    listing old = s->current;
    s->current = next;
    s->have = true;
    pthread_mutex_unlock(&s->lock);
    listing_free(&old);
    atomic_fetch_add(&s->refreshes, 1);
}

static void *refresher(void *arg)
{
    rd_breaker_snapshot *s = arg;
    for (;;) {
        refresh(s);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += s->refresh_ms / 1000;
        until.tv_nsec += (s->refresh_ms % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_mutex_lock(&s->lock);
        while (!s->stopping && pthread_cond_timedwait(&s->wake, &s->lock, &until) != ETIMEDOUT)
            ;
        bool stop = s->stopping;
        pthread_mutex_unlock(&s->lock);
        if (stop)
            return NULL;
    }
}

rd_breaker_snapshot *rd_breaker_snapshot_start(rd_store *store, int64_t refresh_ms)
{
    rd_breaker_snapshot *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->store = store;
    s->refresh_ms = refresh_ms > 0 ? refresh_ms : 15000;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->wake, NULL);
    atomic_init(&s->refreshes, 0);
    if (pthread_create(&s->thread, NULL, refresher, s) != 0) {
        pthread_cond_destroy(&s->wake);
        pthread_mutex_destroy(&s->lock);
        free(s);
        return NULL;
    }
    return s;
}

int rd_breaker_snapshot_list(void *snapshot, int64_t now_ms, rd_store_visit visit, void *ctx)
{
    rd_breaker_snapshot *s = snapshot;
    (void)now_ms; /* the metrics judge each state at their own now */
    pthread_mutex_lock(&s->lock);
    int rc = s->have ? 0 : -1;
    for (size_t i = 0; s->have && i < s->current.n; i++)
        if (visit(ctx, s->current.items[i].tool_id, &s->current.items[i].breaker))
            break;
    pthread_mutex_unlock(&s->lock);
    return rc;
}

uint64_t rd_breaker_snapshot_refreshes(const rd_breaker_snapshot *s)
{
    return s ? atomic_load(&s->refreshes) : 0;
}

void rd_breaker_snapshot_stop(rd_breaker_snapshot *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    s->stopping = true;
    pthread_cond_signal(&s->wake);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->thread, NULL);
    listing_free(&s->current);
    pthread_cond_destroy(&s->wake);
    pthread_mutex_destroy(&s->lock);
    free(s);
}
