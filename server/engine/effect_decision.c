/* Retry safety in Decide (domain/effects.h, docs/EFFECTS.md): a failure of
 * a tool with declared effects is judged before it is retried or handed to
 * an alternative, and one whose effect may have happened is never called
 * again blind: VERIFY with the manifest's verify_tool, else ESCALATE. */
#include "engine/engine_internal.h"

#include <string.h>

void eng_effect_classify(const rd_tool_config *cfg, const rd_tool_error *err, bool has_key,
                         rd_classification *c)
{
    rd_effects effects = rd_effects_resolve(cfg->effects, err);
    rd_effect_verdict v = rd_effect_judge(effects, cfg->idempotency_key, has_key, err, c);
    c->effects = v.effects;
    c->effect_safety = v.safety;
    c->effect_reason = v.reason;
}

static bool has_key(const decide_call *c)
{
    return c->in->idempotency_key && c->in->idempotency_key[0];
}

static void effect_event(decide_call *c, const rd_classification *cl)
{
    rd_trace_event *ev = eng_call_event(c, RD_EV_EFFECT_CHECKED);
    if (!ev)
        return;
    ev->retryability = cl->retryability;
    ev->executed = cl->effect_safety != RD_EFFECT_SAFETY_NOT_EXECUTED && cl->executed;
    EVENT_DETAIL(&c->events, ev, txt("effects "), txt(rd_effects_name(cl->effects)), txt(", "),
                 txt(rd_effect_safety_name(cl->effect_safety)), txt(": "),
                 txt(eng_safe_str(cl->effect_reason)));
}

static void act_verify(decide_call *c, const char *why)
{
    const char *verify = c->cfg->verify_tool;
    const rd_tool_config *vcfg = rd_policy_tool_or_defaults(c->e->policy, verify);
    c->out->action = RD_ACTION_VERIFY;
    c->out->verify_tool_id = rd_arena_strdup(c->ctx->arena, verify);
    c->out->timeout_ms = vcfg->timeout_ms;
    c->out->reason = ARENA_JOIN(c->ctx->arena, txt("effect unknown ("), txt(why),
                                txt("): call "), txt(verify),
                                txt(" to learn whether it happened before calling "),
                                txt(c->in->tool_id), txt(" again"));
}

int eng_effect_gate(decide_call *c, bool *stopped)
{
    *stopped = false;
    rd_classification *cl = &c->out->classification.classification;
    eng_effect_classify(c->cfg, c->in->error, has_key(c), cl);
    if (cl->effect_safety == RD_EFFECT_SAFETY_UNSPECIFIED)
        return RD_OK;
    if (cl->effect_safety == RD_EFFECT_SAFETY_IDEMPOTENCY_KEY)
        c->out->idempotency_key = c->in->idempotency_key;
    effect_event(c, cl);
    if (!rd_effect_forbids_repeat(cl->effect_safety))
        return RD_OK;
    *stopped = true;
    num_text limit;
    if (c->cfg->verify_tool && c->attempt >= c->cfg->retry.max_attempts) {
        /* Each VERIFY that found nothing done leads to one more call: the
         * attempts bound that cycle as they bound retries. */
        eng_act_escalate(c, ARENA_JOIN(c->ctx->arena, txt("max attempts ("),
                                       num(&limit, c->cfg->retry.max_attempts),
                                       txt(") reached and the effect is unknown ("),
                                       txt(cl->effect_reason),
                                       txt("): a person or the model must check whether it "
                                           "happened")));
    } else if (c->cfg->verify_tool) {
        act_verify(c, cl->effect_reason);
    } else {
        eng_act_escalate(c, ARENA_JOIN(c->ctx->arena, txt("effect unknown ("),
                                       txt(cl->effect_reason),
                                       txt("): not retried, a person or the model must check "
                                           "whether it happened")));
    }
    return c->out->reason && c->out->verify_tool_id
               ? RD_OK
               : rd_status_set(c->st, RD_ERR_NOMEM, "decision: out of memory");
}

int eng_effect_llm_message(decide_call *c)
{
    rd_classify_result *cr = &c->out->classification;
    const char *verify = c->out->verify_tool_id;
    size_t tail = strlen(RD_LLM_TAIL);
    if (cr->llm_message_len < tail ||
        memcmp(cr->llm_message + cr->llm_message_len - tail, RD_LLM_TAIL, tail) != 0)
        return RD_OK;
    const char *then = verify[0] ? "first call " : "";
    const char *how = verify[0] ? " to learn whether it happened." : "ask whether it happened.";
    char *text = rd_arena_printf(c->ctx->arena,
                                 "%.*s\n\nThe tool may have carried out its action before "
                                 "failing (%s). Do not call it again: %s%s%s",
                                 (int)(cr->llm_message_len - tail), cr->llm_message,
                                 eng_safe_str(cr->classification.effect_reason), then, verify,
                                 how);
    if (!text)
        return rd_status_set(c->st, RD_ERR_NOMEM, "llm_message: out of memory");
    cr->llm_message = text;
    cr->llm_message_len = strlen(text);
    return RD_OK;
}
