/* Batched successes (redis_batch.c). */
#ifndef RD_STORE_REDIS_BATCH_H
#define RD_STORE_REDIS_BATCH_H

#include "store/redis_cache.h"
#include "store/redis_exec.h"

/* Counts an outcome on a breaker the cache knows CLOSED, when it cannot
 * open the breaker by what this replica knows, and fills *out with the
 * breaker it leaves; false when it must be recorded at once. */
bool rd_redis_batch_outcome(redis_store *r, const char *tool_id, const rd_breaker_policy *p,
                            const rd_call_report *call, int64_t now_ms, rd_store_result *out);
/* Sends the tool's pending outcomes on `slot` (waiting for a batch of it
 * in flight), so that what this replica does next comes after them. */
int rd_redis_batch_flush_tool(redis_store *r, conn_slot *slot, const char *tool_id,
                              rd_status *st);
/* True when this replica holds no outcome of tool_id, pending or in flight. */
bool rd_redis_batch_idle(redis_store *r, const char *tool_id);
/* Starts the flusher; it sends each run with send_run. */
int rd_redis_batch_start(redis_store *r, rd_redis_send_run_fn send_run, rd_status *st);
/* Stops the flusher after a last flush; safe on a batch never started. */
void rd_redis_batch_stop(redis_store *r);

#endif
