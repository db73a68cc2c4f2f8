/* The in-process bus of breaker changes behind WatchBreakers.
 *
 * Whoever observes a breaker change publishes it: the transport after
 * Decide / RecordOutcome / ForceBreaker, and (with a shared store) the
 * store's pub/sub listener for changes made by other replicas, through the
 * same rd_watch_publish. Every subscriber (one per open watch stream) has a
 * bounded queue; when it overflows, the queue is emptied and the subscriber
 * is told to resync (send a fresh snapshot) instead of silently missing
 * changes.
 *
 * Threads: every function may be called from any thread. A subscriber's
 * wake callback runs on the publishing thread, under the bus lock: it must
 * only note that the subscriber has work (never call back into the bus).
 *
 * Ownership: the bus owns its subscribers' queues; rd_watch_unsubscribe
 * frees one (after it returns the wake callback is never called again).
 * rd_watch_bus_free(NULL) is a no-op; the bus must outlive its subscribers. */
#ifndef RD_OPS_WATCH_H
#define RD_OPS_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/decide.h"

#define RD_WATCH_CAUSE_MAX 32

/* One change as a subscriber receives it: a self-contained copy. */
typedef struct rd_breaker_change {
    char tool_id[RD_ID_MAX + 1];
    rd_breaker_view view;            /* view.tool_id points at tool_id above */
    char cause[RD_WATCH_CAUSE_MAX];  /* "opened", "reopened", "half_opened", "closed",
                                        "forced_open", "forced_closed", "reset",
                                        "released", "snapshot", "resync" */
    int64_t at_ms;                   /* unix ms */
} rd_breaker_change;

typedef struct rd_watch_bus rd_watch_bus;
typedef struct rd_watch_sub rd_watch_sub;

typedef void (*rd_watch_wake_fn)(void *arg);

/* queue_cap: changes a subscriber may have waiting (>= 1). NULL when out
 * of memory. */
rd_watch_bus *rd_watch_bus_new(size_t queue_cap);
void rd_watch_bus_free(rd_watch_bus *bus);

/* Subscribes to the listed tools (n == 0: every tool); the ids are copied.
 * NULL when out of memory. */
rd_watch_sub *rd_watch_subscribe(rd_watch_bus *bus, const char *const *tool_ids, size_t n,
                                 rd_watch_wake_fn wake, void *wake_arg);
/* The same for one tenant's breakers (engine/tenant.h): the subscriber
 * receives only changes published under "<tenant>/<tool>", named by the
 * tool alone. tenant "" = rd_watch_subscribe. */
rd_watch_sub *rd_watch_subscribe_tenant(rd_watch_bus *bus, const char *tenant,
                                        const char *const *tool_ids, size_t n,
                                        rd_watch_wake_fn wake, void *wake_arg);
void rd_watch_unsubscribe(rd_watch_sub *sub);

/* Delivers one change to every subscriber watching view->tool_id. This is
 * also the hook for a shared store: call it for changes made elsewhere. */
void rd_watch_publish(rd_watch_bus *bus, const rd_breaker_view *view, const char *cause,
                      int64_t at_ms);

/* Queues a change for this subscriber only (the initial snapshot). */
void rd_watch_push(rd_watch_sub *sub, const rd_breaker_view *view, const char *cause,
                   int64_t at_ms);

/* Takes the oldest waiting change. Returns false when there is none;
 * *resync is set (and cleared in the subscriber) when changes were dropped
 * since the last call: the caller should send a fresh snapshot. */
bool rd_watch_next(rd_watch_sub *sub, rd_breaker_change *out, bool *resync);

/* The tools a subscriber watches (n == 0: all); valid until unsubscribe. */
const char *const *rd_watch_tools(const rd_watch_sub *sub, size_t *n);

/* Changes dropped by overflow since the bus was created (for tests/logs). */
uint64_t rd_watch_dropped(const rd_watch_bus *bus);

#endif
