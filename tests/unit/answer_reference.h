/* The reference the hot answers (transport/answers.c) are checked
 * against: each answer built as a protobuf-c message from the same core
 * struct, field by field, which protobuf-c then packs. The server writes
 * these answers only as bytes; this is the tests' own, independent
 * statement of which struct member goes to which field. */
#ifndef RD_TEST_ANSWER_REFERENCE_H
#define RD_TEST_ANSWER_REFERENCE_H

#include "domain/arena.h"
#include "domain/classify.h"
#include "domain/trace.h"
#include "engine/decide.h"
#include "recovery/v1/recovery.pb-c.h"
#include "transport/codec.h"

/* protobuf-c wants char*; the strings are never written through. */
static char *wire_str(const char *s) { return (char *)(s ? s : ""); }

#define ARENA_NEW(a, type, init) \
    ({ type *p_ = rd_arena_alloc((a), sizeof(type)); if (p_) { type i_ = init; *p_ = i_; } p_; })

static Recovery__V1__Classification *classification_out(rd_arena *a, const rd_classify_result *r)
{
    Recovery__V1__Classification *c = ARENA_NEW(a, Recovery__V1__Classification,
                                                RECOVERY__V1__CLASSIFICATION__INIT);
    if (!c)
        return NULL;
    const rd_classification *k = &r->classification;
    c->retryability = (Recovery__V1__Retryability)k->retryability;
    c->category = (Recovery__V1__Category)k->category;
    c->kind = (Recovery__V1__ErrorKind)k->kind;
    c->executed = k->executed;
    c->retry_after_ms = k->retry_after_ms;
    c->suggestion = wire_str(k->suggestion);
    c->rule_id = wire_str(k->rule_id);
    c->overridden = k->overridden;
    c->llm_message = wire_str(r->llm_message);
    c->decided_by = (Recovery__V1__ClassificationTier)k->decided_by;
    c->effects = (Recovery__V1__ToolEffects)k->effects;
    c->effect_safety = (Recovery__V1__EffectSafety)k->effect_safety;
    c->effect_reason = wire_str(k->effect_reason);
    return c;
}

static Recovery__V1__CascadeStep **cascade_out(rd_arena *a, const rd_cascade_step *s, size_t n)
{
    Recovery__V1__CascadeStep **out = rd_arena_alloc(a, (n ? n : 1) * sizeof *out);
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        out[i] = ARENA_NEW(a, Recovery__V1__CascadeStep, RECOVERY__V1__CASCADE_STEP__INIT);
        if (!out[i])
            return NULL;
        out[i]->tool_id = wire_str(s[i].tool_id);
        out[i]->action = (Recovery__V1__CascadeAction)s[i].action;
        out[i]->default_value = wire_str(s[i].default_value);
        out[i]->reason = wire_str(s[i].reason);
    }
    return out;
}

static Recovery__V1__ClassifyResponse *ref_classify_out(rd_arena *a, const rd_classify_result *r)
{
    Recovery__V1__ClassifyResponse *resp = ARENA_NEW(a, Recovery__V1__ClassifyResponse,
                                                    RECOVERY__V1__CLASSIFY_RESPONSE__INIT);
    if (!resp || !(resp->classification = classification_out(a, r)))
        return NULL;
    return resp;
}

static Recovery__V1__DecideResponse *ref_decide_out(rd_arena *a, const char *turn_id,
                                                  const rd_decision *d)
{
    Recovery__V1__DecideResponse *r = ARENA_NEW(a, Recovery__V1__DecideResponse,
                                               RECOVERY__V1__DECIDE_RESPONSE__INIT);
    if (!r)
        return NULL;
    r->action = (Recovery__V1__Action)d->action;
    r->delay_ms = d->delay_ms;
    r->delay_us = d->delay_us;
    r->alternative_tool_id = wire_str(d->alternative_tool_id);
    r->timeout_ms = d->timeout_ms;
    r->permit_id = wire_str(d->permit_id);
    r->reason = wire_str(d->reason);
    r->duplicate = d->duplicate;
    r->shadow_action = (Recovery__V1__Action)d->shadow_action;
    r->shadow_reason = wire_str(d->shadow_reason);
    r->verify_tool_id = wire_str(d->verify_tool_id);
    r->idempotency_key = wire_str(d->idempotency_key);
    if (d->has_classification && !(r->classification = classification_out(a, &d->classification)))
        return NULL;
    if (!(r->breaker = rd_codec_breaker_state_out(a, &d->breaker)))
        return NULL;
    r->n_cascade = d->n_cascade;
    r->n_trace = d->n_trace;
    if (!(r->cascade = cascade_out(a, d->cascade, d->n_cascade)) ||
        !(r->trace = rd_codec_events_out(a, turn_id, d->trace, d->n_trace)))
        return NULL;
    return r;
}

static Recovery__V1__RecordOutcomeResponse *ref_outcome_out(rd_arena *a, const rd_outcome_result *o)
{
    Recovery__V1__RecordOutcomeResponse *r = ARENA_NEW(a, Recovery__V1__RecordOutcomeResponse,
                                                      RECOVERY__V1__RECORD_OUTCOME_RESPONSE__INIT);
    if (!r || !(r->breaker = rd_codec_breaker_state_out(a, &o->breaker)))
        return NULL;
    r->duplicate = o->duplicate;
    return r;
}

static Recovery__V1__GetBreakerStateResponse *ref_breakers_out(rd_arena *a, const rd_breaker_view *v,
                                                             size_t n)
{
    Recovery__V1__GetBreakerStateResponse *r = ARENA_NEW(a, Recovery__V1__GetBreakerStateResponse,
                                                        RECOVERY__V1__GET_BREAKER_STATE_RESPONSE__INIT);
    if (!r || !(r->breakers = rd_arena_alloc(a, (n ? n : 1) * sizeof *r->breakers)))
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (!(r->breakers[i] = rd_codec_breaker_state_out(a, &v[i])))
            return NULL;
    r->n_breakers = n;
    return r;
}

#endif
