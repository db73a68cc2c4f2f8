/* The memory store's fleet features (docs/FLEET.md): call windows and the
 * quorum on a breaker, retry budgets, and learning's signatures and links. */
#include "store/memory_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain/hash.h"

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
        quorum_note(t->quorum, rd_mem_hash_key(m, call->executor_id ? call->executor_id : ""),
                    now_ms);
    ev->failing_executors = quorum_trim(t->quorum, p->quorum_window_ms, now_ms);
    return RD_OK;
}

int rd_mem_record_call(rd_store *s, const char *tool_id, const rd_breaker_policy *p,
                       int64_t now_ms, const rd_call_report *call, rd_store_result *out,
                       rd_status *st)
{
    if (!valid_outcome(call->outcome))
        return rd_status_set(st, RD_ERR_INVALID, "outcome: unknown value %d",
                             (int)call->outcome);
    memory_store *m = rd_mem_as_memory(s);
    shard *sh;
    tool_node *t;
    int rc = rd_mem_tool_acquire(m, tool_id, now_ms, &sh, &t, st);
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

/* An outcome without executor or latency: record_call with neither. */
int rd_mem_record(rd_store *s, const char *tool_id, const rd_breaker_policy *p,
                   int64_t now_ms, rd_outcome outcome, uint64_t permit_token,
                   rd_store_result *out, rd_status *st)
{
    rd_call_report call = {.outcome = outcome, .permit_token = permit_token,
                        .executor_id = "", .latency_ms = -1};
    return rd_mem_record_call(s, tool_id, p, now_ms, &call, out, st);
}

int rd_mem_stats(rd_store *s, const char *tool_id, const rd_breaker_policy *p,
                 int64_t now_ms, rd_breaker *breaker, rd_breaker_evidence *ev, bool *found,
                 rd_status *st)
{
    int rc = rd_store_check_id("tool_id", tool_id, st);
    if (rc != RD_OK)
        return rc;
    memory_store *m = rd_mem_as_memory(s);
    uint64_t hash = rd_mem_hash_key(m, tool_id);
    shard *sh = rd_mem_shard_for(&m->tools, hash);
    *ev = (rd_breaker_evidence){0};
    pthread_mutex_lock(&sh->lock);
    const tool_node *t = (const tool_node *)rd_mem_table_find(&sh->map, tool_id, hash);
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
    return rd_mem_drop_oldest_keep_slot(&m->budgets);
}

bool rd_mem_budget_idle(const memory_store *m, const node *n, int64_t now_ms)
{
    return rd_mem_aged_out(n->age_ms, ((const budget_node *)n)->window_ms, now_ms);
}

const node_kind rd_mem_budget_kind = {
    .size = sizeof(budget_node), .make_room = budgets_make_room, .room_retries = 8};

int rd_mem_budget(rd_store *s, const char *tool_id, const rd_retry_budget_policy *p,
                  int64_t now_ms, rd_budget_op op, rd_budget_result *out, rd_status *st)
{
    int rc = rd_store_check_id("tool_id", tool_id, st);
    if (rc != RD_OK)
        return rc;
    if (op < RD_BUDGET_COUNT_REQUEST || op > RD_BUDGET_PEEK)
        return rd_status_set(st, RD_ERR_INVALID, "op: unknown value %d", (int)op);
    memory_store *m = rd_mem_as_memory(s);
    shard *sh;
    node *n;
    bool created;
    rc = rd_mem_find_or_create(m, &m->budgets, tool_id, now_ms, &sh, &n, &created);
    if (rc != RD_OK)
        return rd_status_set(st, rc, "tool_id: cannot track another retry budget");
    budget_node *b = (budget_node *)n;
    b->window_ms = p->window_ms;
    rd_mem_table_touch(&sh->map, n, now_ms);
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
    return rd_mem_drop_oldest_keep_slot(&m->signatures);
}

bool rd_mem_signature_expired(const memory_store *m, const node *n, int64_t now_ms)
{
    return rd_mem_aged_out(n->age_ms, m->base.limits.signature_ttl_ms, now_ms);
}

const node_kind rd_mem_signature_kind = {
    .size = sizeof(signature_node), .make_room = signatures_make_room, .room_retries = 8};

static bool links_make_room(memory_store *m, int64_t now_ms)
{
    return rd_mem_drop_oldest_keep_slot(&m->links);
}

bool rd_mem_link_expired(const memory_store *m, const node *n, int64_t now_ms)
{
    return rd_mem_aged_out(n->age_ms, m->base.limits.turn_ttl_ms, now_ms);
}

const node_kind rd_mem_link_kind = {
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
    uint64_t hash = rd_mem_hash_key(m, key);
    shard *sh = rd_mem_shard_for(&m->links, hash);
    pthread_mutex_lock(&sh->lock);
    node *n = rd_mem_table_find(&sh->map, key, hash);
    if (n && !rd_mem_link_expired(m, n, now_ms))
        strcpy(previous, ((link_node *)n)->signature_id);
    if (n && !signature_id[0])
        rd_mem_drop_node(&m->links, sh, n, false);
    pthread_mutex_unlock(&sh->lock);
    if (!signature_id[0])
        return RD_OK;
    bool created;
    int rc = rd_mem_find_or_create(m, &m->links, key, now_ms, &sh, &n, &created);
    if (rc != RD_OK)
        return rc;
    snprintf(((link_node *)n)->signature_id, RD_SIGNATURE_ID_LEN + 1, "%s", signature_id);
    rd_mem_table_touch(&sh->map, n, now_ms);
    pthread_mutex_unlock(&sh->lock);
    return RD_OK;
}

static int settle_signature(memory_store *m, const char *key, rd_learn_settle settle,
                            int64_t now_ms)
{
    shard *sh;
    node *n;
    bool created;
    int rc = rd_mem_find_or_create(m, &m->signatures, key, now_ms, &sh, &n, &created);
    if (rc != RD_OK)
        return rc;
    signature_node *g = (signature_node *)n;
    if (!created && rd_mem_signature_expired(m, n, now_ms))
        g->stats = (rd_learn_stats){0}; /* expired evidence starts over */
    if (settle == RD_LEARN_SUCCEEDED)
        g->stats.successes++;
    else
        g->stats.failures++;
    rd_mem_table_touch(&sh->map, n, now_ms);
    pthread_mutex_unlock(&sh->lock);
    return RD_OK;
}

int rd_mem_learn_link(rd_store *s, const char *tool_id, const char *link,
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
    memory_store *m = rd_mem_as_memory(s);
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

int rd_mem_learn_stats(rd_store *s, const char *tool_id, const char *signature_id,
                       int64_t now_ms, rd_learn_stats *out, rd_status *st)
{
    char key[RD_LEARN_KEY_MAX];
    int rc = learn_key(key, tool_id, signature_id, "signature_id", st);
    if (rc != RD_OK)
        return rc;
    memory_store *m = rd_mem_as_memory(s);
    uint64_t hash = rd_mem_hash_key(m, key);
    shard *sh = rd_mem_shard_for(&m->signatures, hash);
    *out = (rd_learn_stats){0};
    pthread_mutex_lock(&sh->lock);
    const node *n = rd_mem_table_find(&sh->map, key, hash);
    if (n && !rd_mem_signature_expired(m, n, now_ms))
        *out = ((const signature_node *)n)->stats;
    pthread_mutex_unlock(&sh->lock);
    return RD_OK;
}
