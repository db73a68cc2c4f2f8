/* The memory store's breakers: admission, outcomes, operator commands,
 * reads and listing, each under its shard's lock through domain/breaker.c;
 * and making room for a new tool when the table is full. */
#include "store/memory_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- breakers ---- */

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
bool rd_mem_tool_idle(const memory_store *m, const node *n, int64_t now_ms)
{
    int64_t ttl = m->base.limits.tool_idle_ttl_ms;
    const rd_breaker *b = &((const tool_node *)n)->breaker;
    if (!rd_mem_aged_out(b->last_seen_ms, ttl, now_ms))
        return false;
    if (rd_breaker_idle_forgettable(b, now_ms))
        return true;
    return b->stored == RD_BREAKER_OPEN && rd_mem_aged_out(b->open_until_ms, ttl, now_ms) &&
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
            rd_mem_drop_node(set, victim, n, true);
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

const node_kind rd_mem_tool_kind = {
    .size = sizeof(tool_node),
    .release = tool_release,
    .make_room = tools_make_room,
    .room_retries = 0, /* nothing displaceable: a new tool has to wait */
};

/* The tool's breaker, locked; a new tool starts CLOSED. */
int rd_mem_tool_acquire(memory_store *m, const char *tool_id, int64_t now_ms, shard **sh,
                        tool_node **out, rd_status *st)
{
    int rc = rd_store_check_id("tool_id", tool_id, st);
    if (rc != RD_OK)
        return rc;
    node *n;
    bool created;
    rc = rd_mem_find_or_create(m, &m->tools, tool_id, now_ms, sh, &n, &created);
    if (rc == RD_ERR_EXHAUSTED)
        return rd_status_set(st, rc, "tool_id: tracked tool limit (%zu) reached", m->tools.cap);
    if (rc != RD_OK)
        return rd_status_set(st, rc, "tool_id: out of memory tracking a new tool");
    *out = (tool_node *)n;
    if (created)
        rd_breaker_init(&(*out)->breaker, now_ms);
    rd_mem_table_touch(&(*sh)->map, n, now_ms);
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

int rd_mem_admit(rd_store *s, const char *tool_id, const rd_breaker_policy *p,
                 int64_t now_ms, int64_t lease_ms, rd_store_result *out, rd_status *st)
{
    memory_store *m = rd_mem_as_memory(s);
    shard *sh;
    tool_node *t;
    int rc = rd_mem_tool_acquire(m, tool_id, now_ms, &sh, &t, st);
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

int rd_mem_force(rd_store *s, const char *tool_id, rd_force_mode mode, int64_t now_ms,
                 int64_t ttl_ms, rd_store_result *out, rd_status *st)
{
    if (mode < RD_FORCE_OPEN || mode > RD_FORCE_RELEASE)
        return rd_status_set(st, RD_ERR_INVALID, "mode: unknown value %d", (int)mode);
    if (ttl_ms < 0)
        return rd_status_set(st, RD_ERR_INVALID, "ttl_ms: must not be negative");
    memory_store *m = rd_mem_as_memory(s);
    shard *sh;
    tool_node *t;
    int rc = rd_mem_tool_acquire(m, tool_id, now_ms, &sh, &t, st);
    if (rc != RD_OK)
        return rc;
    rd_breaker_force(&t->breaker, mode, now_ms, ttl_ms);
    *out = (rd_store_result){.breaker = t->breaker, .now_ms = now_ms};
    pthread_mutex_unlock(&sh->lock);
    return RD_OK;
}

int rd_mem_get(rd_store *s, const char *tool_id, int64_t now_ms, rd_breaker *out,
               bool *found, rd_status *st)
{
    int rc = rd_store_check_id("tool_id", tool_id, st);
    if (rc != RD_OK)
        return rc;
    memory_store *m = rd_mem_as_memory(s);
    uint64_t hash = rd_mem_hash_key(m, tool_id);
    shard *sh = rd_mem_shard_for(&m->tools, hash);
    pthread_mutex_lock(&sh->lock);
    const node *n = rd_mem_table_find(&sh->map, tool_id, hash);
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
int rd_mem_list(rd_store *s, int64_t now_ms, rd_store_visit visit, void *ctx, rd_status *st)
{
    memory_store *m = rd_mem_as_memory(s);
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
