/* The failure-rate breaker mode, slow calls, quorum tripping (core rules,
 * the memory store's windows) and live ranking of alternatives, with an
 * injected clock. */
#include "fleet_fixture.h"

#include "domain/breaker.h"

/* ---- the pure rules ---- */

static const rd_breaker_policy rate_policy = {
    .failure_threshold = 5, .success_threshold = 1, .open_timeout_ms = 1000,
    .mode = RD_BREAKER_MODE_FAILURE_RATE, .failure_rate_threshold = 50, .minimum_calls = 4,
    .window_ms = 10000, .slow_call_ms = 200, .slow_call_rate_threshold = 75};

static void rate_needs_minimum_calls_and_threshold(void **state)
{
    rd_breaker_evidence ev = {.calls = 3, .failures = 3};
    assert_false(rd_breaker_rate_tripped(&rate_policy, &ev)); /* under minimum_calls */
    ev = (rd_breaker_evidence){.calls = 4, .failures = 2};
    assert_true(rd_breaker_rate_tripped(&rate_policy, &ev)); /* 50 % >= 50 % */
    ev = (rd_breaker_evidence){.calls = 5, .failures = 2};
    assert_false(rd_breaker_rate_tripped(&rate_policy, &ev)); /* 40 % */
    ev = (rd_breaker_evidence){.calls = 4, .slow = 3};
    assert_true(rd_breaker_rate_tripped(&rate_policy, &ev)); /* slow 75 % */
    ev = (rd_breaker_evidence){.calls = 4, .slow = 2};
    assert_false(rd_breaker_rate_tripped(&rate_policy, &ev));
    rd_breaker_policy no_slow = rate_policy;
    no_slow.slow_call_ms = 0; /* off: slow counts never trip */
    ev = (rd_breaker_evidence){.calls = 4, .slow = 4};
    assert_false(rd_breaker_rate_tripped(&no_slow, &ev));
}

static void a_success_can_tip_the_rate(void **state)
{
    rd_breaker b;
    rd_breaker_init(&b, 0);
    rd_breaker_evidence ev = {.calls = 4, .failures = 3};
    assert_int_equal(rd_breaker_record_evidence(&b, &rate_policy, 10, RD_OUTCOME_SUCCESS, 0, &ev),
                     RD_TRANSITION_OPENED);
    assert_int_equal(b.consecutive_failures, 0);
}

static void without_evidence_a_rate_policy_never_opens(void **state)
{
    rd_breaker b;
    rd_breaker_init(&b, 0);
    for (int i = 0; i < 50; i++)
        assert_int_equal(rd_breaker_record(&b, &rate_policy, i, RD_OUTCOME_TRANSIENT_FAILURE, 0),
                         RD_TRANSITION_NONE);
}

static void quorum_holds_the_consecutive_rule(void **state)
{
    rd_breaker_policy p = {.failure_threshold = 2, .success_threshold = 1,
                           .open_timeout_ms = 1000, .quorum_min_executors = 2,
                           .quorum_window_ms = 10000};
    rd_breaker b;
    rd_breaker_init(&b, 0);
    rd_breaker_evidence one = {.failing_executors = 1};
    rd_breaker_record_evidence(&b, &p, 1, RD_OUTCOME_TRANSIENT_FAILURE, 0, &one);
    assert_false(one.held_by_quorum); /* streak 1 < 2: nothing to hold */
    assert_int_equal(rd_breaker_record_evidence(&b, &p, 2, RD_OUTCOME_TRANSIENT_FAILURE, 0, &one),
                     RD_TRANSITION_NONE);
    assert_true(one.held_by_quorum);
    assert_int_equal(b.consecutive_failures, 2);
    rd_breaker_evidence two = {.failing_executors = 2};
    assert_int_equal(rd_breaker_record_evidence(&b, &p, 3, RD_OUTCOME_TRANSIENT_FAILURE, 0, &two),
                     RD_TRANSITION_OPENED);
    assert_false(two.held_by_quorum);
}

/* ---- the memory store's windows ---- */

static rd_store *new_store(void)
{
    rd_store_limits limits = {.tool_idle_ttl_ms = 60000, .turn_ttl_ms = 60000};
    rd_store *s = rd_store_memory_new(&limits);
    assert_non_null(s);
    return s;
}

static rd_store_result call(rd_store *s, const rd_breaker_policy *p, int64_t now,
                            rd_outcome o, const char *executor, int64_t latency)
{
    rd_call_report c = {.outcome = o, .executor_id = executor, .latency_ms = latency};
    rd_store_result r;
    rd_status st = {0};
    assert_int_equal(s->ops->record_call(s, "api", p, now, &c, &r, &st), RD_OK);
    return r;
}

#define S RD_OUTCOME_SUCCESS
#define F RD_OUTCOME_TRANSIENT_FAILURE

static void store_opens_at_the_failure_rate(void **state)
{
    rd_store *s = new_store();
    assert_int_equal(call(s, &rate_policy, 0, S, "", 10).transition, RD_TRANSITION_NONE);
    assert_int_equal(call(s, &rate_policy, 1, F, "", 10).transition, RD_TRANSITION_NONE);
    assert_int_equal(call(s, &rate_policy, 2, S, "", 10).transition, RD_TRANSITION_NONE);
    rd_store_result r = call(s, &rate_policy, 3, F, "", 10);
    assert_int_equal(r.transition, RD_TRANSITION_OPENED);
    assert_int_equal(r.evidence.calls, 4);
    assert_int_equal(r.evidence.failures, 2);
    rd_store_destroy(s);
}

static void old_failures_slide_out_of_the_window(void **state)
{
    rd_store *s = new_store();
    call(s, &rate_policy, 0, F, "", 10);
    call(s, &rate_policy, 1, F, "", 10);
    call(s, &rate_policy, 2, F, "", 10);
    /* 3 failures, then successes long after: the failures left the window */
    rd_store_result r;
    for (int i = 0; i < 4; i++)
        r = call(s, &rate_policy, 20000 + i, S, "", 10);
    assert_int_equal(r.evidence.calls, 4);
    assert_int_equal(r.evidence.failures, 0);
    assert_int_equal(r.breaker.stored, RD_BREAKER_CLOSED);
    rd_store_destroy(s);
}

static void slow_calls_open_and_the_window_restarts_after_closing(void **state)
{
    rd_store *s = new_store();
    call(s, &rate_policy, 0, S, "", 250);
    call(s, &rate_policy, 1, S, "", 200); /* exactly slow_call_ms is slow */
    call(s, &rate_policy, 2, S, "", 10);
    rd_store_result r = call(s, &rate_policy, 3, S, "", 900);
    assert_int_equal(r.evidence.slow, 3);
    assert_int_equal(r.transition, RD_TRANSITION_OPENED);
    /* half-open after 1 s: a good probe closes it */
    rd_store_result adm;
    rd_status st = {0};
    assert_int_equal(s->ops->admit(s, "api", &rate_policy, 1010, 500, &adm, &st), RD_OK);
    assert_int_equal(adm.admission, RD_ADMIT_PROBE);
    rd_call_report probe = {.outcome = S, .permit_token = adm.permit_token, .latency_ms = 5};
    assert_int_equal(s->ops->record_call(s, "api", &rate_policy, 1020, &probe, &r, &st), RD_OK);
    assert_int_equal(r.transition, RD_TRANSITION_CLOSED);
    /* the slow calls before do not count against the new period */
    r = call(s, &rate_policy, 1030, S, "", 900);
    assert_int_equal(r.evidence.calls, 1);
    assert_int_equal(r.transition, RD_TRANSITION_NONE);
    rd_store_destroy(s);
}

static const rd_breaker_policy quorum_policy = {
    .failure_threshold = 3, .success_threshold = 1, .open_timeout_ms = 1000,
    .quorum_min_executors = 2, .quorum_window_ms = 10000};

static void one_sick_executor_cannot_open_it(void **state)
{
    rd_store *s = new_store();
    rd_store_result r;
    for (int i = 0; i < 10; i++)
        r = call(s, &quorum_policy, i, F, "exec-a", -1);
    assert_int_equal(r.breaker.stored, RD_BREAKER_CLOSED);
    assert_int_equal(r.breaker.consecutive_failures, 10);
    assert_true(r.evidence.held_by_quorum);
    assert_int_equal(r.evidence.failing_executors, 1);
    r = call(s, &quorum_policy, 11, F, "exec-b", -1);
    assert_int_equal(r.transition, RD_TRANSITION_OPENED);
    assert_int_equal(r.evidence.failing_executors, 2);
    rd_store_destroy(s);
}

static void anonymous_executors_are_one_and_quorum_window_slides(void **state)
{
    rd_store *s = new_store();
    rd_store_result r;
    for (int i = 0; i < 5; i++)
        r = call(s, &quorum_policy, i, F, "", -1);
    assert_int_equal(r.evidence.failing_executors, 1);
    assert_int_equal(r.breaker.stored, RD_BREAKER_CLOSED);
    /* exec-b fails after the anonymous failures left the quorum window */
    r = call(s, &quorum_policy, 20000, F, "exec-b", -1);
    assert_int_equal(r.evidence.failing_executors, 1);
    assert_int_equal(r.breaker.stored, RD_BREAKER_CLOSED);
    r = call(s, &quorum_policy, 20001, F, "exec-c", -1);
    assert_int_equal(r.transition, RD_TRANSITION_OPENED);
    rd_store_destroy(s);
}

/* ---- through Decide ---- */

static void decide_says_when_the_quorum_held_the_breaker(void **state)
{
    fleet *f = *state;
    f->config.defaults.breaker = quorum_policy;
    f->config.defaults.retry.max_attempts = 100;
    f->config.defaults.retry.max_total_time_ms = 10000000;
    rd_tool_error e = fleet_error("Connection reset by peer");
    rd_decide_input in = fleet_input("api", &e, 1);
    in.executor_id = "exec-a";
    rd_decision d;
    for (int i = 0; i < 4; i++)
        d = fleet_decide(f, &in);
    assert_int_equal(d.action, RD_ACTION_RETRY);
    assert_non_null(strstr(d.reason, "breaker held closed: failures from fewer than 2 executors"));
    in.executor_id = "exec-b";
    d = fleet_decide(f, &in);
    assert_int_equal(d.action, RD_ACTION_FAIL_FAST);
}

static const char *const ALTERNATIVES[] = {"alt_a", "alt_b", "alt_c"};

static void outcome(fleet *f, const char *tool, bool success)
{
    rd_outcome_input o = fleet_outcome(tool, success, 1);
    fleet_record(f, &o);
}

/* alt_a: CLOSED, 1 success in 4; alt_b: HALF_OPEN; alt_c: CLOSED, unseen. */
static void rank_setup(fleet *f)
{
    f->config.defaults.alternatives = (char **)ALTERNATIVES;
    f->config.defaults.n_alternatives = 3;
    outcome(f, "alt_a", true);
    for (int i = 0; i < 3; i++)
        outcome(f, "alt_a", false);
    for (int i = 0; i < 5; i++)
        outcome(f, "alt_b", false);
    f->ctx.now_ms += 31000; /* alt_b half-open; alt_a's window (60 s) still counts */
}

static const char *alternative_for_permanent_error(fleet *f)
{
    rd_tool_error e = fleet_error("invalid request");
    rd_decide_input in = fleet_input("main", &e, 1);
    rd_decision d = fleet_decide(f, &in);
    assert_int_equal(d.action, RD_ACTION_USE_ALTERNATIVE);
    static char chosen[RD_ID_MAX + 1];
    snprintf(chosen, sizeof chosen, "%s", d.alternative_tool_id);
    return chosen;
}

static void live_ranking_prefers_closed_then_success_rate(void **state)
{
    fleet *f = *state;
    rank_setup(f);
    assert_string_equal(alternative_for_permanent_error(f), "alt_c");
    /* once alt_c fails more often than alt_a, alt_a comes first */
    for (int i = 0; i < 4; i++)
        outcome(f, "alt_c", false);
    assert_string_equal(alternative_for_permanent_error(f), "alt_a");
}

static void manifest_ranking_keeps_the_listed_order(void **state)
{
    fleet *f = *state;
    rank_setup(f);
    f->config.defaults.alternatives_ranking = RD_RANKING_MANIFEST;
    assert_string_equal(alternative_for_permanent_error(f), "alt_a");
}

int main(void)
{
    const struct CMUnitTest pure[] = {
        cmocka_unit_test(rate_needs_minimum_calls_and_threshold),
        cmocka_unit_test(a_success_can_tip_the_rate),
        cmocka_unit_test(without_evidence_a_rate_policy_never_opens),
        cmocka_unit_test(quorum_holds_the_consecutive_rule),
        cmocka_unit_test(store_opens_at_the_failure_rate),
        cmocka_unit_test(old_failures_slide_out_of_the_window),
        cmocka_unit_test(slow_calls_open_and_the_window_restarts_after_closing),
        cmocka_unit_test(one_sick_executor_cannot_open_it),
        cmocka_unit_test(anonymous_executors_are_one_and_quorum_window_slides),
    };
    const struct CMUnitTest engine[] = {
        cmocka_unit_test_setup_teardown(decide_says_when_the_quorum_held_the_breaker,
                                        fleet_setup, fleet_teardown),
        cmocka_unit_test_setup_teardown(live_ranking_prefers_closed_then_success_rate,
                                        fleet_setup, fleet_teardown),
        cmocka_unit_test_setup_teardown(manifest_ranking_keeps_the_listed_order, fleet_setup,
                                        fleet_teardown),
    };
    int failed = cmocka_run_group_tests_name("breaker_rate", pure, NULL, NULL);
    return failed + cmocka_run_group_tests_name("breaker_rate_decide", engine,
                                                fleet_group_setup, fleet_group_teardown);
}
