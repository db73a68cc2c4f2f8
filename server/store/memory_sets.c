/* The memory store's sharded sets: a hash table per shard with an age list
 * (oldest first), and the slot accounting that caps each set. */
#include "store/memory_internal.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain/hash.h"

static int table_init(table *t)
{
    t->buckets = calloc(RD_MEM_INITIAL_BUCKETS, sizeof *t->buckets);
    t->n_buckets = RD_MEM_INITIAL_BUCKETS;
    t->count = 0;
    t->oldest = t->newest = NULL;
    return t->buckets ? RD_OK : RD_ERR_NOMEM;
}

node *rd_mem_table_find(const table *t, const char *key, uint64_t hash)
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
void rd_mem_table_touch(table *t, node *n, int64_t now_ms)
{
    n->age_ms = now_ms;
    age_list_unlink(t, n);
    age_list_append(t, n);
}

static void node_free(const node_kind *kind, node *n)
{
    if (kind->release)
        kind->release(n);
    free(n);
}

/* The top bits pick a shard, the low bits a bucket (domain/hash.h mixes
 * both); the per-store seed keeps placement unpredictable from outside. */
uint64_t rd_mem_hash_key(const memory_store *m, const char *key)
{
    return rd_hash_text(key, m->hash_seed);
}

shard *rd_mem_shard_for(sharded *set, uint64_t hash)
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
void rd_mem_drop_node(sharded *set, shard *sh, node *n, bool keep_slot)
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
int rd_mem_find_or_create(memory_store *m, sharded *set, const char *key, int64_t now_ms,
                          shard **out_shard, node **out, bool *created)
{
    uint64_t hash = rd_mem_hash_key(m, key);
    shard *sh = rd_mem_shard_for(set, hash);
    bool have_slot = false;
    *created = false;
    pthread_mutex_lock(&sh->lock);
    for (int tries = 0;; tries++) {
        node *n = rd_mem_table_find(&sh->map, key, hash);
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

/* Drops the oldest entry among the shards' oldest and keeps its slot for
 * the caller. Each shard is locked on its own, so under concurrent use the
 * choice is approximate, never unsafe; a victim shard emptied meanwhile by
 * another thread means that thread made room, and the search goes on. */
bool rd_mem_drop_oldest_keep_slot(sharded *set)
{
    for (int round = 0; round < RD_MEM_VICTIM_ROUNDS; round++) {
        shard *victim = find_oldest_shard(set);
        if (!victim)
            return false;
        pthread_mutex_lock(&victim->lock);
        node *oldest = victim->map.oldest;
        if (oldest)
            rd_mem_drop_node(set, victim, oldest, true);
        pthread_mutex_unlock(&victim->lock);
        if (oldest)
            return true;
    }
    return false;
}

/* Drops every entry `doomed` selects, shard by shard; returns how many.
 * The slots of the first `keep_slots` dropped pass to the caller. */
size_t rd_mem_drop_where(memory_store *m, sharded *set, node_filter doomed, int64_t now_ms,
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
                rd_mem_drop_node(set, sh, n, dropped < keep_slots);
                dropped++;
            }
            n = next;
        }
        pthread_mutex_unlock(&sh->lock);
    }
    return dropped;
}

bool rd_mem_aged_out(int64_t since_ms, int64_t ttl_ms, int64_t now_ms)
{
    return ttl_ms > 0 && now_ms - since_ms >= ttl_ms;
}

int rd_mem_sharded_init(sharded *set, size_t cap, const node_kind *kind)
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

void rd_mem_sharded_free(sharded *set)
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
