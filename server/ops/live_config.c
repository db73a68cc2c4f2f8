/* Reference-counted configuration snapshots (see live_config.h). The
 * current pointer is guarded by a mutex held only for a pointer read and a
 * reference increment, which keeps the swap trivially correct. */
#include "ops/live_config.h"

#include <pthread.h>
#include <stdlib.h>

struct rd_live_config {
    pthread_mutex_t lock;
    rd_config_snap *current;     /* holds one reference of its own */
    atomic_uint_fast64_t version; /* current->version, readable without the lock */
};

static rd_config_snap *snap_new(rd_config *cfg, uint64_t version)
{
    rd_config_snap *snap = calloc(1, sizeof *snap);
    if (!snap) {
        rd_config_free(cfg);
        return NULL;
    }
    snap->cfg = cfg;
    snap->version = version;
    atomic_init(&snap->refs, 1);
    return snap;
}

rd_live_config *rd_live_config_new(rd_config *cfg)
{
    rd_live_config *live = calloc(1, sizeof *live);
    if (!live) {
        rd_config_free(cfg);
        return NULL;
    }
    if (!(live->current = snap_new(cfg, 1))) {
        free(live);
        return NULL;
    }
    pthread_mutex_init(&live->lock, NULL);
    atomic_init(&live->version, live->current->version);
    return live;
}

void rd_live_config_free(rd_live_config *live)
{
    if (!live)
        return;
    rd_config_snap_release(live->current);
    pthread_mutex_destroy(&live->lock);
    free(live);
}

rd_config_snap *rd_live_config_acquire(rd_live_config *live)
{
    pthread_mutex_lock(&live->lock);
    rd_config_snap *snap = live->current;
    atomic_fetch_add_explicit(&snap->refs, 1, memory_order_relaxed);
    pthread_mutex_unlock(&live->lock);
    return snap;
}

rd_config_snap *rd_config_snap_ref(rd_config_snap *snap)
{
    atomic_fetch_add_explicit(&snap->refs, 1, memory_order_relaxed);
    return snap;
}

uint64_t rd_live_config_version(rd_live_config *live)
{
    return atomic_load_explicit(&live->version, memory_order_acquire);
}

void rd_config_snap_release(rd_config_snap *snap)
{
    if (!snap)
        return;
    if (atomic_fetch_sub_explicit(&snap->refs, 1, memory_order_acq_rel) == 1) {
        rd_config_free((rd_config *)snap->cfg);
        free(snap);
    }
}

uint64_t rd_live_config_swap(rd_live_config *live, rd_config *cfg)
{
    pthread_mutex_lock(&live->lock);
    rd_config_snap *old = live->current;
    rd_config_snap *next = snap_new(cfg, old->version + 1);
    if (next) {
        live->current = next;
        atomic_store_explicit(&live->version, next->version, memory_order_release);
    }
    pthread_mutex_unlock(&live->lock);
    if (!next)
        return 0;
    rd_config_snap_release(old); /* the calls still holding it keep it alive */
    return next->version;
}
