/* Hot answers written straight from the engine's structs (see answers.h).
 *
 * Every field number is recovery.proto's, through the constants the build
 * writes from its descriptors (gen/rd_pbfields.h). Every message writes its
 * fields from the highest number down, because the writer fills the buffer
 * backwards and protobuf-c packs in field-number order; the tests compare
 * the bytes with protobuf-c's, so a field renumbered in the .proto and left
 * out of order here fails them. */
#include "transport/answers.h"

#include <string.h>

#include "domain/breaker.h"
#include "domain/classify.h"
#include "domain/trace.h"
#include "rd_pbfields.h"
#include "transport/pbwire.h"

#define F RD_PB_FIELD

/* A nested message field: its fields are written by put(), then its
 * length and tag. */
#define NESTED(w, id, put)                         \
    do {                                           \
        size_t mark_ = rd_pbw_mark(w);             \
        put;                                       \
        rd_pbw_close_message((w), (id), mark_);    \
    } while (0)

/* Room for a message of `fields` fields whose texts take `texts` bytes:
 * one check instead of one per field (pbwire.h). */
static bool reserve(rd_pbw *w, size_t fields, size_t texts)
{
    return rd_pbw_room(w, fields * RD_PBW_HEAD_MAX + texts);
}

/* Most optional texts are "": spare the call to strlen. */
static size_t text_len(const char *s)
{
    return s && s[0] ? strlen(s) : 0;
}

static void put_classification(rd_pbw *out, const rd_classify_result *r)
{
    rd_pbw w = *out; /* a local writer: the bytes stored cannot alias it */
    const rd_classification *k = &r->classification;
    size_t rule_len = text_len(k->rule_id), suggestion_len = text_len(k->suggestion),
           effect_len = text_len(k->effect_reason);
    if (reserve(&w, RD_PB_COUNT(Classification),
                r->llm_message_len + rule_len + suggestion_len + effect_len)) {
        rd_pbw_put_bytes(&w, F(Classification, effect_reason), k->effect_reason, effect_len);
        rd_pbw_put_int32(&w, F(Classification, effect_safety), (int32_t)k->effect_safety);
        rd_pbw_put_int32(&w, F(Classification, effects), (int32_t)k->effects);
        rd_pbw_put_int32(&w, F(Classification, decided_by), (int32_t)k->decided_by);
        rd_pbw_put_bytes(&w, F(Classification, llm_message), r->llm_message, r->llm_message_len);
        rd_pbw_put_bool(&w, F(Classification, overridden), k->overridden);
        rd_pbw_put_bytes(&w, F(Classification, rule_id), k->rule_id, rule_len);
        rd_pbw_put_bytes(&w, F(Classification, suggestion), k->suggestion, suggestion_len);
        rd_pbw_put_int64(&w, F(Classification, retry_after_ms), k->retry_after_ms);
        rd_pbw_put_bool(&w, F(Classification, executed), k->executed);
        rd_pbw_put_int32(&w, F(Classification, kind), (int32_t)k->kind);
        rd_pbw_put_int32(&w, F(Classification, category), (int32_t)k->category);
        rd_pbw_put_int32(&w, F(Classification, retryability), (int32_t)k->retryability);
    }
    *out = w;
}

static void put_breaker(rd_pbw *out, const rd_breaker_view *v)
{
    rd_pbw w = *out; /* a local writer: the bytes stored cannot alias it */
    size_t tool_len = text_len(v->tool_id);
    if (reserve(&w, RD_PB_COUNT(BreakerState), tool_len + v->scope_level_len)) {
        rd_pbw_put_int64(&w, F(BreakerState, latency_p99_ms), v->latency_p99_ms);
        rd_pbw_put_int64(&w, F(BreakerState, latency_p90_ms), v->latency_p90_ms);
        rd_pbw_put_int64(&w, F(BreakerState, latency_p50_ms), v->latency_p50_ms);
        rd_pbw_put_uint(&w, F(BreakerState, latency_samples), v->latency_samples);
        rd_pbw_put_bytes(&w, F(BreakerState, scope_level), v->scope_level, v->scope_level_len);
        rd_pbw_put_int64(&w, F(BreakerState, forced_until_ms), v->forced_until_ms);
        rd_pbw_put_int32(&w, F(BreakerState, forced), (int32_t)v->forced);
        rd_pbw_put_uint(&w, F(BreakerState, consecutive_successes), v->consecutive_successes);
        rd_pbw_put_uint(&w, F(BreakerState, success_threshold), v->success_threshold);
        rd_pbw_put_uint(&w, F(BreakerState, generation), v->generation);
        rd_pbw_put_uint(&w, F(BreakerState, opens_total), v->opens_total);
        rd_pbw_put_bool(&w, F(BreakerState, probe_in_flight), v->probe_in_flight);
        rd_pbw_put_int64(&w, F(BreakerState, open_until_ms), v->open_until_ms);
        rd_pbw_put_int64(&w, F(BreakerState, opened_at_ms), v->opened_at_ms);
        rd_pbw_put_uint(&w, F(BreakerState, failure_threshold), v->failure_threshold);
        rd_pbw_put_uint(&w, F(BreakerState, consecutive_failures), v->consecutive_failures);
        rd_pbw_put_int32(&w, F(BreakerState, state), (int32_t)v->status);
        rd_pbw_put_bytes(&w, F(BreakerState, tool_id), v->tool_id, tool_len);
    }
    *out = w;
}

static void put_cascade_step(rd_pbw *w, const rd_cascade_step *s)
{
    size_t reason_len = text_len(s->reason), default_len = text_len(s->default_value),
           tool_len = text_len(s->tool_id);
    if (reserve(w, RD_PB_COUNT(CascadeStep), reason_len + default_len + tool_len)) {
        rd_pbw_put_bytes(w, F(CascadeStep, reason), s->reason, reason_len);
        rd_pbw_put_bytes(w, F(CascadeStep, default_value), s->default_value, default_len);
        rd_pbw_put_int32(w, F(CascadeStep, action), (int32_t)s->action);
        rd_pbw_put_bytes(w, F(CascadeStep, tool_id), s->tool_id, tool_len);
    }
}

/* The names come from the domain's fixed tables, measured when compiled; a
 * zero value (not about an error, no breaker, no decision) has none. */
#define NAME_OR_NONE(value, text_of) ((value) ? text_of(value) : (rd_text){NULL, 0})

static void put_event(rd_pbw *out, rd_text turn_id, const rd_trace_event *e, rd_text timestamp)
{
    rd_pbw w = *out; /* a local writer: the bytes stored cannot alias it */
    rd_text decision = NAME_OR_NONE(e->decision, rd_action_text);
    rd_text breaker = NAME_OR_NONE(e->breaker, rd_breaker_status_text);
    rd_text retryability = NAME_OR_NONE(e->retryability, rd_retryability_text);
    rd_text type = rd_event_type_text(e->type);
    size_t texts = (size_t)e->detail_len + e->error_len + e->tool_id_len + turn_id.len +
                   timestamp.len + decision.len + breaker.len + retryability.len + type.len;
    /* Ids are set whole or not at all (engine/events.c). */
    size_t span_len = e->span_id[0] ? RD_SPAN_ID_HEX : 0;
    size_t trace_len = e->trace_id[0] ? RD_TRACE_ID_HEX : 0;
    if (reserve(&w, RD_PB_COUNT(TraceEvent), texts + span_len + trace_len)) {
        rd_pbw_put_bytes(&w, F(TraceEvent, span_id), e->span_id, span_len);
        rd_pbw_put_bytes(&w, F(TraceEvent, trace_id), e->trace_id, trace_len);
        rd_pbw_put_uint(&w, F(TraceEvent, sequence), e->sequence);
        rd_pbw_put_int64(&w, F(TraceEvent, timeout_ms), e->timeout_ms);
        rd_pbw_put_bytes(&w, F(TraceEvent, detail), e->detail, e->detail_len);
        rd_pbw_put_bytes(&w, F(TraceEvent, timestamp), timestamp.s, timestamp.len);
        rd_pbw_put_bytes(&w, F(TraceEvent, decision), decision.s, decision.len);
        rd_pbw_put_uint(&w, F(TraceEvent, retry_count), e->retry_count);
        rd_pbw_put_bytes(&w, F(TraceEvent, circuit_breaker_state), breaker.s, breaker.len);
        rd_pbw_put_bytes(&w, F(TraceEvent, classification), retryability.s, retryability.len);
        rd_pbw_put_bytes(&w, F(TraceEvent, error), e->error, e->error_len);
        rd_pbw_put_bytes(&w, F(TraceEvent, turn_id), turn_id.s, turn_id.len);
        rd_pbw_put_bytes(&w, F(TraceEvent, tool_id), e->tool_id, e->tool_id_len);
        rd_pbw_put_bytes(&w, F(TraceEvent, event_type), type.s, type.len);
    }
    *out = w;
}

/* Repeated trace events, last first. Consecutive events of one instant
 * (every event of one Decide answer) share one formatted timestamp. */
static void put_events(rd_pbw *w, uint32_t id, const char *turn_id, const rd_trace_event *ev,
                       size_t n)
{
    char timestamp[40];
    rd_text formatted = {timestamp, 0};
    rd_text turn = {turn_id, text_len(turn_id)};
    int64_t formatted_ms = 0;
    for (size_t i = n; i-- > 0;) {
        if (i == n - 1 || ev[i].timestamp_ms != formatted_ms) {
            formatted.len = rd_format_rfc3339(timestamp, sizeof timestamp, ev[i].timestamp_ms);
            formatted_ms = ev[i].timestamp_ms;
        }
        NESTED(w, id, put_event(w, turn, &ev[i], formatted));
    }
}

/* The answer's bytes, or SIZE_MAX when they did not fit. */
static size_t answer_length(const rd_pbw *w)
{
    return w->full ? SIZE_MAX : rd_pbw_written(w);
}

size_t rd_answer_classify(uint8_t *buf, size_t cap, const rd_classify_result *r)
{
    rd_pbw w = rd_pbw_over(buf, cap);
    NESTED(&w, F(ClassifyResponse, classification), put_classification(&w, r));
    return answer_length(&w);
}

size_t rd_answer_decide(uint8_t *buf, size_t cap, const char *turn_id, const rd_decision *d)
{
    rd_pbw w = rd_pbw_over(buf, cap);
    size_t shadow_reason_len = text_len(d->shadow_reason), key_len = text_len(d->idempotency_key),
           verify_len = text_len(d->verify_tool_id);
    if (reserve(&w, 6, shadow_reason_len + key_len + verify_len)) {
        rd_pbw_put_bytes(&w, F(DecideResponse, shadow_reason), d->shadow_reason,
                         shadow_reason_len);
        rd_pbw_put_int32(&w, F(DecideResponse, shadow_action), (int32_t)d->shadow_action);
        rd_pbw_put_bytes(&w, F(DecideResponse, idempotency_key), d->idempotency_key, key_len);
        rd_pbw_put_bytes(&w, F(DecideResponse, verify_tool_id), d->verify_tool_id, verify_len);
        rd_pbw_put_int64(&w, F(DecideResponse, delay_us), d->delay_us);
        rd_pbw_put_bool(&w, F(DecideResponse, duplicate), d->duplicate);
    }
    put_events(&w, F(DecideResponse, trace), turn_id, d->trace, d->n_trace);
    for (size_t i = d->n_cascade; i-- > 0;)
        NESTED(&w, F(DecideResponse, cascade), put_cascade_step(&w, &d->cascade[i]));
    rd_pbw_string_field(&w, F(DecideResponse, reason), d->reason);
    NESTED(&w, F(DecideResponse, breaker), put_breaker(&w, &d->breaker));
    if (d->has_classification)
        NESTED(&w, F(DecideResponse, classification), put_classification(&w, &d->classification));
    size_t permit_len = text_len(d->permit_id), alternative_len = text_len(d->alternative_tool_id);
    if (reserve(&w, 5, permit_len + alternative_len)) {
        rd_pbw_put_bytes(&w, F(DecideResponse, permit_id), d->permit_id, permit_len);
        rd_pbw_put_int64(&w, F(DecideResponse, timeout_ms), d->timeout_ms);
        rd_pbw_put_bytes(&w, F(DecideResponse, alternative_tool_id), d->alternative_tool_id,
                         alternative_len);
        rd_pbw_put_int64(&w, F(DecideResponse, delay_ms), d->delay_ms);
        rd_pbw_put_int32(&w, F(DecideResponse, action), (int32_t)d->action);
    }
    return answer_length(&w);
}

size_t rd_answer_outcome(uint8_t *buf, size_t cap, const rd_outcome_result *r)
{
    rd_pbw w = rd_pbw_over(buf, cap);
    if (reserve(&w, 1, 0))
        rd_pbw_put_bool(&w, F(RecordOutcomeResponse, duplicate), r->duplicate);
    NESTED(&w, F(RecordOutcomeResponse, breaker), put_breaker(&w, &r->breaker));
    return answer_length(&w);
}

size_t rd_answer_breakers(uint8_t *buf, size_t cap, const rd_breaker_view *v, size_t n)
{
    rd_pbw w = rd_pbw_over(buf, cap);
    for (size_t i = n; i-- > 0;)
        NESTED(&w, F(GetBreakerStateResponse, breakers), put_breaker(&w, &v[i]));
    return answer_length(&w);
}
