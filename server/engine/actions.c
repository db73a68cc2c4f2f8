/* The actions of one Decide call: admission through the store, retry
 * budgets, alternatives, and each action's answer and events. */
#include "engine/engine_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the turn budget ---- */

/* The caller's figure wins; otherwise the configured per-turn budget counted
 * from the turn's first appearance; no turn, no limit. */
int eng_turn_budget_get(const rd_engine *e, const rd_decide_input *in, int64_t now_ms,
                        turn_budget *out, rd_status *st)
{
    *out = (turn_budget){0};
    if (in->has_turn_remaining) {
        *out = (turn_budget){.known = true, .remaining_ms = in->turn_remaining_ms};
        return RD_OK;
    }
    if (!in->turn_id || !in->turn_id[0])
        return RD_OK;
    int64_t started_at_ms;
    int rc = e->store->ops->turn_touch(e->store, in->turn_id, now_ms, &started_at_ms, st);
    if (rc != RD_OK)
        return rc;
    out->known = true;
    out->remaining_ms = e->policy->turn_timeout_ms - (now_ms - started_at_ms);
    return RD_OK;
}

rd_trace_event *eng_call_event(decide_call *c, rd_event_type type)
{
    rd_trace_event *ev = eng_event_add_text(&c->events, type, c->tool);
    if (ev && c->in->error)
        ev->retry_count = c->attempt - 1;
    return ev;
}

/* A half-open probe's permit lasts as long as its call can: the wait
 * before it (a retry's delay), the tool's timeout, and this margin for the
 * report to arrive. A holder that never reports frees the tool then. */
#define PROBE_LEASE_MARGIN_MS 250

int eng_admit_after(decide_call *c, const char *tool_id, const rd_tool_config *cfg,
                    int64_t delay_ms, rd_store_result *res)
{
    int64_t lease = cfg->timeout_ms + PROBE_LEASE_MARGIN_MS + (delay_ms > 0 ? delay_ms : 0);
    return c->e->store->ops->admit(c->e->store, tool_id, &cfg->breaker, c->ctx->now_ms, lease,
                                   res, c->st);
}

int eng_admit(decide_call *c, const char *tool_id, const rd_tool_config *cfg,
              rd_store_result *res)
{
    return eng_admit_after(c, tool_id, cfg, 0, res);
}

/* ---- retry budgets ---- */

int eng_budget_op(decide_call *c, const char *tool_id, const rd_tool_config *cfg,
                  rd_budget_op op, rd_budget_result *res)
{
    *res = (rd_budget_result){.granted = true};
    if (!cfg->retry_budget.enabled)
        return RD_OK;
    return c->e->store->ops->budget(c->e->store, tool_id, &cfg->retry_budget, c->ctx->now_ms,
                                    op, res, c->st);
}

int eng_count_request(decide_call *c, const char *tool_id, const rd_tool_config *cfg)
{
    rd_budget_result res;
    return eng_budget_op(c, tool_id, cfg, RD_BUDGET_COUNT_REQUEST, &res);
}

/* ---- alternatives ---- */

#define RANKED_MAX 64

typedef struct ranked_alternative {
    size_t index;                /* in the manifest's list */
    int state_rank;              /* 0 CLOSED, 1 HALF_OPEN, 2 OPEN or held open */
    double success_rate;         /* in the call window; 1 with no calls */
} ranked_alternative;

static int compare_ranked(const void *a, const void *b)
{
    const ranked_alternative *x = a, *y = b;
    if (x->state_rank != y->state_rank)
        return x->state_rank < y->state_rank ? -1 : 1;
    if (x->success_rate != y->success_rate)
        return x->success_rate > y->success_rate ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int state_rank(rd_breaker_status status)
{
    return status == RD_BREAKER_CLOSED ? 0 : status == RD_BREAKER_HALF_OPEN ? 1 : 2;
}

/* The alternatives in the order to try them: the manifest's, or ranked by
 * live state (docs/FLEET.md). Returns how many were written to order. */
static int alternatives_in_order(decide_call *c, size_t *order, size_t *n_order)
{
    size_t n = c->cfg->n_alternatives < RANKED_MAX ? c->cfg->n_alternatives : RANKED_MAX;
    ranked_alternative ranked[RANKED_MAX];
    for (size_t i = 0; i < n; i++) {
        ranked[i] = (ranked_alternative){.index = i, .success_rate = 1.0};
        if (c->cfg->alternatives_ranking != RD_RANKING_LIVE || n < 2)
            continue;
        const char *alt = c->cfg->alternatives[i];
        const rd_tool_config *alt_cfg = rd_policy_tool_or_defaults(c->e->policy, alt);
        rd_breaker b;
        rd_breaker_evidence ev;
        bool found;
        int rc = c->e->store->ops->stats(c->e->store, alt, &alt_cfg->breaker, c->ctx->now_ms,
                                         &b, &ev, &found, c->st);
        if (rc != RD_OK)
            return rc;
        ranked[i].state_rank = state_rank(rd_breaker_status_at(&b, c->ctx->now_ms));
        rd_breaker_status scoped;
        if (eng_scoped(alt_cfg, c->in->n_scope)) {
            if ((rc = eng_scope_worst_state(c, alt, alt_cfg, &scoped)) != RD_OK)
                return rc;
            if (state_rank(scoped) > ranked[i].state_rank)
                ranked[i].state_rank = state_rank(scoped);
        }
        if (ev.calls > 0)
            ranked[i].success_rate = (double)(ev.calls - ev.failures) / (double)ev.calls;
    }
    if (c->cfg->alternatives_ranking == RD_RANKING_LIVE && n > 1)
        qsort(ranked, n, sizeof ranked[0], compare_ranked);
    for (size_t i = 0; i < n; i++)
        order[i] = ranked[i].index;
    *n_order = n;
    return RD_OK;
}

/* Offers `alt` if its own breaker (and, for a scoped alternative, each of
 * its keys at the call's scope) admits a call: USE_ALTERNATIVE, counted
 * against its retry budget, with a probe permit when the key that
 * answered is half-open. */
int eng_offer_alternative(decide_call *c, const char *why, const char *alt, bool *found)
{
    *found = false;
    if (strcmp(alt, c->in->tool_id) == 0)
        return RD_OK;
    const rd_tool_config *alt_cfg = rd_policy_tool_or_defaults(c->e->policy, alt);
    rd_store_result res;
    const char *key = alt;
    /* an alternative keyed by the same scope is admitted through its keys:
     * its provider's open breaker stops it as it would stop a call to it */
    int rc = eng_scoped(alt_cfg, c->in->n_scope) ? eng_scope_admit_tool(c, alt, alt_cfg, &res, &key)
                                                 : eng_admit(c, alt, alt_cfg, &res);
    if (rc != RD_OK || res.admission == RD_ADMIT_NO)
        return rc;
    if (!c->out->duplicate && (rc = eng_count_request(c, alt, alt_cfg)) != RD_OK)
        return rc;
    c->out->action = RD_ACTION_USE_ALTERNATIVE;
    c->out->alternative_tool_id = rd_arena_strdup(c->ctx->arena, alt);
    c->out->timeout_ms = alt_cfg->timeout_ms;
    if (res.admission == RD_ADMIT_PROBE)
        c->out->permit_id = eng_format_permit(c->ctx->arena, res.breaker.generation,
                                              res.permit_token);
    c->out->reason = ARENA_JOIN(c->ctx->arena, txt(why), txt(": using alternative "), txt(alt));
    rd_trace_event *ev = eng_call_event(c, RD_EV_ALTERNATIVE_USED);
    if (ev)
        EVENT_DETAIL(&c->events, ev, txt("Used alternative tool "), txt(alt), txt(" for "),
                     txt(c->in->tool_id));
    *found = true;
    return RD_OK;
}

/* The first alternative (in ranking order) whose own breaker admits a
 * call; then, for a tool that is itself an alternative, the ones its
 * primary lists after it (engine/step.h: the step goes on down its list).
 * *found = false when there is none. */
int eng_try_alternative(decide_call *c, const char *why, bool *found)
{
    *found = false;
    size_t order[RANKED_MAX], n_order;
    int rc = alternatives_in_order(c, order, &n_order);
    for (size_t k = 0; rc == RD_OK && !*found && k < n_order; k++)
        rc = eng_offer_alternative(c, why, c->cfg->alternatives[order[k]], found);
    const char *next[RD_STEP_SUCCESSORS_MAX];
    size_t n_next = rc == RD_OK && !*found ? rd_step_successors(c->e->policy, c->in->tool_id,
                                                                next, RD_STEP_SUCCESSORS_MAX)
                                           : 0;
    for (size_t k = 0; rc == RD_OK && !*found && k < n_next; k++)
        rc = eng_offer_alternative(c, why, next[k], found);
    return rc;
}

static void act_fail_fast(decide_call *c, const char *why)
{
    c->out->action = RD_ACTION_FAIL_FAST;
    c->out->reason = why;
    rd_trace_event *ev = eng_call_event(c, RD_EV_FAIL_FAST);
    if (ev)
        EVENT_DETAIL(&c->events, ev, txt("Circuit breaker open for "), txt(c->in->tool_id),
                     txt(": failing fast"));
}

/* Why an OPEN breaker stops the call. When this failure was the last
 * attempt and opened the breaker (the defaults make both 5), the attempts
 * running out is said first: that is what ended the call. */
static const char *open_reason(decide_call *c)
{
    if (c->breaker_key != c->in->tool_id && strcmp(c->breaker_key, c->in->tool_id) != 0) {
        /* a scoped breaker: say which */
        const char *why = ARENA_JOIN(c->ctx->arena, txt("circuit open for "),
                                     txt(c->breaker_key));
        return why ? why : "circuit open";
    }
    if (!c->opened_now || c->attempt < c->cfg->retry.max_attempts)
        return "circuit open";
    num_text limit;
    const char *why = ARENA_JOIN(c->ctx->arena, txt("max attempts ("),
                                 num(&limit, c->cfg->retry.max_attempts),
                                 txt(") reached and the circuit opened"));
    return why ? why : "circuit open";
}

int eng_act_alternative_or_fail_fast(decide_call *c)
{
    bool found;
    const char *why = open_reason(c);
    c->breaker_refused = true;
    int rc = eng_try_alternative(c, why, &found);
    if (rc == RD_OK && !found)
        act_fail_fast(c, why);
    return rc;
}

void eng_act_partial(decide_call *c, const char *reason, bool skipped)
{
    c->out->action = RD_ACTION_PARTIAL;
    c->out->reason = reason;
    rd_trace_event *ev = eng_call_event(c, RD_EV_TURN_TIMEOUT);
    if (ev)
        EVENT_DETAIL(&c->events, ev, txt(reason));
    if (skipped && (ev = eng_call_event(c, RD_EV_SKIPPED)))
        EVENT_DETAIL(&c->events, ev, txt("skipped: turn deadline reached"));
}

void eng_act_give_up(decide_call *c, const char *reason)
{
    c->out->action = RD_ACTION_GIVE_UP;
    c->out->reason = reason;
    rd_trace_event *ev = eng_call_event(c, RD_EV_GAVE_UP);
    if (ev)
        EVENT_DETAIL(&c->events, ev, txt("Gave up on "), txt(c->in->tool_id), txt(": "),
                     txt(eng_safe_str(reason)));
}

void eng_act_escalate(decide_call *c, const char *reason)
{
    c->out->action = RD_ACTION_ESCALATE;
    c->out->reason = reason;
    rd_trace_event *ev = eng_call_event(c, RD_EV_ESCALATED);
    if (ev)
        EVENT_DETAIL(&c->events, ev, txt("Escalated "), txt(c->in->tool_id), txt(": "),
                     txt(eng_safe_str(reason)));
}

void eng_act_proceed(decide_call *c, const rd_store_result *res)
{
    c->out->action = RD_ACTION_PROCEED;
    if (res->admission != RD_ADMIT_PROBE) {
        c->out->reason = "circuit closed";
        return;
    }
    c->out->reason = "circuit half-open: probe permit granted";
    c->out->permit_id = eng_format_permit(c->ctx->arena, res->breaker.generation,
                                          res->permit_token);
    rd_trace_event *ev = eng_call_event(c, RD_EV_CIRCUIT_HALF_OPENED);
    if (ev)
        EVENT_DETAIL(&c->events, ev, txt("Circuit breaker half-open for "), txt(c->in->tool_id),
                     txt(": probe permit granted"));
}

/* Said in a retry's reason when the failure streak alone would have opened
 * the breaker but too few executors reported failures. */
static piece quorum_note(const decide_call *c)
{
    if (!c->held_by_quorum)
        return txt("");
    num_text quorum;
    const char *note = ARENA_JOIN(c->ctx->arena,
                                  txt(" (breaker held closed: failures from fewer than "),
                                  num(&quorum, c->cfg->breaker.quorum_min_executors),
                                  txt(" executors)"));
    return txt(note ? note : "");
}

void eng_act_retry(decide_call *c, retry_wait wait)
{
    uint32_t max = c->cfg->retry.max_attempts;
    num_text attempt, retries, delay;
    piece attempt_text = num(&attempt, c->attempt);
    piece retries_text = num(&retries, max > 0 ? max - 1 : 0);
    c->out->action = RD_ACTION_RETRY;
    c->out->delay_ms = wait.ms;
    c->out->delay_us = wait.us;
    c->out->reason = ARENA_JOIN(c->ctx->arena, txt("transient error: retry "), attempt_text,
                                txt(" of "), retries_text, quorum_note(c));
    rd_trace_event *ev = eng_call_event(c, RD_EV_RETRY);
    if (!ev)
        return;
    ev->retry_count = c->attempt;
    EVENT_DETAIL(&c->events, ev, txt("retry "), attempt_text, txt(" of "), retries_text,
                 txt(" after "), num(&delay, wait.ms), txt(" ms"));
}
