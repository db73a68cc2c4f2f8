/* Hot answers written straight from the core's structs (see answers.h).
 *
 * Field numbers are recovery.proto's. Every message writes its fields from
 * the highest number down, because the writer fills the buffer backwards
 * and protobuf-c packs in field-number order. */
#include "transport/answers.h"

#include "core/breaker.h"
#include "core/classify.h"
#include "core/trace.h"
#include "transport/pbwire.h"

/* A nested message field: its fields are written by put(), then its
 * length and tag. */
#define NESTED(w, id, put)                         \
    do {                                           \
        size_t mark_ = rd_pbw_mark(w);             \
        put;                                       \
        rd_pbw_close_message((w), (id), mark_);    \
    } while (0)

static void put_classification(rd_pbw *out, const rd_classify_result *r)
{
    rd_pbw w = *out; /* a local writer: the bytes stored cannot alias it */
    const rd_classification *k = &r->classification;
    rd_pbw_bytes_field(&w, 9, r->llm_message, r->llm_message_len);
    rd_pbw_bool_field(&w, 8, k->overridden);
    rd_pbw_string_field(&w, 7, k->rule_id);
    rd_pbw_string_field(&w, 6, k->suggestion);
    rd_pbw_int64_field(&w, 5, k->retry_after_ms);
    rd_pbw_bool_field(&w, 4, k->executed);
    rd_pbw_int32_field(&w, 3, (int32_t)k->kind);
    rd_pbw_int32_field(&w, 2, (int32_t)k->category);
    rd_pbw_int32_field(&w, 1, (int32_t)k->retryability);
    *out = w;
}

static void put_breaker(rd_pbw *out, const rd_breaker_view *v)
{
    rd_pbw w = *out; /* a local writer: the bytes stored cannot alias it */
    rd_pbw_int64_field(&w, 13, v->forced_until_ms);
    rd_pbw_int32_field(&w, 12, (int32_t)v->forced);
    rd_pbw_uint_field(&w, 11, v->consecutive_successes);
    rd_pbw_uint_field(&w, 10, v->success_threshold);
    rd_pbw_uint_field(&w, 9, v->generation);
    rd_pbw_uint_field(&w, 8, v->opens_total);
    rd_pbw_bool_field(&w, 7, v->probe_in_flight);
    rd_pbw_int64_field(&w, 6, v->open_until_ms);
    rd_pbw_int64_field(&w, 5, v->opened_at_ms);
    rd_pbw_uint_field(&w, 4, v->failure_threshold);
    rd_pbw_uint_field(&w, 3, v->consecutive_failures);
    rd_pbw_int32_field(&w, 2, (int32_t)v->status);
    rd_pbw_string_field(&w, 1, v->tool_id);
    *out = w;
}

static void put_cascade_step(rd_pbw *w, const rd_cascade_step *s)
{
    rd_pbw_string_field(w, 4, s->reason);
    rd_pbw_string_field(w, 3, s->default_value);
    rd_pbw_int32_field(w, 2, (int32_t)s->action);
    rd_pbw_string_field(w, 1, s->tool_id);
}

/* A name from one of the core's fixed tables, measured when it was
 * compiled. */
static void put_name(rd_pbw *w, uint32_t id, rd_text name)
{
    rd_pbw_bytes_field(w, id, name.s, name.len);
}

static void put_event(rd_pbw *out, const char *turn_id, const rd_trace_event *e, rd_text timestamp)
{
    rd_pbw w = *out; /* a local writer: the bytes stored cannot alias it */
    rd_pbw_uint_field(&w, 12, e->sequence);
    rd_pbw_int64_field(&w, 11, e->timeout_ms);
    rd_pbw_bytes_field(&w, 10, e->detail, e->detail_len);
    put_name(&w, 9, timestamp);
    if (e->decision)
        put_name(&w, 8, rd_action_text(e->decision));
    rd_pbw_uint_field(&w, 7, e->retry_count);
    if (e->breaker)
        put_name(&w, 6, rd_breaker_status_text(e->breaker));
    if (e->retryability)
        put_name(&w, 5, rd_retryability_text(e->retryability));
    rd_pbw_bytes_field(&w, 4, e->error, e->error_len);
    rd_pbw_string_field(&w, 3, turn_id);
    rd_pbw_bytes_field(&w, 2, e->tool_id, e->tool_id_len);
    put_name(&w, 1, rd_event_type_text(e->type));
    *out = w;
}

/* Repeated trace events, last first. Consecutive events of one instant
 * (every event of one Decide answer) share one formatted timestamp. */
static void put_events(rd_pbw *w, uint32_t id, const char *turn_id, const rd_trace_event *ev,
                       size_t n)
{
    char timestamp[40];
    rd_text formatted = {timestamp, 0};
    int64_t formatted_ms = 0;
    for (size_t i = n; i-- > 0;) {
        if (i == n - 1 || ev[i].timestamp_ms != formatted_ms) {
            formatted.len = rd_format_rfc3339(timestamp, sizeof timestamp, ev[i].timestamp_ms);
            formatted_ms = ev[i].timestamp_ms;
        }
        NESTED(w, id, put_event(w, turn_id, &ev[i], formatted));
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
    rd_pbw_int64_field(&w, 12, d->delay_us);
    rd_pbw_bool_field(&w, 11, d->duplicate);
    put_events(&w, 10, turn_id, d->trace, d->n_trace);
    for (size_t i = d->n_cascade; i-- > 0;)
        NESTED(&w, 9, put_cascade_step(&w, &d->cascade[i]));
    rd_pbw_string_field(&w, 8, d->reason);
    NESTED(&w, 7, put_breaker(&w, &d->breaker));
    if (d->has_classification)
        NESTED(&w, 6, put_classification(&w, &d->classification));
    rd_pbw_string_field(&w, 5, d->permit_id);
    rd_pbw_int64_field(&w, 4, d->timeout_ms);
    rd_pbw_string_field(&w, 3, d->alternative_tool_id);
    rd_pbw_int64_field(&w, 2, d->delay_ms);
    rd_pbw_int32_field(&w, 1, (int32_t)d->action);
    return answer_length(&w);
}

size_t rd_answer_outcome(uint8_t *buf, size_t cap, const rd_outcome_result *r)
{
    rd_pbw w = rd_pbw_over(buf, cap);
    rd_pbw_bool_field(&w, 2, r->duplicate);
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
