/* Breaker changes made through other replicas, onto this replica's watch
 * bus.
 *
 * With a shared store, a WatchBreakers stream must see every change in the
 * cluster, not only those made through the replica it is connected to. The
 * store tells the follower which tool changed (it hears every replica's
 * change, this one's included); the follower reads the breaker back and
 * publishes it with a cause inferred from the state it last saw. While a
 * follower runs, the transport leaves these changes to it (see observe.c),
 * so no change is delivered twice.
 *
 * Ownership: the follower borrows svc (and its store, config and bus),
 * which must outlive rd_store_follow_stop. rd_store_follow_stop(NULL) is a
 * no-op. */
#ifndef RD_OPS_STORE_FOLLOW_H
#define RD_OPS_STORE_FOLLOW_H

#include "ops/runtime.h"

typedef struct rd_store_follower rd_store_follower;

/* NULL when the store has no other writers to follow (the memory store) or
 * out of memory. */
rd_store_follower *rd_store_follow_start(const rd_services *svc);
void rd_store_follow_stop(rd_store_follower *f);

#endif
