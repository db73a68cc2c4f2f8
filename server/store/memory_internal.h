/* The memory store's private parts, shared by its files, each of which
 * calls only those before it: memory_sets.c the sharded hash tables with
 * their age lists; memory_breakers.c the breakers; memory_fleet.c call
 * windows, quorum, retry budgets and learning; memory.c outcome ids,
 * turns, the operations table and the store's lifetime. Nothing outside
 * server/store includes it but the store-size benchmark, which reads its
 * structs. */
#ifndef RD_STORE_MEMORY_INTERNAL_H
#define RD_STORE_MEMORY_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "domain/retry.h"
#include "domain/store.h"
#include "domain/window.h"

#define RD_MEM_SHARDS 64          /* a power of two */
#define RD_MEM_SHARD_BITS 6
#define RD_MEM_INITIAL_BUCKETS 16 /* per shard; a power of two */
#define RD_MEM_VICTIM_ROUNDS 16   /* looks for the oldest entry before giving up */

/* ---- one hash table with an age list ---- */

typedef struct node {
    struct node *chain;  /* next in the same bucket */
    struct node *older;  /* age list neighbours; head = oldest */
    struct node *newer;
    uint64_t hash;
    int64_t age_ms;      /* last_seen (tools), claim time (outcomes), last touch (turns) */
    char *key;           /* points just past the derived struct, same allocation */
} node;

typedef struct table {
    node **buckets;
    size_t n_buckets;
    size_t count;
    node *oldest;
    node *newest;
} table;

/* ---- sharded sets of nodes ---- */

typedef struct memory_store memory_store;

typedef struct node_kind {
    size_t size;                     /* of the struct that embeds `node` first */
    void (*release)(node *n);        /* frees what the node owns; NULL = nothing */
    /* Frees at least one entry if it can and hands one freed slot straight
     * to the caller (so no other thread can take it first); called with no
     * shard lock held. Returns whether the caller now holds a slot. */
    bool (*make_room)(memory_store *m, int64_t now_ms);
    /* How often to look again when make_room found nothing: > 0 where
     * other threads' reserved-but-unfilled slots may be all there is. */
    int room_retries;
} node_kind;

typedef struct shard {
    pthread_mutex_t lock;
    table map;
    rd_rng rng;                      /* probe tokens; used under `lock` */
} shard;

typedef struct sharded {
    shard shards[RD_MEM_SHARDS];
    atomic_size_t count;             /* entries over all shards, for the cap */
    size_t cap;                      /* 0 = unlimited */
    const node_kind *kind;
} sharded;

struct memory_store {
    rd_store base;                   /* first, so rd_store * converts */
    uint64_t hash_seed;
    sharded tools;
    sharded outcomes;
    sharded turns;
    sharded budgets;                 /* retry budgets by tool_id */
    sharded latencies;               /* latency distributions by tool_id (memory_latency.c) */
    sharded signatures;              /* learning records by "tool\x1fsignature" */
    sharded links;                   /* pending retry links by "tool\x1flink" */
    pthread_mutex_t quota_lock;      /* guards quotas */
    struct quota_set *quotas;        /* the capped sets of quota(), by name (a few) */
};

/* Executors with a transient failure in the quorum window, most recent
 * kept when full (enough to tell whether RD_MEM_QUORUM_MAX agree). */
#define RD_MEM_QUORUM_MAX 32

typedef struct quorum_set {
    uint64_t executor[RD_MEM_QUORUM_MAX]; /* hash of the executor id */
    int64_t last_failure_ms[RD_MEM_QUORUM_MAX];
    uint32_t n;
} quorum_set;

typedef struct tool_node {
    node n;
    rd_breaker breaker;
    rd_window calls;                 /* calls, transient failures, slow calls */
    quorum_set *quorum;              /* owned; allocated on first use */
} tool_node;

typedef struct budget_node {
    node n;                          /* n.age_ms = last use */
    rd_window window;                /* requests, retries */
    int64_t window_ms;               /* as last used, for eviction */
} budget_node;

typedef struct signature_node {
    node n;                          /* n.age_ms = last settled */
    rd_learn_stats stats;
} signature_node;

typedef struct link_node {
    node n;                          /* n.age_ms = when linked */
    char signature_id[RD_SIGNATURE_ID_LEN + 1];
} link_node;

typedef struct outcome_node {
    node n;                          /* n.age_ms = when it was claimed */
} outcome_node;

typedef struct turn_node {
    node n;                          /* n.age_ms = last touch */
    int64_t started_at_ms;
    rd_trace_event *events;          /* owned; n_events used of cap_events */
    size_t n_events;
    size_t cap_events;
    uint64_t dropped_events;         /* beyond max_events_per_turn */
} turn_node;

static inline memory_store *rd_mem_as_memory(rd_store *s)
{
    return (memory_store *)s;
}

/* Which nodes rd_mem_drop_where drops. */
typedef bool (*node_filter)(const memory_store *m, const node *n, int64_t now_ms);

/* memory_sets.c */
/* Marks n as used at now_ms: it becomes the newest of its shard. */
void rd_mem_table_touch(table *t, node *n, int64_t now_ms);
shard *rd_mem_shard_for(sharded *set, uint64_t hash);
int rd_mem_sharded_init(sharded *set, size_t cap, const node_kind *kind);
/* Unlinks and frees n; the caller holds sh->lock. With keep_slot the
 * caller takes over n's slot in the count. */
void rd_mem_drop_node(sharded *set, shard *sh, node *n, bool keep_slot);
node *rd_mem_table_find(const table *t, const char *key, uint64_t hash);
void rd_mem_sharded_free(sharded *set);
/* Drops every entry `doomed` selects, shard by shard; returns how many.
 * The slots of the first `keep_slots` dropped pass to the caller. */
size_t rd_mem_drop_where(memory_store *m, sharded *set, node_filter doomed, int64_t now_ms,
                         size_t keep_slots);
/* Finds key or creates a zeroed entry for it. On RD_OK, *out_shard is
 * locked and the caller unlocks it; on error no lock is held (the caller
 * words the RD_ERR_EXHAUSTED message, it knows which limit). */
int rd_mem_find_or_create(memory_store *m, sharded *set, const char *key, int64_t now_ms,
                          shard **out_shard, node **out, bool *created);
/* Drops the oldest entry among the shards' oldest and keeps its slot for
 * the caller. Each shard is locked on its own, so under concurrent use the
 * choice is approximate, never unsafe; a victim shard emptied meanwhile by
 * another thread means that thread made room, and the search goes on. */
bool rd_mem_drop_oldest_keep_slot(sharded *set);
bool rd_mem_aged_out(int64_t since_ms, int64_t ttl_ms, int64_t now_ms);
/* The top bits pick a shard, the low bits a bucket (domain/hash.h mixes
 * both); the per-store seed keeps placement unpredictable from outside. */
uint64_t rd_mem_hash_key(const memory_store *m, const char *key);

/* memory_breakers.c */
/* What evict() drops, both only after tool_idle_ttl_ms without any admit
 * or record:
 * - CLOSED breakers without probe or hold, a failure streak or not (a
 *   streak that has seen no call for that long says nothing about the
 *   tool now);
 * - OPEN breakers whose open period ended at least tool_idle_ttl_ms ago and
 *   hold no live probe. Such a breaker has been half-open, unasked, for a
 *   whole idle period: its verdict is older than the TTL and no call is
 *   waiting on it. Forgotten, the tool starts over CLOSED and re-opens after
 *   failure_threshold transient failures if still broken. Lost are its
 *   opens_total and the half-open gate for that first call.
 */
bool rd_mem_tool_idle(const memory_store *m, const node *n, int64_t now_ms);
int rd_mem_admit(rd_store *s, const char *tool_id, const rd_breaker_policy *p,
                 int64_t now_ms, int64_t lease_ms, rd_store_result *out, rd_status *st);
int rd_mem_force(rd_store *s, const char *tool_id, rd_force_mode mode, int64_t now_ms,
                 int64_t ttl_ms, rd_store_result *out, rd_status *st);
int rd_mem_get(rd_store *s, const char *tool_id, int64_t now_ms, rd_breaker *out,
               bool *found, rd_status *st);
/* The tool_id and breaker handed to visit are copies, valid during that
 * call only; no lock is held while it runs, so it may call the store. */
int rd_mem_list(rd_store *s, int64_t now_ms, rd_store_visit visit, void *ctx, rd_status *st);
extern const node_kind rd_mem_tool_kind;
/* The tool's breaker, locked; a new tool starts CLOSED. */
int rd_mem_tool_acquire(memory_store *m, const char *tool_id, int64_t now_ms, shard **sh,
                        tool_node **out, rd_status *st);

/* memory_fleet.c */
int rd_mem_stats(rd_store *s, const char *tool_id, const rd_breaker_policy *p,
                 int64_t now_ms, rd_breaker *breaker, rd_breaker_evidence *ev, bool *found,
                 rd_status *st);
bool rd_mem_link_expired(const memory_store *m, const node *n, int64_t now_ms);
int rd_mem_record_call(rd_store *s, const char *tool_id, const rd_breaker_policy *p,
                       int64_t now_ms, const rd_call_report *call, rd_store_result *out,
                       rd_status *st);
int rd_mem_budget(rd_store *s, const char *tool_id, const rd_retry_budget_policy *p,
                  int64_t now_ms, rd_budget_op op, rd_budget_result *out, rd_status *st);
bool rd_mem_budget_idle(const memory_store *m, const node *n, int64_t now_ms);
int rd_mem_learn_stats(rd_store *s, const char *tool_id, const char *signature_id,
                       int64_t now_ms, rd_learn_stats *out, rd_status *st);
int rd_mem_learn_link(rd_store *s, const char *tool_id, const char *link,
                      const char *signature_id, rd_learn_settle settle, int64_t now_ms,
                      rd_status *st);
bool rd_mem_signature_expired(const memory_store *m, const node *n, int64_t now_ms);
extern const node_kind rd_mem_signature_kind;
extern const node_kind rd_mem_budget_kind;
/* memory_latency.c */
int rd_mem_latency(rd_store *s, const char *tool_id, int64_t window_ms, int64_t now_ms,
                   int64_t sample_ms, rd_latency_hist *out, rd_status *st);
bool rd_mem_latency_idle(const memory_store *m, const node *n, int64_t now_ms);
extern const node_kind rd_mem_latency_kind;
extern const node_kind rd_mem_link_kind;

/* An outcome without executor or latency: record_call with neither. */
int rd_mem_record(rd_store *s, const char *tool_id, const rd_breaker_policy *p, int64_t now_ms,
                  rd_outcome outcome, uint64_t permit_token, rd_store_result *out,
                  rd_status *st);

#endif
