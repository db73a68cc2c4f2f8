/* The promise of transport/requests.c, checked on one input: a request a
 * direct reader (Decide, Classify, RecordOutcome) accepts is one that
 * protobuf-c decodes and codec.c accepts, into the same structs. Shared by
 * tests/unit/test_requests.c and tests/fuzz/fuzz_requests.c. */
#ifndef RD_TEST_REQUEST_COMPARE_H
#define RD_TEST_REQUEST_COMPARE_H

#include <protobuf-c/protobuf-c.h>
#include <stdio.h>
#include <string.h>

#include "domain/arena.h"
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
    if (a->read_only_hint != b->read_only_hint || a->destructive_hint != b->destructive_hint ||
        a->idempotent_hint != b->idempotent_hint)
        return "error's MCP hints";
    return a->retry_after_ms != b->retry_after_ms ? "error.retry_after_ms" : NULL;
}

/* Two optional errors: both absent, or both present and the same. */
static const char *error_mismatch(const rd_tool_error *a, const rd_tool_error *b)
{
    if (!a != !b)
        return "error (present in one only)";
    return a ? tool_error_mismatch(a, b) : NULL;
}

/* The ids Decide and RecordOutcome share, tool_id first. */
static const char *ids_mismatch(const char *const a[5], const char *const b[5])
{
    if (!same_text(a[0], b[0]))
        return "tool_id";
    for (int i = 1; i < 5; i++)
        if (!same_text(a[i], b[i]))
            return "an optional id";
    return NULL;
}

#define RD_IDS_OF(in)                                                                        \
    ((const char *const[5]){(in)->tool_id, (in)->turn_id, (in)->executor_id, (in)->outcome_id,  \
                            (in)->permit_id})

/* A Classify request as either path reads it. */
typedef struct classify_input {
    const char *tool_id;
    const rd_tool_error *error;
} classify_input;

/* Any of the three requests, as either path reads it. */
typedef union request_input {
    rd_decide_input decide;
    classify_input classify;
    rd_outcome_input outcome;
} request_input;

static const char *decide_input_mismatch(const request_input *ra, const request_input *rb)
{
    const rd_decide_input *a = &ra->decide, *b = &rb->decide;
    if (a->attempt != b->attempt || a->elapsed_ms != b->elapsed_ms)
        return "attempt or elapsed_ms";
    if (a->has_turn_remaining != b->has_turn_remaining ||
        a->turn_remaining_ms != b->turn_remaining_ms)
        return "turn_remaining_ms";
    if (a->n_plan != 0 || b->n_plan != 0)
        return "plan";
    if (!same_text(a->idempotency_key, b->idempotency_key))
        return "idempotency_key";
    if (a->n_scope != 0 || b->n_scope != 0)
        return "scope";
    const char *ids = ids_mismatch(RD_IDS_OF(a), RD_IDS_OF(b));
    return ids ? ids : error_mismatch(a->error, b->error);
}

static const char *classify_input_mismatch(const request_input *a, const request_input *b)
{
    if (!same_text(a->classify.tool_id, b->classify.tool_id))
        return "tool_id";
    return error_mismatch(a->classify.error, b->classify.error);
}

static const char *outcome_input_mismatch(const request_input *ra, const request_input *rb)
{
    const rd_outcome_input *a = &ra->outcome, *b = &rb->outcome;
    if (a->success != b->success)
        return "success";
    if (a->attempt != b->attempt || a->latency_ms != b->latency_ms)
        return "attempt or latency_ms";
    if (a->n_scope != 0 || b->n_scope != 0)
        return "scope";
    const char *ids = ids_mismatch(RD_IDS_OF(a), RD_IDS_OF(b));
    return ids ? ids : error_mismatch(a->error, b->error);
}

/* Each request read by its direct reader, and by codec.c from protobuf-c's
 * struct pb. */
static bool decide_direct(const uint8_t *data, size_t len, rd_arena *a, request_input *in,
                          rd_tool_error *err)
{
    return rd_request_decide(data, len, a, &in->decide, err);
}

static int decide_generic(const void *pb, rd_arena *a, request_input *in, rd_tool_error *err,
                          rd_status *st)
{
    return rd_codec_decide_in(pb, a, &in->decide, err, st);
}

static bool classify_direct(const uint8_t *data, size_t len, rd_arena *a, request_input *in,
                            rd_tool_error *err)
{
    in->classify.error = err;
    return rd_request_classify(data, len, a, &in->classify.tool_id, err);
}

static int classify_generic(const void *pb, rd_arena *a, request_input *in, rd_tool_error *err,
                            rd_status *st)
{
    const Recovery__V1__ClassifyRequest *req = pb;
    in->classify = (classify_input){req->tool_id, err};
    return rd_codec_classify_in(req, err, st);
}

static bool outcome_direct(const uint8_t *data, size_t len, rd_arena *a, request_input *in,
                           rd_tool_error *err)
{
    return rd_request_outcome(data, len, a, &in->outcome, err);
}

static int outcome_generic(const void *pb, rd_arena *a, request_input *in, rd_tool_error *err,
                           rd_status *st)
{
    return rd_codec_outcome_in(pb, a, &in->outcome, err, st);
}

/* One request type's two paths and how their structs are compared. */
typedef struct request_reader {
    const char *name;
    const ProtobufCMessageDescriptor *type;
    bool (*direct)(const uint8_t *data, size_t len, rd_arena *a, request_input *in,
                   rd_tool_error *err);
    int (*generic)(const void *pb, rd_arena *a, request_input *in, rd_tool_error *err,
                   rd_status *st);
    const char *(*mismatch)(const request_input *direct, const request_input *generic);
} request_reader;

enum { RD_READ_DECIDE, RD_READ_CLASSIFY, RD_READ_OUTCOME, RD_READERS };

static const request_reader rd_readers[RD_READERS] = {
    [RD_READ_DECIDE] = {"Decide", &recovery__v1__decide_request__descriptor, decide_direct,
                        decide_generic, decide_input_mismatch},
    [RD_READ_CLASSIFY] = {"Classify", &recovery__v1__classify_request__descriptor,
                          classify_direct, classify_generic, classify_input_mismatch},
    [RD_READ_OUTCOME] = {"RecordOutcome", &recovery__v1__record_outcome_request__descriptor,
                         outcome_direct, outcome_generic, outcome_input_mismatch},
};

/* What is wrong with r's direct reader's answer for data[0, len), in `why`
 * (NULL: nothing). *accepted tells whether it read the request. */
static const char *reader_mismatch(const request_reader *r, const uint8_t *data, size_t len,
                                   rd_arena *a, bool *accepted, char *why, size_t why_size)
{
    request_input direct, generic;
    rd_tool_error direct_err, generic_err;
    *accepted = r->direct(data, len, a, &direct, &direct_err);
    if (!*accepted)
        return NULL;
    ProtobufCAllocator alloc = rd_codec_allocator(a);
    const ProtobufCMessage *pb = protobuf_c_message_unpack(r->type, &alloc, len, data);
    if (!pb)
        return "accepted bytes protobuf-c cannot decode";
    rd_status st;
    rd_status_clear(&st);
    if (r->generic(pb, a, &generic, &generic_err, &st) != RD_OK) {
        snprintf(why, why_size, "accepted a request the codec rejects (%s)", st.msg);
        return why;
    }
    const char *field = r->mismatch(&direct, &generic);
    if (!field)
        return NULL;
    snprintf(why, why_size, "read another %s than the generic path", field);
    return why;
}

#endif
