/* The running server's shared parts: the live configuration, the store,
 * health, the watch bus, metrics and the store follower. main.c builds one;
 * the transport hands it to every handler, the operations read it.
 * Ownership: borrowed by everyone that holds it; it outlives the server. */
#ifndef RD_OPS_RUNTIME_H
#define RD_OPS_RUNTIME_H

#include <stdbool.h>

#include "domain/store.h"
#include "ops/health.h"
#include "ops/live_config.h"
#include "ops/metrics.h"
#include "ops/watch.h"

typedef struct rd_services {
    rd_live_config *config;
    rd_store *store;
    rd_health *health;
    rd_watch_bus *watch;
    rd_metrics *metrics;
    struct rd_store_follower *follower;  /* NULL with a store only this replica writes */
    bool follows_store_changes;          /* follower publishes opens/closes/holds */
    struct rd_otlp *otlp;                /* decision spans to a collector; NULL = off */
} rd_services;

#endif
