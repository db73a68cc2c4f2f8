/* The tenant store (engine/tenant.h): the shared store seen through one
 * tenant's key prefix, with its limits. */
#include "engine/tenant.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain/recent_set.h"

/* ---- the counts of one tenant ---- */

struct rd_tenant_quota {
    char tenant[RD_TENANT_ID_MAX + 1];
    pthread_mutex_t lock;
    rd_recent_set tools, turns;  /* the count itself when the store cannot count; else
                                  * the keys the store counted lately */
    _Atomic uint64_t refused_tools, refused_turns;
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

/* Notes a key the store counted. The set only spares round trips, so
 * when it is full of keys still in use it starts again. */
static int note_counted(rd_recent_set *s, const char *key, size_t max, int64_t now_ms,
                        int64_t ttl_ms)
{
    int rc = rd_recent_set_use(s, key, max, now_ms, ttl_ms);
    if (rc == RD_ERR_EXHAUSTED) {
        rd_recent_set_clear(s);
        rc = rd_recent_set_use(s, key, max, now_ms, ttl_ms);
    }
    return rc;
}

/* A new key of the tenant within its limit: counted by the store (shared:
 * every replica sees the same count), and asked again for a key only after
 * an eighth of its idle time, so the store still sees each key used often
 * enough never to age out one in use (when keys never age out: asked once).
 * Counted by this process when the store cannot (a shared one in an
 * outage). */
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
    rd_tenant_quota *q = t->quota;
    rd_recent_set *seen = turn ? &q->turns : &q->tools;
    int64_t ttl = turn ? t->inner->limits.turn_ttl_ms : t->inner->limits.tool_idle_ttl_ms;
    int rc = RD_ERR_UNAVAILABLE;
    if (t->inner->ops->quota) {
        pthread_mutex_lock(&q->lock);
        bool known = rd_recent_set_used_within(seen, key, now_ms, ttl > 0 ? (ttl + 7) / 8 : 0);
        pthread_mutex_unlock(&q->lock);
        if (known)
            return RD_OK;
        char set[RD_TENANT_ID_MAX + 8];
        snprintf(set, sizeof set, "%s/%s", q->tenant, turn ? "turns" : "tools");
        rc = t->inner->ops->quota(t->inner, set, key, max, now_ms, ttl, st);
        if (rc == RD_OK) {
            pthread_mutex_lock(&q->lock);
            rc = note_counted(seen, key, max, now_ms, ttl);
            pthread_mutex_unlock(&q->lock);
        }
    }
    if (rc == RD_ERR_UNAVAILABLE || rc == RD_ERR_DEADLINE) {
        pthread_mutex_lock(&q->lock);
        rc = rd_recent_set_use(seen, key, max, now_ms, ttl);
        pthread_mutex_unlock(&q->lock);
    }
    if (rc == RD_ERR_EXHAUSTED) {
        atomic_fetch_add_explicit(turn ? &q->refused_turns : &q->refused_tools, 1,
                                  memory_order_relaxed);
        return rd_status_set(st, rc, "tenant '%s': %s (server.tenants[].%s) reached", q->tenant,
                             turn ? "live turns at max_turns" : "tracked breakers at max_tools",
                             turn ? "max_turns" : "max_tools");
    }
    if (rc == RD_ERR_NOMEM)
        return rd_status_set(st, rc, "tenant '%s': out of memory", q->tenant);
    return rc;
}

void rd_tenant_refusals_visit(rd_tenant_refusals_fn fn, void *ctx)
{
    pthread_mutex_lock(&quotas_lock);
    for (rd_tenant_quota *q = quotas; q; q = q->next)
        fn(ctx, q->tenant, atomic_load_explicit(&q->refused_tools, memory_order_relaxed),
           atomic_load_explicit(&q->refused_turns, memory_order_relaxed));
    pthread_mutex_unlock(&quotas_lock);
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
