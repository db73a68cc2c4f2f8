/* Hot answers written straight from the core's structs (see answers.h).
 *
 * Field numbers are recovery.proto's. Every message writes its fields from
 * the highest number down, because the writer fills the buffer backwards
 * and protobuf-c packs in field-number order. */
#include "transport/answers.h"

#include <string.h>

#include "domain/breaker.h"
#include "domain/classify.h"
#include "domain/trace.h"
#include "transport/pbwire.h"

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
    size_t rule_len = text_len(k->rule_id), suggestion_len = text_len(k->suggestion);
    if (reserve(&w, 9, r->llm_message_len + rule_len + suggestion_len)) {
        rd_pbw_put_bytes(&w, 9, r->llm_message, r->llm_message_len);
        rd_pbw_put_bool(&w, 8, k->overridden);
        rd_pbw_put_bytes(&w, 7, k->rule_id, rule_len);
        rd_pbw_put_bytes(&w, 6, k->suggestion, suggestion_len);
        rd_pbw_put_int64(&w, 5, k->retry_after_ms);
        rd_pbw_put_bool(&w, 4, k->executed);
        rd_pbw_put_int32(&w, 3, (int32_t)k->kind);
        rd_pbw_put_int32(&w, 2, (int32_t)k->category);
        rd_pbw_put_int32(&w, 1, (int32_t)k->retryability);
    }
    *out = w;
}

static void put_breaker(rd_pbw *out, const rd_breaker_view *v)
{
    rd_pbw w = *out; /* a local writer: the bytes stored cannot alias it */
    size_t tool_len = text_len(v->tool_id);
    if (reserve(&w, 13, tool_len)) {
        rd_pbw_put_int64(&w, 13, v->forced_until_ms);
        rd_pbw_put_int32(&w, 12, (int32_t)v->forced);
        rd_pbw_put_uint(&w, 11, v->consecutive_successes);
        rd_pbw_put_uint(&w, 10, v->success_threshold);
        rd_pbw_put_uint(&w, 9, v->generation);
        rd_pbw_put_uint(&w, 8, v->opens_total);
        rd_pbw_put_bool(&w, 7, v->probe_in_flight);
        rd_pbw_put_int64(&w, 6, v->open_until_ms);
        rd_pbw_put_int64(&w, 5, v->opened_at_ms);
        rd_pbw_put_uint(&w, 4, v->failure_threshold);
        rd_pbw_put_uint(&w, 3, v->consecutive_failures);
        rd_pbw_put_int32(&w, 2, (int32_t)v->status);
        rd_pbw_put_bytes(&w, 1, v->tool_id, tool_len);
    }
    *out = w;
}

static void put_cascade_step(rd_pbw *w, const rd_cascade_step *s)
{
    size_t reason_len = text_len(s->reason), default_len = text_len(s->default_value),
           tool_len = text_len(s->tool_id);
    if (reserve(w, 4, reason_len + default_len + tool_len)) {
        rd_pbw_put_bytes(w, 4, s->reason, reason_len);
        rd_pbw_put_bytes(w, 3, s->default_value, default_len);
        rd_pbw_put_int32(w, 2, (int32_t)s->action);
        rd_pbw_put_bytes(w, 1, s->tool_id, tool_len);
    }
}

/* The names come from the core's fixed tables, measured when compiled; a
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
    if (reserve(&w, 12, texts)) {
        rd_pbw_put_uint(&w, 12, e->sequence);
        rd_pbw_put_int64(&w, 11, e->timeout_ms);
        rd_pbw_put_bytes(&w, 10, e->detail, e->detail_len);
        rd_pbw_put_bytes(&w, 9, timestamp.s, timestamp.len);
        rd_pbw_put_bytes(&w, 8, decision.s, decision.len);
        rd_pbw_put_uint(&w, 7, e->retry_count);
        rd_pbw_put_bytes(&w, 6, breaker.s, breaker.len);
        rd_pbw_put_bytes(&w, 5, retryability.s, retryability.len);
        rd_pbw_put_bytes(&w, 4, e->error, e->error_len);
        rd_pbw_put_bytes(&w, 3, turn_id.s, turn_id.len);
        rd_pbw_put_bytes(&w, 2, e->tool_id, e->tool_id_len);
        rd_pbw_put_bytes(&w, 1, type.s, type.len);
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
    NESTED(&w, 1, put_classification(&w, r));
    return answer_length(&w);
}

size_t rd_answer_decide(uint8_t *buf, size_t cap, const char *turn_id, const rd_decision *d)
{
    rd_pbw w = rd_pbw_over(buf, cap);
    if (reserve(&w, 2, 0)) {
        rd_pbw_put_int64(&w, 12, d->delay_us);
        rd_pbw_put_bool(&w, 11, d->duplicate);
    }
    put_events(&w, 10, turn_id, d->trace, d->n_trace);
    for (size_t i = d->n_cascade; i-- > 0;)
        NESTED(&w, 9, put_cascade_step(&w, &d->cascade[i]));
    rd_pbw_string_field(&w, 8, d->reason);
    NESTED(&w, 7, put_breaker(&w, &d->breaker));
    if (d->has_classification)
        NESTED(&w, 6, put_classification(&w, &d->classification));
    size_t permit_len = text_len(d->permit_id), alternative_len = text_len(d->alternative_tool_id);
    if (reserve(&w, 5, permit_len + alternative_len)) {
        rd_pbw_put_bytes(&w, 5, d->permit_id, permit_len);
        rd_pbw_put_int64(&w, 4, d->timeout_ms);
        rd_pbw_put_bytes(&w, 3, d->alternative_tool_id, alternative_len);
        rd_pbw_put_int64(&w, 2, d->delay_ms);
        rd_pbw_put_int32(&w, 1, (int32_t)d->action);
    }
    return answer_length(&w);
}

size_t rd_answer_outcome(uint8_t *buf, size_t cap, const rd_outcome_result *r)
{
    rd_pbw w = rd_pbw_over(buf, cap);
    if (reserve(&w, 1, 0))
        rd_pbw_put_bool(&w, 2, r->duplicate);
    NESTED(&w, 1, put_breaker(&w, &r->breaker));
    return answer_length(&w);
}

size_t rd_answer_breakers(uint8_t *buf, size_t cap, const rd_breaker_view *v, size_t n)
{
    rd_pbw w = rd_pbw_over(buf, cap);
    for (size_t i = n; i-- > 0;)
        NESTED(&w, 1, put_breaker(&w, &v[i]));
    return answer_length(&w);
}
