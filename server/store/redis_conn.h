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
 * set. Through the sentinels when there are any (and ROLE checked).
 * Returns NULL with *st set (RD_ERR_UNAVAILABLE) when none can be had. */
redisContext *rd_redis_connect(const rd_redis_target *t, rd_status *st);

/* The master's address as the first sentinel that answers gives it; *host
 * is malloc'd (caller frees). False when no sentinel answers. */
bool rd_redis_sentinel_master(const rd_redis_target *t, char **host, int *port);

/* Runs script `id` with nkeys keys then args (argv/len pairs) on the slot's
 * connection, connecting first if needed. Returns the reply (caller frees
 * with freeReplyObject) or NULL with *st set; a Redis error reply becomes
 * RD_ERR_UNAVAILABLE (LOADING, READONLY, ...) or RD_ERR_INTERNAL. */
redisReply *rd_redis_eval(redis_store *r, conn_slot *slot, rd_script_id id, int nkeys,
                          int nargs, const char **argv, const size_t *lens, rd_status *st);

/* Sends n prepared commands in one round trip and collects their replies
 * into replies[] (each freed by the caller). Same error rules. */
int rd_redis_pipeline(redis_store *r, conn_slot *slot, size_t n, const int *argcs,
                      const char ***argvs, const size_t **lens, redisReply **replies,
                      rd_status *st);

/* Makes sure slot->ctx is connected. */
int rd_redis_slot_ready(redis_store *r, conn_slot *slot, rd_status *st);
/* Records the outcome of a connection attempt: error NULL = it worked. */
void rd_redis_note_connect(redis_store *r, const char *error);

/* Classifies a failed reply or context; drops the connection when it can no
 * longer be trusted (I/O error, READONLY after a failover). */
int rd_redis_fail(redis_store *r, conn_slot *slot, const redisReply *reply, const char *what,
                  rd_status *st);

conn_slot *rd_redis_slot_take(redis_store *r);
void rd_redis_slot_give(conn_slot *slot);

#endif
