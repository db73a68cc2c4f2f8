/* RecordOutcome: an outcome applied to the breaker, its trace events, and
 * learning settled. */
#include "engine/engine_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- RecordOutcome ---- */

static void success_events(event_list *l, const rd_outcome_input *in)
{
    rd_trace_event *ev;
    if (in->attempt > 1) {
        num_text attempt;
        if ((ev = eng_event_add(l, RD_EV_RETRY_SUCCEEDED, in->tool_id)))
            EVENT_DETAIL(l, ev, txt(in->tool_id), txt(" succeeded on retry (attempt "),
                         num(&attempt, in->attempt), txt(")"));
    } else if ((ev = eng_event_add(l, RD_EV_TOOL_SUCCEEDED, in->tool_id))) {
        EVENT_DETAIL(l, ev, txt(in->tool_id), txt(" succeeded"));
    }
    if (ev) {
        ev->executed = true;
        ev->retry_count = in->attempt > 1 ? in->attempt - 1 : 0;
    }
}

static void failure_events(event_list *l, const rd_outcome_input *in,
                           const rd_classification *cl, int64_t timeout_ms)
{
    rd_trace_event *ev;
    uint32_t retries = in->attempt > 1 ? in->attempt - 1 : 0;
    if (cl->kind == RD_KIND_TIMEOUT && (ev = eng_event_add(l, RD_EV_TOOL_TIMEOUT, in->tool_id))) {
        eng_event_error(l, ev, in->error, cl);
        ev->timeout_ms = timeout_ms;
        ev->retry_count = retries;
        eng_timeout_detail(l, ev, in->tool_id, timeout_ms);
    }
    if ((ev = eng_event_add(l, RD_EV_TOOL_FAILED, in->tool_id))) {
        eng_event_error(l, ev, in->error, cl);
        ev->retry_count = retries;
        EVENT_DETAIL(l, ev, txt(in->tool_id), txt(" failed: "),
                     txt(rd_retryability_name(cl->retryability)), txt(" error ("),
                     txt(rd_category_name(cl->category)), txt(")"));
    }
}

static rd_outcome outcome_of(const rd_outcome_input *in, const rd_classification *cl)
{
    if (in->success)
        return RD_OUTCOME_SUCCESS;
    return cl->retryability == RD_PERMANENT ? RD_OUTCOME_PERMANENT_FAILURE
                                            : RD_OUTCOME_TRANSIENT_FAILURE;
}

static int validate_outcome(const rd_engine *e, const rd_outcome_input *in, rd_status *st)
{
    int rc = eng_check_tool(e, in->tool_id, NULL, st);
    if (rc == RD_OK)
        rc = eng_check_id("turn_id", in->turn_id, false, st);
    if (rc == RD_OK)
        rc = eng_check_id("outcome_id", in->outcome_id, false, st);
    if (rc == RD_OK && in->latency_ms < 0)
        rc = rd_status_set(st, RD_ERR_INVALID, "latency_ms: must not be negative");
    if (rc == RD_OK && in->n_scope)
        rc = rd_scope_check(in->scope, in->n_scope, st);
    return rc;
}

/* Classifies a reported failure; a failure without detail is transient. */
static int classify_outcome(const rd_engine *e, const rd_outcome_input *in,
                            const rd_call_ctx *ctx, rd_classification *cl, rd_status *st)
{
    if (in->success) {
        *cl = (rd_classification){.suggestion = "", .rule_id = ""};
        return RD_OK;
    }
    if (!in->error) {
        eng_unspecified_failure(e->policy, cl);
        return RD_OK;
    }
    return eng_classify_error(e, rd_policy_find_tool(e->policy, in->tool_id), in->tool_id,
                              in->error, ctx, cl, NULL, NULL, st);
}

/* Answers a replayed outcome id: nothing recorded, the current view. */
static int outcome_replay_view(const rd_engine *e, const rd_outcome_input *in,
                               const rd_tool_config *cfg, int64_t now_ms,
                               rd_outcome_result *out, rd_status *st)
{
    rd_breaker b;
    bool found;
    int rc = e->store->ops->get(e->store, in->tool_id, now_ms, &b, &found, st);
    if (rc == RD_OK)
        eng_fill_view(&out->breaker, in->tool_id, &b, cfg, now_ms);
    return rc;
}

/* The events of one reported outcome, appended to its turn. */
static int outcome_trace(const rd_engine *e, const rd_outcome_input *in,
                         const rd_classification *cl, const rd_tool_config *cfg,
                         const rd_store_result *res, const rd_call_ctx *ctx,
                         rd_outcome_result *out, rd_status *st)
{
    event_list events = {.arena = ctx->arena, .text_checked = ctx->text_checked,
                         .trace = ctx->trace};
    if (in->success)
        success_events(&events, in);
    else
        failure_events(&events, in, cl, cfg->timeout_ms);
    eng_note_transition(&events, in->tool_id, res->transition);
    if (events.out_of_memory)
        return rd_status_set(st, RD_ERR_NOMEM, "trace: out of memory");
    eng_events_finish(&events, RD_ACTION_UNSPECIFIED,
                      rd_breaker_status_at(&res->breaker, ctx->now_ms), ctx->now_ms);
    out->trace = events.items;
    out->n_trace = events.n;
    return eng_events_to_turn(e, in->turn_id, &events, ctx->now_ms, st);
}

/* A retry's outcome settles the signature it was linked to. */
static int learn_after_outcome(const rd_engine *e, const rd_outcome_input *in, int64_t now_ms,
                               rd_status *st)
{
    const char *link = eng_learning_link(in->turn_id, in->executor_id);
    if (!e->policy->learning.enabled || !link[0] || in->attempt <= 1)
        return RD_OK;
    rd_learn_settle settle = in->success ? RD_LEARN_SUCCEEDED : RD_LEARN_FAILED;
    return e->store->ops->learn_link(e->store, in->tool_id, link, "", settle, now_ms, st);
}

int rd_engine_record_outcome(const rd_engine *e, const rd_outcome_input *in,
                             const rd_call_ctx *ctx, rd_outcome_result *out, rd_status *st)
{
    *out = (rd_outcome_result){0};
    uint64_t token;
    int rc = validate_outcome(e, in, st);
    if (rc == RD_OK)
        rc = eng_parse_permit(in->permit_id, &token, st);
    if (rc != RD_OK)
        return rc;
    const rd_tool_config *cfg = rd_policy_tool_or_defaults(e->policy, in->tool_id);
    rd_store *s = e->store;
    int64_t now = ctx->now_ms;

    if (s->ops->precheck && (rc = s->ops->precheck(s, in->tool_id, in->turn_id, now, st)))
        return rc;
    if (in->outcome_id && in->outcome_id[0] &&
        (rc = s->ops->claim_outcome(s, in->outcome_id, now, &out->duplicate, st)) != RD_OK)
        return rc;
    if (out->duplicate)
        return outcome_replay_view(e, in, cfg, now, out, st);

    rd_classification cl;
    if ((rc = classify_outcome(e, in, ctx, &cl, st)) != RD_OK)
        return rc;
    rd_call_report call = {.outcome = outcome_of(in, &cl), .permit_token = token,
                           .executor_id = eng_safe_str(in->executor_id),
                           .latency_ms = in->latency_ms};
    rd_store_result res;
    const char *key = in->tool_id;
    rc = eng_scoped(cfg, in->n_scope)
             ? eng_scope_record(e, in, cfg, &call, ctx, &res, &key, st)
             : s->ops->record_call(s, in->tool_id, &cfg->breaker, now, &call, &res, st);
    if (rc == RD_OK)
        rc = learn_after_outcome(e, in, now, st);
    if (rc == RD_OK)
        rc = eng_latency_record(e, cfg, in->tool_id, in->latency_ms, now, st);
    if (rc != RD_OK)
        return rc;
    eng_fill_view(&out->breaker, key, &res.breaker, cfg, now);
    out->transition = res.transition;
    out->has_classification = !in->success;
    out->classification = cl;
    return outcome_trace(e, in, &cl, cfg, &res, ctx, out, st);
}
