/* Part of the store conformance suite (store_conformance.h, which
 * includes it): operator holds (force): open, closed, timed, reset and
 * release, bad input, and held breakers kept by eviction. */
#ifndef RD_TESTS_STORE_CONFORMANCE_HOLDS_H
#define RD_TESTS_STORE_CONFORMANCE_HOLDS_H

#include "store_conformance_fixture.h"

static void conf_force_open_refuses_until_released(void **state)
{
    rd_store_limits lim = conf_limits();
    rd_store *s = conf_make(state, &lim);
    rd_store_result r = conf_force(s, "held", RD_FORCE_OPEN, 100, 0);
    assert_int_equal(r.breaker.forced, RD_BREAKER_OPEN);
    assert_int_equal(r.breaker.forced_until_ms, 0);
    r = conf_admit(s, "held", &conf_policy, 1000000);
    assert_int_equal(r.admission, RD_ADMIT_NO);
    /* successes during the hold are not counted and change nothing */
    conf_record(s, "held", &conf_policy, 1000001, RD_OUTCOME_SUCCESS, 0);
    bool found;
    rd_breaker b = conf_get(s, "held", 1000002, &found);
    assert_true(found);
    assert_int_equal(rd_breaker_status_at(&b, 1000002), RD_BREAKER_OPEN);
    conf_force(s, "held", RD_FORCE_RELEASE, 1000003, 0);
    r = conf_admit(s, "held", &conf_policy, 1000004);
    assert_int_equal(r.admission, RD_ADMIT_YES);
    rd_store_destroy(s);
}

static void conf_force_closed_admits_and_ignores_failures(void **state)
{
    rd_store_limits lim = conf_limits();
    rd_store *s = conf_make(state, &lim);
    for (int i = 0; i < 3; i++)
        conf_record(s, "flaky", &conf_policy, 10 + i, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    assert_int_equal(conf_admit(s, "flaky", &conf_policy, 20).admission, RD_ADMIT_NO);
    conf_force(s, "flaky", RD_FORCE_CLOSED, 30, 0);
    assert_int_equal(conf_admit(s, "flaky", &conf_policy, 31).admission, RD_ADMIT_YES);
    for (int i = 0; i < 10; i++)
        conf_record(s, "flaky", &conf_policy, 40 + i, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    assert_int_equal(conf_admit(s, "flaky", &conf_policy, 60).admission, RD_ADMIT_YES);
    rd_store_destroy(s);
}

static void conf_force_ttl_expires(void **state)
{
    rd_store_limits lim = conf_limits();
    rd_store *s = conf_make(state, &lim);
    rd_store_result r = conf_force(s, "brief", RD_FORCE_OPEN, 1000, 500);
    assert_int_equal(r.breaker.forced_until_ms, 1500);
    assert_int_equal(conf_admit(s, "brief", &conf_policy, 1499).admission, RD_ADMIT_NO);
    assert_int_equal(conf_admit(s, "brief", &conf_policy, 1500).admission, RD_ADMIT_YES);
    rd_store_destroy(s);
}

static void conf_force_reset_starts_a_new_epoch(void **state)
{
    rd_store_limits lim = conf_limits();
    rd_store *s = conf_make(state, &lim);
    for (int i = 0; i < 3; i++)
        conf_record(s, "t", &conf_policy, 10 + i, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    rd_store_result probe = conf_admit(s, "t", &conf_policy, 2000);
    assert_int_equal(probe.admission, RD_ADMIT_PROBE);
    rd_store_result r = conf_force(s, "t", RD_FORCE_RESET, 2001, 0);
    assert_int_equal(r.breaker.stored, RD_BREAKER_CLOSED);
    assert_int_equal(r.breaker.generation, probe.breaker.generation + 1);
    assert_int_equal(r.breaker.consecutive_failures, 0);
    assert_int_equal(r.breaker.opens_total, 1);
    /* the old epoch's probe cannot speak any more */
    conf_record(s, "t", &conf_policy, 2002, RD_OUTCOME_TRANSIENT_FAILURE, probe.permit_token);
    bool found;
    rd_breaker b = conf_get(s, "t", 2003, &found);
    assert_int_equal(rd_breaker_status_at(&b, 2003), RD_BREAKER_CLOSED);
    assert_int_equal(b.consecutive_failures, 1);
    rd_store_destroy(s);
}

static void conf_force_rejects_bad_input(void **state)
{
    rd_store_limits lim = conf_limits();
    rd_store *s = conf_make(state, &lim);
    rd_store_result r;
    rd_status st = {0};
    assert_int_equal(s->ops->force(s, "t", (rd_force_mode)9, 1, 0, &r, &st), RD_ERR_INVALID);
    assert_non_null(strstr(st.msg, "mode"));
    assert_int_equal(s->ops->force(s, "t", RD_FORCE_OPEN, 1, -5, &r, &st), RD_ERR_INVALID);
    assert_non_null(strstr(st.msg, "ttl_ms"));
    assert_int_equal(s->ops->force(s, "", RD_FORCE_OPEN, 1, 0, &r, &st), RD_ERR_INVALID);
    rd_store_destroy(s);
}

static void conf_forced_breaker_is_not_evicted(void **state)
{
    rd_store_limits lim = conf_limits();
    lim.tool_idle_ttl_ms = 1000;
    rd_store *s = conf_make(state, &lim);
    conf_force(s, "kept", RD_FORCE_OPEN, 0, 0);
    s->ops->evict(s, 100000);
    bool found;
    rd_breaker b = conf_get(s, "kept", 100000, &found);
    assert_true(found);
    assert_int_equal(b.forced, RD_BREAKER_OPEN);
    rd_store_destroy(s);
}

#endif
