/* Reports of a call's outcome in the decision engine: an outcome_id sent
 * again, through Decide or RecordOutcome, is counted once; RecordOutcome's
 * events in the turn's trace. Over the in-memory store. Configuration:
 * tests/unit/fixtures/decide/. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "decide_calls.h"

/* ---- outcome ids ---- */

static void test_duplicate_outcome_in_decide(void **state)
{
    fixture *f = *state;
    rd_tool_error err = timeout_error();
    rd_decide_input in = input("flight_search", &err, 1);
    in.outcome_id = "call-1";
    in.turn_id = "dup-turn";
    rd_decision first = decide_ok(f, &in);
    assert_false(first.duplicate);
    assert_int_equal(first.breaker.consecutive_failures, 1);
    size_t events = turn_ok(f, "dup-turn").n_events;

    rd_decision again = decide_ok(f, &in);
    assert_true(again.duplicate);
    assert_int_equal(again.action, RD_ACTION_RETRY);
    assert_int_equal(again.breaker.consecutive_failures, 1);
    assert_int_equal(turn_ok(f, "dup-turn").n_events, events);

    /* the same id through RecordOutcome is a replay too */
    rd_outcome_input o = outcome("flight_search", false, 1);
    o.outcome_id = "call-1";
    rd_outcome_result r = record_ok(f, &o);
    assert_true(r.duplicate);
    assert_int_equal(r.breaker.consecutive_failures, 1);
}

static void test_duplicate_outcome_in_record_outcome(void **state)
{
    fixture *f = *state;
    rd_outcome_input o = outcome("flight_search", false, 1);
    o.outcome_id = "call-2";
    rd_outcome_result r = record_ok(f, &o);
    assert_false(r.duplicate);
    assert_int_equal(r.breaker.consecutive_failures, 1);
    r = record_ok(f, &o);
    assert_true(r.duplicate);
    assert_int_equal(r.breaker.consecutive_failures, 1);
    assert_int_equal(breaker_of(f, "flight_search").consecutive_failures, 1);
}

/* ---- RecordOutcome events ---- */

static void test_record_outcome_events(void **state)
{
    fixture *f = *state;
    rd_outcome_input ok = outcome("flight_search", true, 2);
    ok.turn_id = "rec";
    record_ok(f, &ok);
    rd_tool_error err = timeout_error();
    rd_outcome_input fail = outcome("hotel_search", false, 1);
    fail.error = &err;
    fail.turn_id = "rec";
    record_ok(f, &fail);

    rd_turn_trace t = turn_ok(f, "rec");
    int i = find_event(t.events, t.n_events, RD_EV_RETRY_SUCCEEDED, "flight_search");
    assert_true(i >= 0);
    assert_string_equal(t.events[i].detail, "flight_search succeeded on retry (attempt 2)");
    assert_true(t.events[i].executed);
    i = find_event(t.events, t.n_events, RD_EV_TOOL_TIMEOUT, "hotel_search");
    assert_true(i >= 0);
    assert_int_equal(t.events[i].timeout_ms, 30000);
    assert_true(find_event(t.events, t.n_events, RD_EV_TOOL_FAILED, "hotel_search") > i);
    assert_int_equal(breaker_of(f, "hotel_search").consecutive_failures, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_duplicate_outcome_in_decide),
        T(test_duplicate_outcome_in_record_outcome),
        T(test_record_outcome_events),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
