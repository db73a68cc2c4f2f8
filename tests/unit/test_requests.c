/* The Decide request read straight into the core's structs
 * (transport/requests.c) against the generic path (protobuf-c, then
 * codec.c): the requests executors send are read, into the same structs;
 * values at each limit are read the same; every request the generic path
 * rejects, and every shape it reads another way (a field sent twice, an
 * unknown field, a long tag, a plan), is declined, so the generic path
 * answers it. */
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

static int setup(void **state)
{
    (void)state;
    rd_arena_init(&arena, 1 << 16);
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
    uint8_t bytes[RD_MESSAGE_MAX + 4096];
    size_t len;
} packed;

static packed buf;

static const packed *pack(const Recovery__V1__DecideRequest *req)
{
    buf.len = protobuf_c_message_get_packed_size(&req->base);
    assert_true(buf.len <= sizeof buf.bytes);
    assert_int_equal(protobuf_c_message_pack(&req->base, buf.bytes), buf.len);
    return &buf;
}

/* Reads p both ways: the direct reader must accept it exactly when
 * `accept`, and an accepted request must match the generic path. */
static void expect_read(const packed *p, bool accept)
{
    char why[256];
    bool accepted;
    const char *wrong = decide_reader_mismatch(p->bytes, p->len, &arena, &accepted, why,
                                               sizeof why);
    if (wrong)
        fail_msg("%s", wrong);
    if (accepted != accept)
        fail_msg("the reader %s the request", accepted ? "accepted" : "declined");
    rd_arena_reset(&arena);
}

static Recovery__V1__ToolError full_error(void)
{
    Recovery__V1__ToolError e = RECOVERY__V1__TOOL_ERROR__INIT;
    e.message = "503 Service Unavailable: upstream connect error";
    e.http_status = 503;
    e.grpc_code = 14;
    e.code = "ECONNRESET";
    e.exception_type = "httpx.ConnectError";
    e.kind = RECOVERY__V1__ERROR_KIND__ERROR_KIND_EXECUTION_ERROR;
    e.source = RECOVERY__V1__ERROR_SOURCE__ERROR_SOURCE_MCP;
    e.retry_after_ms = 1800;
    return e;
}

static Recovery__V1__DecideRequest full_request(Recovery__V1__ToolError *e)
{
    Recovery__V1__DecideRequest r = RECOVERY__V1__DECIDE_REQUEST__INIT;
    r.tool_id = "flight_search";
    r.error = e;
    r.attempt = 2;
    r.elapsed_ms = 30000;
    r.turn_id = "turn-7";
    r.turn_budget_case = RECOVERY__V1__DECIDE_REQUEST__TURN_BUDGET_TURN_REMAINING_MS;
    r.turn_remaining_ms = 12000;
    r.executor_id = "exec-1";
    r.outcome_id = "o-42";
    r.permit_id = "7:3";
    return r;
}

/* ---- what is read ---- */

static void test_every_field_is_read_like_the_generic_path(void **state)
{
    (void)state;
    Recovery__V1__ToolError e = full_error();
    Recovery__V1__DecideRequest r = full_request(&e);
    expect_read(pack(&r), true);

    rd_decide_input in;
    rd_tool_error err;
    assert_true(rd_request_decide(buf.bytes, buf.len, &arena, &in, &err));
    assert_string_equal(in.tool_id, "flight_search");
    assert_ptr_equal(in.error, &err);
    assert_int_equal(err.http_status, 503);
    assert_int_equal(err.message_len, strlen(e.message));
    assert_true(in.has_turn_remaining);
    assert_int_equal(in.turn_remaining_ms, 12000);
    assert_string_equal(in.permit_id, "7:3");
    rd_arena_reset(&arena);
}

static void test_admission_and_empty_error_are_read(void **state)
{
    (void)state;
    Recovery__V1__DecideRequest r = RECOVERY__V1__DECIDE_REQUEST__INIT;
    r.tool_id = "web_fetch";
    expect_read(pack(&r), true); /* no error: an admission check */

    Recovery__V1__ToolError empty = RECOVERY__V1__TOOL_ERROR__INIT;
    r.error = &empty; /* present with every field at its default */
    expect_read(pack(&r), true);

    /* multi-byte characters and multi-byte varints */
    r.tool_id = "r\xC3\xA9servation_\xE6\x97\x85\xE8\xA1\x8C";
    r.elapsed_ms = INT64_C(1) << 34; /* a five-byte varint */
    r.turn_budget_case = RECOVERY__V1__DECIDE_REQUEST__TURN_BUDGET_TURN_REMAINING_MS;
    r.turn_remaining_ms = -5; /* a ten-byte varint */
    expect_read(pack(&r), true);
}

static void test_values_at_each_limit_are_read(void **state)
{
    (void)state;
    static char long_id[RD_ID_MAX + 1], long_permit[RD_PERMIT_ID_MAX + 1];
    static char long_code[RD_SHORT_FIELD_MAX + 1], long_message[RD_MESSAGE_MAX + 1];
    memset(long_id, 'i', RD_ID_MAX);
    memset(long_permit, 'p', RD_PERMIT_ID_MAX);
    memset(long_code, 'c', RD_SHORT_FIELD_MAX);
    memset(long_message, 'm', RD_MESSAGE_MAX);
    Recovery__V1__ToolError e = full_error();
    e.message = long_message;
    e.code = long_code;
    e.exception_type = long_code;
    e.http_status = RD_HTTP_STATUS_MIN;
    e.grpc_code = RD_GRPC_CODE_MAX;
    e.retry_after_ms = RD_DURATION_MS_MAX;
    Recovery__V1__DecideRequest r = full_request(&e);
    r.tool_id = r.turn_id = r.executor_id = r.outcome_id = long_id;
    r.permit_id = long_permit;
    r.attempt = RD_ATTEMPT_MAX;
    r.elapsed_ms = RD_DURATION_MS_MAX;
    r.turn_remaining_ms = -RD_DURATION_MS_MAX;
    expect_read(pack(&r), true);
    e.http_status = RD_HTTP_STATUS_MAX;
    r.turn_remaining_ms = RD_DURATION_MS_MAX;
    expect_read(pack(&r), true);
}

/* ---- what is declined ---- */

typedef void (*spoil_fn)(Recovery__V1__DecideRequest *r, Recovery__V1__ToolError *e);

static void no_tool_id(Recovery__V1__DecideRequest *r, Recovery__V1__ToolError *e)
{
    r->tool_id = "";
}
/* n copies of c: one buffer, which each spoiled request uses alone. */
static char *repeated(char c, size_t n)
{
    static char text[RD_MESSAGE_MAX + 2];
    memset(text, c, n);
    text[n] = '\0';
    return text;
}

static void id_too_long(Recovery__V1__DecideRequest *r, Recovery__V1__ToolError *e)
{
    r->executor_id = repeated('x', RD_ID_MAX + 1);
}
static void permit_too_long(Recovery__V1__DecideRequest *r, Recovery__V1__ToolError *e)
{
    r->permit_id = repeated('1', RD_PERMIT_ID_MAX + 1);
}
static void bad_utf8(Recovery__V1__DecideRequest *r, Recovery__V1__ToolError *e)
{
    r->turn_id = "t\xC3(";
}
static void negative_attempt(Recovery__V1__DecideRequest *r, Recovery__V1__ToolError *e)
{
    r->attempt = -1;
}
static void huge_attempt(Recovery__V1__DecideRequest *r, Recovery__V1__ToolError *e)
{
    r->attempt = RD_ATTEMPT_MAX + 1;
}
static void negative_elapsed(Recovery__V1__DecideRequest *r, Recovery__V1__ToolError *e)
{
    r->elapsed_ms = -1;
}
static void remaining_too_far(Recovery__V1__DecideRequest *r, Recovery__V1__ToolError *e)
{
    r->turn_remaining_ms = -RD_DURATION_MS_MAX - 1;
}
static void plan(Recovery__V1__DecideRequest *r, Recovery__V1__ToolError *e)
{
    static Recovery__V1__PlanStep step = RECOVERY__V1__PLAN_STEP__INIT, *steps[] = {&step};
    step.tool_id = "hotel_search";
    r->plan = steps;
    r->n_plan = 1;
}
static void http_status_low(Recovery__V1__DecideRequest *r, Recovery__V1__ToolError *e)
{
    e->http_status = 99;
}
static void http_status_high(Recovery__V1__DecideRequest *r, Recovery__V1__ToolError *e)
{
    e->http_status = 600;
}
static void grpc_code_high(Recovery__V1__DecideRequest *r, Recovery__V1__ToolError *e)
{
    e->grpc_code = 17;
}
static void unknown_kind(Recovery__V1__DecideRequest *r, Recovery__V1__ToolError *e)
{
    e->kind = 99;
}
static void negative_source(Recovery__V1__DecideRequest *r, Recovery__V1__ToolError *e)
{
    e->source = -1;
}
static void negative_retry_after(Recovery__V1__DecideRequest *r, Recovery__V1__ToolError *e)
{
    e->retry_after_ms = -1;
}
static void message_too_long(Recovery__V1__DecideRequest *r, Recovery__V1__ToolError *e)
{
    e->message = repeated('m', RD_MESSAGE_MAX + 1);
}
static void code_bad_utf8(Recovery__V1__DecideRequest *r, Recovery__V1__ToolError *e)
{
    e->code = "\xFF";
}

static void test_requests_the_codec_rejects_are_declined(void **state)
{
    (void)state;
    const spoil_fn spoils[] = {
        no_tool_id, id_too_long, permit_too_long, bad_utf8, negative_attempt, huge_attempt,
        negative_elapsed, remaining_too_far, plan, http_status_low, http_status_high,
        grpc_code_high, unknown_kind, negative_source, negative_retry_after, message_too_long,
        code_bad_utf8,
    };
    for (size_t i = 0; i < sizeof spoils / sizeof spoils[0]; i++) {
        Recovery__V1__ToolError e = full_error();
        Recovery__V1__DecideRequest r = full_request(&e);
        spoils[i](&r, &e);
        print_message("spoiled request %zu\n", i);
        expect_read(pack(&r), false);
    }
}

static void expect_declined(const uint8_t *bytes, size_t len)
{
    memcpy(buf.bytes, bytes, len);
    buf.len = len;
    expect_read(&buf, false);
}

static void test_shapes_read_another_way_are_declined(void **state)
{
    (void)state;
    /* tool_id twice: protobuf keeps the last */
    expect_declined((const uint8_t *)"\x0a\x01" "a" "\x0a\x01" "b", 6);
    /* error twice: protobuf merges the two */
    expect_declined((const uint8_t *)"\x0a\x01" "a" "\x12\x02\x10\x05" "\x12\x02\x18\x03", 11);
    /* a field of the error twice */
    expect_declined((const uint8_t *)"\x0a\x01" "a" "\x12\x04\x10\x05\x10\x06", 9);
    /* unknown field 11, and field 0 */
    expect_declined((const uint8_t *)"\x0a\x01" "a" "\x58\x01", 5);
    expect_declined((const uint8_t *)"\x0a\x01" "a" "\x00\x01", 5);
    /* tool_id as a varint; attempt as bytes */
    expect_declined((const uint8_t *)"\x08\x01", 2);
    expect_declined((const uint8_t *)"\x0a\x01" "a" "\x1a\x01" "1", 6);
    /* tool_id's tag in two bytes */
    expect_declined((const uint8_t *)"\x8a\x00\x01" "a", 4);
    /* a length past the end; a varint cut short; an eleven-byte varint */
    expect_declined((const uint8_t *)"\x0a\x05" "abc", 5);
    expect_declined((const uint8_t *)"\x0a\x01" "a" "\x18\x80", 5);
    expect_declined((const uint8_t *)"\x0a\x01" "a" "\x20\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02",
                    14);
    /* a NUL inside tool_id: a C string would end there */
    expect_declined((const uint8_t *)"\x0a\x03" "a\0b", 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_field_is_read_like_the_generic_path),
        cmocka_unit_test(test_admission_and_empty_error_are_read),
        cmocka_unit_test(test_values_at_each_limit_are_read),
        cmocka_unit_test(test_requests_the_codec_rejects_are_declined),
        cmocka_unit_test(test_shapes_read_another_way_are_declined),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
