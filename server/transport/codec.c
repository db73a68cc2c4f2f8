#include "transport/codec.h"

#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include "domain/classify.h"
#include "domain/trace.h"

/* The domain's enums mirror the proto's numbering, so conversion is a cast
 * once the value is known to be in range. These checks keep it honest. */
_Static_assert((int)RD_KIND_INTERNAL_ERROR == (int)RECOVERY__V1__ERROR_KIND__ERROR_KIND_INTERNAL_ERROR, "kind");
_Static_assert((int)RD_SOURCE_MCP == (int)RECOVERY__V1__ERROR_SOURCE__ERROR_SOURCE_MCP, "source");
_Static_assert((int)RD_PERMANENT == (int)RECOVERY__V1__RETRYABILITY__RETRYABILITY_PERMANENT, "retryability");
_Static_assert((int)RD_CAT_UNKNOWN == (int)RECOVERY__V1__CATEGORY__CATEGORY_UNKNOWN, "category");
_Static_assert((int)RD_TIER_STRUCTURED == (int)RECOVERY__V1__CLASSIFICATION_TIER__CLASSIFICATION_TIER_STRUCTURED &&
               (int)RD_TIER_DEFAULT == (int)RECOVERY__V1__CLASSIFICATION_TIER__CLASSIFICATION_TIER_DEFAULT &&
               (int)RD_TIER_WORDS == (int)RECOVERY__V1__CLASSIFICATION_TIER__CLASSIFICATION_TIER_WORDS,
               "tier");
_Static_assert((int)RD_ACTION_PARTIAL == (int)RECOVERY__V1__ACTION__ACTION_PARTIAL, "action");
_Static_assert((int)RD_ACTION_VERIFY == (int)RECOVERY__V1__ACTION__ACTION_VERIFY, "action");
_Static_assert((int)RD_HINT_FALSE == (int)RECOVERY__V1__HINT__HINT_FALSE, "hint");
_Static_assert((int)RD_EFFECTS_NON_IDEMPOTENT ==
                   (int)RECOVERY__V1__TOOL_EFFECTS__TOOL_EFFECTS_NON_IDEMPOTENT, "effects");
_Static_assert((int)RD_EFFECT_SAFETY_UNKNOWN ==
                   (int)RECOVERY__V1__EFFECT_SAFETY__EFFECT_SAFETY_UNKNOWN, "effect safety");
_Static_assert((int)RD_BREAKER_HALF_OPEN == (int)RECOVERY__V1__BREAKER_STATUS__BREAKER_STATUS_HALF_OPEN, "breaker");
_Static_assert((int)RD_CASCADE_ESCALATE == (int)RECOVERY__V1__CASCADE_ACTION__CASCADE_ACTION_ESCALATE, "cascade");

static void *arena_alloc_cb(void *data, size_t size) { return rd_arena_alloc(data, size); }
static void arena_free_cb(void *data, void *ptr) { (void)data; (void)ptr; }

ProtobufCAllocator rd_codec_allocator(rd_arena *arena)
{
    ProtobufCAllocator a = {.alloc = arena_alloc_cb, .free = arena_free_cb, .allocator_data = arena};
    return a;
}

/* ---- the field checks (codec.h) ---- */

int rd_rule_text_in(const rd_field_rule *r, const char *field, const char *s, size_t *len,
                    rd_status *st)
{
    size_t n = s[0] ? strlen(s) : 0; /* most optional ids are empty */
    if (len)
        *len = n;
    if (rd_rule_text_ok(r, s, n))
        return RD_OK;
    field = field ? field : r->name;
    if (n == 0)
        return rd_status_set(st, RD_ERR_INVALID, "%s: required", field);
    if (n > r->max)
        return rd_status_set(st, RD_ERR_INVALID, "%s: longer than %zu bytes", field, r->max);
    if (rd_utf8_valid_len(s, n) != n)
        return rd_status_set(st, RD_ERR_INVALID, "%s: not valid UTF-8", field);
    return rd_status_set(st, RD_ERR_INVALID, "%s: contains a control character", field);
}

int rd_rule_number_in(const rd_field_rule *r, const char *field, int64_t v, rd_status *st)
{
    if (rd_rule_number_ok(r, v))
        return RD_OK;
    field = field ? field : r->name;
    if (r->kind == RD_RULE_ENUM)
        return rd_status_set(st, RD_ERR_INVALID, "%s: unknown value %lld", field, (long long)v);
    return rd_status_set(st, RD_ERR_INVALID, "%s: %lld is out of range [%lld, %lld]", field,
                         (long long)v, (long long)r->lo, (long long)r->hi);
}

static int check(const rd_field_rule *r, const char *s, rd_status *st)
{
    return rd_rule_text_in(r, NULL, s, NULL, st);
}

static int check_number(const rd_field_rule *r, int64_t v, rd_status *st)
{
    return rd_rule_number_in(r, NULL, v, st);
}

/* The rules of fields named at run time ("plan[2].tool_id", "tool_ids[3]"),
 * and of the other requests' strings (rd_codec_text_in, rd_codec_id_in). */
static int check_id(const char *s, const char *field, size_t max, bool required, rd_status *st)
{
    const rd_field_rule r = RD_TEXT_RULE(field, RD_RULE_ID, max, required);
    return rd_rule_text_in(&r, NULL, s, NULL, st);
}

static int check_text(const char *s, const char *field, size_t max, bool required, rd_status *st)
{
    const rd_field_rule r = RD_TEXT_RULE(field, RD_RULE_TEXT, max, required);
    return rd_rule_text_in(&r, NULL, s, NULL, st);
}

static int tool_error_in(const Recovery__V1__ToolError *pb, rd_tool_error *out, rd_status *st)
{
    int rc;
    size_t message_len;
    if ((rc = rd_rule_text_in(&RD_RULE_ERROR_MESSAGE, NULL, pb->message, &message_len, st)) ||
        (rc = check(&RD_RULE_ERROR_CODE, pb->code, st)) ||
        (rc = check(&RD_RULE_ERROR_EXCEPTION_TYPE, pb->exception_type, st)) ||
        (rc = check_number(&RD_RULE_ERROR_KIND, pb->kind, st)) ||
        (rc = check_number(&RD_RULE_ERROR_SOURCE, pb->source, st)) ||
        (rc = check_number(&RD_RULE_ERROR_HTTP_STATUS, pb->http_status, st)) ||
        (rc = check_number(&RD_RULE_ERROR_GRPC_CODE, pb->grpc_code, st)) ||
        (rc = check_number(&RD_RULE_ERROR_RETRY_AFTER_MS, pb->retry_after_ms, st)) ||
        (rc = check_number(&RD_RULE_ERROR_READ_ONLY_HINT, (int32_t)pb->read_only_hint, st)) ||
        (rc = check_number(&RD_RULE_ERROR_DESTRUCTIVE_HINT, (int32_t)pb->destructive_hint, st)) ||
        (rc = check_number(&RD_RULE_ERROR_IDEMPOTENT_HINT, (int32_t)pb->idempotent_hint, st)))
        return rc;
    *out = (rd_tool_error){
        .message = pb->message,
        .message_len = message_len,
        .http_status = pb->http_status,
        .grpc_code = pb->grpc_code,
        .code = pb->code,
        .exception_type = pb->exception_type,
        .kind = (rd_error_kind)pb->kind,
        .source = (rd_error_source)pb->source,
        .retry_after_ms = pb->retry_after_ms,
        .read_only_hint = (rd_hint)pb->read_only_hint,
        .destructive_hint = (rd_hint)pb->destructive_hint,
        .idempotent_hint = (rd_hint)pb->idempotent_hint,
    };
    return RD_OK;
}

static int ids_in(const char *tool_id, const char *turn_id, const char *executor_id,
                  const char *outcome_id, const char *permit_id, rd_status *st)
{
    int rc;
    if ((rc = check(&RD_RULE_TOOL_ID, tool_id, st)) ||
        (rc = check(&RD_RULE_TURN_ID, turn_id, st)) ||
        (rc = check(&RD_RULE_EXECUTOR_ID, executor_id, st)) ||
        (rc = check(&RD_RULE_OUTCOME_ID, outcome_id, st)) ||
        (rc = check(&RD_RULE_PERMIT_ID, permit_id, st)))
        return rc;
    return RD_OK;
}

/* ---- requests ---- */

int rd_codec_classify_in(const Recovery__V1__ClassifyRequest *pb, rd_tool_error *err, rd_status *st)
{
    int rc = check(&RD_RULE_TOOL_ID, pb->tool_id, st);
    if (rc)
        return rc;
    if (!pb->error)
        return rd_status_set(st, RD_ERR_INVALID, "error: required");
    return tool_error_in(pb->error, err, st);
}

static int plan_step_in(const Recovery__V1__PlanStep *pb, size_t i, rd_plan_step *out, rd_status *st)
{
    char field[64];
    snprintf(field, sizeof field, "plan[%zu].tool_id", i);
    int rc = check_id(pb->tool_id, field, RD_ID_MAX, true, st);
    if (rc)
        return rc;
    if (pb->n_depends_on > RD_DEPENDS_MAX)
        return rd_status_set(st, RD_ERR_INVALID, "plan[%zu].depends_on: more than %d entries", i,
                             RD_DEPENDS_MAX);
    for (size_t j = 0; j < pb->n_depends_on; j++) {
        snprintf(field, sizeof field, "plan[%zu].depends_on[%zu]", i, j);
        if ((rc = check_id(pb->depends_on[j], field, RD_ID_MAX, true, st)))
            return rc;
    }
    bool has_default = pb->has_default_case == RECOVERY__V1__PLAN_STEP__HAS_DEFAULT_DEFAULT_VALUE;
    if (has_default) {
        snprintf(field, sizeof field, "plan[%zu].default_value", i);
        if ((rc = check_text(pb->default_value, field, RD_DEFAULT_VALUE_MAX, false, st)))
            return rc;
    }
    *out = (rd_plan_step){
        .tool_id = pb->tool_id,
        .depends_on = (const char *const *)pb->depends_on,
        .n_depends_on = pb->n_depends_on,
        .optional = pb->optional,
        .has_default = has_default,
        .default_value = has_default ? pb->default_value : "",
    };
    return RD_OK;
}

static int plan_in(const Recovery__V1__DecideRequest *pb, rd_arena *arena, rd_decide_input *in,
                   rd_status *st)
{
    if (pb->n_plan > RD_PLAN_MAX)
        return rd_status_set(st, RD_ERR_INVALID, "plan: more than %d steps", RD_PLAN_MAX);
    if (pb->n_plan == 0)
        return RD_OK;
    rd_plan_step *steps = rd_arena_alloc(arena, pb->n_plan * sizeof *steps);
    if (!steps)
        return rd_status_set(st, RD_ERR_NOMEM, "plan: out of memory");
    for (size_t i = 0; i < pb->n_plan; i++) {
        int rc = plan_step_in(pb->plan[i], i, &steps[i], st);
        if (rc)
            return rc;
    }
    in->plan = steps;
    in->n_plan = pb->n_plan;
    return RD_OK;
}

/* A request's scope labels (domain/scope.h), checked, into the arena. */
static int scope_in(Recovery__V1__ScopeLabel *const *pb, size_t n, rd_arena *arena,
                    const rd_scope_label **out, size_t *n_out, rd_status *st)
{
    *out = NULL;
    *n_out = 0;
    if (n == 0)
        return RD_OK;
    if (n > RD_SCOPE_LABELS_MAX)
        return rd_status_set(st, RD_ERR_INVALID, "scope: more than %d labels",
                             RD_SCOPE_LABELS_MAX);
    rd_scope_label *labels = rd_arena_alloc(arena, n * sizeof *labels);
    if (!labels)
        return rd_status_set(st, RD_ERR_NOMEM, "scope: out of memory");
    for (size_t i = 0; i < n; i++)
        labels[i] = (rd_scope_label){.dimension = pb[i]->dimension, .value = pb[i]->value};
    int rc = rd_scope_check(labels, n, st);
    if (rc == RD_OK) {
        *out = labels;
        *n_out = n;
    }
    return rc;
}

int rd_codec_decide_in(const Recovery__V1__DecideRequest *pb, rd_arena *arena,
                       rd_decide_input *in, rd_tool_error *err, rd_status *st)
{
    int rc;
    if ((rc = ids_in(pb->tool_id, pb->turn_id, pb->executor_id, pb->outcome_id, pb->permit_id, st)) ||
        (rc = check_number(&RD_RULE_ATTEMPT, pb->attempt, st)) ||
        (rc = check_number(&RD_RULE_ELAPSED_MS, pb->elapsed_ms, st)) ||
        (rc = check(&RD_RULE_IDEMPOTENCY_KEY, pb->idempotency_key, st)))
        return rc;
    bool has_remaining = pb->turn_budget_case == RECOVERY__V1__DECIDE_REQUEST__TURN_BUDGET_TURN_REMAINING_MS;
    if (has_remaining &&
        (rc = check_number(&RD_RULE_TURN_REMAINING_MS, pb->turn_remaining_ms, st)))
        return rc;
    *in = (rd_decide_input){
        .tool_id = pb->tool_id,
        .attempt = pb->attempt,
        .elapsed_ms = pb->elapsed_ms,
        .turn_id = pb->turn_id,
        .has_turn_remaining = has_remaining,
        .turn_remaining_ms = has_remaining ? pb->turn_remaining_ms : 0,
        .executor_id = pb->executor_id,
        .outcome_id = pb->outcome_id,
        .permit_id = pb->permit_id,
        .idempotency_key = pb->idempotency_key,
    };
    if ((rc = scope_in(pb->scope, pb->n_scope, arena, &in->scope, &in->n_scope, st)))
        return rc;
    if (pb->error) {
        if ((rc = tool_error_in(pb->error, err, st)))
            return rc;
        in->error = err;
    }
    return plan_in(pb, arena, in, st);
}

int rd_codec_outcome_in(const Recovery__V1__RecordOutcomeRequest *pb, rd_arena *arena,
                        rd_outcome_input *in, rd_tool_error *err, rd_status *st)
{
    int rc;
    if ((rc = ids_in(pb->tool_id, pb->turn_id, pb->executor_id, pb->outcome_id, pb->permit_id, st)) ||
        (rc = check_number(&RD_RULE_ATTEMPT, pb->attempt, st)) ||
        (rc = check_number(&RD_RULE_LATENCY_MS, pb->latency_ms, st)))
        return rc;
    *in = (rd_outcome_input){
        .tool_id = pb->tool_id,
        .success = pb->success,
        .latency_ms = pb->latency_ms,
        .attempt = pb->attempt,
        .turn_id = pb->turn_id,
        .outcome_id = pb->outcome_id,
        .permit_id = pb->permit_id,
        .executor_id = pb->executor_id,
    };
    if ((rc = scope_in(pb->scope, pb->n_scope, arena, &in->scope, &in->n_scope, st)))
        return rc;
    if (pb->error) {
        if (pb->success)
            return rd_status_set(st, RD_ERR_INVALID, "error: must be empty when success is true");
        if ((rc = tool_error_in(pb->error, err, st)))
            return rc;
        in->error = err;
    }
    return RD_OK;
}

int rd_codec_tool_ids_in(char *const *ids, size_t n, size_t max_n, rd_status *st)
{
    if (n > max_n)
        return rd_status_set(st, RD_ERR_INVALID, "tool_ids: more than %zu entries", max_n);
    for (size_t i = 0; i < n; i++) {
        if (check_id(ids[i], "", RD_ID_MAX, true, NULL) == RD_OK)
            continue;
        char field[48]; /* named only when it is wrong: formatting costs per id */
        snprintf(field, sizeof field, "tool_ids[%zu]", i);
        return check_id(ids[i], field, RD_ID_MAX, true, st);
    }
    return RD_OK;
}

int rd_codec_breakers_in(const Recovery__V1__GetBreakerStateRequest *pb, rd_status *st)
{
    return rd_codec_tool_ids_in(pb->tool_ids, pb->n_tool_ids, 10000, st);
}

int rd_codec_text_in(const char *s, const char *field, size_t max, bool required,
                     rd_status *st)
{
    return check_text(s, field, max, required, st);
}

int rd_codec_id_in(const char *s, const char *field, size_t max, bool required, rd_status *st)
{
    return check_id(s, field, max, required, st);
}

int rd_codec_turn_trace_in(const Recovery__V1__GetTurnTraceRequest *pb, rd_status *st)
{
    const rd_field_rule turn_id = RD_TEXT_RULE("turn_id", RD_RULE_ID, RD_ID_MAX, true);
    return check(&turn_id, pb->turn_id, st);
}

/* ---- responses ---- */

/* protobuf-c wants char*; the strings are never written through. */
static char *wire_str(const char *s) { return (char *)(s ? s : ""); }

#define ARENA_NEW(a, type, init) \
    ({ type *p_ = rd_arena_alloc((a), sizeof(type)); if (p_) { type i_ = init; *p_ = i_; } p_; })

static Recovery__V1__BreakerState *breaker_out(rd_arena *a, const rd_breaker_view *v)
{
    Recovery__V1__BreakerState *b = ARENA_NEW(a, Recovery__V1__BreakerState,
                                             RECOVERY__V1__BREAKER_STATE__INIT);
    if (!b)
        return NULL;
    b->tool_id = wire_str(v->tool_id);
    b->state = (Recovery__V1__BreakerStatus)v->status;
    b->consecutive_failures = v->consecutive_failures;
    b->failure_threshold = v->failure_threshold;
    b->opened_at_ms = v->opened_at_ms;
    b->open_until_ms = v->open_until_ms;
    b->probe_in_flight = v->probe_in_flight;
    b->opens_total = v->opens_total;
    b->generation = v->generation;
    b->success_threshold = v->success_threshold;
    b->consecutive_successes = v->consecutive_successes;
    b->forced = (Recovery__V1__BreakerStatus)v->forced;
    b->forced_until_ms = v->forced_until_ms;
    b->latency_samples = v->latency_samples;
    b->latency_p50_ms = v->latency_p50_ms;
    b->latency_p90_ms = v->latency_p90_ms;
    b->latency_p99_ms = v->latency_p99_ms;
    if (v->scope_level_len &&
        !(b->scope_level = rd_arena_strndup(a, v->scope_level, v->scope_level_len)))
        return NULL;
    return b;
}

Recovery__V1__BreakerState *rd_codec_breaker_state_out(rd_arena *a, const rd_breaker_view *v)
{
    return breaker_out(a, v);
}

/* The timestamp text of e, reusing the previous event's when the instant is
 * the same (every event of one Decide answer shares it). */
static char *timestamp_out(rd_arena *a, const rd_trace_event *e, const rd_trace_event *prev,
                           char *prev_ts)
{
    if (prev && prev_ts && prev->timestamp_ms == e->timestamp_ms)
        return prev_ts;
    char *ts = rd_arena_alloc(a, 40);
    if (ts)
        rd_format_rfc3339(ts, 40, e->timestamp_ms);
    return ts;
}

static Recovery__V1__TraceEvent *event_out(rd_arena *a, const char *turn_id, const rd_trace_event *e,
                                           char *ts)
{
    Recovery__V1__TraceEvent *t = ARENA_NEW(a, Recovery__V1__TraceEvent,
                                           RECOVERY__V1__TRACE_EVENT__INIT);
    if (!t || !ts)
        return NULL;
    t->event_type = wire_str(rd_event_type_name(e->type));
    t->tool_id = (char *)e->tool_id;
    t->turn_id = wire_str(turn_id);
    t->error = (char *)e->error;
    t->classification = wire_str(e->retryability ? rd_retryability_name(e->retryability) : "");
    t->circuit_breaker_state = wire_str(e->breaker ? rd_breaker_status_name(e->breaker) : "");
    t->retry_count = e->retry_count;
    t->decision = wire_str(e->decision ? rd_action_name(e->decision) : "");
    t->timestamp = ts;
    t->detail = (char *)e->detail;
    t->timeout_ms = e->timeout_ms;
    t->sequence = e->sequence;
    t->trace_id = (char *)e->trace_id;
    t->span_id = (char *)e->span_id;
    return t;
}

static Recovery__V1__TraceEvent **events_out(rd_arena *a, const char *turn_id,
                                             const rd_trace_event *ev, size_t n)
{
    Recovery__V1__TraceEvent **out = rd_arena_alloc(a, (n ? n : 1) * sizeof *out);
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        const rd_trace_event *prev = i ? &ev[i - 1] : NULL;
        char *ts = timestamp_out(a, &ev[i], prev, prev ? out[i - 1]->timestamp : NULL);
        if (!(out[i] = event_out(a, turn_id, &ev[i], ts)))
            return NULL;
    }
    return out;
}

Recovery__V1__TraceEvent **rd_codec_events_out(rd_arena *a, const char *turn_id,
                                              const rd_trace_event *ev, size_t n)
{
    return events_out(a, turn_id, ev, n);
}

static char **names_out(rd_arena *a, const char **names, size_t n)
{
    char **out = rd_arena_alloc(a, (n ? n : 1) * sizeof *out);
    if (out)
        for (size_t i = 0; i < n; i++)
            out[i] = wire_str(names[i]);
    return out;
}

static Recovery__V1__TurnSummary *summary_out(rd_arena *a, const rd_turn_summary *s)
{
    Recovery__V1__TurnSummary *r = ARENA_NEW(a, Recovery__V1__TurnSummary,
                                            RECOVERY__V1__TURN_SUMMARY__INIT);
    if (!r)
        return NULL;
    r->n_completed = s->n_completed;
    r->n_failed = s->n_failed;
    r->n_timed_out = s->n_timed_out;
    r->n_skipped = s->n_skipped;
    if (!(r->completed = names_out(a, s->completed, s->n_completed)) ||
        !(r->failed = names_out(a, s->failed, s->n_failed)) ||
        !(r->timed_out = names_out(a, s->timed_out, s->n_timed_out)) ||
        !(r->skipped = names_out(a, s->skipped, s->n_skipped)))
        return NULL;
    r->partial_result = wire_str(s->partial_result);
    r->turn_failed = s->turn_failed;
    return r;
}

Recovery__V1__GetTurnTraceResponse *rd_codec_turn_trace_out(rd_arena *a, const char *turn_id,
                                                            const rd_turn_trace *t)
{
    Recovery__V1__GetTurnTraceResponse *r = ARENA_NEW(a, Recovery__V1__GetTurnTraceResponse,
                                                     RECOVERY__V1__GET_TURN_TRACE_RESPONSE__INIT);
    if (!r)
        return NULL;
    r->turn_id = wire_str(turn_id);
    r->n_events = t->n_events;
    if (!(r->events = events_out(a, turn_id, t->events, t->n_events)) ||
        !(r->summary = summary_out(a, &t->summary)))
        return NULL;
    return r;
}
