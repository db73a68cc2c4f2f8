/* The Decide, Classify and RecordOutcome requests read straight into the
 * core's structs (transport/requests.c) against the generic path
 * (protobuf-c, then codec.c): the requests executors send are read, into
 * the same structs; values at each limit are read the same; every request
 * the generic path rejects, and every shape it reads another way (a field
 * sent twice, an unknown field, a long tag, a plan), is declined, so the
 * generic path answers it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "request_compare.h"

static rd_arena arena;

/* 'x' repeated, NUL-terminated: its last n bytes are a string of length n. */
/* A long message: longer than the classifier reads, read whole here. */
#define LONG_MESSAGE 65536
static char xs[LONG_MESSAGE + 2];
#define X_TEXT(n) (xs + sizeof xs - 1 - (n))

static int setup(void **state)
{
    (void)state;
    rd_arena_init(&arena, 1 << 16);
    memset(xs, 'x', sizeof xs - 1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    rd_arena_free(&arena);
    return 0;
}

/* ---- requests as protobuf-c packs them ---- */

typedef struct packed {
    uint8_t bytes[LONG_MESSAGE + 4096];
    size_t len;
} packed;

static packed buf;

static const packed *pack(const ProtobufCMessage *m)
{
    buf.len = protobuf_c_message_get_packed_size(m);
    assert_true(buf.len <= sizeof buf.bytes);
    assert_int_equal(protobuf_c_message_pack(m, buf.bytes), buf.len);
    return &buf;
}

/* Reads p both ways: the reader's direct reader must accept it exactly when
 * `accept`, and an accepted request must match the generic path. */
static void expect_read(int reader, const packed *p, bool accept)
{
    char why[256];
    bool accepted;
    const char *wrong = reader_mismatch(&rd_readers[reader], p->bytes, p->len, &arena,
                                        &accepted, why, sizeof why);
    if (wrong)
        fail_msg("%s: %s", rd_readers[reader].name, wrong);
    if (accepted != accept)
        fail_msg("the %s reader %s the request", rd_readers[reader].name,
                 accepted ? "accepted" : "declined");
    rd_arena_reset(&arena);
}

static void expect_bytes(int reader, const char *bytes, size_t len, bool accept)
{
    memcpy(buf.bytes, bytes, len);
    buf.len = len;
    expect_read(reader, &buf, accept);
}

/* Every request with every field set, each carrying r->error. */
typedef struct requests {
    Recovery__V1__ToolError error;
    Recovery__V1__DecideRequest decide;
    Recovery__V1__ClassifyRequest classify;
    Recovery__V1__RecordOutcomeRequest outcome;
} requests;

static void full_error(Recovery__V1__ToolError *e)
{
    *e = (Recovery__V1__ToolError)RECOVERY__V1__TOOL_ERROR__INIT;
    e->message = "503 Service Unavailable: upstream connect error";
    e->http_status = 503;
    e->grpc_code = 14;
    e->code = "ECONNRESET";
    e->exception_type = "httpx.ConnectError";
    e->kind = RECOVERY__V1__ERROR_KIND__ERROR_KIND_EXECUTION_ERROR;
    e->source = RECOVERY__V1__ERROR_SOURCE__ERROR_SOURCE_MCP;
    e->retry_after_ms = 1800;
}

static void full_decide(Recovery__V1__DecideRequest *r, Recovery__V1__ToolError *e)
{
    *r = (Recovery__V1__DecideRequest)RECOVERY__V1__DECIDE_REQUEST__INIT;
    r->tool_id = "flight_search";
    r->error = e;
    r->attempt = 2;
    r->elapsed_ms = 30000;
    r->turn_id = "turn-7";
    r->turn_budget_case = RECOVERY__V1__DECIDE_REQUEST__TURN_BUDGET_TURN_REMAINING_MS;
    r->turn_remaining_ms = 12000;
    r->executor_id = "exec-1";
    r->outcome_id = "o-42";
    r->permit_id = "7:3";
}

static void full_outcome(Recovery__V1__RecordOutcomeRequest *r, Recovery__V1__ToolError *e)
{
    *r = (Recovery__V1__RecordOutcomeRequest)RECOVERY__V1__RECORD_OUTCOME_REQUEST__INIT;
    r->tool_id = "hotel_search";
    r->success = false;
    r->error = e;
    r->latency_ms = 30000;
    r->attempt = 3;
    r->turn_id = "turn-1";
    r->outcome_id = "o-2";
    r->permit_id = "9:1";
    r->executor_id = "exec-2";
}

/* The full request `reader` reads, from *r. */
static ProtobufCMessage *full(requests *r, int reader)
{
    full_error(&r->error);
    full_decide(&r->decide, &r->error);
    r->classify = (Recovery__V1__ClassifyRequest)RECOVERY__V1__CLASSIFY_REQUEST__INIT;
    r->classify.tool_id = "web_fetch";
    r->classify.error = &r->error;
    full_outcome(&r->outcome, &r->error);
    ProtobufCMessage *const of[RD_READERS] = {
        [RD_READ_DECIDE] = &r->decide.base,
        [RD_READ_CLASSIFY] = &r->classify.base,
        [RD_READ_OUTCOME] = &r->outcome.base,
    };
    return of[reader];
}

static request_input read_in;
static rd_tool_error read_err;

/* The reader's full request as its direct reader reads it, once it is
 * checked to read as the generic path does. The strings stay in the arena
 * until the next request is read. */
static const request_input *read_full(int reader)
{
    requests r;
    expect_read(reader, pack(full(&r, reader)), true);
    assert_true(rd_readers[reader].direct(buf.bytes, buf.len, &arena, &read_in, &read_err));
    return &read_in;
}

/* Every field of full_error()'s error, as read_full() reads it. */
static void expect_full_error(const rd_tool_error *err)
{
    assert_ptr_equal(err, &read_err);
    assert_string_equal(err->message, "503 Service Unavailable: upstream connect error");
    assert_int_equal(err->message_len, strlen(err->message));
    assert_int_equal(err->http_status, 503);
    assert_int_equal(err->grpc_code, 14);
    assert_string_equal(err->code, "ECONNRESET");
    assert_string_equal(err->exception_type, "httpx.ConnectError");
    assert_int_equal(err->kind, RD_KIND_EXECUTION_ERROR);
    assert_int_equal(err->source, RD_SOURCE_MCP);
    assert_int_equal(err->retry_after_ms, 1800);
}

/* ---- fields set by name ---- */

/* A field of a request or of its error, and a value for it. */
typedef struct setting {
    const char *field;
    const char *text;   /* a string field's */
    int64_t number;     /* an integer, enum or bool field's */
} setting;

static void set_field(ProtobufCMessage *m, const setting *s)
{
    const ProtobufCFieldDescriptor *f =
        protobuf_c_message_descriptor_get_field_by_name(m->descriptor, s->field);
    assert_non_null(f);
    char *at = (char *)m + f->offset;
    switch (f->type) {
    case PROTOBUF_C_TYPE_STRING:
        *(const char **)at = s->text;
        return;
    case PROTOBUF_C_TYPE_MESSAGE:
        *(void **)at = NULL; /* left out */
        return;
    case PROTOBUF_C_TYPE_INT64:
        *(int64_t *)at = s->number;
        return;
    default: /* int32, enums and bools are int-sized */
        *(int32_t *)at = (int32_t)s->number;
    }
}

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static void set_fields(ProtobufCMessage *m, const setting *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        set_field(m, &s[i]);
}

/* Each setting alone, on the reader's full request (on its error when
 * `in_error`), must be declined. */
static void expect_each_declined(int reader, const setting *s, size_t n, bool in_error)
{
    for (size_t i = 0; i < n; i++) {
        requests r;
        ProtobufCMessage *m = full(&r, reader);
        set_field(in_error ? &r.error.base : m, &s[i]);
        print_message("%s with %s%s spoiled\n", rd_readers[reader].name,
                      in_error ? "error." : "", s[i].field);
        expect_read(reader, pack(m), false);
    }
}

/* ---- values at each limit ---- */

static const setting ERROR_LIMITS[] = {
    {"message", .text = X_TEXT(LONG_MESSAGE)},
    {"code", .text = X_TEXT(RD_SHORT_FIELD_MAX)},
    {"exception_type", .text = X_TEXT(RD_SHORT_FIELD_MAX)},
    {"http_status", .number = RD_HTTP_STATUS_MIN},
    {"grpc_code", .number = RD_GRPC_CODE_MAX},
    {"kind", .number = RD_KIND_COUNT - 1},
    {"source", .number = RD_SOURCE_COUNT - 1},
    {"retry_after_ms", .number = RD_DURATION_MS_MAX},
};

/* The other ends of the ranges. */
static const setting ERROR_OTHER_LIMITS[] = {
    {"http_status", .number = RD_HTTP_STATUS_MAX},
    {"grpc_code", .number = 0},
    {"retry_after_ms", .number = 0},
};

/* The ids and attempt of Decide and RecordOutcome. */
static const setting ID_LIMITS[] = {
    {"tool_id", .text = X_TEXT(RD_ID_MAX)},
    {"turn_id", .text = X_TEXT(RD_ID_MAX)},
    {"executor_id", .text = X_TEXT(RD_ID_MAX)},
    {"outcome_id", .text = X_TEXT(RD_ID_MAX)},
    {"permit_id", .text = X_TEXT(RD_PERMIT_ID_MAX)},
    {"attempt", .number = RD_ATTEMPT_MAX},
};

static const setting DECIDE_LIMITS[] = {
    {"elapsed_ms", .number = RD_DURATION_MS_MAX},
    {"turn_remaining_ms", .number = -RD_DURATION_MS_MAX},
};

static const setting DECIDE_OTHER_LIMITS[] = {
    {"attempt", .number = 0},
    {"elapsed_ms", .number = 0},
    {"turn_remaining_ms", .number = RD_DURATION_MS_MAX},
};

static const setting CLASSIFY_LIMITS[] = {{"tool_id", .text = X_TEXT(RD_ID_MAX)}};

static const setting OUTCOME_LIMITS[] = {{"latency_ms", .number = RD_DURATION_MS_MAX}};

static const setting OUTCOME_OTHER_LIMITS[] = {
    {"attempt", .number = 0},
    {"latency_ms", .number = 0},
};

typedef struct limits {
    const setting *one, *other;
    size_t n_one, n_other;
    bool ids;
} limits;

/* The reader's full request with every value at one end of its range, then
 * at the other. */
static void expect_limits_read(int reader, const limits *l)
{
    requests r;
    ProtobufCMessage *m = full(&r, reader);
    set_fields(&r.error.base, ERROR_LIMITS, N_OF(ERROR_LIMITS));
    if (l->ids)
        set_fields(m, ID_LIMITS, N_OF(ID_LIMITS));
    set_fields(m, l->one, l->n_one);
    expect_read(reader, pack(m), true);
    set_fields(&r.error.base, ERROR_OTHER_LIMITS, N_OF(ERROR_OTHER_LIMITS));
    set_fields(m, l->other, l->n_other);
    expect_read(reader, pack(m), true);
}

static void test_values_at_each_limit_are_read(void **state)
{
    (void)state;
    const limits decide = {DECIDE_LIMITS, DECIDE_OTHER_LIMITS, N_OF(DECIDE_LIMITS),
                           N_OF(DECIDE_OTHER_LIMITS), true};
    const limits classify = {CLASSIFY_LIMITS, NULL, N_OF(CLASSIFY_LIMITS), 0, false};
    const limits outcome = {OUTCOME_LIMITS, OUTCOME_OTHER_LIMITS, N_OF(OUTCOME_LIMITS),
                            N_OF(OUTCOME_OTHER_LIMITS), true};
    expect_limits_read(RD_READ_DECIDE, &decide);
    expect_limits_read(RD_READ_CLASSIFY, &classify);
    expect_limits_read(RD_READ_OUTCOME, &outcome);
}

/* ---- what the codec rejects ---- */

static const setting ERROR_SPOILS[] = {
    {"message", .text = "\xFF"},
    {"code", .text = "\xFF"},
    {"exception_type", .text = X_TEXT(RD_SHORT_FIELD_MAX + 1)},
    {"http_status", .number = RD_HTTP_STATUS_MIN - 1},
    {"http_status", .number = RD_HTTP_STATUS_MAX + 1},
    {"grpc_code", .number = RD_GRPC_CODE_MAX + 1},
    {"grpc_code", .number = -1},
    {"kind", .number = RD_KIND_COUNT},
    {"source", .number = -1},
    {"retry_after_ms", .number = -1},
    {"retry_after_ms", .number = RD_DURATION_MS_MAX + 1},
};

static const setting ID_SPOILS[] = {
    {"tool_id", .text = ""},
    {"tool_id", .text = X_TEXT(RD_ID_MAX + 1)},
    {"turn_id", .text = "t\xC3("},
    {"turn_id", .text = X_TEXT(RD_ID_MAX + 1)},
    {"executor_id", .text = X_TEXT(RD_ID_MAX + 1)},
    {"outcome_id", .text = X_TEXT(RD_ID_MAX + 1)},
    {"permit_id", .text = X_TEXT(RD_PERMIT_ID_MAX + 1)},
    {"attempt", .number = -1},
    {"attempt", .number = RD_ATTEMPT_MAX + 1},
};

static const setting DECIDE_SPOILS[] = {
    {"elapsed_ms", .number = -1},
    {"elapsed_ms", .number = RD_DURATION_MS_MAX + 1},
    {"turn_remaining_ms", .number = -RD_DURATION_MS_MAX - 1},
    {"turn_remaining_ms", .number = RD_DURATION_MS_MAX + 1},
};

static const setting CLASSIFY_SPOILS[] = {
    {"tool_id", .text = ""},
    {"tool_id", .text = X_TEXT(RD_ID_MAX + 1)},
    {"tool_id", .text = "web\xE6\x97"},
    {"error", .text = NULL}, /* required: left out */
};

static const setting OUTCOME_SPOILS[] = {
    {"latency_ms", .number = -1},
    {"latency_ms", .number = RD_DURATION_MS_MAX + 1},
    {"success", .number = 1}, /* with an error */
};

static void test_requests_the_codec_rejects_are_declined(void **state)
{
    (void)state;
    for (int reader = 0; reader < RD_READERS; reader++)
        expect_each_declined(reader, ERROR_SPOILS, N_OF(ERROR_SPOILS), true);
    expect_each_declined(RD_READ_DECIDE, ID_SPOILS, N_OF(ID_SPOILS), false);
    expect_each_declined(RD_READ_DECIDE, DECIDE_SPOILS, N_OF(DECIDE_SPOILS), false);
    expect_each_declined(RD_READ_CLASSIFY, CLASSIFY_SPOILS, N_OF(CLASSIFY_SPOILS), false);
    expect_each_declined(RD_READ_OUTCOME, ID_SPOILS, N_OF(ID_SPOILS), false);
    expect_each_declined(RD_READ_OUTCOME, OUTCOME_SPOILS, N_OF(OUTCOME_SPOILS), false);
}

/* ---- Decide ---- */

static void test_every_decide_field_is_read_like_the_generic_path(void **state)
{
    (void)state;
    const rd_decide_input *in = &read_full(RD_READ_DECIDE)->decide;
    expect_full_error(in->error);
    assert_string_equal(in->tool_id, "flight_search");
    assert_int_equal(in->attempt, 2);
    assert_int_equal(in->elapsed_ms, 30000);
    assert_true(in->has_turn_remaining);
    assert_int_equal(in->turn_remaining_ms, 12000);
    assert_string_equal(in->permit_id, "7:3");
    rd_arena_reset(&arena);
}

static void test_decide_admission_and_empty_error_are_read(void **state)
{
    (void)state;
    Recovery__V1__DecideRequest r = RECOVERY__V1__DECIDE_REQUEST__INIT;
    r.tool_id = "web_fetch";
    expect_read(RD_READ_DECIDE, pack(&r.base), true); /* no error: an admission check */

    Recovery__V1__ToolError empty = RECOVERY__V1__TOOL_ERROR__INIT;
    r.error = &empty; /* present with every field at its default */
    expect_read(RD_READ_DECIDE, pack(&r.base), true);

    /* multi-byte characters and multi-byte varints */
    r.tool_id = "r\xC3\xA9servation_\xE6\x97\x85\xE8\xA1\x8C";
    r.elapsed_ms = INT64_C(1) << 34; /* a five-byte varint */
    r.turn_budget_case = RECOVERY__V1__DECIDE_REQUEST__TURN_BUDGET_TURN_REMAINING_MS;
    r.turn_remaining_ms = -5; /* a ten-byte varint */
    expect_read(RD_READ_DECIDE, pack(&r.base), true);
}

static void test_decide_plan_is_declined(void **state)
{
    (void)state;
    static Recovery__V1__PlanStep step = RECOVERY__V1__PLAN_STEP__INIT, *steps[] = {&step};
    step.tool_id = "hotel_search";
    requests r;
    full(&r, RD_READ_DECIDE);
    r.decide.plan = steps;
    r.decide.n_plan = 1;
    expect_read(RD_READ_DECIDE, pack(&r.decide.base), false);
}

#define DECLINED(reader, bytes) expect_bytes(reader, bytes, sizeof bytes - 1, false)
#define ACCEPTED(reader, bytes) expect_bytes(reader, bytes, sizeof bytes - 1, true)

static void test_decide_shapes_read_another_way_are_declined(void **state)
{
    (void)state;
    const int d = RD_READ_DECIDE;
    /* tool_id twice: protobuf keeps the last */
    DECLINED(d, "\x0a\x01" "a" "\x0a\x01" "b");
    /* error twice: protobuf merges the two */
    DECLINED(d, "\x0a\x01" "a" "\x12\x02\x10\x05" "\x12\x02\x18\x03");
    /* a field of the error twice */
    DECLINED(d, "\x0a\x01" "a" "\x12\x04\x10\x05\x10\x06");
    /* unknown field 11, and field 0 */
    DECLINED(d, "\x0a\x01" "a" "\x58\x01");
    DECLINED(d, "\x0a\x01" "a" "\x00\x01");
    /* tool_id as a varint; attempt as bytes */
    DECLINED(d, "\x08\x01");
    DECLINED(d, "\x0a\x01" "a" "\x1a\x01" "1");
    /* tool_id's tag in two bytes */
    DECLINED(d, "\x8a\x00\x01" "a");
    /* a length past the end; a varint cut short; an eleven-byte varint */
    DECLINED(d, "\x0a\x05" "abc");
    DECLINED(d, "\x0a\x01" "a" "\x18\x80");
    DECLINED(d, "\x0a\x01" "a" "\x20\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02");
    /* a NUL inside tool_id: a C string would end there */
    DECLINED(d, "\x0a\x03" "a\0b");
}

/* ---- Classify ---- */

static void test_every_classify_field_is_read_like_the_generic_path(void **state)
{
    (void)state;
    const classify_input *in = &read_full(RD_READ_CLASSIFY)->classify;
    expect_full_error(in->error);
    assert_string_equal(in->tool_id, "web_fetch");
    rd_arena_reset(&arena);
}

static void test_classify_empty_error_and_any_order_are_read(void **state)
{
    (void)state;
    Recovery__V1__ToolError empty = RECOVERY__V1__TOOL_ERROR__INIT;
    Recovery__V1__ClassifyRequest r = RECOVERY__V1__CLASSIFY_REQUEST__INIT;
    r.tool_id = "r\xC3\xA9servation_\xE6\x97\x85\xE8\xA1\x8C";
    r.error = &empty; /* present with every field at its default */
    expect_read(RD_READ_CLASSIFY, pack(&r.base), true);
    /* the error before tool_id */
    ACCEPTED(RD_READ_CLASSIFY, "\x12\x02\x30\x01" "\x0a\x01" "a");
}

static void test_classify_shapes_read_another_way_are_declined(void **state)
{
    (void)state;
    const int c = RD_READ_CLASSIFY;
    DECLINED(c, "\x0a\x01" "a" "\x0a\x01" "b" "\x12\x00");         /* tool_id twice */
    DECLINED(c, "\x0a\x01" "a" "\x12\x02\x30\x01" "\x12\x02\x38\x01"); /* error twice */
    DECLINED(c, "\x0a\x01" "a" "\x12\x04\x30\x01\x30\x02");         /* error.kind twice */
    DECLINED(c, "\x0a\x01" "a" "\x12\x00" "\x18\x01");             /* unknown field 3 */
    DECLINED(c, "\x0a\x01" "a" "\x10\x01");                        /* error as a varint */
    DECLINED(c, "\x0a\x01" "a" "\x92\x00\x00");                    /* error's tag in two bytes */
    DECLINED(c, "\x0a\x01" "a" "\x12\x05\x30");                    /* error past the end */
    DECLINED(c, "\x12\x00");                                       /* no tool_id */
    DECLINED(c, "\x0a\x03" "a\0b" "\x12\x00");                     /* a NUL inside tool_id */
    DECLINED(c, "");
}

/* ---- RecordOutcome ---- */

static void test_every_outcome_field_is_read_like_the_generic_path(void **state)
{
    (void)state;
    const rd_outcome_input *in = &read_full(RD_READ_OUTCOME)->outcome;
    expect_full_error(in->error);
    assert_false(in->success);
    assert_string_equal(in->tool_id, "hotel_search");
    assert_string_equal(in->turn_id, "turn-1");
    assert_string_equal(in->outcome_id, "o-2");
    assert_string_equal(in->permit_id, "9:1");
    assert_string_equal(in->executor_id, "exec-2");
    assert_int_equal(in->latency_ms, 30000);
    assert_int_equal(in->attempt, 3);
    rd_arena_reset(&arena);
}

static void test_outcome_success_and_failures_are_read(void **state)
{
    (void)state;
    Recovery__V1__RecordOutcomeRequest r = RECOVERY__V1__RECORD_OUTCOME_REQUEST__INIT;
    r.tool_id = "flight_search";
    r.success = true;
    r.latency_ms = INT64_C(1) << 34; /* a five-byte varint */
    expect_read(RD_READ_OUTCOME, pack(&r.base), true);

    rd_outcome_input in;
    rd_tool_error err;
    assert_true(rd_request_outcome(buf.bytes, buf.len, &arena, &in, &err));
    assert_true(in.success);
    assert_null(in.error);
    assert_string_equal(in.turn_id, "");
    assert_string_equal(in.permit_id, "");
    rd_arena_reset(&arena);

    r.success = false; /* a failure without an error: transient */
    expect_read(RD_READ_OUTCOME, pack(&r.base), true);
    Recovery__V1__ToolError empty = RECOVERY__V1__TOOL_ERROR__INIT;
    r.error = &empty; /* present with every field at its default */
    expect_read(RD_READ_OUTCOME, pack(&r.base), true);
}

static void test_outcome_fields_in_any_order_and_any_bool_are_read(void **state)
{
    (void)state;
    const int o = RD_READ_OUTCOME;
    /* the error before tool_id, and success (false) after it */
    ACCEPTED(o, "\x1a\x02\x30\x01" "\x0a\x01" "a" "\x10\x00");
    /* any nonzero varint is true, in one byte or more */
    ACCEPTED(o, "\x0a\x01" "a" "\x10\x02");
    ACCEPTED(o, "\x0a\x01" "a" "\x10\x80\x01");
    /* a zero in two bytes is false, so an error may come too */
    ACCEPTED(o, "\x0a\x01" "a" "\x10\x80\x00" "\x1a\x00");
}

static void test_outcome_shapes_read_another_way_are_declined(void **state)
{
    (void)state;
    const int o = RD_READ_OUTCOME;
    /* success with an error, the error first or last */
    DECLINED(o, "\x0a\x01" "a" "\x1a\x00" "\x10\x01");
    DECLINED(o, "\x0a\x01" "a" "\x10\x01" "\x1a\x00");
    DECLINED(o, "\x0a\x01" "a" "\x10\x02" "\x1a\x02\x30\x01");
    DECLINED(o, "\x0a\x01" "a" "\x10\x00" "\x10\x01");             /* success twice */
    DECLINED(o, "\x0a\x01" "a" "\x1a\x02\x30\x01" "\x1a\x02\x38\x01"); /* error twice */
    DECLINED(o, "\x0a\x01" "a" "\x50\x01");                        /* unknown field 10 */
    DECLINED(o, "\x0a\x01" "a" "\x12\x01\x01");                    /* success as bytes */
    DECLINED(o, "\x0a\x01" "a" "\x22\x01" "1");                    /* latency_ms as bytes */
    DECLINED(o, "\x8a\x00\x01" "a");                               /* tool_id's tag in two bytes */
    DECLINED(o, "\x0a\x01" "a" "\x20\xff");                        /* a varint cut short */
    /* a ten-byte varint with bits past 64: protobuf-c reads a bool as true */
    DECLINED(o, "\x0a\x01" "a" "\x10\x80\x80\x80\x80\x80\x80\x80\x80\x80\x02");
    DECLINED(o, "\x0a\x01" "a" "\x32\x03" "a\0b");                 /* a NUL inside turn_id */
    DECLINED(o, "\x10\x01");                                       /* no tool_id */
}

/* The field rules both paths apply (codec.h) each name a field of the
 * messages they check, and an error names the field as the rule does. */
static void test_field_rules_name_fields_of_the_api(void **state)
{
    (void)state;
#define DECIDE &recovery__v1__decide_request__descriptor
#define OUTCOME &recovery__v1__record_outcome_request__descriptor
#define CLASSIFY &recovery__v1__classify_request__descriptor
#define TOOL_ERROR &recovery__v1__tool_error__descriptor /* named "error.<field>" */
    static const struct {
        const rd_field_rule *rule;
        const ProtobufCMessageDescriptor *types[3];
    } rules[] = {
        {&RD_RULE_TOOL_ID, {DECIDE, OUTCOME, CLASSIFY}},
        {&RD_RULE_TURN_ID, {DECIDE, OUTCOME, NULL}},
        {&RD_RULE_EXECUTOR_ID, {DECIDE, OUTCOME, NULL}},
        {&RD_RULE_OUTCOME_ID, {DECIDE, OUTCOME, NULL}},
        {&RD_RULE_PERMIT_ID, {DECIDE, OUTCOME, NULL}},
        {&RD_RULE_ATTEMPT, {DECIDE, OUTCOME, NULL}},
        {&RD_RULE_ELAPSED_MS, {DECIDE, NULL, NULL}},
        {&RD_RULE_LATENCY_MS, {OUTCOME, NULL, NULL}},
        {&RD_RULE_TURN_REMAINING_MS, {DECIDE, NULL, NULL}},
        {&RD_RULE_ERROR_MESSAGE, {TOOL_ERROR, NULL, NULL}},
        {&RD_RULE_ERROR_CODE, {TOOL_ERROR, NULL, NULL}},
        {&RD_RULE_ERROR_EXCEPTION_TYPE, {TOOL_ERROR, NULL, NULL}},
        {&RD_RULE_ERROR_KIND, {TOOL_ERROR, NULL, NULL}},
        {&RD_RULE_ERROR_SOURCE, {TOOL_ERROR, NULL, NULL}},
        {&RD_RULE_ERROR_HTTP_STATUS, {TOOL_ERROR, NULL, NULL}},
        {&RD_RULE_ERROR_GRPC_CODE, {TOOL_ERROR, NULL, NULL}},
        {&RD_RULE_ERROR_RETRY_AFTER_MS, {TOOL_ERROR, NULL, NULL}},
    };
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        for (int t = 0; t < 3 && rules[i].types[t]; t++) {
            const char *name = rules[i].rule->name;
            if (rules[i].types[t] == TOOL_ERROR) {
                assert_true(strncmp(name, "error.", 6) == 0);
                name += 6;
            }
            assert_non_null(protobuf_c_message_descriptor_get_field_by_name(rules[i].types[t],
                                                                            name));
        }
    }
#undef DECIDE
#undef OUTCOME
#undef CLASSIFY
#undef TOOL_ERROR
    rd_status st;
    rd_status_clear(&st);
    assert_int_equal(rd_rule_text_in(&RD_RULE_TOOL_ID, NULL, X_TEXT(RD_ID_MAX + 1), NULL, &st),
                     RD_ERR_INVALID);
    assert_string_equal(st.msg, "tool_id: longer than 256 bytes");
    rd_status_clear(&st);
    assert_int_equal(rd_rule_number_in(&RD_RULE_ERROR_KIND, NULL, 99, &st), RD_ERR_INVALID);
    assert_string_equal(st.msg, "error.kind: unknown value 99");
    rd_status_clear(&st);
    assert_int_equal(rd_rule_number_in(&RD_RULE_ERROR_HTTP_STATUS, NULL, 0, &st), RD_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_at_each_limit_are_read),
        cmocka_unit_test(test_requests_the_codec_rejects_are_declined),
        cmocka_unit_test(test_every_decide_field_is_read_like_the_generic_path),
        cmocka_unit_test(test_decide_admission_and_empty_error_are_read),
        cmocka_unit_test(test_decide_plan_is_declined),
        cmocka_unit_test(test_decide_shapes_read_another_way_are_declined),
        cmocka_unit_test(test_every_classify_field_is_read_like_the_generic_path),
        cmocka_unit_test(test_classify_empty_error_and_any_order_are_read),
        cmocka_unit_test(test_classify_shapes_read_another_way_are_declined),
        cmocka_unit_test(test_every_outcome_field_is_read_like_the_generic_path),
        cmocka_unit_test(test_outcome_success_and_failures_are_read),
        cmocka_unit_test(test_outcome_fields_in_any_order_and_any_bool_are_read),
        cmocka_unit_test(test_outcome_shapes_read_another_way_are_declined),
        cmocka_unit_test(test_field_rules_name_fields_of_the_api),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
