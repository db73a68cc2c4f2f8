/* The Redis store: breakers, outcome ids and turn traces shared by every
 * replica of the service (docs/REDIS.md has the key layout, the scripts'
 * contracts and the consistency bounds).
 *
 * Every breaker change is one Lua script (server/store/lua) run with
 * EVALSHA, so it is atomic across replicas; the transition rules are those
 * of domain/breaker.c, restated in Lua and checked against them by
 * tests/unit/test_breaker_differential.c. Time comes from Redis (TIME)
 * unless use_caller_time is set (tests only).
 *
 * Threads: every operation may be called from many threads at once; each
 * takes one connection of a small pool for the length of its commands.
 * No command waits longer than command_timeout_ms.
 *
 * Redis Cluster (options.cluster): commands go to the primary serving
 * their keys' slot, MOVED and ASK are followed, the slot map is refreshed
 * on a timer and on redirection, list() and evict() walk every primary
 * (docs/REDIS.md, "Redis Cluster").
 *
 * Errors: a Redis that cannot answer (refused, timed out, LOADING, READONLY,
 * ...) gives RD_ERR_UNAVAILABLE, with st->store_partial set when only the
 * cluster node serving the keys fails; wrap the store with rd_store_resilient_new
 * (store/resilient.h) to keep answering from memory meanwhile. */
#ifndef RD_STORE_REDIS_H
#define RD_STORE_REDIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "domain/store.h"

#define RD_REDIS_DEFAULT_PORT 6379
#define RD_REDIS_DEFAULT_PREFIX "rd:"
#define RD_REDIS_DEFAULT_COMMAND_TIMEOUT_MS 50
#define RD_REDIS_DEFAULT_CONNECT_TIMEOUT_MS 200
#define RD_REDIS_DEFAULT_POOL_SIZE 8
#define RD_REDIS_DEFAULT_MASTER_NAME "mymaster"

/* Zero means "the default" for every number; NULL or "" for every string.
 * All strings are borrowed for the call of rd_store_redis_new only (the
 * store copies them). */
typedef struct rd_redis_options {
    const char *host;              /* default 127.0.0.1 */
    int port;                      /* default 6379 */
    const char *unix_socket;       /* when set, used instead of host:port */
    const char *password;          /* AUTH; resolved by the caller, never logged */
    int db;                        /* SELECT; 0 = the default db */
    const char *key_prefix;        /* tenant namespace, default "rd:"; no '{' '}' */
    int command_timeout_ms;        /* budget per command, default 50 */
    int connect_timeout_ms;        /* default 200 */
    const char *const *sentinels;  /* "host:port" each; when given, host/port
                                      and unix_socket are ignored */
    size_t n_sentinels;
    const char *master_name;       /* the Sentinel master name, default "mymaster" */
    const char *sentinel_password; /* AUTH towards the sentinels, if they need it */
    /* Redis Cluster: "host:port" of some of its nodes to learn the slot map
     * from. When given, host/port, unix_socket and the sentinels are
     * ignored and db must be 0. */
    const char *const *cluster;
    size_t n_cluster;
    int cluster_refresh_ms;        /* the slot map is fetched this often; default 1000 */
    size_t pool_size;              /* connections, default 8 (one per worker thread) */
    bool no_local_cache;           /* true: every admission check goes to Redis */
    /* How long an admission check may be answered "CLOSED, go ahead" from
     * the last reply seen for the tool (docs/REDIS.md, "Consistency and
     * staleness"). Unlike the other numbers, 0 means off: CLOSED is asked of
     * Redis every time. Ignored with use_caller_time. */
    int closed_cache_ms;
    /* Successes on a breaker the cache knows CLOSED (consecutive mode, no
     * probe) are sent to Redis in one batch per tool this often; 0 (or no
     * closed cache) = every success is recorded at once. */
    int outcome_batch_ms;
    /* How long a read of a named tool (GetBreakerState) may be answered
     * from the last reply seen for it, while no event and no outcome of
     * this replica's own has touched it since; 0 = every read asks Redis.
     * Needs the CLOSED cache for CLOSED breakers. Ignored with
     * use_caller_time. */
    int read_cache_ms;
    /* evict() sweeps the keyspace (SCAN) and applies the memory store's
     * eviction rules, returning what it dropped. Off: Redis TTLs do the
     * work and evict() returns 0. */
    bool evict_sweep;
    /* Tests only: scripts use the now_ms the caller passes instead of Redis
     * TIME, so a test can drive time. Never in production: replicas' clocks
     * would then decide breaker timing. */
    bool use_caller_time;
    rd_store_limits limits;
} rd_redis_options;

/* Connects nothing yet beyond what it can: a Redis that is down at start is
 * not an error (operations return RD_ERR_UNAVAILABLE until it is up).
 * Returns NULL with *st set on bad options or out of memory.
 * Ownership: the caller frees the store with rd_store_destroy. */
rd_store *rd_store_redis_new(const rd_redis_options *opt, rd_status *st);

/* Counters of one Redis store (monotonic since creation). */
typedef struct rd_redis_stats {
    uint64_t commands;          /* script/command round trips */
    uint64_t errors;            /* of those, failed ones */
    uint64_t cache_hits;        /* admission checks answered from the local cache */
    uint64_t read_hits;         /* reads of a named tool answered from it */
    uint64_t script_reloads;    /* NOSCRIPT answered by sending the script again */
    uint64_t connects;          /* connections established (pool and subscriber) */
    uint64_t invalidations;     /* cache entries dropped by a published event */
    uint64_t deferred;          /* successes counted for a batch */
    uint64_t deferred_dropped;  /* of those, lost because Redis failed the batch */
    bool subscribed;            /* the event subscriber is connected */
    bool auth_refused;          /* the last connection attempt was refused by AUTH */
    uint64_t cluster_refreshes; /* Redis Cluster: slot maps fetched */
    uint64_t cluster_redirects; /* Redis Cluster: MOVED and ASK answers followed */
    char last_error[RD_STATUS_MSG_MAX]; /* why the last failed attempt failed ("" = none) */
} rd_redis_stats;

/* Fills *out; false when s is not a Redis store. */
bool rd_store_redis_stats(rd_store *s, rd_redis_stats *out);

#endif
