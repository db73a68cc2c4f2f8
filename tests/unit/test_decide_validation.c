/* Requests the decision engine refuses, each naming the field at fault: a
 * malformed permit, an unknown tool (with reject_unknown_tools) or turn, an
 * empty tool id, a negative elapsed time; the permit id's format. Over the
 * in-memory store. Configuration: tests/unit/fixtures/decide/. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "decide_calls.h"

/* ---- errors ---- */

static void test_malformed_permit_rejected(void **state)
{
    fixture *f = *state;
    rd_tool_error err = timeout_error();
    rd_decide_input in = input("flight_search", &err, 1);
    in.permit_id = "not-a-permit";
    rd_decision d;
    assert_int_equal(rd_engine_decide(&f->engine, &in, &f->ctx, &d, &f->st), RD_ERR_INVALID);
    assert_string_equal(f->st.msg, "permit_id: malformed");
    assert_int_equal(breaker_of(f, "flight_search").consecutive_failures, 0);

    rd_outcome_input o = outcome("flight_search", true, 1);
    o.permit_id = "p-1-xyz";
    rd_outcome_result r;
    assert_int_equal(rd_engine_record_outcome(&f->engine, &o, &f->ctx, &r, &f->st),
                     RD_ERR_INVALID);
}

static void test_permit_format_and_parse(void **state)
{
    char buf[RD_PERMIT_ID_MAX + 1];
    rd_permit_format(buf, sizeof buf, 7, 0xabc);
    assert_string_equal(buf, "p-7-abc");
    uint64_t gen, tok;
    assert_true(rd_permit_parse(buf, &gen, &tok));
    assert_int_equal(gen, 7);
    assert_int_equal(tok, 0xabc);
    rd_permit_format(buf, sizeof buf, UINT64_MAX, UINT64_MAX);
    assert_true(rd_permit_parse(buf, &gen, &tok));
    assert_true(gen == UINT64_MAX && tok == UINT64_MAX);
    const char *bad[] = {"", "p-", "p-1", "p-1-", "p--1", "p-1-0", "x-1-1", "p-1-1-",
                         "p-18446744073709551616-1", "p-1-10000000000000000", "p-1-1 "};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_false(rd_permit_parse(bad[i], &gen, &tok));
}

static void test_unknown_turn(void **state)
{
    fixture *f = *state;
    rd_turn_trace t;
    assert_int_equal(rd_engine_turn_trace(&f->engine, "nope", &f->ctx, &t, &f->st),
                     RD_ERR_NOT_FOUND);
    assert_string_equal(f->st.msg, "turn_id: unknown turn 'nope'");
}

static void test_reject_unknown_tools(void **state)
{
    fixture *f = *state;
    f->config.reject_unknown_tools = true;
    rd_decide_input in = input("no_such_tool", NULL, 0);
    rd_decision d;
    assert_int_equal(rd_engine_decide(&f->engine, &in, &f->ctx, &d, &f->st),
                     RD_ERR_NOT_FOUND);
    assert_string_equal(f->st.msg, "tool_id: unknown tool 'no_such_tool'");
    rd_outcome_input o = outcome("no_such_tool", true, 1);
    rd_outcome_result r;
    assert_int_equal(rd_engine_record_outcome(&f->engine, &o, &f->ctx, &r, &f->st),
                     RD_ERR_NOT_FOUND);
    assert_int_equal(admission(f, "flight_search").action, RD_ACTION_PROCEED);

    f->config.reject_unknown_tools = false;
    assert_int_equal(admission(f, "no_such_tool").action, RD_ACTION_PROCEED);
}

static void test_invalid_inputs_name_the_field(void **state)
{
    fixture *f = *state;
    rd_decide_input in = input("", NULL, 0);
    rd_decision d;
    assert_int_equal(rd_engine_decide(&f->engine, &in, &f->ctx, &d, &f->st), RD_ERR_INVALID);
    assert_string_equal(f->st.msg, "tool_id: required");
    rd_tool_error err = timeout_error();
    in = input("flight_search", &err, 1);
    in.elapsed_ms = -1;
    assert_int_equal(rd_engine_decide(&f->engine, &in, &f->ctx, &d, &f->st), RD_ERR_INVALID);
    assert_string_equal(f->st.msg, "elapsed_ms: must not be negative");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_malformed_permit_rejected),
        T(test_permit_format_and_parse),
        T(test_unknown_turn),
        T(test_reject_unknown_tools),
        T(test_invalid_inputs_name_the_field),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
