/* The configuration in force, swappable at runtime without dropping calls.
 *
 * A call takes a snapshot (rd_live_config_acquire) when it starts and
 * releases it when it ends, so it sees one configuration for its whole
 * duration. A reload swaps in a new configuration atomically; the old one
 * is freed when the last call holding it releases it.
 *
 * Ownership: rd_live_config_new and rd_live_config_swap take ownership of
 * the rd_config they are given. A snapshot must be released exactly once.
 * rd_live_config_free(NULL) is a no-op; it requires every snapshot to have
 * been released. Threads: every function may be called from any thread. */
#ifndef RD_OPS_LIVE_CONFIG_H
#define RD_OPS_LIVE_CONFIG_H

#include <stdatomic.h>
#include <stdint.h>

#include "config/config.h"

typedef struct rd_config_snap {
    const rd_config *cfg;
    uint64_t version;            /* 1 for the config loaded at start, +1 per reload */
    atomic_long refs;
} rd_config_snap;

typedef struct rd_live_config rd_live_config;

/* NULL when out of memory (cfg is freed then). */
rd_live_config *rd_live_config_new(rd_config *cfg);
void rd_live_config_free(rd_live_config *live);

rd_config_snap *rd_live_config_acquire(rd_live_config *live);
/* One more reference to a snapshot already held; returns snap. */
rd_config_snap *rd_config_snap_ref(rd_config_snap *snap);
void rd_config_snap_release(rd_config_snap *snap);
/* The version of the configuration in force: one atomic load, so a holder
 * of a snapshot can check cheaply whether it is still current. */
uint64_t rd_live_config_version(rd_live_config *live);

/* Makes cfg the configuration of every call that starts from now on.
 * Returns the new version, or 0 when out of memory (cfg is freed then and
 * the old configuration stays). */
uint64_t rd_live_config_swap(rd_live_config *live, rd_config *cfg);

#endif
