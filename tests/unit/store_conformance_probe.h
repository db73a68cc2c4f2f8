/* Part of the store conformance suite (store_conformance.h, which
 * includes it): the half-open probe's rules in detail, on which the C
 * breaker of the memory store and the Lua breaker of the Redis store must
 * agree. */
#ifndef RD_TESTS_STORE_CONFORMANCE_PROBE_H
#define RD_TESTS_STORE_CONFORMANCE_PROBE_H

#include "store_conformance_fixture.h"

static rd_store_result conf_admit_lease(rd_store *s, const char *tool,
                                        const rd_breaker_policy *p, int64_t now_ms,
                                        int64_t lease_ms)
{
    rd_store_result r;
    rd_status st = {0};
    assert_int_equal(s->ops->admit(s, tool, p, now_ms, lease_ms, &r, &st), RD_OK);
    return r;
}

/* The half-open rules in detail: thresholds of 0 behave as 1, a lease of 0
 * lasts 1 ms, a permanent error from the probe frees the permit and decides
 * nothing, and success_threshold probes in a row close the breaker. */
static void conf_half_open_probe_rules(void **state)
{
    rd_store_limits lim = conf_limits();
    rd_store *s = conf_make(state, &lim);
    const rd_breaker_policy zero = {.failure_threshold = 0, .success_threshold = 0,
                                    .open_timeout_ms = 100};
    const rd_breaker_policy two = {.failure_threshold = 1, .success_threshold = 2,
                                   .open_timeout_ms = 100};
    rd_store_result r = conf_record(s, "z", &zero, 10, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    assert_int_equal(r.transition, RD_TRANSITION_OPENED);
    assert_int_equal(r.breaker.open_until_ms, 110);

    r = conf_admit_lease(s, "z", &zero, 110, 0);
    assert_int_equal(r.admission, RD_ADMIT_PROBE);
    assert_int_equal(r.breaker.probe_lease_until_ms, 111);
    assert_int_equal(conf_admit_lease(s, "z", &zero, 110, 0).admission, RD_ADMIT_NO);
    r = conf_admit_lease(s, "z", &zero, 111, 0); /* the 1 ms lease ran out */
    assert_int_equal(r.admission, RD_ADMIT_PROBE);

    r = conf_record(s, "z", &zero, 111, RD_OUTCOME_PERMANENT_FAILURE, r.permit_token);
    assert_int_equal(r.transition, RD_TRANSITION_NONE);
    assert_int_equal(r.breaker.stored, RD_BREAKER_OPEN);
    assert_int_equal(r.breaker.probe_token, 0);
    assert_int_equal(r.breaker.consecutive_failures, 0);
    r = conf_admit(s, "z", &zero, 112);
    assert_int_equal(r.admission, RD_ADMIT_PROBE);
    r = conf_record(s, "z", &zero, 113, RD_OUTCOME_SUCCESS, r.permit_token);
    assert_int_equal(r.transition, RD_TRANSITION_CLOSED); /* success_threshold 0 as 1 */

    conf_record(s, "two", &two, 10, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    r = conf_admit(s, "two", &two, 110);
    r = conf_record(s, "two", &two, 120, RD_OUTCOME_SUCCESS, r.permit_token);
    assert_int_equal(r.transition, RD_TRANSITION_NONE);
    assert_int_equal(r.breaker.consecutive_successes, 1);
    assert_int_equal(r.breaker.probe_token, 0);
    r = conf_admit(s, "two", &two, 121);
    assert_int_equal(r.admission, RD_ADMIT_PROBE);
    r = conf_record(s, "two", &two, 130, RD_OUTCOME_SUCCESS, r.permit_token);
    assert_int_equal(r.transition, RD_TRANSITION_CLOSED);
    assert_int_equal(r.breaker.consecutive_successes, 0);
    assert_int_equal(r.breaker.opens_total, 1);
    rd_store_destroy(s);
}

/* Releasing (with no hold) keeps the probe in flight: its holder still
 * speaks for the half-open period. */
static void conf_force_release_keeps_the_probe(void **state)
{
    rd_store_limits lim = conf_limits();
    rd_store *s = conf_make(state, &lim);
    for (int i = 0; i < 3; i++)
        conf_record(s, "p", &conf_policy, 10, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    rd_store_result probe = conf_admit(s, "p", &conf_policy, 1010);
    assert_int_equal(probe.admission, RD_ADMIT_PROBE);
    rd_store_result r = conf_force(s, "p", RD_FORCE_RELEASE, 1011, 0);
    assert_int_equal(r.breaker.probe_token, probe.permit_token);
    assert_int_equal(r.breaker.probe_lease_until_ms, 1010 + CONF_LEASE_MS);
    r = conf_record(s, "p", &conf_policy, 1012, RD_OUTCOME_SUCCESS, probe.permit_token);
    assert_int_equal(r.transition, RD_TRANSITION_CLOSED);
    rd_store_destroy(s);
}

#endif
