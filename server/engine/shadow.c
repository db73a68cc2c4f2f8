/* Shadow mode: a tool (or, through the defaults, every tool) whose `mode`
 * is shadow is decided exactly as in enforce mode — breaker transitions,
 * retry budgets, trace events and metrics all see the enforce decision —
 * and only the answer the executor acts on is the permissive one:
 *
 *   admission refused by the tool's breaker (FAIL_FAST, USE_ALTERNATIVE)
 *       -> PROCEED
 *   failed attempt refused by the breaker (FAIL_FAST, USE_ALTERNATIVE), or
 *   GIVE_UP on the retry time or the retry budget
 *       -> RETRY after the usual backoff, when an attempt remains under the
 *          tool's max_attempts and the wait fits the turn's remaining time
 *
 * Everything else (cascades, ESCALATE on a permanent error, PARTIAL at the
 * turn deadline, GIVE_UP once max_attempts is spent) is answered as
 * enforced: those describe the call, not a threshold being tried out.
 * shadow_action / shadow_reason carry the enforce decision in every shadow
 * answer, changed or not, so an executor can tell shadow from enforce. */
#include "engine/engine_internal.h"

#include <string.h>

/* Whether another attempt is within the tool's own limits, and its wait. */
static bool retry_within_limits(decide_call *c, retry_wait *wait)
{
    if (c->attempt >= c->cfg->retry.max_attempts || !c->out->has_classification)
        return false;
    *wait = eng_retry_delay(c, &c->out->classification.classification);
    return !c->budget.known || wait->ms < c->budget.remaining_ms;
}

/* The permissive action for the decision made; the decision's own when
 * shadow mode leaves it. */
static rd_action permissive(decide_call *c, retry_wait *wait)
{
    rd_action a = c->out->action;
    bool breaker_refusal =
        c->breaker_refused && (a == RD_ACTION_FAIL_FAST || a == RD_ACTION_USE_ALTERNATIVE);
    if (!c->in->error)
        return breaker_refusal ? RD_ACTION_PROCEED : a;
    if ((breaker_refusal || a == RD_ACTION_GIVE_UP) && retry_within_limits(c, wait))
        return RD_ACTION_RETRY;
    return a;
}

int eng_apply_shadow(decide_call *c)
{
    rd_decision *d = c->out;
    d->shadow_action = d->action;
    d->shadow_reason = d->reason;
    retry_wait wait = {0, 0};
    rd_action answer = permissive(c, &wait);
    if (answer == d->action)
        return RD_OK;
    d->reason = ARENA_JOIN(c->ctx->arena, txt("shadow mode: enforce mode answers "),
                           txt(rd_action_name(d->action)), txt(" ("), txt(eng_safe_str(d->reason)),
                           txt(")"));
    if (!d->reason)
        return rd_status_set(c->st, RD_ERR_NOMEM, "reason: out of memory");
    d->action = answer;
    d->alternative_tool_id = "";
    /* The tool is used after all: no dependent is skipped or defaulted in
     * this answer (the turn still records the enforce cascade). */
    d->cascade = NULL;
    d->n_cascade = 0;
    if (answer == RD_ACTION_PROCEED) {
        d->has_classification = false; /* the admission's "Tool Not Called" text */
        d->classification = (rd_classify_result){0};
        return RD_OK;
    }
    d->delay_ms = wait.ms;
    d->delay_us = wait.us;
    /* A RETRY answer carries no text for the model (failure.c). */
    d->classification.llm_message = "";
    d->classification.llm_message_len = 0;
    return RD_OK;
}
