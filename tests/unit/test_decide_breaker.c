/* The circuit breaker in the decision engine (003 section 3, 7.2): it opens
 * after five transient failures, grants one probe when half-open, closes or
 * re-opens on the probe's result, and ignores permanent errors; the
 * GetBreakerState views. Over the in-memory store with an injected clock.
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

/* ---- 3.1: the breaker opens after 5 transient failures ---- */

static void test_breaker_opens_after_five(void **state)
{
    fixture *f = *state;
    rd_tool_error err = timeout_error();
    for (uint32_t i = 1; i <= 4; i++) {
        rd_decide_input in = input("flight_search", &err, 1);
        in.turn_id = "turn-31";
        rd_decision d = decide_ok(f, &in);
        assert_int_equal(d.action, RD_ACTION_RETRY);
        assert_int_equal(d.breaker.status, RD_BREAKER_CLOSED);
        assert_int_equal(d.breaker.consecutive_failures, i);
        assert_int_equal(find_event(d.trace, d.n_trace, RD_EV_CIRCUIT_OPENED,
                                    "flight_search"), -1);
    }
    rd_decide_input in = input("flight_search", &err, 1);
    in.turn_id = "turn-31";
    rd_decision d = decide_ok(f, &in);
    assert_int_equal(d.action, RD_ACTION_FAIL_FAST);
    assert_string_equal(d.reason, "circuit open");
    assert_int_equal(d.breaker.status, RD_BREAKER_OPEN);
    assert_int_equal(d.breaker.opens_total, 1);
    assert_int_equal(d.breaker.open_until_ms, T0 + 30000);
    const rd_trace_event *opened = event_of(&d, RD_EV_CIRCUIT_OPENED, "flight_search");
    assert_string_equal(opened->detail, "Circuit breaker opened for flight_search");
    assert_int_equal(opened->breaker, RD_BREAKER_OPEN);

    /* the 6th call is refused at once */
    d = admission(f, "flight_search");
    assert_int_equal(d.action, RD_ACTION_FAIL_FAST);
    assert_int_equal(d.timeout_ms, 30000);
    event_of(&d, RD_EV_FAIL_FAST, "flight_search");

    /* and the turn's trace holds the sentence 003 3.1 looks for */
    rd_turn_trace t = turn_ok(f, "turn-31");
    int i = find_event(t.events, t.n_events, RD_EV_CIRCUIT_OPENED, "flight_search");
    assert_true(i >= 0);
    assert_string_equal(t.events[i].detail, "Circuit breaker opened for flight_search");
}

/* ---- 3.2, 3.3: half-open, one probe, close or re-open ---- */

static void test_half_open_grants_one_probe_and_success_closes(void **state)
{
    fixture *f = *state;
    open_breaker(f, "flight_search");

    f->ctx.now_ms = T0 + 15000;
    assert_int_equal(admission(f, "flight_search").action, RD_ACTION_FAIL_FAST);
    assert_int_equal(breaker_of(f, "flight_search").status, RD_BREAKER_OPEN);

    f->ctx.now_ms = T0 + 30000;
    assert_int_equal(breaker_of(f, "flight_search").status, RD_BREAKER_HALF_OPEN);
    rd_decision probe = admission(f, "flight_search");
    assert_int_equal(probe.action, RD_ACTION_PROCEED);
    assert_true(probe.permit_id[0] != '\0');
    assert_string_equal(event_of(&probe, RD_EV_CIRCUIT_HALF_OPENED, "flight_search")->detail,
                        "Circuit breaker half-open for flight_search: probe permit granted");
    assert_true(probe.breaker.probe_in_flight);

    rd_decision second = admission(f, "flight_search");
    assert_int_equal(second.action, RD_ACTION_FAIL_FAST);
    assert_string_equal(second.permit_id, "");

    /* 3.3: the probe succeeds */
    f->ctx.now_ms = T0 + 30020;
    rd_outcome_input ok = outcome("flight_search", true, 1);
    ok.permit_id = probe.permit_id;
    ok.turn_id = "turn-33";
    rd_outcome_result r = record_ok(f, &ok);
    assert_int_equal(r.breaker.status, RD_BREAKER_CLOSED);
    assert_int_equal(r.breaker.consecutive_failures, 0);
    rd_turn_trace t = turn_ok(f, "turn-33");
    int i = find_event(t.events, t.n_events, RD_EV_CIRCUIT_CLOSED, "flight_search");
    assert_true(i >= 0);
    assert_string_equal(t.events[i].detail, "Circuit breaker closed for flight_search");

    rd_decision normal = admission(f, "flight_search");
    assert_int_equal(normal.action, RD_ACTION_PROCEED);
    assert_string_equal(normal.permit_id, "");
    assert_int_equal(normal.n_trace, 0);
}

static void test_failed_probe_reopens(void **state)
{
    fixture *f = *state;
    open_breaker(f, "flight_search");
    f->ctx.now_ms = T0 + 30000;
    rd_decision probe = admission(f, "flight_search");
    assert_int_equal(probe.action, RD_ACTION_PROCEED);

    f->ctx.now_ms = T0 + 30040;
    rd_tool_error err = timeout_error();
    rd_decide_input in = input("flight_search", &err, 1);
    in.permit_id = probe.permit_id;
    rd_decision d = decide_ok(f, &in);
    assert_int_equal(d.action, RD_ACTION_FAIL_FAST);
    assert_int_equal(d.breaker.status, RD_BREAKER_OPEN);
    assert_int_equal(d.breaker.open_until_ms, T0 + 30040 + 30000); /* timer restarted */
    assert_int_equal(d.breaker.opens_total, 2);
    assert_string_equal(event_of(&d, RD_EV_CIRCUIT_OPENED, "flight_search")->detail,
                        "Circuit breaker opened for flight_search");
}

static void test_failed_probe_reported_by_record_outcome_reopens(void **state)
{
    fixture *f = *state;
    open_breaker(f, "flight_search");
    f->ctx.now_ms = T0 + 30000;
    rd_decision probe = admission(f, "flight_search");
    rd_outcome_input fail = outcome("flight_search", false, 1);
    fail.permit_id = probe.permit_id;
    rd_outcome_result r = record_ok(f, &fail);
    assert_int_equal(r.breaker.status, RD_BREAKER_OPEN);
    assert_int_equal(r.breaker.open_until_ms, T0 + 60000);
}

/* A probe that never reports frees its permit when its lease (the tool's
 * timeout and a 250 ms margin for the report) runs out. */
static void test_probe_lease_expires(void **state)
{
    fixture *f = *state;
    open_breaker(f, "flight_search");
    f->ctx.now_ms = T0 + 30000;
    assert_int_equal(admission(f, "flight_search").action, RD_ACTION_PROCEED);
    f->ctx.now_ms = T0 + 30000 + 30249;
    assert_int_equal(admission(f, "flight_search").action, RD_ACTION_FAIL_FAST);
    f->ctx.now_ms = T0 + 30000 + 30250;
    rd_decision d = admission(f, "flight_search");
    assert_int_equal(d.action, RD_ACTION_PROCEED);
    assert_true(d.permit_id[0] != '\0');
}

/* A failure reported while half-open by a caller without the permit (its
 * call started before the breaker opened) changes nothing, and its retry
 * may only go ahead as the one probe. */
static void test_retry_while_half_open_is_the_probe(void **state)
{
    fixture *f = *state;
    open_breaker(f, "flight_search");
    f->ctx.now_ms = T0 + 30000;
    rd_tool_error err = timeout_error();
    rd_decision d = fail_once(f, "flight_search", &err, 1, 0);
    assert_int_equal(d.action, RD_ACTION_RETRY);
    assert_true(d.permit_id[0] != '\0');
    event_of(&d, RD_EV_CIRCUIT_HALF_OPENED, "flight_search");
    assert_int_equal(d.breaker.status, RD_BREAKER_HALF_OPEN);

    d = fail_once(f, "flight_search", &err, 1, 0);
    assert_int_equal(d.action, RD_ACTION_FAIL_FAST);
    assert_string_equal(d.permit_id, "");
}

/* ---- 3.4, 7.2: permanent errors do not count ---- */

static void test_permanent_errors_do_not_count(void **state)
{
    fixture *f = *state;
    const char *messages[] = {"Invalid airport code: XYZ", "Authentication failed (401)",
                              "Route not found", "Invalid date", "Authentication failed (401)"};
    for (int i = 0; i < 5; i++) {
        rd_tool_error err = error_text(messages[i]);
        rd_decision d = fail_once(f, "flight_search", &err, 1, 0);
        assert_int_equal(d.action, RD_ACTION_ESCALATE);
        assert_int_equal(d.breaker.consecutive_failures, 0);
        assert_int_equal(d.breaker.status, RD_BREAKER_CLOSED);
    }
    assert_int_equal(breaker_of(f, "flight_search").consecutive_failures, 0);
}

static void test_mixed_errors_count_only_transient(void **state)
{
    fixture *f = *state;
    rd_tool_error timeout = timeout_error();
    rd_tool_error invalid = error_text("Invalid airport code: XYZ");
    rd_tool_error rate = error_text("Rate limit exceeded (429)");
    assert_int_equal(fail_once(f, "flight_search", &timeout, 1, 0).action, RD_ACTION_RETRY);
    assert_int_equal(fail_once(f, "flight_search", &invalid, 1, 0).action, RD_ACTION_ESCALATE);
    rd_decision d = fail_once(f, "flight_search", &rate, 1, 0);
    assert_int_equal(d.action, RD_ACTION_RETRY);
    assert_int_equal(d.breaker.consecutive_failures, 1);
}

/* ---- GetBreakerState: the views of tracked and unseen tools ---- */

static void test_breaker_state_views(void **state)
{
    fixture *f = *state;
    rd_tool_error err = timeout_error();
    fail_once(f, "flight_search", &err, 1, 0);
    fail_once(f, "flight_search", &err, 2, 0);
    fail_once(f, "search_api", &err, 1, 0);

    rd_breaker_view *views;
    size_t n;
    assert_int_equal(rd_engine_breakers(&f->engine, NULL, 0, &f->ctx, &views, &n, &f->st),
                     RD_OK);
    assert_int_equal(n, 2);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(views[i].tool_id, "flight_search") == 0) {
            assert_int_equal(views[i].consecutive_failures, 2);
            assert_int_equal(views[i].failure_threshold, 5);
        } else {
            assert_string_equal(views[i].tool_id, "search_api");
            assert_int_equal(views[i].failure_threshold, 10);
        }
    }

    const char *ids[] = {"flight_search", "never_seen"};
    assert_int_equal(rd_engine_breakers(&f->engine, ids, 2, &f->ctx, &views, &n, &f->st),
                     RD_OK);
    assert_int_equal(n, 2);
    assert_string_equal(views[0].tool_id, "flight_search");
    assert_int_equal(views[0].consecutive_failures, 2);
    assert_string_equal(views[1].tool_id, "never_seen");
    assert_int_equal(views[1].status, RD_BREAKER_CLOSED);
    assert_int_equal(views[1].consecutive_failures, 0);
    assert_int_equal(views[1].open_until_ms, 0);
    assert_int_equal(views[1].success_threshold, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_breaker_opens_after_five),
        T(test_half_open_grants_one_probe_and_success_closes),
        T(test_failed_probe_reopens),
        T(test_failed_probe_reported_by_record_outcome_reopens),
        T(test_probe_lease_expires),
        T(test_retry_while_half_open_is_the_probe),
        T(test_permanent_errors_do_not_count),
        T(test_mixed_errors_count_only_transient),
        T(test_breaker_state_views),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
