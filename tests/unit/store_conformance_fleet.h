/* Part of the store conformance suite (store_conformance.h, which
 * includes it): the fleet features (docs/FLEET.md): the retry budget, the
 * failure-rate window, the quorum of executors and signature learning. */
#ifndef RD_TESTS_STORE_CONFORMANCE_FLEET_H
#define RD_TESTS_STORE_CONFORMANCE_FLEET_H

#include "store_conformance_fixture.h"

static rd_budget_result conf_budget(rd_store *s, const rd_retry_budget_policy *p, int64_t now,
                                    rd_budget_op op)
{
    rd_budget_result r;
    rd_status st = {0};
    assert_int_equal(s->ops->budget(s, "api", p, now, op, &r, &st), RD_OK);
    return r;
}

static void conf_budget_counts_and_slides(void **state)
{
    rd_store_limits l = conf_limits();
    rd_store *s = conf_make(state, &l);
    rd_retry_budget_policy p = {.enabled = true, .budget_percent = 25,
                                .min_retries_per_window = 1, .window_ms = 1000};
    assert_true(conf_budget(s, &p, 5000, RD_BUDGET_TAKE_RETRY).granted);
    assert_false(conf_budget(s, &p, 5001, RD_BUDGET_TAKE_RETRY).granted);
    rd_budget_result r;
    for (int i = 0; i < 8; i++)
        r = conf_budget(s, &p, 5100 + i, RD_BUDGET_COUNT_REQUEST);
    assert_int_equal(r.requests, 8);
    r = conf_budget(s, &p, 5200, RD_BUDGET_PEEK); /* 25 % of 8 = 2 > 1 */
    assert_true(r.granted);
    assert_int_equal(r.retries, 1);
    assert_true(conf_budget(s, &p, 5200, RD_BUDGET_TAKE_RETRY).granted);
    r = conf_budget(s, &p, 5200, RD_BUDGET_TAKE_RETRY);
    assert_false(r.granted);
    assert_int_equal(r.retries, 2);
    /* the first bucket (5000..5099) leaves at 6000: one retry less */
    r = conf_budget(s, &p, 6000, RD_BUDGET_PEEK);
    assert_int_equal(r.retries, 1);
    assert_int_equal(r.requests, 8);
    r = conf_budget(s, &p, 7000, RD_BUDGET_PEEK);
    assert_int_equal(r.requests, 0);
    rd_status st = {0};
    assert_int_equal(s->ops->budget(s, "api", &p, 0, (rd_budget_op)0, &r, &st), RD_ERR_INVALID);
    rd_store_destroy(s);
}

static rd_store_result conf_call(rd_store *s, const char *tool, const rd_breaker_policy *p,
                                 int64_t now, rd_outcome o, const char *executor,
                                 int64_t latency)
{
    rd_call_report c = {.outcome = o, .executor_id = executor, .latency_ms = latency};
    rd_store_result r;
    rd_status st = {0};
    assert_int_equal(s->ops->record_call(s, tool, p, now, &c, &r, &st), RD_OK);
    return r;
}

static void conf_failure_rate_window(void **state)
{
    rd_store_limits l = conf_limits();
    rd_store *s = conf_make(state, &l);
    rd_breaker_policy p = conf_policy;
    p.mode = RD_BREAKER_MODE_FAILURE_RATE;
    p.failure_rate_threshold = 60;
    p.minimum_calls = 5;
    p.window_ms = 10000;
    p.slow_call_ms = 100;
    p.slow_call_rate_threshold = 100;
    conf_call(s, "api", &p, 1000, RD_OUTCOME_TRANSIENT_FAILURE, "", 5);
    conf_call(s, "api", &p, 1001, RD_OUTCOME_TRANSIENT_FAILURE, "", 5);
    conf_call(s, "api", &p, 1002, RD_OUTCOME_SUCCESS, "", 150);
    rd_store_result r = conf_call(s, "api", &p, 1003, RD_OUTCOME_TRANSIENT_FAILURE, "", -1);
    assert_int_equal(r.transition, RD_TRANSITION_NONE); /* 4 calls < minimum 5 */
    assert_int_equal(r.evidence.calls, 4);
    assert_int_equal(r.evidence.failures, 3);
    assert_int_equal(r.evidence.slow, 1);
    rd_breaker b;
    rd_breaker_evidence ev;
    bool found;
    rd_status st = {0};
    assert_int_equal(s->ops->stats(s, "api", &p, 1004, &b, &ev, &found, &st), RD_OK);
    assert_true(found);
    assert_int_equal(ev.calls, 4);
    assert_int_equal(ev.failures, 3);
    r = conf_call(s, "api", &p, 1005, RD_OUTCOME_PERMANENT_FAILURE, "", 5);
    assert_int_equal(r.transition, RD_TRANSITION_OPENED); /* 3 of 5 = 60 % */
    /* a new period judges only its own calls */
    assert_int_equal(s->ops->stats(s, "api", &p, 1006, &b, &ev, &found, &st), RD_OK);
    assert_int_equal(ev.calls, 0);
    assert_int_equal(b.stored, RD_BREAKER_OPEN);
    assert_int_equal(s->ops->stats(s, "never", &p, 1006, &b, &ev, &found, &st), RD_OK);
    assert_false(found);
    rd_store_destroy(s);
}

static void conf_quorum_of_executors(void **state)
{
    rd_store_limits l = conf_limits();
    rd_store *s = conf_make(state, &l);
    rd_breaker_policy p = conf_policy; /* 3 in a row */
    p.quorum_min_executors = 3;
    p.quorum_window_ms = 5000;
    rd_store_result r;
    for (int i = 0; i < 6; i++)
        r = conf_call(s, "api", &p, 1000 + i, RD_OUTCOME_TRANSIENT_FAILURE,
                      i % 2 ? "exec-a" : "", -1);
    assert_int_equal(r.breaker.stored, RD_BREAKER_CLOSED);
    assert_true(r.evidence.held_by_quorum);
    assert_int_equal(r.evidence.failing_executors, 2);
    assert_int_equal(r.breaker.consecutive_failures, 6);
    /* exec-b, but after the first two left the window */
    r = conf_call(s, "api", &p, 7000, RD_OUTCOME_TRANSIENT_FAILURE, "exec-b", -1);
    assert_int_equal(r.evidence.failing_executors, 1);
    r = conf_call(s, "api", &p, 7001, RD_OUTCOME_TRANSIENT_FAILURE, "exec-c", -1);
    assert_int_equal(r.breaker.stored, RD_BREAKER_CLOSED);
    r = conf_call(s, "api", &p, 7002, RD_OUTCOME_TRANSIENT_FAILURE, "exec-a", -1);
    assert_int_equal(r.transition, RD_TRANSITION_OPENED);
    assert_int_equal(r.evidence.failing_executors, 3);
    rd_store_destroy(s);
}

static void conf_learning_links_and_records(void **state)
{
    rd_store_limits l = conf_limits();
    l.max_signatures = 100;
    l.signature_ttl_ms = 2000;
    rd_store *s = conf_make(state, &l);
    rd_status st = {0};
    rd_learn_stats out;
    const char *sig = "0123456789abcdef";
    assert_int_equal(s->ops->learn_link(s, "api", "turn-1", sig, RD_LEARN_KEEP, 1000, &st),
                     RD_OK);
    assert_int_equal(s->ops->learn_link(s, "api", "turn-1", "", RD_LEARN_SUCCEEDED, 1001, &st),
                     RD_OK);
    /* settled once: a second settle finds nothing pending */
    assert_int_equal(s->ops->learn_link(s, "api", "turn-1", "", RD_LEARN_FAILED, 1002, &st),
                     RD_OK);
    assert_int_equal(s->ops->learn_link(s, "api", "turn-2", sig, RD_LEARN_KEEP, 1003, &st),
                     RD_OK);
    assert_int_equal(s->ops->learn_link(s, "api", "turn-2", sig, RD_LEARN_FAILED, 1004, &st),
                     RD_OK);
    assert_int_equal(s->ops->learn_stats(s, "api", sig, 1005, &out, &st), RD_OK);
    assert_int_equal(out.successes, 1);
    assert_int_equal(out.failures, 1);
    assert_int_equal(s->ops->learn_stats(s, "other", sig, 1005, &out, &st), RD_OK);
    assert_int_equal(out.successes + out.failures, 0); /* per tool */
    assert_int_equal(s->ops->learn_stats(s, "api", sig, 3004, &out, &st), RD_OK);
    assert_int_equal(out.successes + out.failures, 0); /* expired */
    assert_int_equal(s->ops->learn_link(s, "api", "", sig, RD_LEARN_KEEP, 0, &st),
                     RD_ERR_INVALID);
    rd_store_destroy(s);
}

#endif
