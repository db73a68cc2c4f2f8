/* Serving status for grpc.health.v1 (Check and Watch).
 *
 * Known services: "" (the whole server) and "recovery.v1.RecoveryService".
 * Both are NOT_SERVING until the server has started with a loaded config,
 * SERVING then, and NOT_SERVING again as the first step of shutdown. A
 * degraded store (Redis down, answered from local state) does NOT change
 * it: every replica would go unready at once and the service would vanish
 * exactly when its fallback works.
 *
 * Threads: every function may be called from any thread. Watchers' wake
 * callbacks run on the thread calling rd_health_set, under the health lock:
 * they must only note that there is work.
 * Ownership: rd_health_free(NULL) is a no-op; unwatch before freeing. */
#ifndef RD_OPS_HEALTH_H
#define RD_OPS_HEALTH_H

#include <stdbool.h>

/* Values equal grpc.health.v1.HealthCheckResponse.ServingStatus. */
typedef enum {
    RD_HEALTH_UNKNOWN = 0,
    RD_HEALTH_SERVING = 1,
    RD_HEALTH_NOT_SERVING = 2,
    RD_HEALTH_SERVICE_UNKNOWN = 3,
} rd_health_status;

typedef struct rd_health rd_health;
typedef struct rd_health_watcher rd_health_watcher;

rd_health *rd_health_new(void);
void rd_health_free(rd_health *h);

/* Sets every known service SERVING or NOT_SERVING and wakes the watchers. */
void rd_health_set_serving(rd_health *h, bool serving);

/* SERVICE_UNKNOWN for a service this server does not have. */
rd_health_status rd_health_status_of(rd_health *h, const char *service);

rd_health_watcher *rd_health_watch(rd_health *h, void (*wake)(void *), void *arg);
void rd_health_unwatch(rd_health_watcher *w);

#endif
