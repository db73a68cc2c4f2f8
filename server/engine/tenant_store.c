/* The tenant store (engine/tenant.h): the shared store seen through one
 * tenant's key prefix, with its limits. */
#include "engine/tenant.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "domain/hash.h"

/* ---- the counts of one tenant: the keys seen lately, at most its limit ---- */

typedef struct seen_key {
    char *key;                   /* NULL = free slot */
    int64_t seen_ms;
} seen_key;

/* An open-addressing set, rebuilt without its expired keys when full. */
typedef struct key_set {
    seen_key *slots;
    size_t cap, n;               /* cap: a power of two, at least twice n */
} key_set;

struct rd_tenant_quota {
    char tenant[RD_TENANT_ID_MAX + 1];
    pthread_mutex_t lock;
    key_set tools, turns;
    rd_tenant_quota *next;
};

static pthread_mutex_t quotas_lock = PTHREAD_MUTEX_INITIALIZER;
static rd_tenant_quota *quotas; /* every tenant seen by this process */

static rd_tenant_quota *quota_of(const char *tenant)
{
    pthread_mutex_lock(&quotas_lock);
    rd_tenant_quota *q = quotas;
    while (q && strcmp(q->tenant, tenant) != 0)
        q = q->next;
    if (!q && (q = calloc(1, sizeof *q))) {
        memcpy(q->tenant, tenant, strlen(tenant) + 1);
        pthread_mutex_init(&q->lock, NULL);
        q->next = quotas;
        quotas = q;
    }
    pthread_mutex_unlock(&quotas_lock);
    return q;
}

static seen_key *set_slot(const key_set *s, const char *key)
{
    size_t i = (size_t)rd_hash_text(key, 0) & (s->cap - 1);
    while (s->slots[i].key && strcmp(s->slots[i].key, key) != 0)
        i = (i + 1) & (s->cap - 1);
    return &s->slots[i];
}

/* Rebuilds the set with room for `want` keys, keeping the ones seen since
 * `since` (all of them when since is INT64_MIN). */
static bool set_rebuild(key_set *s, size_t want, int64_t since)
{
    size_t cap = 16;
    while (cap < 2 * want)
        cap *= 2;
    key_set fresh = {calloc(cap, sizeof *fresh.slots), cap, 0};
    if (!fresh.slots)
        return false;
    for (size_t i = 0; i < s->cap; i++) {
        seen_key *k = &s->slots[i];
        if (!k->key)
            continue;
        if (k->seen_ms < since) {
            free(k->key);
            continue;
        }
        *set_slot(&fresh, k->key) = *k;
        fresh.n++;
    }
    free(s->slots);
    *s = fresh;
    return true;
}

/* Whether `key` may be used: known already, or room for it under `max`. */
static int set_admit(key_set *s, const char *key, size_t max, int64_t now_ms, int64_t ttl_ms)
{
    if (s->cap) {
        seen_key *k = set_slot(s, key);
        if (k->key) {
            k->seen_ms = now_ms;
            return RD_OK;
        }
    }
    if (s->n >= max && !set_rebuild(s, max, ttl_ms > 0 ? now_ms - ttl_ms : INT64_MIN))
        return RD_ERR_NOMEM;
    if (s->n >= max)
        return RD_ERR_EXHAUSTED;
    if (2 * (s->n + 1) > s->cap && !set_rebuild(s, s->n + 1, INT64_MIN))
        return RD_ERR_NOMEM;
    char *copy = strdup(key);
    if (!copy)
        return RD_ERR_NOMEM;
    *set_slot(s, key) = (seen_key){copy, now_ms};
    s->n++;
    return RD_OK;
}

/* ---- keys ---- */

#define KEY_CAP (RD_ID_MAX + 1)

static rd_tenant_store *as_tenant(rd_store *s)
{
    return (rd_tenant_store *)s;
}

/* "<tenant>/<id>" into key; the namespaced key obeys the store's limit. */
static int ns_key(const rd_tenant_store *t, const char *field, const char *id, char *key,
                  rd_status *st)
{
    size_t n = id ? strlen(id) : 0;
    if (n == 0)
        return rd_status_set(st, RD_ERR_INVALID, "%s: required", field);
    if (t->prefix_len + n > RD_ID_MAX)
        return rd_status_set(st, RD_ERR_INVALID, "%s: longer than %zu bytes for tenant '%.*s'",
                             field, RD_ID_MAX - t->prefix_len, (int)t->prefix_len - 1,
                             t->prefix);
    memcpy(key, t->prefix, t->prefix_len);
    memcpy(key + t->prefix_len, id, n + 1);
    return RD_OK;
}

/* A new key of the tenant within its limit. */
static int quota_admit(rd_tenant_store *t, bool turn, const char *key, int64_t now_ms,
                       rd_status *st)
{
    size_t max = turn ? t->max_turns : t->max_tools;
    if (max == 0)
        return RD_OK;
    if (!t->quota) {
        char tenant[RD_TENANT_ID_MAX + 1];
        memcpy(tenant, t->prefix, t->prefix_len - 1);
        tenant[t->prefix_len - 1] = '\0';
        if (!(t->quota = quota_of(tenant)))
            return rd_status_set(st, RD_ERR_NOMEM, "tenant '%s': out of memory", tenant);
    }
    int64_t ttl = turn ? t->inner->limits.turn_ttl_ms : t->inner->limits.tool_idle_ttl_ms;
    pthread_mutex_lock(&t->quota->lock);
    int rc = set_admit(turn ? &t->quota->turns : &t->quota->tools, key, max, now_ms, ttl);
    pthread_mutex_unlock(&t->quota->lock);
    if (rc == RD_ERR_EXHAUSTED)
        return rd_status_set(st, rc, "tenant '%s': %s (server.tenants[].%s) reached",
                             t->quota->tenant,
                             turn ? "live turns at max_turns" : "tracked breakers at max_tools",
                             turn ? "max_turns" : "max_tools");
    if (rc != RD_OK)
        return rd_status_set(st, rc, "tenant '%s': out of memory", t->quota->tenant);
    return RD_OK;
}

/* Declares key (namespaced `id`) and, for an operation that may create
 * the tool's state, checks the tenant's limit. */
#define TOOL_KEY(t, id, creates, now)                                                         \
    char key[KEY_CAP];                                                                       \
    int rc_ = ns_key(t, "tool_id", id, key, st);                                             \
    if (rc_ == RD_OK && (creates))                                                           \
        rc_ = quota_admit(t, false, key, now, st);                                           \
    if (rc_ != RD_OK)                                                                        \
        return rc_

/* ---- the operations ---- */

static int t_admit(rd_store *s, const char *tool_id, const rd_breaker_policy *p,
                   int64_t now_ms, int64_t lease_ms, rd_store_result *out, rd_status *st)
{
    rd_tenant_store *t = as_tenant(s);
    TOOL_KEY(t, tool_id, true, now_ms);
    return t->inner->ops->admit(t->inner, key, p, now_ms, lease_ms, out, st);
}

static int t_record(rd_store *s, const char *tool_id, const rd_breaker_policy *p,
                    int64_t now_ms, rd_outcome outcome, uint64_t permit_token,
                    rd_store_result *out, rd_status *st)
{
    rd_tenant_store *t = as_tenant(s);
    TOOL_KEY(t, tool_id, true, now_ms);
    return t->inner->ops->record(t->inner, key, p, now_ms, outcome, permit_token, out, st);
}

static int t_record_call(rd_store *s, const char *tool_id, const rd_breaker_policy *p,
                         int64_t now_ms, const rd_call_report *call, rd_store_result *out,
                         rd_status *st)
{
    rd_tenant_store *t = as_tenant(s);
    TOOL_KEY(t, tool_id, true, now_ms);
    return t->inner->ops->record_call(t->inner, key, p, now_ms, call, out, st);
}

static int t_stats(rd_store *s, const char *tool_id, const rd_breaker_policy *p, int64_t now_ms,
                   rd_breaker *breaker, rd_breaker_evidence *evidence, bool *found,
                   rd_status *st)
{
    rd_tenant_store *t = as_tenant(s);
    TOOL_KEY(t, tool_id, false, now_ms);
    return t->inner->ops->stats(t->inner, key, p, now_ms, breaker, evidence, found, st);
}

static int t_budget(rd_store *s, const char *tool_id, const rd_retry_budget_policy *p,
                    int64_t now_ms, rd_budget_op op, rd_budget_result *out, rd_status *st)
{
    rd_tenant_store *t = as_tenant(s);
    TOOL_KEY(t, tool_id, false, now_ms);
    return t->inner->ops->budget(t->inner, key, p, now_ms, op, out, st);
}

static int t_latency(rd_store *s, const char *tool_id, int64_t window_ms, int64_t now_ms,
                     int64_t sample_ms, rd_latency_hist *out, rd_status *st)
{
    rd_tenant_store *t = as_tenant(s);
    TOOL_KEY(t, tool_id, false, now_ms);
    return t->inner->ops->latency(t->inner, key, window_ms, now_ms, sample_ms, out, st);
}

static int t_learn_link(rd_store *s, const char *tool_id, const char *link,
                        const char *signature_id, rd_learn_settle settle, int64_t now_ms,
                        rd_status *st)
{
    rd_tenant_store *t = as_tenant(s);
    TOOL_KEY(t, tool_id, false, now_ms);
    return t->inner->ops->learn_link(t->inner, key, link, signature_id, settle, now_ms, st);
}

static int t_learn_stats(rd_store *s, const char *tool_id, const char *signature_id,
                         int64_t now_ms, rd_learn_stats *out, rd_status *st)
{
    rd_tenant_store *t = as_tenant(s);
    TOOL_KEY(t, tool_id, false, now_ms);
    return t->inner->ops->learn_stats(t->inner, key, signature_id, now_ms, out, st);
}

static int t_force(rd_store *s, const char *tool_id, rd_force_mode mode, int64_t now_ms,
                   int64_t ttl_ms, rd_store_result *out, rd_status *st)
{
    rd_tenant_store *t = as_tenant(s);
    TOOL_KEY(t, tool_id, true, now_ms);
    return t->inner->ops->force(t->inner, key, mode, now_ms, ttl_ms, out, st);
}

static int t_get(rd_store *s, const char *tool_id, int64_t now_ms, rd_breaker *out,
                 bool *found, rd_status *st)
{
    rd_tenant_store *t = as_tenant(s);
    TOOL_KEY(t, tool_id, false, now_ms);
    return t->inner->ops->get(t->inner, key, now_ms, out, found, st);
}

typedef struct list_filter {
    const rd_tenant_store *t;
    rd_store_visit visit;
    void *ctx;
} list_filter;

static int visit_own(void *ctx, const char *tool_id, const rd_breaker *b)
{
    const list_filter *f = ctx;
    if (strncmp(tool_id, f->t->prefix, f->t->prefix_len) != 0)
        return 0;
    return f->visit(f->ctx, tool_id + f->t->prefix_len, b);
}

static int t_list(rd_store *s, int64_t now_ms, rd_store_visit visit, void *ctx, rd_status *st)
{
    rd_tenant_store *t = as_tenant(s);
    list_filter f = {t, visit, ctx};
    return t->inner->ops->list(t->inner, now_ms, visit_own, &f, st);
}

static int t_claim_outcome(rd_store *s, const char *outcome_id, int64_t now_ms,
                           bool *duplicate, rd_status *st)
{
    rd_tenant_store *t = as_tenant(s);
    char key[KEY_CAP];
    int rc = ns_key(t, "outcome_id", outcome_id, key, st);
    return rc != RD_OK ? rc : t->inner->ops->claim_outcome(t->inner, key, now_ms, duplicate, st);
}

#define TURN_KEY(t, id, creates, now)                                                         \
    char key[KEY_CAP];                                                                       \
    int rc_ = ns_key(t, "turn_id", id, key, st);                                             \
    if (rc_ == RD_OK && (creates))                                                           \
        rc_ = quota_admit(t, true, key, now, st);                                            \
    if (rc_ != RD_OK)                                                                        \
        return rc_

static int t_turn_append(rd_store *s, const char *turn_id, rd_trace_event *events, size_t n,
                         int64_t now_ms, int64_t *started_at_ms, rd_status *st)
{
    rd_tenant_store *t = as_tenant(s);
    TURN_KEY(t, turn_id, true, now_ms);
    return t->inner->ops->turn_append(t->inner, key, events, n, now_ms, started_at_ms, st);
}

static int t_turn_touch(rd_store *s, const char *turn_id, int64_t now_ms,
                        int64_t *started_at_ms, rd_status *st)
{
    rd_tenant_store *t = as_tenant(s);
    TURN_KEY(t, turn_id, true, now_ms);
    return t->inner->ops->turn_touch(t->inner, key, now_ms, started_at_ms, st);
}

static int t_turn_read(rd_store *s, const char *turn_id, int64_t now_ms,
                       rd_trace_event **events, size_t *n, int64_t *started_at_ms,
                       rd_status *st)
{
    rd_tenant_store *t = as_tenant(s);
    TURN_KEY(t, turn_id, false, now_ms);
    return t->inner->ops->turn_read(t->inner, key, now_ms, events, n, started_at_ms, st);
}

/* A call's tool and turn, before it changes anything: a call refused for
 * a limit leaves no trace (no breaker counted, no outcome id claimed). */
static int t_precheck(rd_store *s, const char *tool_id, const char *turn_id, int64_t now_ms,
                      rd_status *st)
{
    rd_tenant_store *t = as_tenant(s);
    char key[KEY_CAP];
    int rc = RD_OK;
    if (t->max_tools && tool_id && tool_id[0] &&
        (rc = ns_key(t, "tool_id", tool_id, key, st)) == RD_OK)
        rc = quota_admit(t, false, key, now_ms, st);
    if (rc == RD_OK && t->max_turns && turn_id && turn_id[0] &&
        (rc = ns_key(t, "turn_id", turn_id, key, st)) == RD_OK)
        rc = quota_admit(t, true, key, now_ms, st);
    return rc;
}

/* Eviction, change listening and reports belong to the shared store, not
 * to one tenant's view of it for one call. */
static size_t t_evict(rd_store *s, int64_t now_ms)
{
    (void)s;
    (void)now_ms;
    return 0;
}

static void t_destroy(rd_store *s)
{
    (void)s; /* owns nothing */
}

static void t_report(rd_store *s, rd_store_report *out)
{
    rd_store_report_of(as_tenant(s)->inner, out);
}

static const rd_store_ops TENANT_OPS = {
    .name = "tenant",
    .admit = t_admit,
    .record = t_record,
    .record_call = t_record_call,
    .stats = t_stats,
    .budget = t_budget,
    .latency = t_latency,
    .learn_link = t_learn_link,
    .learn_stats = t_learn_stats,
    .force = t_force,
    .get = t_get,
    .list = t_list,
    .claim_outcome = t_claim_outcome,
    .turn_append = t_turn_append,
    .turn_touch = t_turn_touch,
    .turn_read = t_turn_read,
    .precheck = t_precheck,
    .evict = t_evict,
    .set_change_listener = NULL,
    .destroy = t_destroy,
    .report = t_report,
};

int rd_tenant_store_init(rd_tenant_store *t, rd_store *inner, const char *tenant,
                         size_t max_tools, size_t max_turns, rd_status *st)
{
    size_t n = strlen(tenant);
    if (n == 0 || n > RD_TENANT_ID_MAX || strchr(tenant, '/'))
        return rd_status_set(st, RD_ERR_INVALID, "tenant: 1..%d bytes without '/'",
                             RD_TENANT_ID_MAX);
    *t = (rd_tenant_store){.base = {.ops = &TENANT_OPS, .limits = inner->limits},
                           .inner = inner, .max_tools = max_tools, .max_turns = max_turns};
    memcpy(t->prefix, tenant, n);
    t->prefix[n] = '/';
    t->prefix[n + 1] = '\0';
    t->prefix_len = n + 1;
    return RD_OK;
}

bool rd_tenant_split(const char *key, char *tenant, const char **rest)
{
    const char *slash = strchr(key, '/');
    if (!slash || slash == key || (size_t)(slash - key) > RD_TENANT_ID_MAX)
        return false;
    memcpy(tenant, key, (size_t)(slash - key));
    tenant[slash - key] = '\0';
    *rest = slash + 1;
    return true;
}
