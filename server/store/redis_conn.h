/* Connections to Redis and the pool (redis_conn.c). */
#ifndef RD_STORE_REDIS_CONN_H
#define RD_STORE_REDIS_CONN_H

#include "platform/clock.h"
#include "store/redis_cache.h"
#include "store/redis_scripts.h"
#include "store/redis_types.h"

int rd_redis_target_init(rd_redis_target *t, const rd_redis_options *o, rd_status *st);
void rd_redis_target_free(rd_redis_target *t);

/* A connection to the master, authenticated, db selected, command timeout
 * set. Through the sentinels when there are any (and ROLE checked); in a
 * cluster, to the first seed node that answers.
 * Returns NULL with *st set (RD_ERR_UNAVAILABLE) when none can be had. */
redisContext *rd_redis_connect(const rd_redis_target *t, rd_status *st);

/* The master's address as the first sentinel that answers gives it; *host
 * is malloc'd (caller frees). False when no sentinel answers. */
bool rd_redis_sentinel_master(const rd_redis_target *t, char **host, int *port);

/* A connection to one node of a Redis Cluster (AUTH, timeouts), or NULL
 * with *st set. */
redisContext *rd_redis_connect_node(const rd_redis_target *t, const char *host, int port,
                                   rd_status *st);

/* Makes sure slot->ctx is connected (single master or Sentinel; in a
 * cluster, only that a node was chosen). */
int rd_redis_slot_ready(redis_store *r, conn_slot *slot, rd_status *st);
/* Loads every script on slot->ctx and keeps their names; false when the
 * connection failed. */
bool rd_redis_load_scripts(conn_slot *slot);

/* Cluster: points slot->ctx at node `index` of the map's generation,
 * connecting (and loading the scripts) if needed. A node failing fast
 * gives RD_ERR_UNAVAILABLE at once. */
int rd_redis_use_node(redis_store *r, conn_slot *slot, int index, unsigned generation,
                      rd_status *st);
/* Cluster: the same for the node serving hash_slot (fetching the map
 * first when it does not know). */
int rd_redis_use_slot(redis_store *r, conn_slot *slot, unsigned hash_slot, rd_status *st);
/* The cluster's rd_cluster_fetch_fn (arg: the redis_store). */
bool rd_redis_fetch_slots(void *arg, rd_cluster *c);
/* Records the outcome of a connection attempt: error NULL = it worked. */
void rd_redis_note_connect(redis_store *r, const char *error);

/* Classifies a failed reply or context; drops the connection when it can no
 * longer be trusted (I/O error, READONLY after a failover). */
int rd_redis_fail(redis_store *r, conn_slot *slot, const redisReply *reply, const char *what,
                  rd_status *st);

conn_slot *rd_redis_slot_take(redis_store *r);
void rd_redis_slot_give(conn_slot *slot);

#endif
