/* Conversion between recovery.v1 protobuf-c messages and the decision
 * engine's plain structs, with field-level validation.
 *
 * Decoding validates every field the core relies on and fails with
 * RD_ERR_INVALID and a message naming the field ("error.kind: unknown value
 * 99"). Encoding builds protobuf-c structs whose memory lives in the arena.
 * Core structs produced here borrow strings from the decoded request, which
 * itself lives in the arena (see rd_codec_allocator). */
#ifndef RD_TRANSPORT_CODEC_H
#define RD_TRANSPORT_CODEC_H

#include <protobuf-c/protobuf-c.h>

#include "engine/decide.h"
#include "domain/trace.h"
#include "recovery/v1/recovery.pb-c.h"

/* A protobuf-c allocator that takes memory from the arena (free is a no-op). */
ProtobufCAllocator rd_codec_allocator(rd_arena *arena);

/* ---- requests -> core ---- */

/* Bounds of the request's numbers, besides the domain's text limits
 * (types.h). Beyond the first two a value is a bug or an attack, and
 * INVALID_ARGUMENT beats overflowing. */
#define RD_ATTEMPT_MAX 100000
#define RD_DURATION_MS_MAX (366LL * 24 * 3600 * 1000)
#define RD_HTTP_STATUS_MIN 100 /* ToolError.http_status, when not 0 */
#define RD_HTTP_STATUS_MAX 599
#define RD_GRPC_CODE_MAX 16    /* ToolError.grpc_code: 0 (not given) to UNAUTHENTICATED */

/* Whether s[0, len) holds a control character (C0 or DEL). */
static inline bool rd_codec_has_control(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f)
            return true;
    }
    return false;
}

/* ---- the field checks ----
 *
 * The one statement of what a request field may hold: one rule per field
 * of the hot requests (and one per kind of field for the others). Both
 * request paths apply the same rules: codec.c on protobuf-c's structs,
 * with an error naming the field; requests.c on the value as it comes off
 * the wire, through the predicates below, declining what a rule refuses so
 * that codec.c names it. */
typedef enum {
    RD_RULE_TEXT,  /* a string: at most `max` bytes of valid UTF-8 */
    RD_RULE_ID,    /* an id: a text without control characters (log lines, store keys) */
    RD_RULE_RANGE, /* an integer in [lo, hi] (or 0, with zero_ok) */
    RD_RULE_ENUM,  /* an enum value in [lo, hi]: "unknown value" otherwise */
} rd_rule_kind;

typedef struct rd_field_rule {
    const char *name; /* as an error names it: "error.kind" */
    rd_rule_kind kind;
    bool required;    /* texts: not empty */
    bool zero_ok;     /* numbers: 0 (not given) is allowed besides [lo, hi] */
    size_t max;       /* texts: the most bytes */
    int64_t lo, hi;   /* numbers */
} rd_field_rule;

#define RD_TEXT_RULE(name_, kind_, max_, required_) {.name = (name_), .kind = (kind_), \
    .required = (required_), .max = (max_)}
#define RD_NUMBER_RULE(name_, kind_, lo_, hi_, zero_ok_) {.name = (name_), .kind = (kind_), \
    .zero_ok = (zero_ok_), .lo = (lo_), .hi = (hi_)}

/* The ids of Decide, RecordOutcome and Classify. */
static const rd_field_rule RD_RULE_TOOL_ID = RD_TEXT_RULE("tool_id", RD_RULE_ID, RD_ID_MAX, true);
static const rd_field_rule RD_RULE_TURN_ID = RD_TEXT_RULE("turn_id", RD_RULE_ID, RD_ID_MAX, false);
static const rd_field_rule RD_RULE_EXECUTOR_ID =
    RD_TEXT_RULE("executor_id", RD_RULE_ID, RD_ID_MAX, false);
static const rd_field_rule RD_RULE_OUTCOME_ID =
    RD_TEXT_RULE("outcome_id", RD_RULE_ID, RD_ID_MAX, false);
static const rd_field_rule RD_RULE_PERMIT_ID =
    RD_TEXT_RULE("permit_id", RD_RULE_ID, RD_PERMIT_ID_MAX, false);
/* Their numbers. */
static const rd_field_rule RD_RULE_ATTEMPT =
    RD_NUMBER_RULE("attempt", RD_RULE_RANGE, 0, RD_ATTEMPT_MAX, false);
static const rd_field_rule RD_RULE_ELAPSED_MS =
    RD_NUMBER_RULE("elapsed_ms", RD_RULE_RANGE, 0, RD_DURATION_MS_MAX, false);
static const rd_field_rule RD_RULE_LATENCY_MS =
    RD_NUMBER_RULE("latency_ms", RD_RULE_RANGE, 0, RD_DURATION_MS_MAX, false);
static const rd_field_rule RD_RULE_TURN_REMAINING_MS =
    RD_NUMBER_RULE("turn_remaining_ms", RD_RULE_RANGE, -RD_DURATION_MS_MAX, RD_DURATION_MS_MAX,
                   false);
/* ToolError's fields; the gRPC receive limit bounds the message. */
static const rd_field_rule RD_RULE_ERROR_MESSAGE =
    RD_TEXT_RULE("error.message", RD_RULE_TEXT, SIZE_MAX, false);
static const rd_field_rule RD_RULE_ERROR_CODE =
    RD_TEXT_RULE("error.code", RD_RULE_TEXT, RD_SHORT_FIELD_MAX, false);
static const rd_field_rule RD_RULE_ERROR_EXCEPTION_TYPE =
    RD_TEXT_RULE("error.exception_type", RD_RULE_TEXT, RD_SHORT_FIELD_MAX, false);
static const rd_field_rule RD_RULE_ERROR_KIND =
    RD_NUMBER_RULE("error.kind", RD_RULE_ENUM, 0, RD_KIND_COUNT - 1, false);
static const rd_field_rule RD_RULE_ERROR_SOURCE =
    RD_NUMBER_RULE("error.source", RD_RULE_ENUM, 0, RD_SOURCE_COUNT - 1, false);
static const rd_field_rule RD_RULE_ERROR_HTTP_STATUS = RD_NUMBER_RULE(
    "error.http_status", RD_RULE_RANGE, RD_HTTP_STATUS_MIN, RD_HTTP_STATUS_MAX, true);
static const rd_field_rule RD_RULE_ERROR_GRPC_CODE =
    RD_NUMBER_RULE("error.grpc_code", RD_RULE_RANGE, 0, RD_GRPC_CODE_MAX, false);
static const rd_field_rule RD_RULE_ERROR_RETRY_AFTER_MS =
    RD_NUMBER_RULE("error.retry_after_ms", RD_RULE_RANGE, 0, RD_DURATION_MS_MAX, false);

/* The MCP annotations of ToolError and Decide's idempotency key
 * (domain/effects.h); read by the generic path only (two-byte tags). */
static const rd_field_rule RD_RULE_ERROR_READ_ONLY_HINT =
    RD_NUMBER_RULE("error.read_only_hint", RD_RULE_ENUM, 0, RD_HINT_COUNT - 1, false);
static const rd_field_rule RD_RULE_ERROR_DESTRUCTIVE_HINT =
    RD_NUMBER_RULE("error.destructive_hint", RD_RULE_ENUM, 0, RD_HINT_COUNT - 1, false);
static const rd_field_rule RD_RULE_ERROR_IDEMPOTENT_HINT =
    RD_NUMBER_RULE("error.idempotent_hint", RD_RULE_ENUM, 0, RD_HINT_COUNT - 1, false);
static const rd_field_rule RD_RULE_IDEMPOTENCY_KEY =
    RD_TEXT_RULE("idempotency_key", RD_RULE_ID, RD_ID_MAX, false);

/* Whether the number v passes rule r. */
static inline bool rd_rule_number_ok(const rd_field_rule *r, int64_t v)
{
    return (v >= r->lo && v <= r->hi) || (r->zero_ok && v == 0);
}

/* Whether the text s[0, len) passes rule r. Valid UTF-8 holds no NUL
 * (rd_utf8_valid_len stops at one), so a passing text is a whole C string. */
static inline bool rd_rule_text_ok(const rd_field_rule *r, const char *s, size_t len)
{
    if (len == 0)
        return !r->required;
    return len <= r->max && rd_utf8_valid_len(s, len) == len &&
           (r->kind != RD_RULE_ID || !rd_codec_has_control(s, len));
}

/* The same with the error that names the field (`field`, or the rule's
 * name when NULL): RD_OK or RD_ERR_INVALID. The text's length goes to *len
 * (NULL: not wanted). */
int rd_rule_text_in(const rd_field_rule *r, const char *field, const char *s, size_t *len,
                    rd_status *st);
int rd_rule_number_in(const rd_field_rule *r, const char *field, int64_t v, rd_status *st);

int rd_codec_classify_in(const Recovery__V1__ClassifyRequest *pb, rd_tool_error *err,
                         rd_status *st);
int rd_codec_decide_in(const Recovery__V1__DecideRequest *pb, rd_arena *arena,
                       rd_decide_input *in, rd_tool_error *err, rd_status *st);
int rd_codec_outcome_in(const Recovery__V1__RecordOutcomeRequest *pb, rd_arena *arena,
                        rd_outcome_input *in, rd_tool_error *err, rd_status *st);
int rd_codec_breakers_in(const Recovery__V1__GetBreakerStateRequest *pb, rd_status *st);
/* A list of tool ids (GetBreakerState, WatchBreakers): at most max_n, each
 * required, at most RD_ID_MAX bytes and valid UTF-8; the field named on
 * error is "tool_ids[i]". */
int rd_codec_tool_ids_in(char *const *ids, size_t n, size_t max_n, rd_status *st);
/* One string field of any request: required (not empty) when asked, at
 * most max bytes, valid UTF-8 (proto3 strings must be, and answers echo
 * them). */
int rd_codec_text_in(const char *s, const char *field, size_t max, bool required,
                     rd_status *st);
/* An id field (tool_id, turn_id, ...): rd_codec_text_in's checks, and no
 * control character: an id is written into log lines, store keys and the
 * model's text, where a newline or an escape would split or forge a line. */
int rd_codec_id_in(const char *s, const char *field, size_t max, bool required, rd_status *st);

int rd_codec_turn_trace_in(const Recovery__V1__GetTurnTraceRequest *pb, rd_status *st);

/* ---- core -> responses (NULL when the arena is out of memory) ---- */

/* The hot RPCs' answers are written as bytes straight from the engine's
 * structs (answers.c). The other RPCs' answers and the stream messages are
 * built here and packed by pbpack.c. One breaker (forced / forced_until_ms
 * included): */
Recovery__V1__BreakerState *rd_codec_breaker_state_out(rd_arena *a, const rd_breaker_view *v);
/* A turn's trace events as protobuf-c messages (strings borrowed from ev
 * and a, the array from a); NULL when out of memory. */
Recovery__V1__TraceEvent **rd_codec_events_out(rd_arena *a, const char *turn_id,
                                              const rd_trace_event *ev, size_t n);
Recovery__V1__GetTurnTraceResponse *rd_codec_turn_trace_out(rd_arena *a, const char *turn_id,
                                                            const rd_turn_trace *t);

#endif
