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
#include "store/memory_internal.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain/hash.h"
#include "domain/recent_set.h"
#include "domain/retry.h"
#include "domain/window.h"


/* ---- outcome ids ---- */

static bool outcome_expired(const memory_store *m, const node *n, int64_t now_ms)
{
    return rd_mem_aged_out(n->age_ms, m->base.limits.outcome_ttl_ms, now_ms);
}

static bool outcomes_make_room(memory_store *m, int64_t now_ms)
{
    return rd_mem_drop_oldest_keep_slot(&m->outcomes);
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
    memory_store *m = rd_mem_as_memory(s);
    shard *sh;
    node *n;
    bool created;
    rc = rd_mem_find_or_create(m, &m->outcomes, outcome_id, now_ms, &sh, &n, &created);
    if (rc != RD_OK) /* EXHAUSTED only if every other entry vanished meanwhile */
        return rd_status_set(st, rc, "outcome_id: cannot remember another outcome id");
    *duplicate = !created && !outcome_expired(m, n, now_ms);
    if (!*duplicate)
        rd_mem_table_touch(&sh->map, n, now_ms); /* new, or expired: remembered from now */
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
    return rd_mem_aged_out(n->age_ms, m->base.limits.turn_ttl_ms, now_ms);
}

static bool turns_make_room(memory_store *m, int64_t now_ms)
{
    return rd_mem_drop_oldest_keep_slot(&m->turns);
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
    rc = rd_mem_find_or_create(m, &m->turns, turn_id, now_ms, sh, &n, &created);
    if (rc == RD_ERR_EXHAUSTED)
        return rd_status_set(st, rc, "turn_id: live turn limit (%zu) reached", m->turns.cap);
    if (rc != RD_OK)
        return rd_status_set(st, rc, "turn_id: out of memory tracking a new turn");
    turn_node *t = (turn_node *)n;
    if (created || turn_expired(m, n, now_ms))
        turn_restart(t, now_ms);
    rd_mem_table_touch(&(*sh)->map, n, now_ms);
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
    memory_store *m = rd_mem_as_memory(s);
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
    memory_store *m = rd_mem_as_memory(s);
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
    memory_store *m = rd_mem_as_memory(s);
    uint64_t hash = rd_mem_hash_key(m, turn_id);
    shard *sh = rd_mem_shard_for(&m->turns, hash);
    pthread_mutex_lock(&sh->lock);
    const node *found = rd_mem_table_find(&sh->map, turn_id, hash);
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

/* ---- eviction and lifetime ---- */

static size_t mem_evict(rd_store *s, int64_t now_ms)
{
    memory_store *m = rd_mem_as_memory(s);
    return rd_mem_drop_where(m, &m->tools, rd_mem_tool_idle, now_ms, 0) +
           rd_mem_drop_where(m, &m->turns, turn_expired, now_ms, 0) +
           rd_mem_drop_where(m, &m->outcomes, outcome_expired, now_ms, 0) +
           rd_mem_drop_where(m, &m->budgets, rd_mem_budget_idle, now_ms, 0) +
           rd_mem_drop_where(m, &m->latencies, rd_mem_latency_idle, now_ms, 0) +
           rd_mem_drop_where(m, &m->signatures, rd_mem_signature_expired, now_ms, 0) +
           rd_mem_drop_where(m, &m->links, rd_mem_link_expired, now_ms, 0);
}

/* ---- capped sets (a tenant's limits) ---- */

typedef struct quota_set {
    char *name;
    rd_recent_set keys;
    struct quota_set *next;
} quota_set;

static int mem_quota(rd_store *s, const char *set, const char *member, size_t max,
                     int64_t now_ms, int64_t ttl_ms, rd_status *st)
{
    int rc = rd_store_check_id("member", member, st);
    if (rc == RD_OK && (!set || !set[0] || strlen(set) > RD_ID_MAX))
        rc = rd_status_set(st, RD_ERR_INVALID, "set: 1..%d bytes", RD_ID_MAX);
    if (rc != RD_OK)
        return rc;
    memory_store *m = rd_mem_as_memory(s);
    pthread_mutex_lock(&m->quota_lock);
    quota_set *q = m->quotas;
    while (q && strcmp(q->name, set) != 0)
        q = q->next;
    if (!q && (q = calloc(1, sizeof *q))) {
        if ((q->name = strdup(set))) {
            q->next = m->quotas;
            m->quotas = q;
        } else {
            free(q);
            q = NULL;
        }
    }
    rc = q ? rd_recent_set_use(&q->keys, member, max, now_ms, ttl_ms) : RD_ERR_NOMEM;
    pthread_mutex_unlock(&m->quota_lock);
    if (rc == RD_ERR_EXHAUSTED)
        return rd_status_set(st, rc, "set %s: %zu members in use", set, max);
    if (rc == RD_ERR_NOMEM)
        return rd_status_set(st, rc, "set %s: out of memory", set);
    return rc;
}

static void mem_destroy(rd_store *s)
{
    memory_store *m = rd_mem_as_memory(s);
    rd_mem_sharded_free(&m->tools);
    rd_mem_sharded_free(&m->outcomes);
    rd_mem_sharded_free(&m->turns);
    rd_mem_sharded_free(&m->budgets);
    rd_mem_sharded_free(&m->latencies);
    rd_mem_sharded_free(&m->signatures);
    rd_mem_sharded_free(&m->links);
    for (quota_set *q = m->quotas, *next; q; q = next) {
        next = q->next;
        rd_recent_set_clear(&q->keys);
        free(q->name);
        free(q);
    }
    pthread_mutex_destroy(&m->quota_lock);
    free(m);
}

static const rd_store_ops memory_ops = {
    .name = "memory",
    .admit = rd_mem_admit,
    .record = rd_mem_record,
    .record_call = rd_mem_record_call,
    .stats = rd_mem_stats,
    .budget = rd_mem_budget,
    .latency = rd_mem_latency,
    .learn_link = rd_mem_learn_link,
    .learn_stats = rd_mem_learn_stats,
    .force = rd_mem_force,
    .get = rd_mem_get,
    .list = rd_mem_list,
    .claim_outcome = mem_claim_outcome,
    .turn_append = mem_turn_append,
    .turn_touch = mem_turn_touch,
    .turn_read = mem_turn_read,
    .quota = mem_quota,
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
    pthread_mutex_init(&m->quota_lock, NULL);
    rd_rng seeder;
    rd_rng_seed_os(&seeder);
    m->hash_seed = rd_rng_next(&seeder);
    struct {
        sharded *set;
        size_t cap;
        const node_kind *kind;
    } sets[] = {
        {&m->tools, limits->max_tools, &rd_mem_tool_kind},
        {&m->outcomes, limits->max_outcomes, &outcome_kind},
        {&m->turns, limits->max_turns, &turn_kind},
        {&m->budgets, limits->max_tools, &rd_mem_budget_kind},
        {&m->latencies, limits->max_tools, &rd_mem_latency_kind},
        {&m->signatures, limits->max_signatures, &rd_mem_signature_kind},
        {&m->links, limits->max_signatures * RD_MEM_LINKS_PER_SIGNATURE, &rd_mem_link_kind},
    };
    size_t n_sets = sizeof sets / sizeof sets[0];
    for (size_t i = 0; i < n_sets; i++) {
        if (rd_mem_sharded_init(sets[i].set, sets[i].cap, sets[i].kind) != RD_OK) {
            for (size_t j = 0; j < i; j++)
                rd_mem_sharded_free(sets[j].set);
            free(m);
            return NULL;
        }
    }
    return &m->base;
}
