/* A store that keeps answering when its shared backend (Redis) cannot.
 *
 * Every operation goes to the primary store. When the primary fails with
 * RD_ERR_UNAVAILABLE or RD_ERR_DEADLINE (refused, timed out, LOADING,
 * READONLY...) failure_threshold times in a row, the wrapper trips: from
 * then on every operation is answered by the local fallback store at once,
 * without touching the primary, so no call waits for a Redis timeout once
 * the outage is known. A background thread checks the primary every
 * probe_interval_ms (a read of one key) and returns to it after
 * recover_after good checks. The call that hits a failure is itself
 * answered from the fallback, so callers see no error. A failure the
 * primary marks partial (st->store_partial: one node of a Redis Cluster)
 * is answered from the fallback too but does not count towards the trip:
 * only the keys of that node are degraded.
 *
 * State written to the fallback during an outage stays local to this
 * process and is not copied to the primary afterwards (docs/REDIS.md).
 *
 * Thread-safe like the stores it wraps. */
#ifndef RD_STORE_RESILIENT_H
#define RD_STORE_RESILIENT_H

#include <stdbool.h>
#include <stdint.h>

#include "domain/store.h"

typedef struct rd_resilience_options {
    uint32_t failure_threshold;  /* consecutive failures that trip it; default 2 */
    int64_t probe_interval_ms;   /* health check period while degraded; default 500 */
    uint32_t recover_after;      /* good checks in a row to return; default 1 */
} rd_resilience_options;

/* Takes ownership of primary and fallback on success (rd_store_destroy of
 * the wrapper destroys both); on NULL (out of memory, no thread) the
 * caller still owns them. o may be NULL for the defaults. The wrapper uses
 * primary's limits. */
rd_store *rd_store_resilient_new(rd_store *primary, rd_store *fallback,
                                 const rd_resilience_options *o);

/* True while answers come from the fallback. False for any store that is
 * not a resilient wrapper. */
bool rd_store_degraded(rd_store *s);

/* Failures of the primary seen so far (for the store-errors metric). */
uint64_t rd_store_error_count(rd_store *s);

#endif
