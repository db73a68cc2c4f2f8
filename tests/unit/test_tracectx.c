/* W3C Trace Context parsing (domain/tracectx.h): what the specification
 * accepts is read, everything else is ignored without harm. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "domain/tracectx.h"

#define TRACE "4bf92f3577b34da6a3ce929d0e0e4736"
#define SPAN "00f067aa0ba902b7"
#define GOOD "00-" TRACE "-" SPAN "-01"

static bool parse(const char *s, rd_trace_ctx *ctx)
{
    memset(ctx, 0, sizeof *ctx);
    return rd_traceparent_parse(s, strlen(s), ctx);
}

static void test_valid_traceparent(void **state)
{
    (void)state;
    rd_trace_ctx ctx;
    assert_true(parse(GOOD, &ctx));
    assert_true(ctx.valid);
    assert_string_equal(ctx.trace_id, TRACE);
    assert_string_equal(ctx.span_id, SPAN);
    assert_int_equal(ctx.flags, 1);
    assert_true(parse("00-" TRACE "-" SPAN "-00", &ctx));
    assert_int_equal(ctx.flags, 0);
}

static void test_invalid_traceparents_are_ignored(void **state)
{
    (void)state;
    static const char *const BAD[] = {
        "",
        "00",
        "00-" TRACE "-" SPAN,                                   /* no flags */
        "00-" TRACE "-" SPAN "-01-extra",                       /* 00 is exactly 55 */
        "00-" TRACE "-" SPAN "-1",                              /* short flags */
        "ff-" TRACE "-" SPAN "-01",                             /* forbidden version */
        "0g-" TRACE "-" SPAN "-01",
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-" SPAN "-01",      /* upper case */
        "00-00000000000000000000000000000000-" SPAN "-01",      /* zero trace id */
        "00-" TRACE "-0000000000000000-01",                     /* zero span id */
        "00_" TRACE "-" SPAN "-01",
        "00-" TRACE "_" SPAN "-01",
        " 00-" TRACE "-" SPAN "-01",
        "00-" TRACE "-" SPAN "-0z",
        "01-" TRACE "-" SPAN "-01x",                            /* later version: '-' after */
        "00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01", /* misplaced dash */
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        rd_trace_ctx ctx;
        if (parse(BAD[i], &ctx))
            fail_msg("accepted \"%s\"", BAD[i]);
        assert_false(ctx.valid);
        assert_string_equal(ctx.trace_id, "");
    }
}

static void test_later_versions_read_as_00(void **state)
{
    (void)state;
    rd_trace_ctx ctx;
    assert_true(parse("cc-" TRACE "-" SPAN "-01", &ctx));
    assert_true(parse("cc-" TRACE "-" SPAN "-01-what-the-future-will-bring", &ctx));
    assert_string_equal(ctx.span_id, SPAN);
    char huge[RD_TRACEPARENT_MAX + 8];
    memset(huge, 'a', sizeof huge - 1);
    huge[sizeof huge - 1] = '\0';
    memcpy(huge, "cc-" TRACE "-" SPAN "-01-", 56);
    assert_false(parse(huge, &ctx)); /* bounded */
}

/* A value is never read past its length (no terminator needed). */
static void test_length_bounds_the_read(void **state)
{
    (void)state;
    rd_trace_ctx ctx = {0};
    const char s[] = GOOD "-";
    assert_false(rd_traceparent_parse(s, 54, &ctx));
    assert_true(rd_traceparent_parse(s, 55, &ctx));
}

static void append(rd_trace_ctx *ctx, const char *s)
{
    rd_tracestate_append(ctx, s, strlen(s));
}

static void test_tracestate_members(void **state)
{
    (void)state;
    rd_trace_ctx ctx = {0};
    append(&ctx, "rojo=00f067aa0ba902b7, congo=t61rcWkgMzE");
    append(&ctx, " ,tenant@vendor=x y z,,");
    assert_string_equal(ctx.state, "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE,tenant@vendor=x y z");
    assert_int_equal(ctx.state_len, strlen(ctx.state));
}

static void test_invalid_tracestate_is_discarded_whole(void **state)
{
    (void)state;
    static const char *const BAD[] = {
        "Upper=1", "k=", "=v", "k=v=w", "k=\x7f", "k=\x01", "1abc=v", "a@=v", "@b=v",
        "a@Sys=v", "k", "k=v,bad key=1",
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        rd_trace_ctx ctx = {0};
        append(&ctx, "good=1");
        append(&ctx, BAD[i]);
        if (ctx.state_len != 0)
            fail_msg("kept \"%s\" after \"%s\"", ctx.state, BAD[i]);
        append(&ctx, "later=2"); /* once discarded, the list stays discarded */
        assert_string_equal(ctx.state, "");
    }
}

static void test_tracestate_is_bounded(void **state)
{
    (void)state;
    rd_trace_ctx ctx = {0};
    char member[32];
    for (int i = 0; i < 40; i++) {
        snprintf(member, sizeof member, "k%d=v%d", i, i);
        append(&ctx, member);
    }
    /* 32 members at most; the first ones are kept. */
    size_t commas = 0;
    for (size_t i = 0; i < ctx.state_len; i++)
        commas += ctx.state[i] == ',';
    assert_int_equal(commas, RD_TRACESTATE_MEMBERS_MAX - 1);
    assert_memory_equal(ctx.state, "k0=v0,k1=v1", 11);

    rd_trace_ctx big = {0};
    char value[260];
    memset(value, 'x', 255);
    value[255] = '\0';
    char one[300];
    for (int i = 0; i < 4; i++) {
        snprintf(one, sizeof one, "m%d=%s", i, value);
        append(&big, one);
    }
    /* 258-character members: a second would pass 512, so one is kept. */
    assert_int_equal(big.state_len, 258);
    assert_memory_equal(big.state, "m0=xxx", 6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_traceparent),
        cmocka_unit_test(test_invalid_traceparents_are_ignored),
        cmocka_unit_test(test_later_versions_read_as_00),
        cmocka_unit_test(test_length_bounds_the_read),
        cmocka_unit_test(test_tracestate_members),
        cmocka_unit_test(test_invalid_tracestate_is_discarded_whole),
        cmocka_unit_test(test_tracestate_is_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
