/* Breaker states for /metrics from a snapshot, with the shared store.
 *
 * Listing every breaker from Redis costs a SCAN and one read per tool: with
 * 31,000 tools a scrape took 31,644 commands and 1.2 s, and every
 * Prometheus server scraping every replica multiplied it. With the shared
 * store a thread lists the breakers every refresh_ms
 * (metrics.breaker_refresh_ms, opt-in: docs/METRICS.md says why) and a
 * scrape reads that snapshot: no Redis command at all, whatever the number
 * of tools. A breaker's state is still
 * judged at scrape time from its stored times (an OPEN breaker half-opens
 * on time); a change made since the snapshot shows at the next refresh.
 * The memory store is listed directly (that costs no I/O). */
#ifndef RD_OPS_BREAKER_SNAPSHOT_H
#define RD_OPS_BREAKER_SNAPSHOT_H

#include <stdint.h>

#include "domain/store.h"

typedef struct rd_breaker_snapshot rd_breaker_snapshot;

/* Starts the refreshing thread; the first listing runs at once. NULL when
 * out of memory or no thread can be started. The store must outlive it. */
rd_breaker_snapshot *rd_breaker_snapshot_start(rd_store *store, int64_t refresh_ms);
/* An rd_breaker_lister (ops/metrics.h) over the snapshot; non-zero while
 * no listing has succeeded yet. */
int rd_breaker_snapshot_list(void *snapshot, int64_t now_ms, rd_store_visit visit, void *ctx);
/* How many listings have succeeded. */
uint64_t rd_breaker_snapshot_refreshes(const rd_breaker_snapshot *s);
/* Stops and joins the thread; NULL is a no-op. */
void rd_breaker_snapshot_stop(rd_breaker_snapshot *s);

#endif
