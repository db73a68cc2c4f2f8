/* Latency-aware retries: each tool's recent latency distribution (the
 * store's, shared by every replica) fed by RecordOutcome's latency_ms, and
 * read by Decide so that a retry that cannot finish within the turn is not
 * offered (see engine_internal.h). Only for tools whose `latency.enabled`
 * is set: the others cost no store operation. */
#include "engine/engine_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

int eng_latency_record(const rd_engine *e, const rd_tool_config *cfg, const char *tool_id,
                       int64_t latency_ms, int64_t now_ms, rd_status *st)
{
    if (!cfg->latency.enabled || latency_ms <= 0)
        return RD_OK; /* 0 = not given (recovery.proto) */
    rd_latency_hist h;
    return e->store->ops->latency(e->store, tool_id, cfg->latency.window_ms, now_ms, latency_ms,
                                  &h, st);
}

int eng_latency_read(const rd_engine *e, const rd_tool_config *cfg, const char *tool_id,
                     int64_t now_ms, rd_latency_hist *h, bool *enough, rd_status *st)
{
    *h = (rd_latency_hist){0};
    *enough = false;
    if (!cfg->latency.enabled)
        return RD_OK;
    int rc = e->store->ops->latency(e->store, tool_id, cfg->latency.window_ms, now_ms, -1, h,
                                    st);
    *enough = rc == RD_OK && rd_latency_total(h) >= cfg->latency.min_samples;
    return rc;
}

/* The tool's p90 in ms, or -1 while it has too few samples (or none kept). */
static int p90_of(decide_call *c, const char *tool_id, const rd_tool_config *cfg, int64_t *p90)
{
    rd_latency_hist h;
    bool enough;
    int rc = eng_latency_read(c->e, cfg, tool_id, c->ctx->now_ms, &h, &enough, c->st);
    *p90 = rc == RD_OK && enough ? rd_latency_percentile(&h, 0.9) : -1;
    return rc;
}

/* An alternative, in manifest order, whose own p90 fits what is left of
 * the turn and whose breaker admits it. */
static int alternative_that_fits(decide_call *c, const char *why, bool *found)
{
    *found = false;
    for (size_t i = 0; i < c->cfg->n_alternatives && !*found; i++) {
        const char *alt = c->cfg->alternatives[i];
        int64_t p90;
        int rc = p90_of(c, alt, rd_policy_tool_or_defaults(c->e->policy, alt), &p90);
        if (rc != RD_OK)
            return rc;
        if (p90 >= 0 && p90 < c->budget.remaining_ms &&
            (rc = eng_offer_alternative(c, why, alt, found)) != RD_OK)
            return rc;
    }
    return RD_OK;
}

int eng_latency_deadline(decide_call *c, retry_wait wait, bool *decided)
{
    *decided = false;
    if (!c->cfg->latency.enabled || !c->budget.known)
        return RD_OK;
    int64_t p90;
    int rc = p90_of(c, c->in->tool_id, c->cfg, &p90);
    if (rc != RD_OK || p90 < 0 || wait.ms + p90 <= c->budget.remaining_ms)
        return rc;
    const char *why = rd_arena_printf(c->ctx->arena,
                                      "retry cannot finish before the turn deadline (%" PRId64
                                      " ms delay + %" PRId64 " ms p90 latency > %" PRId64
                                      " ms left)", wait.ms, p90, c->budget.remaining_ms);
    if (!why)
        return rd_status_set(c->st, RD_ERR_NOMEM, "reason: out of memory");
    *decided = true;
    bool found;
    if ((rc = alternative_that_fits(c, why, &found)) != RD_OK || found)
        return rc;
    eng_act_partial(c, why, false);
    return RD_OK;
}

int eng_latency_timeout(decide_call *c)
{
    const rd_latency_policy *p = &c->cfg->latency;
    rd_action a = c->out->action;
    if (!p->enabled || p->timeout_factor <= 0 ||
        (a != RD_ACTION_PROCEED && a != RD_ACTION_RETRY))
        return RD_OK;
    rd_latency_hist h;
    bool enough;
    int rc = eng_latency_read(c->e, c->cfg, c->in->tool_id, c->ctx->now_ms, &h, &enough, c->st);
    if (rc != RD_OK || !enough)
        return rc;
    double t = ceil((double)rd_latency_percentile(&h, 0.99) * p->timeout_factor);
    int64_t ms = t >= (double)c->cfg->timeout_ms ? c->cfg->timeout_ms : (int64_t)t;
    if (ms < p->timeout_min_ms)
        ms = p->timeout_min_ms;
    c->out->timeout_ms = ms < c->cfg->timeout_ms ? ms : c->cfg->timeout_ms;
    return RD_OK;
}
