/* Decide with an error: the failed attempt recorded against the breaker and
 * the answer to it (retry, alternative, fail fast, escalate, give up). */
#include "engine/engine_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Decide with an error: a failed attempt ---- */

/* Steps 2 and 4: claim the outcome id, then count the failure against the
 * breaker (unless this outcome was seen before). */
static int record_failure(decide_call *c, rd_retryability retryability)
{
    rd_store *s = c->e->store;
    const char *tool_id = c->breaker_key;
    int64_t now = c->ctx->now_ms;
    if (c->in->outcome_id && c->in->outcome_id[0]) {
        int rc = s->ops->claim_outcome(s, c->in->outcome_id, now, &c->out->duplicate, c->st);
        if (rc != RD_OK)
            return rc;
    }
    if (c->out->duplicate || c->breaker_untouched) {
        bool found;
        return s->ops->get(s, tool_id, now, &c->breaker, &found, c->st);
    }
    rd_outcome outcome = retryability == RD_PERMANENT ? RD_OUTCOME_PERMANENT_FAILURE
                                                      : RD_OUTCOME_TRANSIENT_FAILURE;
    rd_call_report call = {.outcome = outcome, .permit_token = c->permit_token,
                           .executor_id = eng_safe_str(c->in->executor_id), .latency_ms = -1};
    rd_store_result res;
    int rc = s->ops->record_call(s, tool_id, &c->cfg->breaker, now, &call, &res, c->st);
    if (rc != RD_OK)
        return rc;
    c->breaker = res.breaker;
    c->held_by_quorum = res.evidence.held_by_quorum;
    c->opened_now = res.transition == RD_TRANSITION_OPENED ||
                    res.transition == RD_TRANSITION_REOPENED;
    eng_note_transition(&c->events, tool_id, res.transition);
    return eng_count_request(c, c->in->tool_id, c->cfg);
}

static void error_events(decide_call *c, const rd_classification *cl)
{
    rd_trace_event *ev;
    if (cl->kind == RD_KIND_TIMEOUT && (ev = eng_call_event(c, RD_EV_TOOL_TIMEOUT))) {
        eng_event_error(&c->events, ev, c->in->error, cl);
        ev->timeout_ms = c->cfg->timeout_ms;
        eng_timeout_detail(&c->events, ev, c->in->tool_id, c->cfg->timeout_ms);
    }
    if ((ev = eng_call_event(c, RD_EV_TOOL_ERROR))) {
        eng_event_error(&c->events, ev, c->in->error, cl);
        EVENT_DETAIL(&c->events, ev, txt(rd_retryability_name(cl->retryability)),
                     txt(" error ("), txt(rd_category_name(cl->category)), txt(", rule "),
                     txt(eng_safe_str(cl->rule_id)), txt(")"));
    }
}

static int decide_permanent(decide_call *c, const rd_classification *cl)
{
    const char *why = ARENA_JOIN(c->ctx->arena, txt("permanent error: "),
                                 txt(rd_category_name(cl->category)));
    bool found;
    int rc = eng_try_alternative(c, why, &found);
    if (rc == RD_OK && !found)
        eng_act_escalate(c, why);
    return rc;
}

/* The jitter's random draw. A failure reported with an outcome_id draws
 * from that id, so a repeated report (the executor resending after a lost
 * answer) gets the delay of the first answer, as an idempotency key
 * should; distinct ids still spread uniformly. */
static double jitter_draw(decide_call *c)
{
    const char *id = c->in->outcome_id;
    if (!id || !id[0])
        return rd_rng_unit(c->ctx->rng);
    return (double)(rd_hash_text(id, UINT64_C(0x6a09e667f3bcc909)) >> 11) * 0x1.0p-53;
}

/* The delay before the next attempt: backoff with jitter, but never sooner
 * than a retry_after the service asked for. */
retry_wait eng_retry_delay(decide_call *c, const rd_classification *cl)
{
    int64_t us = rd_backoff_jittered_us(&c->cfg->retry, c->attempt, jitter_draw(c));
    int64_t retry_after_us = rd_ms_to_us(cl->retry_after_ms);
    if (retry_after_us > us)
        return (retry_wait){.ms = cl->retry_after_ms, .us = retry_after_us};
    return (retry_wait){.ms = rd_us_to_ms(us), .us = us};
}

/* The half-open breaker lets the retry through only as its one probe. */
static int retry_as_probe(decide_call *c, retry_wait wait)
{
    rd_store_result res;
    int rc = eng_admit_after(c, c->breaker_key, c->cfg, wait.ms, &res);
    if (rc != RD_OK)
        return rc;
    c->breaker = res.breaker;
    if (res.admission == RD_ADMIT_NO)
        return eng_act_alternative_or_fail_fast(c);
    if (res.admission == RD_ADMIT_PROBE) {
        c->out->permit_id = eng_format_permit(c->ctx->arena, res.breaker.generation,
                                              res.permit_token);
        rd_trace_event *ev = eng_call_event(c, RD_EV_CIRCUIT_HALF_OPENED);
        if (ev)
            EVENT_DETAIL(&c->events, ev, txt("Circuit breaker half-open for "), txt(c->in->tool_id),
                         txt(": probe permit granted"));
    }
    eng_act_retry(c, wait);
    return RD_OK;
}

/* The fleet's retry budget for this tool: a retry is granted and counted
 * in one store step (a replayed outcome only looks). GIVE_UP when spent. */
static int take_retry(decide_call *c, bool *granted)
{
    rd_budget_result res;
    rd_budget_op op = c->out->duplicate ? RD_BUDGET_PEEK : RD_BUDGET_TAKE_RETRY;
    int rc = eng_budget_op(c, c->in->tool_id, c->cfg, op, &res);
    *granted = rc == RD_OK && res.granted;
    if (rc != RD_OK || res.granted)
        return rc;
    eng_act_give_up(c, rd_arena_printf(c->ctx->arena,
                                   "retry budget exhausted (%llu retries / %llu requests in "
                                   "the last %" PRId64 " ms)",
                                   (unsigned long long)res.retries,
                                   (unsigned long long)res.requests,
                                   c->cfg->retry_budget.window_ms));
    return RD_OK;
}

static int decide_transient(decide_call *c, const rd_classification *cl)
{
    const rd_retry_policy *retry = &c->cfg->retry;
    rd_breaker_status status = rd_breaker_status_at(&c->breaker, c->ctx->now_ms);
    if (status == RD_BREAKER_OPEN)
        return eng_act_alternative_or_fail_fast(c);
    bool parent_open = false;
    int rc = c->scoped ? eng_scope_parent_open(c, &parent_open) : RD_OK;
    if (rc != RD_OK || parent_open)
        return rc != RD_OK ? rc : eng_act_alternative_or_fail_fast(c);
    num_text limit;
    if (c->attempt >= retry->max_attempts) {
        eng_act_give_up(c, ARENA_JOIN(c->ctx->arena, txt("max attempts ("),
                                  num(&limit, retry->max_attempts), txt(") reached")));
        return RD_OK;
    }
    retry_wait wait = eng_retry_delay(c, cl);
    /* A timeout reported with at least the tool's whole timeout elapsed
     * ended at the per-tool limit; a shorter one is a quick failure. */
    bool at_tool_timeout = cl->kind == RD_KIND_TIMEOUT && c->in->elapsed_ms >= c->cfg->timeout_ms;
    if (rd_retry_time_exceeded(retry, c->attempt, c->in->elapsed_ms, at_tool_timeout,
                               wait.ms)) {
        eng_act_give_up(c, ARENA_JOIN(c->ctx->arena, txt("max total retry time ("),
                                  num(&limit, retry->max_total_time_ms),
                                  txt(" ms) would be exceeded")));
        return RD_OK;
    }
    if (c->budget.known && wait.ms >= c->budget.remaining_ms) {
        eng_act_partial(c, "turn deadline before retry", false);
        return RD_OK;
    }
    bool granted, decided;
    rc = eng_latency_deadline(c, wait, &decided);
    if (rc != RD_OK || decided)
        return rc;
    rc = take_retry(c, &granted);
    if (rc != RD_OK || !granted)
        return rc;
    if (status == RD_BREAKER_HALF_OPEN)
        return retry_as_probe(c, wait);
    eng_act_retry(c, wait);
    return RD_OK;
}

static int act_on_failure(decide_call *c, const rd_classification *cl)
{
    error_events(c, cl);
    int rc = record_failure(c, cl->retryability);
    if (rc != RD_OK)
        return rc;
    if (c->budget.known && c->budget.remaining_ms <= 0) {
        eng_act_partial(c, "turn deadline reached", false);
        return RD_OK;
    }
    if (eng_effects_declared(c->cfg, c->in->error)) {
        bool stopped;
        if ((rc = eng_effect_gate(c, &stopped)) != RD_OK || stopped)
            return rc;
    }
    if (cl->retryability == RD_PERMANENT)
        return decide_permanent(c, cl);
    return decide_transient(c, cl);
}

/* The text for the model goes with every answer that stops using the
 * tool. A RETRY answer leaves it out: the executor tries again, so the
 * model does not hear of this failure, and the text's "cannot be used for
 * this request" would be false. */
int eng_decide_failure(decide_call *c)
{
    rd_classify_result *cr = &c->out->classification;
    int rc = eng_classify_error(c->e, eng_manifest_of(c->e, c->cfg), c->in->tool_id, c->in->error,
                                c->ctx, &cr->classification, c->signature, &c->signature_tracked,
                                c->st);
    if (rc != RD_OK)
        return rc;
    c->out->has_classification = true;
    if ((rc = act_on_failure(c, &cr->classification)) != RD_OK)
        return rc;
    if (c->out->action == RD_ACTION_RETRY)
        return RD_OK;
    if ((rc = eng_add_llm_message(c->tool, c->in->error, c->ctx, cr, c->st)) != RD_OK)
        return rc;
    if (rd_effect_forbids_repeat(cr->classification.effect_safety) &&
        (c->out->action == RD_ACTION_VERIFY || c->out->action == RD_ACTION_ESCALATE))
        return eng_effect_llm_message(c);
    if (c->out->action != RD_ACTION_USE_ALTERNATIVE)
        return rc;
    cr->llm_message = rd_alternative_message(c->ctx->arena, cr->llm_message, cr->llm_message_len,
                                             c->out->alternative_tool_id, &cr->llm_message_len);
    if (!cr->llm_message)
        return rd_status_set(c->st, RD_ERR_NOMEM, "llm_message: out of memory");
    return RD_OK;
}
