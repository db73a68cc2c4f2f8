/* Turns in the decision engine (003 sections 4.2 and 7.4, 004 decision B):
 * the turn deadline, from the caller or from the configured budget, ends a
 * turn with partial results, and whether a turn failed depends on whether
 * its tools ran. Over the in-memory store with an injected clock.
 * Configuration: tests/unit/fixtures/decide/. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "decide_calls.h"

/* ---- 4.2, 7.4: the turn deadline ---- */

static void test_turn_deadline_partial_results(void **state)
{
    fixture *f = *state;
    rd_outcome_input ok = outcome("flight_search", true, 1);
    ok.turn_id = "trip";
    record_ok(f, &ok);

    const char *running[] = {"hotel_search", "activity_search"};
    for (int i = 0; i < 2; i++) {
        rd_decide_input in = input(running[i], NULL, 0);
        in.turn_id = "trip";
        in.has_turn_remaining = true;
        in.turn_remaining_ms = 0;
        rd_decision d = decide_ok(f, &in);
        assert_int_equal(d.action, RD_ACTION_PARTIAL);
        assert_string_equal(d.reason, "turn deadline reached");
        event_of(&d, RD_EV_TURN_TIMEOUT, running[i]);
        assert_string_equal(event_of(&d, RD_EV_SKIPPED, running[i])->detail,
                            "skipped: turn deadline reached");
    }
    rd_turn_trace t = turn_ok(f, "trip");
    assert_string_equal(t.summary.partial_result,
                        "Completed flight search, but hotel search and activity search "
                        "timed out");
    assert_false(t.summary.turn_failed);
    assert_int_equal(t.summary.n_timed_out, 2);
}

/* Without a figure from the caller, the configured 300 s count from the
 * turn's first appearance. */
static void test_turn_budget_from_config(void **state)
{
    fixture *f = *state;
    rd_decide_input in = input("flight_search", NULL, 0);
    in.turn_id = "long-turn";
    assert_int_equal(decide_ok(f, &in).action, RD_ACTION_PROCEED);
    f->ctx.now_ms = T0 + 299999;
    assert_int_equal(decide_ok(f, &in).action, RD_ACTION_PROCEED);
    f->ctx.now_ms = T0 + 300000;
    assert_int_equal(decide_ok(f, &in).action, RD_ACTION_PARTIAL);
}

static void test_turn_deadline_during_retry(void **state)
{
    fixture *f = *state;
    rd_tool_error err = timeout_error();
    rd_decide_input in = input("flight_search", &err, 1);
    in.has_turn_remaining = true;
    in.turn_remaining_ms = 50; /* the ~100 ms backoff would end after the deadline */
    rd_decision d = decide_ok(f, &in);
    assert_int_equal(d.action, RD_ACTION_PARTIAL);
    assert_string_equal(d.reason, "turn deadline before retry");

    in.turn_remaining_ms = 0;
    d = decide_ok(f, &in);
    assert_int_equal(d.action, RD_ACTION_PARTIAL);
    assert_string_equal(d.reason, "turn deadline reached");
    event_of(&d, RD_EV_TURN_TIMEOUT, "flight_search");

    in.turn_remaining_ms = 60000;
    assert_int_equal(decide_ok(f, &in).action, RD_ACTION_RETRY);
}

/* 004 decision B through the engine: a tool that never ran does not make
 * the turn a success; a tool that timed out did run. */
static void test_turn_failed_by_executed_kind(void **state)
{
    fixture *f = *state;
    rd_tool_error invalid = error_text("bad arguments");
    invalid.kind = RD_KIND_INVALID_PARAMETERS;
    rd_decide_input in = input("flight_search", &invalid, 1);
    in.turn_id = "not-run";
    assert_int_equal(decide_ok(f, &in).action, RD_ACTION_ESCALATE);
    assert_true(turn_ok(f, "not-run").summary.turn_failed);

    rd_tool_error timeout = timeout_error();
    in = input("flight_search", &timeout, 1);
    in.turn_id = "ran";
    decide_ok(f, &in);
    assert_false(turn_ok(f, "ran").summary.turn_failed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_turn_deadline_partial_results),
        T(test_turn_budget_from_config),
        T(test_turn_deadline_during_retry),
        T(test_turn_failed_by_executed_kind),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
