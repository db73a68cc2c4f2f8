/* The resilient store wrapper (see resilient.h): a small breaker of the
 * service's own around the primary store, the fallback answering while it
 * is open, and a health-check thread that closes it again. */
#include "store/resilient.h"
#include "platform/clock.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#define RD_RES_DEFAULT_THRESHOLD 2
#define RD_RES_DEFAULT_PROBE_MS 500
#define RD_RES_HEALTH_KEY "__recoveryd_health__"

typedef struct resilient_store {
    rd_store base;               /* first, so rd_store * converts */
    rd_store *primary;           /* owned */
    rd_store *fallback;          /* owned */
    rd_resilience_options opt;
    atomic_bool degraded;
    atomic_uint failures_in_row;
    atomic_uint_fast64_t errors;
    pthread_mutex_t lock;        /* guards stopping, with wake */
    pthread_cond_t wake;
    bool stopping;
    pthread_t prober;
} resilient_store;

static const rd_store_ops resilient_ops;

static resilient_store *as_resilient(rd_store *s)
{
    return (resilient_store *)s;
}

static bool is_outage(int rc)
{
    return rc == RD_ERR_UNAVAILABLE || rc == RD_ERR_DEADLINE;
}

/* Whether to try the primary for this call. */
static bool use_primary(resilient_store *z)
{
    return !atomic_load(&z->degraded);
}

/* An answer from the primary's own cache or batch did not reach its
 * server: it neither ends a run of failures nor adds to one, so local
 * answers interleaved with failing calls cannot delay the trip. */
static void primary_answered(resilient_store *z, rd_status *st)
{
    if (!rd_store_take_local_answer(st))
        atomic_store(&z->failures_in_row, 0);
}

/* Clears what the primary reports about its answer before asking it. */
static void before_primary(rd_status *st)
{
    rd_store_clear_local_answer(st);
    if (st)
        st->store_partial = false;
}

/* The primary failed this call: count it, maybe trip, and answer from the
 * fallback. A failure of part of the primary (one Redis Cluster node: the
 * rest still answers) is answered from the fallback without counting
 * towards the trip, so the keys the other nodes serve stay shared. */
static void primary_failed(resilient_store *z, rd_status *st)
{
    (void)rd_store_take_local_answer(st);
    atomic_fetch_add(&z->errors, 1);
    bool partial = st && st->store_partial;
    if (st)
        st->store_partial = false;
    if (!partial && atomic_fetch_add(&z->failures_in_row, 1) + 1 >= z->opt.failure_threshold)
        atomic_store(&z->degraded, true);
    if (st)
        st->store_degraded = true;
}

static void from_fallback(rd_status *st)
{
    if (st)
        st->store_degraded = true;
}

/* ---- the operations: primary first, fallback on an outage ---- */

/* Every operation but list, turn_read and evict (which need more care, see
 * them) forwards the same way: the primary first, the fallback on an
 * outage. State written to the fallback during an outage is this replica's
 * own (docs/REDIS.md, docs/FLEET.md). */
#define RZ_FORWARD(s, op, ...)                                                  \
    do {                                                                        \
        resilient_store *z_ = as_resilient(s);                                  \
        if (use_primary(z_)) {                                                  \
            before_primary(st);                                                 \
            int rc_ = z_->primary->ops->op(z_->primary, __VA_ARGS__);           \
            if (!is_outage(rc_)) {                                              \
                primary_answered(z_, st);                                       \
                return rc_;                                                     \
            }                                                                   \
            primary_failed(z_, st);                                             \
        } else {                                                                \
            from_fallback(st);                                                  \
        }                                                                       \
        return z_->fallback->ops->op(z_->fallback, __VA_ARGS__);                \
    } while (0)

static int rz_admit(rd_store *s, const char *tool_id, const rd_breaker_policy *p,
                    int64_t now_ms, int64_t lease_ms, rd_store_result *out, rd_status *st)
{
    RZ_FORWARD(s, admit, tool_id, p, now_ms, lease_ms, out, st);
}

static int rz_record(rd_store *s, const char *tool_id, const rd_breaker_policy *p,
                     int64_t now_ms, rd_outcome outcome, uint64_t permit_token,
                     rd_store_result *out, rd_status *st)
{
    RZ_FORWARD(s, record, tool_id, p, now_ms, outcome, permit_token, out, st);
}


static int rz_record_call(rd_store *s, const char *tool_id, const rd_breaker_policy *p,
                          int64_t now_ms, const rd_call_report *call, rd_store_result *out,
                          rd_status *st)
{
    RZ_FORWARD(s, record_call, tool_id, p, now_ms, call, out, st);
}

static int rz_stats(rd_store *s, const char *tool_id, const rd_breaker_policy *p,
                    int64_t now_ms, rd_breaker *breaker, rd_breaker_evidence *evidence,
                    bool *found, rd_status *st)
{
    RZ_FORWARD(s, stats, tool_id, p, now_ms, breaker, evidence, found, st);
}

static int rz_budget(rd_store *s, const char *tool_id, const rd_retry_budget_policy *p,
                     int64_t now_ms, rd_budget_op op, rd_budget_result *out, rd_status *st)
{
    RZ_FORWARD(s, budget, tool_id, p, now_ms, op, out, st);
}

static int rz_latency(rd_store *s, const char *tool_id, int64_t window_ms, int64_t now_ms,
                      int64_t sample_ms, rd_latency_hist *out, rd_status *st)
{
    RZ_FORWARD(s, latency, tool_id, window_ms, now_ms, sample_ms, out, st);
}

static int rz_learn_link(rd_store *s, const char *tool_id, const char *link,
                         const char *signature_id, rd_learn_settle settle, int64_t now_ms,
                         rd_status *st)
{
    RZ_FORWARD(s, learn_link, tool_id, link, signature_id, settle, now_ms, st);
}

static int rz_learn_stats(rd_store *s, const char *tool_id, const char *signature_id,
                          int64_t now_ms, rd_learn_stats *out, rd_status *st)
{
    RZ_FORWARD(s, learn_stats, tool_id, signature_id, now_ms, out, st);
}

static int rz_force(rd_store *s, const char *tool_id, rd_force_mode mode, int64_t now_ms,
                    int64_t ttl_ms, rd_store_result *out, rd_status *st)
{
    RZ_FORWARD(s, force, tool_id, mode, now_ms, ttl_ms, out, st);
}

static int rz_get(rd_store *s, const char *tool_id, int64_t now_ms, rd_breaker *out,
                  bool *found, rd_status *st)
{
    RZ_FORWARD(s, get, tool_id, now_ms, out, found, st);
}

typedef struct counting_visit {
    rd_store_visit visit;
    void *ctx;
    size_t visited;
} counting_visit;

static int count_and_visit(void *arg, const char *tool_id, const rd_breaker *b)
{
    counting_visit *c = arg;
    c->visited++;
    return c->visit(c->ctx, tool_id, b);
}

/* A primary failing before its first visit is answered by the fallback;
 * one failing part-way returns its error (visiting again from the
 * fallback would show some tools twice). */
static int rz_list(rd_store *s, int64_t now_ms, rd_store_visit visit, void *ctx, rd_status *st)
{
    resilient_store *z = as_resilient(s);
    if (use_primary(z)) {
        counting_visit c = {.visit = visit, .ctx = ctx};
        before_primary(st);
        int rc = z->primary->ops->list(z->primary, now_ms, count_and_visit, &c, st);
        if (!is_outage(rc)) {
            primary_answered(z, st);
            return rc;
        }
        primary_failed(z, st);
        if (c.visited)
            return rc;
    } else {
        from_fallback(st);
    }
    return z->fallback->ops->list(z->fallback, now_ms, visit, ctx, st);
}

static int rz_claim_outcome(rd_store *s, const char *outcome_id, int64_t now_ms,
                            bool *duplicate, rd_status *st)
{
    RZ_FORWARD(s, claim_outcome, outcome_id, now_ms, duplicate, st);
}

static int rz_turn_append(rd_store *s, const char *turn_id, rd_trace_event *events, size_t n,
                          int64_t now_ms, int64_t *started_at_ms, rd_status *st)
{
    RZ_FORWARD(s, turn_append, turn_id, events, n, now_ms, started_at_ms, st);
}

static int rz_turn_touch(rd_store *s, const char *turn_id, int64_t now_ms,
                         int64_t *started_at_ms, rd_status *st)
{
    RZ_FORWARD(s, turn_touch, turn_id, now_ms, started_at_ms, st);
}

/* A turn unknown to the primary may have been written locally during an
 * outage: the fallback is asked before answering NOT_FOUND. */
static int rz_turn_read(rd_store *s, const char *turn_id, int64_t now_ms,
                        rd_trace_event **events, size_t *n, int64_t *started_at_ms,
                        rd_status *st)
{
    resilient_store *z = as_resilient(s);
    if (use_primary(z)) {
        before_primary(st);
        int rc = z->primary->ops->turn_read(z->primary, turn_id, now_ms, events, n,
                                            started_at_ms, st);
        if (!is_outage(rc)) {
            primary_answered(z, st);
            if (rc != RD_ERR_NOT_FOUND)
                return rc;
            int local = z->fallback->ops->turn_read(z->fallback, turn_id, now_ms, events, n,
                                                    started_at_ms, st);
            return local == RD_OK ? RD_OK : rc;
        }
        primary_failed(z, st);
    } else {
        from_fallback(st);
    }
    return z->fallback->ops->turn_read(z->fallback, turn_id, now_ms, events, n, started_at_ms,
                                       st);
}

/* Both: the fallback's memory must stay bounded whatever the primary does. */
/* A limit counted in the primary is shared by every replica. During an
 * outage only the caller can count (engine/tenant.h): the fallback's own
 * count if it has one, else RD_ERR_UNAVAILABLE says so. */
static int rz_quota(rd_store *s, const char *set, const char *member, size_t max,
                    int64_t now_ms, int64_t ttl_ms, rd_status *st)
{
    resilient_store *z = as_resilient(s);
    if (!z->primary->ops->quota)
        return rd_status_set(st, RD_ERR_UNAVAILABLE, "store: limits counted by each replica");
    if (use_primary(z)) {
        before_primary(st);
        int rc = z->primary->ops->quota(z->primary, set, member, max, now_ms, ttl_ms, st);
        if (!is_outage(rc)) {
            primary_answered(z, st);
            return rc;
        }
        primary_failed(z, st);
    } else {
        from_fallback(st);
    }
    if (z->fallback->ops->quota)
        return z->fallback->ops->quota(z->fallback, set, member, max, now_ms, ttl_ms, st);
    return rd_status_set(st, RD_ERR_UNAVAILABLE, "store: degraded: limits counted by this replica");
}

static size_t rz_evict(rd_store *s, int64_t now_ms)
{
    resilient_store *z = as_resilient(s);
    size_t dropped = z->fallback->ops->evict(z->fallback, now_ms);
    if (use_primary(z))
        dropped += z->primary->ops->evict(z->primary, now_ms);
    return dropped;
}

/* ---- the health check ---- */

typedef enum { PROBE_FAILED, PROBE_NO_ANSWER, PROBE_HEALTHY } probe_result;

/* One read through the primary. A read its cache answered did not reach
 * the server, so it tells nothing either way. */
static probe_result probe_primary(resilient_store *z)
{
    rd_breaker b;
    bool found;
    rd_status st;
    rd_status_clear(&st);
    int rc = z->primary->ops->get(z->primary, RD_RES_HEALTH_KEY, rd_clock_unix_ms(), &b, &found,
                                  &st);
    if (rd_store_take_local_answer(&st))
        return PROBE_NO_ANSWER;
    return rc == RD_OK ? PROBE_HEALTHY : PROBE_FAILED;
}

/* Sleeps probe_interval_ms; false when the store is being destroyed. */
static bool wait_interval(resilient_store *z)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    int64_t ns = until.tv_nsec + (z->opt.probe_interval_ms % 1000) * 1000000;
    until.tv_sec += z->opt.probe_interval_ms / 1000 + ns / 1000000000;
    until.tv_nsec = ns % 1000000000;
    pthread_mutex_lock(&z->lock);
    while (!z->stopping && pthread_cond_timedwait(&z->wake, &z->lock, &until) == 0)
        ;
    bool go_on = !z->stopping;
    pthread_mutex_unlock(&z->lock);
    return go_on;
}

static void *prober_main(void *arg)
{
    resilient_store *z = arg;
    uint32_t good = 0;
    while (wait_interval(z)) {
        if (!atomic_load(&z->degraded)) {
            good = 0;
            continue;
        }
        probe_result probe = probe_primary(z);
        if (probe == PROBE_NO_ANSWER)
            continue;
        if (probe == PROBE_FAILED) {
            good = 0;
            atomic_fetch_add(&z->errors, 1);
            continue;
        }
        if (++good >= z->opt.recover_after) {
            atomic_store(&z->failures_in_row, 0);
            atomic_store(&z->degraded, false);
            good = 0;
        }
    }
    return NULL;
}

/* ---- lifetime ---- */

/* Changes in the shared store are heard through the primary; while
 * degraded there are none to hear (the fallback is local). */
static void rz_set_change_listener(rd_store *s, rd_store_change_fn fn, void *ctx)
{
    rd_store *primary = as_resilient(s)->primary;
    if (primary->ops->set_change_listener)
        primary->ops->set_change_listener(primary, fn, ctx);
}

static void rz_destroy(rd_store *s)
{
    resilient_store *z = as_resilient(s);
    pthread_mutex_lock(&z->lock);
    z->stopping = true;
    pthread_cond_signal(&z->wake);
    pthread_mutex_unlock(&z->lock);
    pthread_join(z->prober, NULL);
    pthread_cond_destroy(&z->wake);
    pthread_mutex_destroy(&z->lock);
    rd_store_destroy(z->primary);
    rd_store_destroy(z->fallback);
    free(z);
}

/* The primary's report, with the wrapper's own state and error count. */
static void rz_report(rd_store *s, rd_store_report *out)
{
    resilient_store *z = as_resilient(s);
    if (z->primary->ops->report)
        z->primary->ops->report(z->primary, out);
    out->degraded = atomic_load(&z->degraded);
    out->errors = atomic_load(&z->errors);
}

static const rd_store_ops resilient_ops = {
    .name = "resilient",
    .admit = rz_admit,
    .record = rz_record,
    .record_call = rz_record_call,
    .stats = rz_stats,
    .budget = rz_budget,
    .latency = rz_latency,
    .learn_link = rz_learn_link,
    .learn_stats = rz_learn_stats,
    .force = rz_force,
    .get = rz_get,
    .list = rz_list,
    .claim_outcome = rz_claim_outcome,
    .turn_append = rz_turn_append,
    .turn_touch = rz_turn_touch,
    .turn_read = rz_turn_read,
    .quota = rz_quota,
    .evict = rz_evict,
    .destroy = rz_destroy,
    .report = rz_report,
    .set_change_listener = rz_set_change_listener,
};

static rd_resilience_options with_defaults(const rd_resilience_options *o)
{
    rd_resilience_options d = o ? *o : (rd_resilience_options){0};
    if (d.failure_threshold == 0)
        d.failure_threshold = RD_RES_DEFAULT_THRESHOLD;
    if (d.probe_interval_ms <= 0)
        d.probe_interval_ms = RD_RES_DEFAULT_PROBE_MS;
    if (d.recover_after == 0)
        d.recover_after = 1;
    return d;
}

rd_store *rd_store_resilient_new(rd_store *primary, rd_store *fallback,
                                 const rd_resilience_options *o)
{
    if (!primary || !fallback)
        return NULL;
    resilient_store *z = calloc(1, sizeof *z);
    if (!z)
        return NULL;
    z->base.ops = &resilient_ops;
    z->base.limits = primary->limits;
    z->primary = primary;
    z->fallback = fallback;
    z->opt = with_defaults(o);
    atomic_init(&z->degraded, false);
    atomic_init(&z->failures_in_row, 0);
    atomic_init(&z->errors, 0);
    pthread_mutex_init(&z->lock, NULL);
    pthread_cond_init(&z->wake, NULL);
    if (pthread_create(&z->prober, NULL, prober_main, z) != 0) {
        pthread_cond_destroy(&z->wake);
        pthread_mutex_destroy(&z->lock);
        free(z);
        return NULL;
    }
    return &z->base;
}

bool rd_store_degraded(rd_store *s)
{
    return s && s->ops == &resilient_ops && atomic_load(&as_resilient(s)->degraded);
}

uint64_t rd_store_error_count(rd_store *s)
{
    if (!s || s->ops != &resilient_ops)
        return 0;
    return atomic_load(&as_resilient(s)->errors);
}

