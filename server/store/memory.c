/* The embedded in-memory store.
 *
 * Layout: three sharded hash tables (breakers by tool_id, remembered
 * outcome ids, turn traces by turn_id). A key's hash picks one of
 * RD_MEM_SHARDS shards, each with its own mutex, so threads working on
 * different tools rarely meet. Within a shard, entries hang in hash chains
 * and also in an age list (oldest first) that caps and eviction use.
 *
 * Breaker transitions run under the shard lock through domain/breaker.c; this
 * file never decides a transition itself.
 *
 * Locking: an operation holds at most one shard lock at a time. Work that
 * spans shards (making room when a cap is reached, evict, list) takes the
 * shard locks one after another, never nested, so there is no lock order to
 * get wrong.
 *
 * Capacity (rd_store_limits; 0 = unlimited):
 * - max_tools: when full, the least recently used CLOSED breaker without
 *   probe or hold is forgotten for the new tool (a failure streak it had is
 *   lost; a pristine one reads like a tool never seen anyway). Only when
 *   every breaker searched is OPEN, HALF_OPEN, probing or held does
 *   admit/record of a new tool fail with RD_ERR_EXHAUSTED; known tools
 *   carry on.
 * - max_outcomes: when full, the oldest remembered id is forgotten (oldest
 *   by claim time among the shards' oldest, so exact up to concurrent
 *   claims).
 * - max_turns: when full, the least recently touched turn is dropped.
 * - max_events_per_turn: further events of a turn are not stored; they are
 *   counted, and turn_append gives them sequence 0 ("not stored").
 *
 * Ages: an outcome id older than outcome_ttl_ms and a turn untouched for
 * turn_ttl_ms count as absent even before evict() frees them, so answers do
 * not depend on when eviction last ran. A TTL <= 0 means "no expiry". */
#include "domain/store.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain/hash.h"
#include "domain/retry.h"
#include "domain/window.h"

#define RD_MEM_SHARDS 64          /* a power of two */
#define RD_MEM_SHARD_BITS 6
#define RD_MEM_INITIAL_BUCKETS 16 /* per shard; a power of two */

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

static int table_init(table *t)
{
    t->buckets = calloc(RD_MEM_INITIAL_BUCKETS, sizeof *t->buckets);
    t->n_buckets = RD_MEM_INITIAL_BUCKETS;
    t->count = 0;
    t->oldest = t->newest = NULL;
    return t->buckets ? RD_OK : RD_ERR_NOMEM;
}

static node *table_find(const table *t, const char *key, uint64_t hash)
{
    for (node *n = t->buckets[hash & (t->n_buckets - 1)]; n; n = n->chain)
        if (n->hash == hash && strcmp(n->key, key) == 0)
            return n;
    return NULL;
}

static void age_list_append(table *t, node *n)
{
    n->newer = NULL;
    n->older = t->newest;
    if (t->newest)
        t->newest->newer = n;
    else
        t->oldest = n;
    t->newest = n;
}

static void age_list_unlink(table *t, node *n)
{
    if (n->older)
        n->older->newer = n->newer;
    else
        t->oldest = n->newer;
    if (n->newer)
        n->newer->older = n->older;
    else
        t->newest = n->older;
    n->older = n->newer = NULL;
}

/* Doubling keeps chains short; if the bigger array cannot be had, the
 * table keeps working with longer chains. */
static void table_maybe_grow(table *t)
{
    if (t->count < t->n_buckets)
        return;
    size_t n_new = t->n_buckets * 2;
    node **grown = calloc(n_new, sizeof *grown);
    if (!grown)
        return;
    for (size_t i = 0; i < t->n_buckets; i++) {
        node *n = t->buckets[i];
        while (n) {
            node *next = n->chain;
            n->chain = grown[n->hash & (n_new - 1)];
            grown[n->hash & (n_new - 1)] = n;
            n = next;
        }
    }
    free(t->buckets);
    t->buckets = grown;
    t->n_buckets = n_new;
}

static void table_insert(table *t, node *n)
{
    table_maybe_grow(t);
    node **bucket = &t->buckets[n->hash & (t->n_buckets - 1)];
    n->chain = *bucket;
    *bucket = n;
    age_list_append(t, n);
    t->count++;
}

static void table_unlink(table *t, node *n)
{
    node **link = &t->buckets[n->hash & (t->n_buckets - 1)];
    while (*link != n)
        link = &(*link)->chain;
    *link = n->chain;
    age_list_unlink(t, n);
    t->count--;
}

/* Marks n as used at now_ms: it becomes the newest of its shard. */
static void table_touch(table *t, node *n, int64_t now_ms)
{
    n->age_ms = now_ms;
    age_list_unlink(t, n);
    age_list_append(t, n);
}

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
    sharded signatures;              /* learning records by "tool\x1fsignature" */
    sharded links;                   /* pending retry links by "tool\x1flink" */
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

static void node_free(const node_kind *kind, node *n)
{
    if (kind->release)
        kind->release(n);
    free(n);
}

/* The top bits pick a shard, the low bits a bucket (domain/hash.h mixes
 * both); the per-store seed keeps placement unpredictable from outside. */
static uint64_t hash_key(const memory_store *m, const char *key)
{
    return rd_hash_text(key, m->hash_seed);
}

static shard *shard_for(sharded *set, uint64_t hash)
{
    return &set->shards[hash >> (64 - RD_MEM_SHARD_BITS)];
}

static bool reserve_slot(sharded *set)
{
    if (set->cap == 0) {
        atomic_fetch_add(&set->count, 1);
        return true;
    }
    size_t c = atomic_load(&set->count);
    while (c < set->cap)
        if (atomic_compare_exchange_weak(&set->count, &c, c + 1))
            return true;
    return false;
}

static void release_slot(sharded *set)
{
    atomic_fetch_sub(&set->count, 1);
}

/* Unlinks and frees n; the caller holds sh->lock. With keep_slot the
 * caller takes over n's slot in the count. */
static void drop_node(sharded *set, shard *sh, node *n, bool keep_slot)
{
    table_unlink(&sh->map, n);
    node_free(set->kind, n);
    if (!keep_slot)
        release_slot(set);
}

static node *node_new(const node_kind *kind, const char *key, uint64_t hash, int64_t now_ms)
{
    size_t key_len = strlen(key);
    node *n = calloc(1, kind->size + key_len + 1);
    if (!n)
        return NULL;
    n->key = (char *)n + kind->size;
    memcpy(n->key, key, key_len + 1);
    n->hash = hash;
    n->age_ms = now_ms;
    return n;
}

/* Finds key or creates a zeroed entry for it. On RD_OK, *out_shard is
 * locked and the caller unlocks it; on error no lock is held (the caller
 * words the RD_ERR_EXHAUSTED message, it knows which limit). */
static int find_or_create(memory_store *m, sharded *set, const char *key, int64_t now_ms,
                          shard **out_shard, node **out, bool *created)
{
    uint64_t hash = hash_key(m, key);
    shard *sh = shard_for(set, hash);
    bool have_slot = false;
    *created = false;
    pthread_mutex_lock(&sh->lock);
    for (int tries = 0;; tries++) {
        node *n = table_find(&sh->map, key, hash);
        if (n) {
            if (have_slot) /* created meanwhile by another thread */
                release_slot(set);
            *out_shard = sh;
            *out = n;
            return RD_OK;
        }
        if (have_slot || reserve_slot(set))
            break;
        pthread_mutex_unlock(&sh->lock);
        have_slot = set->kind->make_room(m, now_ms);
        if (!have_slot) {
            if (tries >= set->kind->room_retries)
                return RD_ERR_EXHAUSTED;
            sched_yield(); /* a slot may be reserved by a thread about to fill it */
        }
        pthread_mutex_lock(&sh->lock);
    }
    node *n = node_new(set->kind, key, hash, now_ms);
    if (!n) {
        release_slot(set);
        pthread_mutex_unlock(&sh->lock);
        return RD_ERR_NOMEM;
    }
    table_insert(&sh->map, n);
    *out_shard = sh;
    *out = n;
    *created = true;
    return RD_OK;
}

/* The shard whose oldest entry is the oldest of all, or NULL when every
 * shard is empty. */
static shard *find_oldest_shard(sharded *set)
{
    shard *victim = NULL;
    int64_t victim_age = INT64_MAX;
    for (size_t i = 0; i < RD_MEM_SHARDS; i++) {
        shard *sh = &set->shards[i];
        pthread_mutex_lock(&sh->lock);
        if (sh->map.oldest && (!victim || sh->map.oldest->age_ms < victim_age)) {
            victim = sh;
            victim_age = sh->map.oldest->age_ms;
        }
        pthread_mutex_unlock(&sh->lock);
    }
    return victim;
}

#define RD_MEM_VICTIM_ROUNDS 16

/* Drops the oldest entry among the shards' oldest and keeps its slot for
 * the caller. Each shard is locked on its own, so under concurrent use the
 * choice is approximate, never unsafe; a victim shard emptied meanwhile by
 * another thread means that thread made room, and the search goes on. */
static bool drop_oldest_keep_slot(sharded *set)
{
    for (int round = 0; round < RD_MEM_VICTIM_ROUNDS; round++) {
        shard *victim = find_oldest_shard(set);
        if (!victim)
            return false;
        pthread_mutex_lock(&victim->lock);
        node *oldest = victim->map.oldest;
        if (oldest)
            drop_node(set, victim, oldest, true);
        pthread_mutex_unlock(&victim->lock);
        if (oldest)
            return true;
    }
    return false;
}

typedef bool (*node_filter)(const memory_store *m, const node *n, int64_t now_ms);

/* Drops every entry `doomed` selects, shard by shard; returns how many.
 * The slots of the first `keep_slots` dropped pass to the caller. */
static size_t drop_where(memory_store *m, sharded *set, node_filter doomed, int64_t now_ms,
                         size_t keep_slots)
{
    size_t dropped = 0;
    for (size_t i = 0; i < RD_MEM_SHARDS; i++) {
        shard *sh = &set->shards[i];
        pthread_mutex_lock(&sh->lock);
        node *n = sh->map.oldest;
        while (n) {
            node *next = n->newer;
            if (doomed(m, n, now_ms)) {
                drop_node(set, sh, n, dropped < keep_slots);
                dropped++;
            }
            n = next;
        }
        pthread_mutex_unlock(&sh->lock);
    }
    return dropped;
}

static bool aged_out(int64_t since_ms, int64_t ttl_ms, int64_t now_ms)
{
    return ttl_ms > 0 && now_ms - since_ms >= ttl_ms;
}

static int sharded_init(sharded *set, size_t cap, const node_kind *kind)
{
    atomic_init(&set->count, 0);
    set->cap = cap;
    set->kind = kind;
    for (size_t i = 0; i < RD_MEM_SHARDS; i++) {
        shard *sh = &set->shards[i];
        if (table_init(&sh->map) != RD_OK) {
            for (size_t j = 0; j < i; j++) {
                pthread_mutex_destroy(&set->shards[j].lock);
                free(set->shards[j].map.buckets);
            }
            return RD_ERR_NOMEM;
        }
        pthread_mutex_init(&sh->lock, NULL);
        rd_rng_seed_os(&sh->rng);
    }
    return RD_OK;
}

static void sharded_free(sharded *set)
{
    for (size_t i = 0; i < RD_MEM_SHARDS; i++) {
        shard *sh = &set->shards[i];
        node *n = sh->map.oldest;
        while (n) {
            node *next = n->newer;
            node_free(set->kind, n);
            n = next;
        }
        free(sh->map.buckets);
        pthread_mutex_destroy(&sh->lock);
    }
}

/* ---- argument checks ---- */

static memory_store *as_memory(rd_store *s)
{
    return (memory_store *)s;
}

/* ---- breakers ---- */

/* What evict() drops, both only after tool_idle_ttl_ms without any admit
 * or record:
 * - pristine breakers (see above);
 * - OPEN breakers whose open period ended at least tool_idle_ttl_ms ago and
 *   hold no live probe. Such a breaker has been half-open, unasked, for a
 *   whole idle period: its verdict is older than the TTL and no call is
 *   waiting on it. Forgotten, the tool starts over CLOSED and re-opens after
 *   failure_threshold transient failures if still broken. Lost are its
 *   opens_total and the half-open gate for that first call.
 * A CLOSED breaker with a failure streak is kept: it still counts towards
 * opening (max_tools bounds how many there can be). */
static bool tool_idle(const memory_store *m, const node *n, int64_t now_ms)
{
    int64_t ttl = m->base.limits.tool_idle_ttl_ms;
    const rd_breaker *b = &((const tool_node *)n)->breaker;
    if (!aged_out(b->last_seen_ms, ttl, now_ms))
        return false;
    if (rd_breaker_is_pristine(b, now_ms))
        return true;
    return b->stored == RD_BREAKER_OPEN && aged_out(b->open_until_ms, ttl, now_ms) &&
           !rd_breaker_probe_live(b, now_ms) && !rd_breaker_hold_live(b, now_ms);
}

/* A breaker that may go to make room for a new tool: CLOSED (a failure
 * streak is lost, which only delays an opening), with no probe and no
 * operator hold. OPEN and HALF_OPEN ones are the verdicts worth keeping. */
static bool tool_displaceable(const rd_breaker *b, int64_t now_ms)
{
    return rd_breaker_status_at(b, now_ms) == RD_BREAKER_CLOSED &&
           !rd_breaker_probe_live(b, now_ms) && !rd_breaker_hold_live(b, now_ms);
}

/* How far from its oldest end a shard's age list is searched for a
 * displaceable breaker: bounded, so a shard full of OPEN breakers costs a
 * fixed walk; past it the shard counts as having none. */
#define RD_MEM_DISPLACE_WALK 64

static node *first_displaceable(shard *sh, int64_t now_ms)
{
    int walked = 0;
    for (node *n = sh->map.oldest; n && walked < RD_MEM_DISPLACE_WALK; n = n->newer, walked++)
        if (tool_displaceable(&((tool_node *)n)->breaker, now_ms))
            return n;
    return NULL;
}

/* Drops the least recently used displaceable breaker (the oldest among
 * the shards' first candidates) and keeps its slot for the caller. */
static bool displace_lru_tool(memory_store *m, int64_t now_ms)
{
    sharded *set = &m->tools;
    for (int round = 0; round < RD_MEM_VICTIM_ROUNDS; round++) {
        shard *victim = NULL;
        int64_t victim_age = INT64_MAX;
        for (size_t i = 0; i < RD_MEM_SHARDS; i++) {
            shard *sh = &set->shards[i];
            pthread_mutex_lock(&sh->lock);
            node *n = first_displaceable(sh, now_ms);
            if (n && n->age_ms < victim_age) {
                victim = sh;
                victim_age = n->age_ms;
            }
            pthread_mutex_unlock(&sh->lock);
        }
        if (!victim)
            return false;
        pthread_mutex_lock(&victim->lock);
        node *n = first_displaceable(victim, now_ms);
        if (n)
            drop_node(set, victim, n, true);
        pthread_mutex_unlock(&victim->lock);
        if (n)
            return true;
    }
    return false;
}

/* One breaker per new tool: the least recently used CLOSED one (pristine
 * or with a streak); only when none exists is a new tool refused. A
 * bounded search, where a pass over every breaker would cost each new tool
 * of a churn the whole table. */
static bool tools_make_room(memory_store *m, int64_t now_ms)
{
    if (!displace_lru_tool(m, now_ms))
        return false;
    rd_store_count_displaced(1);
    return true;
}

static void tool_release(node *n)
{
    free(((tool_node *)n)->quorum);
}

static const node_kind tool_kind = {
    .size = sizeof(tool_node),
    .release = tool_release,
    .make_room = tools_make_room,
    .room_retries = 0, /* nothing displaceable: a new tool has to wait */
};

/* The tool's breaker, locked; a new tool starts CLOSED. */
static int tool_acquire(memory_store *m, const char *tool_id, int64_t now_ms, shard **sh,
                        tool_node **out, rd_status *st)
{
    int rc = rd_store_check_id("tool_id", tool_id, st);
    if (rc != RD_OK)
        return rc;
    node *n;
    bool created;
    rc = find_or_create(m, &m->tools, tool_id, now_ms, sh, &n, &created);
    if (rc == RD_ERR_EXHAUSTED)
        return rd_status_set(st, rc, "tool_id: tracked tool limit (%zu) reached", m->tools.cap);
    if (rc != RD_OK)
        return rd_status_set(st, rc, "tool_id: out of memory tracking a new tool");
    *out = (tool_node *)n;
    if (created)
        rd_breaker_init(&(*out)->breaker, now_ms);
    table_touch(&(*sh)->map, n, now_ms);
    return RD_OK;
}

static uint64_t fresh_token(rd_rng *rng)
{
    uint64_t t;
    do
        t = rd_rng_next(rng);
    while (t == 0);
    return t;
}

static int mem_admit(rd_store *s, const char *tool_id, const rd_breaker_policy *p,
                     int64_t now_ms, int64_t lease_ms, rd_store_result *out, rd_status *st)
{
    memory_store *m = as_memory(s);
    shard *sh;
    tool_node *t;
    int rc = tool_acquire(m, tool_id, now_ms, &sh, &t, st);
    if (rc != RD_OK)
        return rc;
    uint64_t token = fresh_token(&sh->rng);
    rd_breaker_transition tr;
    rd_admission adm = rd_breaker_admit(&t->breaker, p, now_ms, lease_ms, token, &tr);
    *out = (rd_store_result){
        .breaker = t->breaker,
        .transition = tr,
        .admission = adm,
        .permit_token = adm == RD_ADMIT_PROBE ? token : 0,
        .now_ms = now_ms,
    };
    pthread_mutex_unlock(&sh->lock);
    return RD_OK;
}

static int mem_record_call(rd_store *s, const char *tool_id, const rd_breaker_policy *p,
                           int64_t now_ms, const rd_call_report *call, rd_store_result *out,
                           rd_status *st);

/* An outcome without executor or latency: record_call with neither. */
static int mem_record(rd_store *s, const char *tool_id, const rd_breaker_policy *p,
                      int64_t now_ms, rd_outcome outcome, uint64_t permit_token,
                      rd_store_result *out, rd_status *st)
{
    rd_call_report call = {.outcome = outcome, .permit_token = permit_token,
                           .executor_id = "", .latency_ms = -1};
    return mem_record_call(s, tool_id, p, now_ms, &call, out, st);
}

static int mem_force(rd_store *s, const char *tool_id, rd_force_mode mode, int64_t now_ms,
                     int64_t ttl_ms, rd_store_result *out, rd_status *st)
{
    if (mode < RD_FORCE_OPEN || mode > RD_FORCE_RELEASE)
        return rd_status_set(st, RD_ERR_INVALID, "mode: unknown value %d", (int)mode);
    if (ttl_ms < 0)
        return rd_status_set(st, RD_ERR_INVALID, "ttl_ms: must not be negative");
    memory_store *m = as_memory(s);
    shard *sh;
    tool_node *t;
    int rc = tool_acquire(m, tool_id, now_ms, &sh, &t, st);
    if (rc != RD_OK)
        return rc;
    rd_breaker_force(&t->breaker, mode, now_ms, ttl_ms);
    *out = (rd_store_result){.breaker = t->breaker, .now_ms = now_ms};
    pthread_mutex_unlock(&sh->lock);
    return RD_OK;
}

static int mem_get(rd_store *s, const char *tool_id, int64_t now_ms, rd_breaker *out,
                   bool *found, rd_status *st)
{
    int rc = rd_store_check_id("tool_id", tool_id, st);
    if (rc != RD_OK)
        return rc;
    memory_store *m = as_memory(s);
    uint64_t hash = hash_key(m, tool_id);
    shard *sh = shard_for(&m->tools, hash);
    pthread_mutex_lock(&sh->lock);
    const node *n = table_find(&sh->map, tool_id, hash);
    if (n)
        *out = ((const tool_node *)n)->breaker;
    pthread_mutex_unlock(&sh->lock);
    *found = n != NULL;
    if (!n)
        rd_breaker_init(out, now_ms);
    return RD_OK;
}

typedef struct tool_copy {
    char tool_id[RD_ID_MAX + 1];
    rd_breaker breaker;
} tool_copy;

/* Copies one shard's breakers out (malloc'd, caller frees) so visitors run
 * without the lock. */
static int copy_shard_tools(shard *sh, tool_copy **copies, size_t *n_copies)
{
    pthread_mutex_lock(&sh->lock);
    size_t n = sh->map.count;
    tool_copy *c = n ? malloc(n * sizeof *c) : NULL;
    if (n && !c) {
        pthread_mutex_unlock(&sh->lock);
        return RD_ERR_NOMEM;
    }
    size_t i = 0;
    for (const node *it = sh->map.oldest; it; it = it->newer, i++) {
        strcpy(c[i].tool_id, it->key); /* keys are checked to fit at insert */
        c[i].breaker = ((const tool_node *)it)->breaker;
    }
    pthread_mutex_unlock(&sh->lock);
    *copies = c;
    *n_copies = n;
    return RD_OK;
}

/* The tool_id and breaker handed to visit are copies, valid during that
 * call only; no lock is held while it runs, so it may call the store. */
static int mem_list(rd_store *s, int64_t now_ms, rd_store_visit visit, void *ctx, rd_status *st)
{
    memory_store *m = as_memory(s);
    for (size_t i = 0; i < RD_MEM_SHARDS; i++) {
        tool_copy *copies;
        size_t n;
        if (copy_shard_tools(&m->tools.shards[i], &copies, &n) != RD_OK)
            return rd_status_set(st, RD_ERR_NOMEM, "tool_ids: out of memory listing breakers");
        int stop = 0;
        for (size_t j = 0; j < n && !stop; j++)
            stop = visit(ctx, copies[j].tool_id, &copies[j].breaker);
        free(copies);
        if (stop)
            break;
    }
    return RD_OK;
}

/* ---- outcome ids ---- */

static bool outcome_expired(const memory_store *m, const node *n, int64_t now_ms)
{
    return aged_out(n->age_ms, m->base.limits.outcome_ttl_ms, now_ms);
}

static bool outcomes_make_room(memory_store *m, int64_t now_ms)
{
    return drop_oldest_keep_slot(&m->outcomes);
}

static const node_kind outcome_kind = {
    .size = sizeof(outcome_node),
    .release = NULL,
    .make_room = outcomes_make_room,
    .room_retries = 8,
};

static int mem_claim_outcome(rd_store *s, const char *outcome_id, int64_t now_ms,
                             bool *duplicate, rd_status *st)
{
    int rc = rd_store_check_id("outcome_id", outcome_id, st);
    if (rc != RD_OK)
        return rc;
    memory_store *m = as_memory(s);
    shard *sh;
    node *n;
    bool created;
    rc = find_or_create(m, &m->outcomes, outcome_id, now_ms, &sh, &n, &created);
    if (rc != RD_OK) /* EXHAUSTED only if every other entry vanished meanwhile */
        return rd_status_set(st, rc, "outcome_id: cannot remember another outcome id");
    *duplicate = !created && !outcome_expired(m, n, now_ms);
    if (!*duplicate)
        table_touch(&sh->map, n, now_ms); /* new, or expired: remembered from now */
    pthread_mutex_unlock(&sh->lock);
    return RD_OK;
}

/* ---- turns ---- */

static void turn_release(node *n)
{
    free(((turn_node *)n)->events);
}

static bool turn_expired(const memory_store *m, const node *n, int64_t now_ms)
{
    return aged_out(n->age_ms, m->base.limits.turn_ttl_ms, now_ms);
}

static bool turns_make_room(memory_store *m, int64_t now_ms)
{
    return drop_oldest_keep_slot(&m->turns);
}

static const node_kind turn_kind = {
    .size = sizeof(turn_node),
    .release = turn_release,
    .make_room = turns_make_room,
    .room_retries = 8,
};

/* A turn that outlived its TTL starts over as if new. */
static void turn_restart(turn_node *t, int64_t now_ms)
{
    free(t->events);
    t->events = NULL;
    t->n_events = t->cap_events = 0;
    t->dropped_events = 0;
    t->started_at_ms = now_ms;
}

/* The turn, locked, created or restarted as needed and touched at now_ms. */
static int turn_acquire(memory_store *m, const char *turn_id, int64_t now_ms, shard **sh,
                        turn_node **out, rd_status *st)
{
    int rc = rd_store_check_id("turn_id", turn_id, st);
    if (rc != RD_OK)
        return rc;
    node *n;
    bool created;
    rc = find_or_create(m, &m->turns, turn_id, now_ms, sh, &n, &created);
    if (rc == RD_ERR_EXHAUSTED)
        return rd_status_set(st, rc, "turn_id: live turn limit (%zu) reached", m->turns.cap);
    if (rc != RD_OK)
        return rd_status_set(st, rc, "turn_id: out of memory tracking a new turn");
    turn_node *t = (turn_node *)n;
    if (created || turn_expired(m, n, now_ms))
        turn_restart(t, now_ms);
    table_touch(&(*sh)->map, n, now_ms);
    *out = t;
    return RD_OK;
}

/* Makes room for `want` more events, or as many as max_events_per_turn
 * (`limit`, 0 = none) still allows; *fits receives how many. */
static int turn_reserve_events(turn_node *t, size_t want, size_t limit, size_t *fits)
{
    size_t n = want;
    if (limit && t->n_events + n > limit)
        n = t->n_events < limit ? limit - t->n_events : 0;
    *fits = n;
    size_t need = t->n_events + n;
    if (need <= t->cap_events)
        return RD_OK;
    size_t cap = t->cap_events ? t->cap_events * 2 : 8;
    if (cap < need)
        cap = need;
    if (limit && cap > limit)
        cap = limit;
    rd_trace_event *grown = realloc(t->events, cap * sizeof *grown);
    if (!grown)
        return RD_ERR_NOMEM;
    t->events = grown;
    t->cap_events = cap;
    return RD_OK;
}

static int mem_turn_append(rd_store *s, const char *turn_id, rd_trace_event *events, size_t n,
                           int64_t now_ms, int64_t *started_at_ms, rd_status *st)
{
    memory_store *m = as_memory(s);
    shard *sh;
    turn_node *t;
    int rc = turn_acquire(m, turn_id, now_ms, &sh, &t, st);
    if (rc != RD_OK)
        return rc;
    size_t fits;
    if (turn_reserve_events(t, n, m->base.limits.max_events_per_turn, &fits) != RD_OK) {
        pthread_mutex_unlock(&sh->lock);
        return rd_status_set(st, RD_ERR_NOMEM, "turn_id: out of memory storing trace events");
    }
    for (size_t i = 0; i < n; i++) {
        if (i < fits) {
            events[i].sequence = t->n_events + 1;
            t->events[t->n_events++] = events[i];
        } else {
            events[i].sequence = 0; /* over max_events_per_turn: not stored */
            t->dropped_events++;
        }
    }
    if (started_at_ms)
        *started_at_ms = t->started_at_ms;
    pthread_mutex_unlock(&sh->lock);
    return RD_OK;
}

static int mem_turn_touch(rd_store *s, const char *turn_id, int64_t now_ms,
                          int64_t *started_at_ms, rd_status *st)
{
    memory_store *m = as_memory(s);
    shard *sh;
    turn_node *t;
    int rc = turn_acquire(m, turn_id, now_ms, &sh, &t, st);
    if (rc != RD_OK)
        return rc;
    if (started_at_ms)
        *started_at_ms = t->started_at_ms;
    pthread_mutex_unlock(&sh->lock);
    return RD_OK;
}

static int mem_turn_read(rd_store *s, const char *turn_id, int64_t now_ms,
                         rd_trace_event **events, size_t *n, int64_t *started_at_ms,
                         rd_status *st)
{
    *events = NULL;
    *n = 0;
    int rc = rd_store_check_id("turn_id", turn_id, st);
    if (rc != RD_OK)
        return rc;
    memory_store *m = as_memory(s);
    uint64_t hash = hash_key(m, turn_id);
    shard *sh = shard_for(&m->turns, hash);
    pthread_mutex_lock(&sh->lock);
    const node *found = table_find(&sh->map, turn_id, hash);
    if (!found || turn_expired(m, found, now_ms)) {
        pthread_mutex_unlock(&sh->lock);
        return rd_status_set(st, RD_ERR_NOT_FOUND, "turn_id: unknown turn");
    }
    const turn_node *t = (const turn_node *)found;
    rd_trace_event *copy = NULL;
    if (t->n_events) {
        copy = malloc(t->n_events * sizeof *copy);
        if (!copy) {
            pthread_mutex_unlock(&sh->lock);
            return rd_status_set(st, RD_ERR_NOMEM, "turn_id: out of memory reading the trace");
        }
        memcpy(copy, t->events, t->n_events * sizeof *copy);
    }
    *events = copy;
    *n = t->n_events;
    if (started_at_ms)
        *started_at_ms = t->started_at_ms;
    pthread_mutex_unlock(&sh->lock);
    return RD_OK;
}

/* ---- the fleet features: call windows, quorum, budgets, learning ---- */

static bool valid_outcome(rd_outcome o)
{
    return o == RD_OUTCOME_SUCCESS || o == RD_OUTCOME_TRANSIENT_FAILURE ||
           o == RD_OUTCOME_PERMANENT_FAILURE;
}

/* Forgets executors whose last failure left the window; returns how many
 * distinct ones remain. */
static uint32_t quorum_trim(quorum_set *q, int64_t window_ms, int64_t now_ms)
{
    uint32_t kept = 0;
    for (uint32_t i = 0; i < q->n; i++) {
        if (window_ms > 0 && now_ms - q->last_failure_ms[i] >= window_ms)
            continue;
        q->executor[kept] = q->executor[i];
        q->last_failure_ms[kept] = q->last_failure_ms[i];
        kept++;
    }
    q->n = kept;
    return kept;
}

static void quorum_note(quorum_set *q, uint64_t executor, int64_t now_ms)
{
    uint32_t oldest = 0;
    for (uint32_t i = 0; i < q->n; i++) {
        if (q->executor[i] == executor) {
            q->last_failure_ms[i] = now_ms;
            return;
        }
        if (q->last_failure_ms[i] < q->last_failure_ms[oldest])
            oldest = i;
    }
    uint32_t at = q->n < RD_MEM_QUORUM_MAX ? q->n++ : oldest;
    q->executor[at] = executor;
    q->last_failure_ms[at] = now_ms;
}

/* Counts the outcome in the tool's windows (under its lock) and fills the
 * evidence the breaker rules read. */
static int count_call(memory_store *m, tool_node *t, const rd_breaker_policy *p,
                      int64_t now_ms, const rd_call_report *call, rd_breaker_evidence *ev)
{
    bool counts = rd_breaker_counts_calls(&t->breaker, now_ms);
    bool transient = call->outcome == RD_OUTCOME_TRANSIENT_FAILURE;
    if (p->window_ms > 0) {
        bool slow = p->slow_call_ms > 0 && call->latency_ms >= p->slow_call_ms;
        uint32_t add[RD_WINDOW_FIELDS] = {1, transient, slow};
        if (counts)
            rd_window_add(&t->calls, p->window_ms, now_ms, add);
        uint64_t sum[RD_WINDOW_FIELDS];
        rd_window_sum(&t->calls, p->window_ms, now_ms, sum);
        ev->calls = sum[0];
        ev->failures = sum[1];
        ev->slow = sum[2];
    }
    if (p->quorum_min_executors <= 1)
        return RD_OK;
    if (!t->quorum && !(t->quorum = calloc(1, sizeof *t->quorum)))
        return RD_ERR_NOMEM;
    if (counts && transient)
        quorum_note(t->quorum, hash_key(m, call->executor_id ? call->executor_id : ""), now_ms);
    ev->failing_executors = quorum_trim(t->quorum, p->quorum_window_ms, now_ms);
    return RD_OK;
}

static int mem_record_call(rd_store *s, const char *tool_id, const rd_breaker_policy *p,
                           int64_t now_ms, const rd_call_report *call, rd_store_result *out,
                           rd_status *st)
{
    if (!valid_outcome(call->outcome))
        return rd_status_set(st, RD_ERR_INVALID, "outcome: unknown value %d",
                             (int)call->outcome);
    memory_store *m = as_memory(s);
    shard *sh;
    tool_node *t;
    int rc = tool_acquire(m, tool_id, now_ms, &sh, &t, st);
    if (rc != RD_OK)
        return rc;
    rd_breaker_evidence ev = {0};
    if (count_call(m, t, p, now_ms, call, &ev) != RD_OK) {
        pthread_mutex_unlock(&sh->lock);
        return rd_status_set(st, RD_ERR_NOMEM, "tool_id: out of memory counting executors");
    }
    rd_breaker_transition tr = rd_breaker_record_evidence(&t->breaker, p, now_ms, call->outcome,
                                                          call->permit_token, &ev);
    if (tr == RD_TRANSITION_OPENED || tr == RD_TRANSITION_REOPENED ||
        tr == RD_TRANSITION_CLOSED) {
        /* A new period judges only its own calls. */
        rd_window_clear(&t->calls);
        if (t->quorum)
            t->quorum->n = 0;
    }
    *out = (rd_store_result){
        .breaker = t->breaker, .transition = tr, .now_ms = now_ms, .evidence = ev};
    pthread_mutex_unlock(&sh->lock);
    return RD_OK;
}

static int mem_stats(rd_store *s, const char *tool_id, const rd_breaker_policy *p,
                     int64_t now_ms, rd_breaker *breaker, rd_breaker_evidence *ev, bool *found,
                     rd_status *st)
{
    int rc = rd_store_check_id("tool_id", tool_id, st);
    if (rc != RD_OK)
        return rc;
    memory_store *m = as_memory(s);
    uint64_t hash = hash_key(m, tool_id);
    shard *sh = shard_for(&m->tools, hash);
    *ev = (rd_breaker_evidence){0};
    pthread_mutex_lock(&sh->lock);
    const tool_node *t = (const tool_node *)table_find(&sh->map, tool_id, hash);
    if (t) {
        *breaker = t->breaker;
        if (p->window_ms > 0) {
            uint64_t sum[RD_WINDOW_FIELDS];
            rd_window_sum(&t->calls, p->window_ms, now_ms, sum);
            *ev = (rd_breaker_evidence){.calls = sum[0], .failures = sum[1], .slow = sum[2]};
        }
    }
    pthread_mutex_unlock(&sh->lock);
    *found = t != NULL;
    if (!t)
        rd_breaker_init(breaker, now_ms);
    return RD_OK;
}

/* Budgets, signatures and links are caches of evidence: when full, the
 * least recently used one goes. */
static bool budgets_make_room(memory_store *m, int64_t now_ms)
{
    return drop_oldest_keep_slot(&m->budgets);
}

static bool budget_idle(const memory_store *m, const node *n, int64_t now_ms)
{
    return aged_out(n->age_ms, ((const budget_node *)n)->window_ms, now_ms);
}

static const node_kind budget_kind = {
    .size = sizeof(budget_node), .make_room = budgets_make_room, .room_retries = 8};

static int mem_budget(rd_store *s, const char *tool_id, const rd_retry_budget_policy *p,
                      int64_t now_ms, rd_budget_op op, rd_budget_result *out, rd_status *st)
{
    int rc = rd_store_check_id("tool_id", tool_id, st);
    if (rc != RD_OK)
        return rc;
    if (op < RD_BUDGET_COUNT_REQUEST || op > RD_BUDGET_PEEK)
        return rd_status_set(st, RD_ERR_INVALID, "op: unknown value %d", (int)op);
    memory_store *m = as_memory(s);
    shard *sh;
    node *n;
    bool created;
    rc = find_or_create(m, &m->budgets, tool_id, now_ms, &sh, &n, &created);
    if (rc != RD_OK)
        return rd_status_set(st, rc, "tool_id: cannot track another retry budget");
    budget_node *b = (budget_node *)n;
    b->window_ms = p->window_ms;
    table_touch(&sh->map, n, now_ms);
    uint64_t sum[RD_WINDOW_FIELDS];
    rd_window_sum(&b->window, p->window_ms, now_ms, sum);
    *out = (rd_budget_result){.requests = sum[RD_BUDGET_FIELD_REQUESTS],
                              .retries = sum[RD_BUDGET_FIELD_RETRIES]};
    uint32_t add[RD_WINDOW_FIELDS] = {0};
    if (op == RD_BUDGET_COUNT_REQUEST) {
        add[RD_BUDGET_FIELD_REQUESTS] = 1;
        out->requests++;
    } else {
        out->granted = rd_budget_allows(p, out->requests, out->retries);
        if (op == RD_BUDGET_TAKE_RETRY && out->granted) {
            add[RD_BUDGET_FIELD_RETRIES] = 1;
            out->retries++;
        }
    }
    rd_window_add(&b->window, p->window_ms, now_ms, add);
    pthread_mutex_unlock(&sh->lock);
    return RD_OK;
}

static bool signatures_make_room(memory_store *m, int64_t now_ms)
{
    return drop_oldest_keep_slot(&m->signatures);
}

static bool signature_expired(const memory_store *m, const node *n, int64_t now_ms)
{
    return aged_out(n->age_ms, m->base.limits.signature_ttl_ms, now_ms);
}

static const node_kind signature_kind = {
    .size = sizeof(signature_node), .make_room = signatures_make_room, .room_retries = 8};

static bool links_make_room(memory_store *m, int64_t now_ms)
{
    return drop_oldest_keep_slot(&m->links);
}

static bool link_expired(const memory_store *m, const node *n, int64_t now_ms)
{
    return aged_out(n->age_ms, m->base.limits.turn_ttl_ms, now_ms);
}

static const node_kind link_kind = {
    .size = sizeof(link_node), .make_room = links_make_room, .room_retries = 8};

#define RD_LEARN_KEY_MAX (2 * RD_ID_MAX + 2)

static int learn_key(char *out, const char *tool_id, const char *second, const char *field,
                     rd_status *st)
{
    int rc = rd_store_check_id("tool_id", tool_id, st);
    if (rc == RD_OK)
        rc = rd_store_check_id(field, second, st);
    if (rc == RD_OK)
        snprintf(out, RD_LEARN_KEY_MAX, "%s\x1f%s", tool_id, second);
    return rc;
}

/* Takes the pending signature of a link away (and replaces it). */
static int swap_link(memory_store *m, const char *key, const char *signature_id,
                     int64_t now_ms, char *previous)
{
    previous[0] = '\0';
    uint64_t hash = hash_key(m, key);
    shard *sh = shard_for(&m->links, hash);
    pthread_mutex_lock(&sh->lock);
    node *n = table_find(&sh->map, key, hash);
    if (n && !link_expired(m, n, now_ms))
        strcpy(previous, ((link_node *)n)->signature_id);
    if (n && !signature_id[0])
        drop_node(&m->links, sh, n, false);
    pthread_mutex_unlock(&sh->lock);
    if (!signature_id[0])
        return RD_OK;
    bool created;
    int rc = find_or_create(m, &m->links, key, now_ms, &sh, &n, &created);
    if (rc != RD_OK)
        return rc;
    snprintf(((link_node *)n)->signature_id, RD_SIGNATURE_ID_LEN + 1, "%s", signature_id);
    table_touch(&sh->map, n, now_ms);
    pthread_mutex_unlock(&sh->lock);
    return RD_OK;
}

static int settle_signature(memory_store *m, const char *key, rd_learn_settle settle,
                            int64_t now_ms)
{
    shard *sh;
    node *n;
    bool created;
    int rc = find_or_create(m, &m->signatures, key, now_ms, &sh, &n, &created);
    if (rc != RD_OK)
        return rc;
    signature_node *g = (signature_node *)n;
    if (!created && signature_expired(m, n, now_ms))
        g->stats = (rd_learn_stats){0}; /* expired evidence starts over */
    if (settle == RD_LEARN_SUCCEEDED)
        g->stats.successes++;
    else
        g->stats.failures++;
    table_touch(&sh->map, n, now_ms);
    pthread_mutex_unlock(&sh->lock);
    return RD_OK;
}

static int mem_learn_link(rd_store *s, const char *tool_id, const char *link,
                          const char *signature_id, rd_learn_settle settle, int64_t now_ms,
                          rd_status *st)
{
    char key[RD_LEARN_KEY_MAX], previous[RD_SIGNATURE_ID_LEN + 1];
    int rc = learn_key(key, tool_id, link, "link", st);
    if (rc != RD_OK)
        return rc;
    if (strlen(signature_id) > RD_SIGNATURE_ID_LEN)
        return rd_status_set(st, RD_ERR_INVALID, "signature_id: longer than %d bytes",
                             RD_SIGNATURE_ID_LEN);
    memory_store *m = as_memory(s);
    if (swap_link(m, key, signature_id, now_ms, previous) != RD_OK)
        return rd_status_set(st, RD_ERR_EXHAUSTED, "link: cannot track another retry");
    if (settle == RD_LEARN_KEEP || !previous[0])
        return RD_OK;
    char sig_key[RD_LEARN_KEY_MAX];
    snprintf(sig_key, sizeof sig_key, "%s\x1f%s", tool_id, previous);
    if (settle_signature(m, sig_key, settle, now_ms) != RD_OK)
        return rd_status_set(st, RD_ERR_EXHAUSTED, "signature: cannot track another one");
    return RD_OK;
}

static int mem_learn_stats(rd_store *s, const char *tool_id, const char *signature_id,
                           int64_t now_ms, rd_learn_stats *out, rd_status *st)
{
    char key[RD_LEARN_KEY_MAX];
    int rc = learn_key(key, tool_id, signature_id, "signature_id", st);
    if (rc != RD_OK)
        return rc;
    memory_store *m = as_memory(s);
    uint64_t hash = hash_key(m, key);
    shard *sh = shard_for(&m->signatures, hash);
    *out = (rd_learn_stats){0};
    pthread_mutex_lock(&sh->lock);
    const node *n = table_find(&sh->map, key, hash);
    if (n && !signature_expired(m, n, now_ms))
        *out = ((const signature_node *)n)->stats;
    pthread_mutex_unlock(&sh->lock);
    return RD_OK;
}

/* ---- eviction and lifetime ---- */

static size_t mem_evict(rd_store *s, int64_t now_ms)
{
    memory_store *m = as_memory(s);
    return drop_where(m, &m->tools, tool_idle, now_ms, 0) +
           drop_where(m, &m->turns, turn_expired, now_ms, 0) +
           drop_where(m, &m->outcomes, outcome_expired, now_ms, 0) +
           drop_where(m, &m->budgets, budget_idle, now_ms, 0) +
           drop_where(m, &m->signatures, signature_expired, now_ms, 0) +
           drop_where(m, &m->links, link_expired, now_ms, 0);
}

static void mem_destroy(rd_store *s)
{
    memory_store *m = as_memory(s);
    sharded_free(&m->tools);
    sharded_free(&m->outcomes);
    sharded_free(&m->turns);
    sharded_free(&m->budgets);
    sharded_free(&m->signatures);
    sharded_free(&m->links);
    free(m);
}

static const rd_store_ops memory_ops = {
    .name = "memory",
    .admit = mem_admit,
    .record = mem_record,
    .record_call = mem_record_call,
    .stats = mem_stats,
    .budget = mem_budget,
    .learn_link = mem_learn_link,
    .learn_stats = mem_learn_stats,
    .force = mem_force,
    .get = mem_get,
    .list = mem_list,
    .claim_outcome = mem_claim_outcome,
    .turn_append = mem_turn_append,
    .turn_touch = mem_turn_touch,
    .turn_read = mem_turn_read,
    .evict = mem_evict,
    .destroy = mem_destroy,
};

/* Links wait for the outcome of one retry each: a few per signature. */
#define RD_MEM_LINKS_PER_SIGNATURE 4

rd_store *rd_store_memory_new(const rd_store_limits *limits)
{
    memory_store *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->base.ops = &memory_ops;
    m->base.limits = *limits;
    rd_rng seeder;
    rd_rng_seed_os(&seeder);
    m->hash_seed = rd_rng_next(&seeder);
    struct {
        sharded *set;
        size_t cap;
        const node_kind *kind;
    } sets[] = {
        {&m->tools, limits->max_tools, &tool_kind},
        {&m->outcomes, limits->max_outcomes, &outcome_kind},
        {&m->turns, limits->max_turns, &turn_kind},
        {&m->budgets, limits->max_tools, &budget_kind},
        {&m->signatures, limits->max_signatures, &signature_kind},
        {&m->links, limits->max_signatures * RD_MEM_LINKS_PER_SIGNATURE, &link_kind},
    };
    size_t n_sets = sizeof sets / sizeof sets[0];
    for (size_t i = 0; i < n_sets; i++) {
        if (sharded_init(sets[i].set, sets[i].cap, sets[i].kind) != RD_OK) {
            for (size_t j = 0; j < i; j++)
                sharded_free(sets[j].set);
            free(m);
            return NULL;
        }
    }
    return &m->base;
}
