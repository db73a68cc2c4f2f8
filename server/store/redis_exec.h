/* Running commands and scripts on the Redis store's connections
 * (redis_exec.c): to the master, or in a cluster to the primary serving
 * the command's key, following MOVED and ASK. */
#ifndef RD_STORE_REDIS_EXEC_H
#define RD_STORE_REDIS_EXEC_H

#include "store/redis_conn.h"

/* Runs script `id` with nkeys keys then args (argv/len pairs) on the slot's
 * connection (in a cluster: to the node serving argv[0]), connecting
 * first if needed. Returns the reply (caller frees with freeReplyObject)
 * or NULL with *st set; a Redis error reply becomes RD_ERR_UNAVAILABLE
 * (LOADING, READONLY, ...) or RD_ERR_INTERNAL. nkeys must be at least 1. */
redisReply *rd_redis_eval(redis_store *r, conn_slot *slot, rd_script_id id, int nkeys,
                          int nargs, const char **argv, const size_t *lens, rd_status *st);

/* Runs one command whose key is argv[1], routed like a script. Returns a
 * reply that is not an error (caller frees) or NULL with *st set. */
redisReply *rd_redis_command(redis_store *r, conn_slot *slot, int argc, const char **argv,
                             rd_status *st);

/* Sends n commands (argcs[i] arguments in argvs[i]) in one round trip to
 * the node serving `key` (in a cluster; else the master), connecting first
 * if needed, and puts each reply in replies[i] (caller frees), error
 * replies included: redirections are not followed, so a caller that gets
 * one takes a way that follows them. Returns RD_OK, or an error with *st
 * set and no replies when the connection failed. */
int rd_redis_pipeline(redis_store *r, conn_slot *slot, const char *key, size_t n,
                      const int *argcs, const char *const *const *argvs, redisReply **replies,
                      rd_status *st);

/* Redis's time while a round trip's commands ran: in [lo_ms, hi_ms] when
 * known. */
typedef struct rd_redis_when {
    bool known;
    int64_t lo_ms, hi_ms;
} rd_redis_when;
#define RD_TIMED_PIPELINE_MAX 4

/* rd_redis_pipeline (n below RD_TIMED_PIPELINE_MAX), and *when: read by a
 * TIME sent first in the same round trip (lo_ms = hi_ms), or, when the
 * slot's connection to that node read TIME within
 * RD_CLOCK_READING_MAX_US, the window that reading gives
 * (store/redis_clock.h) and no TIME sent. replies[] are the n commands'. */
int rd_redis_pipeline_timed(redis_store *r, conn_slot *slot, const char *key, size_t n,
                            const int *argcs, const char *const *const *argvs,
                            redisReply **replies, rd_redis_when *when, rd_status *st);

/* The nodes a walk over the whole keyspace visits (SCAN): in a cluster
 * every primary of the map, else the master alone (index -1). Returns how
 * many; *generation goes to rd_redis_use_walk_node. */
size_t rd_redis_walk_nodes(redis_store *r, int *indexes, size_t max, unsigned *generation);
/* Points slot->ctx at walk node `index`, connecting if needed. */
int rd_redis_use_walk_node(redis_store *r, conn_slot *slot, int index, unsigned generation,
                           rd_status *st);

#endif
