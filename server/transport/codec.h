/* Conversion between recovery.v1 protobuf-c messages and the decision
 * core's plain structs, with field-level validation.
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
#include "recovery/v1/recovery.pb-c.h"

/* A protobuf-c allocator that takes memory from the arena (free is a no-op). */
ProtobufCAllocator rd_codec_allocator(rd_arena *arena);

/* ---- requests -> core ---- */

/* Bounds of the request's numbers, besides the core's text limits
 * (types.h). Beyond the first two a value is a bug or an attack, and
 * INVALID_ARGUMENT beats overflowing; requests.c accepts the same ranges. */
#define RD_ATTEMPT_MAX 100000
#define RD_DURATION_MS_MAX (366LL * 24 * 3600 * 1000)
#define RD_HTTP_STATUS_MIN 100 /* ToolError.http_status, when not 0 */
#define RD_HTTP_STATUS_MAX 599
#define RD_GRPC_CODE_MAX 16    /* ToolError.grpc_code: 0 (not given) to UNAUTHENTICATED */

int rd_codec_classify_in(const Recovery__V1__ClassifyRequest *pb, rd_tool_error *err,
                         rd_status *st);
int rd_codec_decide_in(const Recovery__V1__DecideRequest *pb, rd_arena *arena,
                       rd_decide_input *in, rd_tool_error *err, rd_status *st);
int rd_codec_outcome_in(const Recovery__V1__RecordOutcomeRequest *pb, rd_outcome_input *in,
                        rd_tool_error *err, rd_status *st);
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

int rd_codec_turn_trace_in(const Recovery__V1__GetTurnTraceRequest *pb, rd_status *st);

/* ---- core -> responses (NULL when the arena is out of memory) ---- */

/* The hot RPCs' answers as protobuf-c messages. The server writes these
 * answers as bytes straight from the structs (answers.c); these builders
 * are the reference that tests/unit/test_answers.c compares those bytes
 * with, and they share their parts with the builders below. */
Recovery__V1__ClassifyResponse *rd_codec_classify_out(rd_arena *a, const rd_classify_result *r);
Recovery__V1__DecideResponse *rd_codec_decide_out(rd_arena *a, const char *turn_id,
                                                  const rd_decision *d);
Recovery__V1__RecordOutcomeResponse *rd_codec_outcome_out(rd_arena *a,
                                                          const rd_outcome_result *r);
Recovery__V1__GetBreakerStateResponse *rd_codec_breakers_out(rd_arena *a,
                                                             const rd_breaker_view *v,
                                                             size_t n);
/* The answers of the other RPCs and stream messages, packed by pbpack.c.
 * One breaker (forced / forced_until_ms included): */
Recovery__V1__BreakerState *rd_codec_breaker_state_out(rd_arena *a, const rd_breaker_view *v);
Recovery__V1__GetTurnTraceResponse *rd_codec_turn_trace_out(rd_arena *a, const char *turn_id,
                                                            const rd_turn_trace *t);

#endif
