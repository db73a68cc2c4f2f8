/* The decision engine's Decide (see decide.h; the semantics are those of
 * issue 3).
 *
 * Each public function of the engine validates its input, talks to the store
 * through s->ops (every breaker change is one atomic store operation), builds
 * its trace events in a list in the caller's arena, and appends them to the
 * turn in one store call. Nothing here keeps state between calls. */
#include "engine/engine_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An admission that does not let the tool run still tells the model why
 * (refusal.h): a classification that says the tool did not run, with the
 * text, and nothing else to classify. */
static int admission_refusal_text(decide_call *c)
{
    if (c->out->action == RD_ACTION_PROCEED)
        return RD_OK;
    rd_classify_result *cr = &c->out->classification;
    cr->classification = (rd_classification){.executed = false, .suggestion = "", .rule_id = ""};
    cr->llm_message = rd_refusal_message(c->ctx->arena, c->in->tool_id, c->out->action,
                                         c->out->reason, c->out->alternative_tool_id,
                                         &cr->llm_message_len);
    if (!cr->llm_message)
        return rd_status_set(c->st, RD_ERR_NOMEM, "llm_message: out of memory");
    c->out->has_classification = true;
    return RD_OK;
}

static int validate_decide(const rd_engine *e, const rd_decide_input *in, size_t *tool_len,
                           rd_status *st)
{
    int rc = eng_check_tool(e, in->tool_id, tool_len, st);
    if (rc == RD_OK)
        rc = eng_check_id("turn_id", in->turn_id, false, st);
    if (rc == RD_OK)
        rc = eng_check_id("outcome_id", in->outcome_id, false, st);
    if (rc == RD_OK && in->elapsed_ms < 0)
        rc = rd_status_set(st, RD_ERR_INVALID, "elapsed_ms: must not be negative");
    if (rc == RD_OK && in->idempotency_key && in->idempotency_key[0])
        rc = eng_check_id("idempotency_key", in->idempotency_key, false, st);
    if (rc == RD_OK && in->n_scope)
        rc = rd_scope_check(in->scope, in->n_scope, st);
    if (rc == RD_OK && in->n_plan > RD_PLAN_MAX)
        rc = rd_status_set(st, RD_ERR_INVALID, "plan: more than %d steps", RD_PLAN_MAX);
    return rc;
}

/* ---- learning links ---- */

/* Whose retry this is: the turn, else the executor; "" = nobody to follow. */
const char *eng_learning_link(const char *turn_id, const char *executor_id)
{
    if (turn_id && turn_id[0])
        return turn_id;
    return eng_safe_str(executor_id);
}

/* After a failed attempt: the retry in flight (if any) failed again, and
 * a granted RETRY now waits on this error's signature. */
static int learn_after_failure(decide_call *c)
{
    const rd_engine *e = c->e;
    const char *link = eng_learning_link(c->in->turn_id, c->in->executor_id);
    if (!e->policy->learning.enabled || !link[0] || c->out->duplicate)
        return RD_OK;
    rd_learn_settle settle = c->attempt > 1 ? RD_LEARN_FAILED : RD_LEARN_KEEP;
    bool follow = c->signature_tracked && c->out->action == RD_ACTION_RETRY;
    if (settle == RD_LEARN_KEEP && !follow)
        return RD_OK;
    return e->store->ops->learn_link(e->store, c->in->tool_id, link,
                                     follow ? c->signature->id : "", settle, c->ctx->now_ms,
                                     c->st);
}

int rd_engine_decide(const rd_engine *e, const rd_decide_input *in, const rd_call_ctx *ctx,
                     rd_decision *out, rd_status *st)
{
    *out = (rd_decision){.alternative_tool_id = "", .permit_id = "", .reason = "",
                         .shadow_reason = "", .verify_tool_id = "", .idempotency_key = ""};
    rd_signature signature; /* outside the call state, which is zeroed: it is 0.5 KiB */
    decide_call c = {
        .e = e, .in = in, .ctx = ctx, .st = st, .out = out,
        .events = {.arena = ctx->arena, .text_checked = ctx->text_checked,
                   .trace = ctx->trace},
        .tool = {in->tool_id, 0},
        .attempt = in->attempt > 0 ? in->attempt : 1,
        .signature = &signature,
        .breaker_key = in->tool_id,
        .scope_level = RD_SCOPE_LEVEL_TOOL,
    };
    int rc = validate_decide(e, in, &c.tool.len, st);
    if (rc == RD_OK)
        rc = eng_parse_permit(in->permit_id, &c.permit_token, st);
    if (rc != RD_OK)
        return rc;
    if (e->store->ops->precheck &&
        (rc = e->store->ops->precheck(e->store, in->tool_id, in->turn_id, ctx->now_ms, st)))
        return rc;
    c.cfg = rd_policy_tool_or_defaults(e->policy, in->tool_id);
    rd_breaker_init(&c.breaker, ctx->now_ms);
    out->timeout_ms = c.cfg->timeout_ms;

    if ((rc = eng_turn_budget_get(e, in, ctx->now_ms, &c.budget, st)) != RD_OK)
        return rc;
    c.scoped = eng_scoped(c.cfg, in->n_scope);
    if (c.scoped && in->error && (rc = eng_scope_failure_key(&c)) != RD_OK)
        return rc;
    rc = in->error ? eng_decide_failure(&c) : eng_decide_admission(&c);
    if (rc == RD_OK && in->error)
        rc = learn_after_failure(&c);
    if (rc == RD_OK && !in->error)
        rc = admission_refusal_text(&c);
    if (rc == RD_OK)
        rc = eng_latency_timeout(&c);
    if (rc == RD_OK)
        rc = eng_add_cascade(&c);
    if (rc == RD_OK && (c.events.out_of_memory || !out->reason))
        rc = rd_status_set(st, RD_ERR_NOMEM, "decision: out of memory");
    if (rc != RD_OK)
        return rc;

    eng_events_finish(&c.events, out->action, rd_breaker_status_at(&c.breaker, ctx->now_ms),
                      ctx->now_ms);
    eng_fill_view(&out->breaker, c.breaker_key, &c.breaker, c.cfg, ctx->now_ms);
    if (c.cfg->mode == RD_MODE_SHADOW && (rc = eng_apply_shadow(&c)) != RD_OK)
        return rc;
    out->trace = c.events.items;
    out->n_trace = c.events.n;
    if (out->duplicate)
        return RD_OK; /* a replay records nothing, not even trace events */
    return eng_events_to_turn(e, in->turn_id, &c.events, ctx->now_ms, st);
}
