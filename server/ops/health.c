/* Serving status and its watchers (see health.h). */
#include "ops/health.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct rd_health_watcher {
    rd_health *health;
    rd_health_watcher *prev, *next;
    void (*wake)(void *);
    void *arg;
};

struct rd_health {
    pthread_mutex_t lock;
    bool serving;
    rd_health_watcher *watchers;
};

static const char *const KNOWN_SERVICES[] = {"", "recovery.v1.RecoveryService"};

rd_health *rd_health_new(void)
{
    rd_health *h = calloc(1, sizeof *h);
    if (h)
        pthread_mutex_init(&h->lock, NULL);
    return h;
}

void rd_health_free(rd_health *h)
{
    if (!h)
        return;
    pthread_mutex_destroy(&h->lock);
    free(h);
}

void rd_health_set_serving(rd_health *h, bool serving)
{
    pthread_mutex_lock(&h->lock);
    bool changed = h->serving != serving;
    h->serving = serving;
    for (rd_health_watcher *w = h->watchers; changed && w; w = w->next)
        w->wake(w->arg);
    pthread_mutex_unlock(&h->lock);
}

static bool known_service(const char *service)
{
    for (size_t i = 0; i < sizeof KNOWN_SERVICES / sizeof KNOWN_SERVICES[0]; i++)
        if (strcmp(service, KNOWN_SERVICES[i]) == 0)
            return true;
    return false;
}

rd_health_status rd_health_status_of(rd_health *h, const char *service)
{
    if (!known_service(service ? service : ""))
        return RD_HEALTH_SERVICE_UNKNOWN;
    pthread_mutex_lock(&h->lock);
    bool serving = h->serving;
    pthread_mutex_unlock(&h->lock);
    return serving ? RD_HEALTH_SERVING : RD_HEALTH_NOT_SERVING;
}

rd_health_watcher *rd_health_watch(rd_health *h, void (*wake)(void *), void *arg)
{
    rd_health_watcher *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    *w = (rd_health_watcher){.health = h, .wake = wake, .arg = arg};
    pthread_mutex_lock(&h->lock);
    w->next = h->watchers;
    if (h->watchers)
        h->watchers->prev = w;
    h->watchers = w;
    pthread_mutex_unlock(&h->lock);
    return w;
}

void rd_health_unwatch(rd_health_watcher *w)
{
    if (!w)
        return;
    rd_health *h = w->health;
    pthread_mutex_lock(&h->lock);
    if (w->prev)
        w->prev->next = w->next;
    else
        h->watchers = w->next;
    if (w->next)
        w->next->prev = w->prev;
    pthread_mutex_unlock(&h->lock);
    free(w);
}
