/* The types the files of the Redis store share: the store itself, its
 * connection pool, cache and batch tables, and the scripts' ids. Types
 * only; each file's functions are declared in its own header, and the files
 * stand in a line (redis_crc16.c, redis_cluster.c, redis_scripts.c,
 * redis_cache.c, redis_conn.c, redis_exec.c, redis_subscriber.c,
 * redis_batch.c, redis.c: each calls only those before it; redis_batch.c sends through a function redis.c gives it). Nothing
 * outside server/store includes these headers. */
#ifndef RD_STORE_REDIS_TYPES_H
#define RD_STORE_REDIS_TYPES_H

#include <hiredis/hiredis.h>
#include <pthread.h>
#include <stdatomic.h>

#include "domain/retry.h"
#include "store/redis.h"
#include "store/redis_clock.h"
#include "store/redis_cluster.h"

/* ---- scripts (redis_scripts.c) ---- */

typedef struct rd_script {
    const char *name;
    const char *source;      /* the full Lua text sent with EVAL / SCRIPT LOAD */
    size_t len;              /* of source */
    char function[48];       /* its name in the functions library (FCALL) */
} rd_script;

/* All scripts as one Redis Functions library: the text FUNCTION LOAD takes
 * (header line included) and the library's name, which carries a hash of
 * the text, so builds with different scripts never replace each other's
 * functions on a shared Redis. */
typedef struct rd_script_library {
    const char *name;
    const char *source;
    size_t len;
} rd_script_library;

typedef enum {
    RD_SCRIPT_ADMIT,
    RD_SCRIPT_RECORD,
    RD_SCRIPT_FORCE,
    RD_SCRIPT_READ,
    RD_SCRIPT_FORGET_TOOL,   /* evict / make room: drops a breaker if a rule allows */
    RD_SCRIPT_CLAIM,
    RD_SCRIPT_TURN_APPEND,
    RD_SCRIPT_TURN_READ,
    RD_SCRIPT_TURN_EXPIRE,
    RD_SCRIPT_OUTCOME_EXPIRE,
    RD_SCRIPT_INDEX_RESERVE, /* max_tools: admit a tool to the index if there is room */
    RD_SCRIPT_INDEX_TRIM,    /* max_turns / max_outcomes: add, pop the oldest past the cap */
    RD_SCRIPT_WINDOW_READ,   /* sums of a window hash (call window) */
    RD_SCRIPT_BUDGET,        /* retry budget: count a request / take a retry / peek */
    RD_SCRIPT_LATENCY,       /* a tool's latency distribution: add a sample, read it */
    RD_SCRIPT_LEARN_SWAP,    /* learning: replace a link's pending signature */
    RD_SCRIPT_LEARN_SETTLE,  /* learning: credit / debit / read a signature */
    RD_SCRIPT_QUOTA,         /* a tenant's limit: count a tool or turn if there is room */
    RD_SCRIPT_COUNT
} rd_script_id;

/* ---- connections (redis_conn.c) ---- */

typedef struct rd_redis_endpoint {
    char *host;              /* owned */
    int port;
} rd_redis_endpoint;

typedef struct rd_redis_target {
    char *host;              /* owned; NULL with a unix socket */
    int port;
    char *unix_socket;       /* owned or NULL */
    char *password;          /* owned or NULL; never logged */
    char *sentinel_password; /* owned or NULL */
    int db;
    int command_timeout_ms;
    int connect_timeout_ms;
    rd_redis_endpoint *sentinels; /* owned array */
    size_t n_sentinels;
    char *master_name;       /* owned */
    rd_redis_endpoint *seeds; /* owned array: Redis Cluster nodes to start from */
    size_t n_seeds;
} rd_redis_target;

/* ---- the store ---- */

typedef struct conn_slot {
    pthread_mutex_t lock;
    /* The connection commands go to: the master's, or in a cluster the one
     * to the node the last routing chose (node_ctx[node]). NULL until
     * first use or after a failure. */
    redisContext *ctx;
    /* Cluster only: one connection per node of the topology's generation
     * node_gen, made when first needed; node = the index ctx is, -1 = none. */
    redisContext *node_ctx[RD_CLUSTER_MAX_NODES];
    unsigned node_gen;
    int node;
    unsigned master_epoch;   /* r->master_epoch when ctx was connected */
    rd_rng rng;              /* probe tokens; used under lock */
    /* The server this connection reaches holds the functions library:
     * scripts go with FCALL. Otherwise (a server without FUNCTION, or one
     * that refused the load) they go by the name SCRIPT LOAD gave each,
     * sha; "" = not known (that load failed too), so the script goes with
     * EVAL. */
    bool functions;
    char sha[RD_SCRIPT_COUNT][41];
    /* The server's clock as last read on this slot's connection to each
     * node (clocks[0]: the master's), forgotten with the connection. */
    rd_clock_reading clocks[RD_CLUSTER_MAX_NODES];
} conn_slot;

/* A slot answers for tool_id while `valid`. After an event invalidates
 * it, tool_id, version and event_seq stay as a tombstone, so a reply to a
 * command sent before the event cannot bring the old state back. */
typedef struct cache_entry {
    bool valid;
    bool absent;             /* a read found no breaker: for reads only */
    char tool_id[RD_ID_MAX + 1]; /* "" = never used */
    rd_breaker breaker;      /* as last seen from Redis: OPEN, or CLOSED without a hold */
    int64_t version;         /* the breaker's version in Redis then (or the event's) */
    int64_t local_deadline_ms; /* monotonic: the entry answers until then */
    int64_t redis_seen_ms;   /* Redis time of the reply (CLOSED entries) */
    int64_t mono_sent_ms;    /* monotonic time the command was sent */
    int64_t read_until_ms;   /* monotonic: reads may use it until then (0 = not) */
    uint64_t event_seq;      /* redis_cache.event_seq of its last event, 0 = none */
} cache_entry;

#define RD_REDIS_CACHE_SLOTS 1024 /* direct-mapped: a collision is just a miss */

typedef struct redis_cache {
    pthread_mutex_t lock;
    cache_entry slots[RD_REDIS_CACHE_SLOTS];
    atomic_bool usable;      /* the subscriber is connected: events reach us */
    atomic_uint_fast64_t event_seq; /* events received so far */
} redis_cache;

/* Outcomes of one tool not yet sent, summarised so the record script can
 * apply them as one: the streak after them is `trailing` more failures,
 * from zero if `reset` (a success or permanent failure came first). */
typedef struct outcome_run {
    uint32_t calls;              /* outcomes counted in the call window */
    uint32_t failures;           /* of those, transient failures */
    uint32_t slow;               /* of those, slow calls */
    uint32_t trailing;           /* transient failures since the last reset */
    bool reset;
} outcome_run;

typedef struct batch_entry {
    char tool_id[RD_ID_MAX + 1]; /* "" = never used */
    rd_breaker_policy policy;    /* as of the latest outcome counted */
    uint64_t generation;         /* the breaker's epoch they were counted in */
    outcome_run pending;         /* counted, not yet sent */
    outcome_run in_flight;       /* being sent (valid while flushing) */
    bool flushing;
} batch_entry;

#define RD_REDIS_BATCH_SLOTS 1024 /* direct-mapped: a collision is recorded at once */

typedef struct redis_store redis_store;
/* Runs the record script once for a run of outcomes of one tool counted
 * in breaker epoch `generation`; an epoch that is over (or a hold, or a
 * tool Redis no longer knows) drops them. The store (redis.c) hands the
 * batch this at rd_redis_batch_start. */
typedef int (*rd_redis_send_run_fn)(struct redis_store *r, conn_slot *slot, const char *tool_id,
                                    const rd_breaker_policy *p, const outcome_run *run,
                                    uint64_t generation, rd_status *st);

typedef struct redis_batch {
    pthread_mutex_t lock;
    pthread_cond_t changed;      /* a batch finished sending */
    pthread_cond_t wake;         /* the flusher should stop (CLOCK_MONOTONIC) */
    batch_entry slots[RD_REDIS_BATCH_SLOTS];
    pthread_t flusher;
    rd_redis_send_run_fn send_run; /* set by rd_redis_batch_start */
    atomic_bool dirty;           /* something was counted since the last pass */
    bool initialized, started, stopping;
} redis_batch;

struct redis_store {
    rd_store base;           /* first, so rd_store * converts */
    rd_redis_target target;
    char *prefix;            /* owned */
    char *channel;           /* owned: <prefix>breaker-events */
    bool use_caller_time;
    bool evict_sweep;
    bool local_cache;
    int64_t closed_cache_ms; /* 0: CLOSED is never cached */
    int64_t batch_ms;        /* 0: every outcome is recorded at once */
    int64_t read_cache_ms;   /* 0: every read asks Redis */
    redis_batch batch;
    conn_slot *pool;         /* owned, pool_size entries */
    rd_cluster *cluster;     /* owned; NULL unless the target is a Redis Cluster */
    size_t pool_size;
    atomic_uint next_slot;
    redis_cache cache;
    pthread_t subscriber;
    bool subscriber_started;
    atomic_bool stopping;
    /* Bumped when the sentinels name a different master: every pool
     * connection made before is dropped on its next use. */
    atomic_uint master_epoch;
    atomic_uint_fast64_t commands, errors, cache_hits, read_hits, script_reloads, connects,
        invalidations, deferred, deferred_dropped;
    pthread_mutex_t listener_lock; /* guards listener/listener_ctx */
    rd_store_change_fn listener;
    void *listener_ctx;
    /* Why the last connection attempt failed, for the degraded-mode log;
     * auth_refused while the last attempt was refused by AUTH. */
    pthread_mutex_t error_lock;
    char last_error[RD_STATUS_MSG_MAX];
    atomic_bool auth_refused;
};

#endif
