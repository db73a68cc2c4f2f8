/* Shared between the files of the Redis store (redis.c, redis_conn.c,
 * redis_cache.c, redis_scripts.c); nothing outside server/store includes it. */
#ifndef RD_STORE_REDIS_INTERNAL_H
#define RD_STORE_REDIS_INTERNAL_H

#include <hiredis/hiredis.h>
#include <pthread.h>
#include <stdatomic.h>

#include "domain/retry.h"
#include "store/redis.h"
#include "platform/clock.h"

/* ---- scripts (redis_scripts.c) ---- */

typedef struct rd_script {
    const char *name;
    const char *source;      /* the full Lua text sent with EVAL / SCRIPT LOAD */
    char sha[41];            /* SHA-1 of source, hex */
} rd_script;

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
    RD_SCRIPT_LEARN_SWAP,    /* learning: replace a link's pending signature */
    RD_SCRIPT_LEARN_SETTLE,  /* learning: credit / debit / read a signature */
    RD_SCRIPT_COUNT
} rd_script_id;

/* The scripts with their SHA-1 filled in; built once, read-only after. */
const rd_script *rd_redis_scripts(void);

/* SHA-1 of len bytes as 40 hex digits plus NUL. */
void rd_sha1_hex(const void *data, size_t len, char out[41]);

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
} rd_redis_target;

int rd_redis_target_init(rd_redis_target *t, const rd_redis_options *o, rd_status *st);
void rd_redis_target_free(rd_redis_target *t);

/* A connection to the master, authenticated, db selected, command timeout
 * set. Through the sentinels when there are any (and ROLE checked).
 * Returns NULL with *st set (RD_ERR_UNAVAILABLE) when none can be had. */
redisContext *rd_redis_connect(const rd_redis_target *t, rd_status *st);

/* The master's address as the first sentinel that answers gives it; *host
 * is malloc'd (caller frees). False when no sentinel answers. */
bool rd_redis_sentinel_master(const rd_redis_target *t, char **host, int *port);

/* ---- the store ---- */

typedef struct conn_slot {
    pthread_mutex_t lock;
    redisContext *ctx;       /* NULL until first use or after a failure */
    unsigned master_epoch;   /* r->master_epoch when ctx was connected */
    rd_rng rng;              /* probe tokens; used under lock */
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

typedef struct redis_batch {
    pthread_mutex_t lock;
    pthread_cond_t changed;      /* a batch finished sending */
    pthread_cond_t wake;         /* the flusher should stop (CLOCK_MONOTONIC) */
    batch_entry slots[RD_REDIS_BATCH_SLOTS];
    pthread_t flusher;
    atomic_bool dirty;           /* something was counted since the last pass */
    bool initialized, started, stopping;
} redis_batch;

typedef struct redis_store {
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
} redis_store;

/* Passes a published breaker change on to the registered listener. */
void rd_redis_notify_listener(redis_store *r, const char *tool_id);

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

/* Runs the record script once for a run of outcomes of one tool counted
 * in breaker epoch `generation`; an epoch that is over (or a hold, or a
 * tool Redis no longer knows) drops them. */
int rd_redis_record_batch(redis_store *r, conn_slot *slot, const char *tool_id,
                          const rd_breaker_policy *p, const outcome_run *run,
                          uint64_t generation, rd_status *st);

/* ---- batched successes (redis_batch.c) ---- */

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
int rd_redis_batch_start(redis_store *r, rd_status *st);
/* Stops the flusher after a last flush; safe on a batch never started. */
void rd_redis_batch_stop(redis_store *r);

/* ---- local cache and event subscriber (redis_cache.c) ---- */

/* The hash of a tool id (domain/hash.h): the slot of the cache and batch tables. */
uint64_t rd_redis_tool_hash(const char *tool_id);

void rd_redis_cache_init(redis_cache *c);
void rd_redis_cache_destroy(redis_cache *c);
/* An answer from the cache: true and *out filled when tool_id is known OPEN
 * (refused) or, within closed_cache_ms of a reply, CLOSED (admitted). */
bool rd_redis_cache_admit(redis_store *r, const char *tool_id, int64_t now_ms,
                          rd_store_result *out);
/* A read of tool_id from the cache: true and *out filled while an entry
 * noted within read_cache_ms still holds and this replica has no outcome of
 * the tool waiting in (or on its way from) the batch table. */
bool rd_redis_cache_read(redis_store *r, const char *tool_id, int64_t now_ms, rd_breaker *out,
                         bool *found);
/* The same answer without counting it as an admission served. */
bool rd_redis_cache_lookup(redis_store *r, const char *tool_id, int64_t now_ms,
                           rd_store_result *out);
/* Remembers (OPEN and not yet half-open, or CLOSED) or forgets the breaker
 * seen in Redis. */
/* seq_sent: rd_redis_cache_seq() read before the command was sent. */
void rd_redis_cache_note(redis_store *r, const char *tool_id, const rd_breaker *b,
                         int64_t version, int64_t redis_now_ms, int64_t mono_sent_ms,
                         uint64_t seq_sent);
/* A read found no breaker for tool_id: later reads may say so for
 * read_cache_ms (admission checks never use this). */
void rd_redis_cache_note_absent(redis_store *r, const char *tool_id, int64_t redis_now_ms,
                                int64_t mono_sent_ms, uint64_t seq_sent);
uint64_t rd_redis_cache_seq(redis_store *r);
void rd_redis_cache_forget(redis_store *r, const char *tool_id, int64_t version);
void rd_redis_cache_clear(redis_cache *c);
int rd_redis_subscriber_start(redis_store *r, rd_status *st);
void rd_redis_subscriber_stop(redis_store *r);

#endif
