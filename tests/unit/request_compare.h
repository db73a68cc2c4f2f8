/* The promise of transport/requests.c, checked on one input: a request the
 * direct reader accepts is one that protobuf-c decodes and codec.c accepts,
 * into the same structs. Shared by tests/unit/test_requests.c and
 * tests/fuzz/fuzz_requests.c. */
#ifndef RD_TEST_REQUEST_COMPARE_H
#define RD_TEST_REQUEST_COMPARE_H

#include <protobuf-c/protobuf-c.h>
#include <stdio.h>
#include <string.h>

#include "core/arena.h"
#include "transport/codec.h"
#include "transport/requests.h"

static bool same_text(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

static const char *tool_error_mismatch(const rd_tool_error *a, const rd_tool_error *b)
{
    if (!same_text(a->message, b->message) || a->message_len != b->message_len)
        return "error.message";
    if (a->http_status != b->http_status)
        return "error.http_status";
    if (a->grpc_code != b->grpc_code)
        return "error.grpc_code";
    if (!same_text(a->code, b->code))
        return "error.code";
    if (!same_text(a->exception_type, b->exception_type))
        return "error.exception_type";
    if (a->kind != b->kind || a->source != b->source)
        return "error.kind or error.source";
    return a->retry_after_ms != b->retry_after_ms ? "error.retry_after_ms" : NULL;
}

static const char *decide_input_mismatch(const rd_decide_input *a, const rd_decide_input *b)
{
    if (!same_text(a->tool_id, b->tool_id))
        return "tool_id";
    if (!same_text(a->turn_id, b->turn_id) || !same_text(a->executor_id, b->executor_id) ||
        !same_text(a->outcome_id, b->outcome_id) || !same_text(a->permit_id, b->permit_id))
        return "an optional id";
    if (a->attempt != b->attempt || a->elapsed_ms != b->elapsed_ms)
        return "attempt or elapsed_ms";
    if (a->has_turn_remaining != b->has_turn_remaining ||
        a->turn_remaining_ms != b->turn_remaining_ms)
        return "turn_remaining_ms";
    if (a->n_plan != 0 || b->n_plan != 0)
        return "plan";
    if (!a->error != !b->error)
        return "error (present in one only)";
    return a->error ? tool_error_mismatch(a->error, b->error) : NULL;
}

/* What is wrong with the direct reader's answer for data[0, len), in
 * `why` (NULL: nothing). *accepted tells whether it read the request. */
static const char *decide_reader_mismatch(const uint8_t *data, size_t len, rd_arena *a,
                                          bool *accepted, char *why, size_t why_size)
{
    rd_decide_input direct, generic;
    rd_tool_error direct_err, generic_err;
    *accepted = rd_request_decide(data, len, a, &direct, &direct_err);
    if (!*accepted)
        return NULL;
    ProtobufCAllocator alloc = rd_codec_allocator(a);
    const Recovery__V1__DecideRequest *pb = (const void *)protobuf_c_message_unpack(
        &recovery__v1__decide_request__descriptor, &alloc, len, data);
    if (!pb)
        return "accepted bytes protobuf-c cannot decode";
    rd_status st;
    rd_status_clear(&st);
    if (rd_codec_decide_in(pb, a, &generic, &generic_err, &st) != RD_OK) {
        snprintf(why, why_size, "accepted a request the codec rejects (%s)", st.msg);
        return why;
    }
    const char *field = decide_input_mismatch(&direct, &generic);
    if (!field)
        return NULL;
    snprintf(why, why_size, "read another %s than the generic path", field);
    return why;
}

#endif
