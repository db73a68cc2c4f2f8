/* The breaker state machine with an injected clock: every transition of
 * 000 section 3 and the scenarios of 003 sections 3 and 7. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "domain/breaker.h"
#include "domain/err.h"

#define LEASE_MS 30000
#define TOKEN_A 0xA11CEULL
#define TOKEN_B 0xB0BULL

static const rd_breaker_policy spec_policy = {
    .failure_threshold = 5,
    .success_threshold = 1,
    .open_timeout_ms = 30000,
};

static rd_breaker fresh(int64_t now_ms)
{
    rd_breaker b;
    rd_breaker_init(&b, now_ms);
    return b;
}

static void fail_n(rd_breaker *b, const rd_breaker_policy *p, int64_t now_ms, int n)
{
    for (int i = 0; i < n; i++)
        rd_breaker_record(b, p, now_ms, RD_OUTCOME_TRANSIENT_FAILURE, 0);
}

/* A breaker opened at t=0 under spec_policy. */
static rd_breaker opened_at_zero(void)
{
    rd_breaker b = fresh(0);
    fail_n(&b, &spec_policy, 0, 5);
    assert_int_equal(b.stored, RD_BREAKER_OPEN);
    return b;
}

/* Everything but last_seen_ms, which every call updates. */
static void assert_same_state(const rd_breaker *a, const rd_breaker *b)
{
    assert_int_equal(a->stored, b->stored);
    assert_int_equal(a->consecutive_failures, b->consecutive_failures);
    assert_int_equal(a->consecutive_successes, b->consecutive_successes);
    assert_int_equal(a->opened_at_ms, b->opened_at_ms);
    assert_int_equal(a->open_until_ms, b->open_until_ms);
    assert_int_equal(a->generation, b->generation);
    assert_int_equal(a->opens_total, b->opens_total);
    assert_int_equal(a->probe_token, b->probe_token);
    assert_int_equal(a->probe_lease_until_ms, b->probe_lease_until_ms);
}

static void test_init_is_closed_and_pristine(void **state)
{
    rd_breaker b = fresh(1234);
    assert_int_equal(rd_breaker_status_at(&b, 1234), RD_BREAKER_CLOSED);
    assert_int_equal(b.consecutive_failures, 0);
    assert_int_equal(b.opened_at_ms, 0);
    assert_int_equal(b.generation, 0);
    assert_int_equal(b.last_seen_ms, 1234);
    assert_true(rd_breaker_is_pristine(&b, 1234));
    rd_breaker_transition tr = RD_TRANSITION_OPENED;
    assert_int_equal(rd_breaker_admit(&b, &spec_policy, 1300, LEASE_MS, TOKEN_A, &tr),
                     RD_ADMIT_YES);
    assert_int_equal(tr, RD_TRANSITION_NONE);
    assert_int_equal(b.probe_token, 0);
}

/* 003 3.1 and 3.5: the fifth consecutive transient failure opens it. */
static void test_opens_after_threshold_transient_failures(void **state)
{
    rd_breaker b = fresh(0);
    for (uint32_t i = 1; i <= 4; i++) {
        assert_int_equal(rd_breaker_record(&b, &spec_policy, 100 * i,
                                           RD_OUTCOME_TRANSIENT_FAILURE, 0),
                         RD_TRANSITION_NONE);
        assert_int_equal(rd_breaker_status_at(&b, 100 * i), RD_BREAKER_CLOSED);
        assert_int_equal(b.consecutive_failures, i);
    }
    assert_int_equal(rd_breaker_record(&b, &spec_policy, 500, RD_OUTCOME_TRANSIENT_FAILURE, 0),
                     RD_TRANSITION_OPENED);
    assert_int_equal(rd_breaker_status_at(&b, 500), RD_BREAKER_OPEN);
    assert_int_equal(b.consecutive_failures, 5);
    assert_int_equal(b.opened_at_ms, 500);
    assert_int_equal(b.open_until_ms, 30500);
    assert_int_equal(b.generation, 1);
    assert_int_equal(b.opens_total, 1);
    assert_false(rd_breaker_is_pristine(&b, 500));
    /* 3.1 attempt 6: refused at once */
    assert_int_equal(rd_breaker_admit(&b, &spec_policy, 501, LEASE_MS, TOKEN_A, NULL),
                     RD_ADMIT_NO);
}

/* 003 7.1: failures 6-10 arrive while OPEN and change nothing. */
static void test_rapid_failures_after_open_are_stale(void **state)
{
    rd_breaker b = opened_at_zero();
    rd_breaker before = b;
    fail_n(&b, &spec_policy, 10, 5);
    assert_same_state(&b, &before);
    assert_int_equal(rd_breaker_status_at(&b, 10), RD_BREAKER_OPEN);
    assert_int_equal(b.opens_total, 1);
}

/* 003 3.2: OPEN at t=0 and t=15s, HALF_OPEN from exactly t=30s. */
static void test_half_opens_exactly_at_open_until(void **state)
{
    rd_breaker b = opened_at_zero();
    assert_int_equal(rd_breaker_status_at(&b, 0), RD_BREAKER_OPEN);
    assert_int_equal(rd_breaker_admit(&b, &spec_policy, 15000, LEASE_MS, TOKEN_A, NULL),
                     RD_ADMIT_NO);
    assert_int_equal(rd_breaker_status_at(&b, 15000), RD_BREAKER_OPEN);
    assert_int_equal(rd_breaker_status_at(&b, 29999), RD_BREAKER_OPEN);
    assert_int_equal(rd_breaker_admit(&b, &spec_policy, 29999, LEASE_MS, TOKEN_A, NULL),
                     RD_ADMIT_NO);
    assert_int_equal(b.probe_token, 0);
    assert_int_equal(rd_breaker_status_at(&b, 30000), RD_BREAKER_HALF_OPEN);
    assert_int_equal(b.stored, RD_BREAKER_OPEN); /* derived, nothing stored */
}

/* 003 3.2: exactly one retry allowed while the probe is out. */
static void test_exactly_one_probe(void **state)
{
    rd_breaker b = opened_at_zero();
    rd_breaker_transition tr;
    assert_int_equal(rd_breaker_admit(&b, &spec_policy, 30000, LEASE_MS, TOKEN_A, &tr),
                     RD_ADMIT_PROBE);
    assert_int_equal(tr, RD_TRANSITION_PROBE_GRANTED);
    assert_int_equal(b.probe_token, TOKEN_A);
    assert_int_equal(b.probe_lease_until_ms, 30000 + LEASE_MS);
    assert_true(rd_breaker_probe_live(&b, 30000));

    for (int i = 0; i < 3; i++) {
        assert_int_equal(rd_breaker_admit(&b, &spec_policy, 30001 + i, LEASE_MS, TOKEN_B, &tr),
                         RD_ADMIT_NO);
        assert_int_equal(tr, RD_TRANSITION_NONE);
    }
    assert_int_equal(b.probe_token, TOKEN_A);
    assert_int_equal(rd_breaker_status_at(&b, 30005), RD_BREAKER_HALF_OPEN);
}

/* A probe holder that vanishes gives the permit back when its lease ends;
 * its late outcome is stale. */
static void test_expired_lease_regrants_probe(void **state)
{
    rd_breaker b = opened_at_zero();
    assert_int_equal(rd_breaker_admit(&b, &spec_policy, 30000, 1000, TOKEN_A, NULL),
                     RD_ADMIT_PROBE);
    assert_int_equal(rd_breaker_admit(&b, &spec_policy, 30999, 1000, TOKEN_B, NULL),
                     RD_ADMIT_NO);
    assert_false(rd_breaker_probe_live(&b, 31000));

    rd_breaker_transition tr;
    assert_int_equal(rd_breaker_admit(&b, &spec_policy, 31000, 1000, TOKEN_B, &tr),
                     RD_ADMIT_PROBE);
    assert_int_equal(tr, RD_TRANSITION_PROBE_GRANTED);
    assert_int_equal(b.probe_token, TOKEN_B);
    assert_int_equal(b.probe_lease_until_ms, 32000);

    rd_breaker before = b;
    assert_int_equal(rd_breaker_record(&b, &spec_policy, 31100, RD_OUTCOME_SUCCESS, TOKEN_A),
                     RD_TRANSITION_NONE);
    assert_same_state(&b, &before);
}

/* An expired lease nobody re-took: the old holder's outcome is still stale,
 * as a lease reclaimed by a TTL would be in a shared store. */
static void test_outcome_after_own_lease_expired_is_stale(void **state)
{
    rd_breaker b = opened_at_zero();
    rd_breaker_admit(&b, &spec_policy, 30000, 1000, TOKEN_A, NULL);
    rd_breaker before = b;
    assert_int_equal(rd_breaker_record(&b, &spec_policy, 31000, RD_OUTCOME_SUCCESS, TOKEN_A),
                     RD_TRANSITION_NONE);
    assert_same_state(&b, &before);
    assert_int_equal(rd_breaker_status_at(&b, 31000), RD_BREAKER_HALF_OPEN);
}

/* 003 3.3: the probe succeeds -> CLOSED, counter reset, normal operation. */
static void test_probe_success_closes_and_resets(void **state)
{
    rd_breaker b = opened_at_zero();
    rd_breaker_admit(&b, &spec_policy, 30000, LEASE_MS, TOKEN_A, NULL);
    assert_int_equal(rd_breaker_record(&b, &spec_policy, 30040, RD_OUTCOME_SUCCESS, TOKEN_A),
                     RD_TRANSITION_CLOSED);
    assert_int_equal(rd_breaker_status_at(&b, 30040), RD_BREAKER_CLOSED);
    assert_int_equal(b.consecutive_failures, 0);
    assert_int_equal(b.consecutive_successes, 0);
    assert_int_equal(b.probe_token, 0);
    assert_true(rd_breaker_is_pristine(&b, 30040));
    assert_int_equal(b.opens_total, 1); /* history is kept */
    assert_int_equal(rd_breaker_admit(&b, &spec_policy, 30041, LEASE_MS, TOKEN_B, NULL),
                     RD_ADMIT_YES);
    assert_int_equal(rd_breaker_admit(&b, &spec_policy, 30042, LEASE_MS, TOKEN_B, NULL),
                     RD_ADMIT_YES);
    /* closed again, it takes a full streak to re-open */
    fail_n(&b, &spec_policy, 30050, 4);
    assert_int_equal(rd_breaker_status_at(&b, 30050), RD_BREAKER_CLOSED);
}

/* 003 3.2: the probe fails -> OPEN and the timer restarts from then. */
static void test_failed_probe_reopens_and_restarts_timer(void **state)
{
    rd_breaker b = opened_at_zero();
    rd_breaker_admit(&b, &spec_policy, 30000, LEASE_MS, TOKEN_A, NULL);
    assert_int_equal(rd_breaker_record(&b, &spec_policy, 30010,
                                       RD_OUTCOME_TRANSIENT_FAILURE, TOKEN_A),
                     RD_TRANSITION_REOPENED);
    assert_int_equal(rd_breaker_status_at(&b, 30010), RD_BREAKER_OPEN);
    assert_int_equal(b.opened_at_ms, 30010);
    assert_int_equal(b.open_until_ms, 60010);
    assert_int_equal(b.generation, 2);
    assert_int_equal(b.opens_total, 2);
    assert_int_equal(b.probe_token, 0);
    assert_int_equal(rd_breaker_admit(&b, &spec_policy, 45000, LEASE_MS, TOKEN_B, NULL),
                     RD_ADMIT_NO);
    assert_int_equal(rd_breaker_status_at(&b, 60009), RD_BREAKER_OPEN);
    assert_int_equal(rd_breaker_status_at(&b, 60010), RD_BREAKER_HALF_OPEN);
    assert_int_equal(rd_breaker_admit(&b, &spec_policy, 60010, LEASE_MS, TOKEN_B, NULL),
                     RD_ADMIT_PROBE);
}

/* 000 3.2's success_threshold 2: two successful probes, one at a time. */
static void test_success_threshold_two_needs_two_probes(void **state)
{
    rd_breaker_policy p = spec_policy;
    p.success_threshold = 2;
    rd_breaker b = opened_at_zero();

    rd_breaker_admit(&b, &p, 30000, LEASE_MS, TOKEN_A, NULL);
    assert_int_equal(rd_breaker_record(&b, &p, 30010, RD_OUTCOME_SUCCESS, TOKEN_A),
                     RD_TRANSITION_NONE);
    assert_int_equal(rd_breaker_status_at(&b, 30010), RD_BREAKER_HALF_OPEN);
    assert_int_equal(b.consecutive_successes, 1);
    assert_int_equal(b.probe_token, 0);

    rd_breaker_transition tr;
    assert_int_equal(rd_breaker_admit(&b, &p, 30020, LEASE_MS, TOKEN_B, &tr), RD_ADMIT_PROBE);
    assert_int_equal(tr, RD_TRANSITION_PROBE_GRANTED);
    assert_int_equal(rd_breaker_admit(&b, &p, 30021, LEASE_MS, TOKEN_A, NULL), RD_ADMIT_NO);
    assert_int_equal(rd_breaker_record(&b, &p, 30030, RD_OUTCOME_SUCCESS, TOKEN_B),
                     RD_TRANSITION_CLOSED);
    assert_int_equal(rd_breaker_status_at(&b, 30030), RD_BREAKER_CLOSED);
    assert_int_equal(b.consecutive_successes, 0);
}

/* A failure between the two probes throws the first success away. */
static void test_reopen_forgets_probe_successes(void **state)
{
    rd_breaker_policy p = spec_policy;
    p.success_threshold = 2;
    rd_breaker b = opened_at_zero();
    rd_breaker_admit(&b, &p, 30000, LEASE_MS, TOKEN_A, NULL);
    rd_breaker_record(&b, &p, 30010, RD_OUTCOME_SUCCESS, TOKEN_A);
    rd_breaker_admit(&b, &p, 30020, LEASE_MS, TOKEN_B, NULL);
    assert_int_equal(rd_breaker_record(&b, &p, 30030, RD_OUTCOME_TRANSIENT_FAILURE, TOKEN_B),
                     RD_TRANSITION_REOPENED);
    assert_int_equal(b.consecutive_successes, 0);

    rd_breaker_admit(&b, &p, 60030, LEASE_MS, TOKEN_A, NULL);
    assert_int_equal(rd_breaker_record(&b, &p, 60040, RD_OUTCOME_SUCCESS, TOKEN_A),
                     RD_TRANSITION_NONE); /* one of two again, not two of two */
}

/* 003 3.4: five permanent errors leave it CLOSED with the counter at 0. */
static void test_permanent_errors_do_not_count(void **state)
{
    rd_breaker b = fresh(0);
    for (int i = 0; i < 5; i++)
        assert_int_equal(rd_breaker_record(&b, &spec_policy, i,
                                           RD_OUTCOME_PERMANENT_FAILURE, 0),
                         RD_TRANSITION_NONE);
    assert_int_equal(rd_breaker_status_at(&b, 5), RD_BREAKER_CLOSED);
    assert_int_equal(b.consecutive_failures, 0);
    assert_int_equal(b.opens_total, 0);
}

/* 003 7.2: transient, permanent, transient -> the counter is 1. */
static void test_permanent_error_resets_the_streak(void **state)
{
    rd_breaker b = fresh(0);
    rd_breaker_record(&b, &spec_policy, 1, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    rd_breaker_record(&b, &spec_policy, 2, RD_OUTCOME_PERMANENT_FAILURE, 0);
    rd_breaker_record(&b, &spec_policy, 3, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    assert_int_equal(b.consecutive_failures, 1);

    /* so four transient, one permanent, four transient never opens it */
    fail_n(&b, &spec_policy, 4, 3);
    rd_breaker_record(&b, &spec_policy, 5, RD_OUTCOME_PERMANENT_FAILURE, 0);
    fail_n(&b, &spec_policy, 6, 4);
    assert_int_equal(rd_breaker_status_at(&b, 6), RD_BREAKER_CLOSED);
    assert_int_equal(b.consecutive_failures, 4);
}

static void test_success_resets_the_streak(void **state)
{
    rd_breaker b = fresh(0);
    fail_n(&b, &spec_policy, 1, 4);
    assert_int_equal(rd_breaker_record(&b, &spec_policy, 2, RD_OUTCOME_SUCCESS, 0),
                     RD_TRANSITION_NONE);
    assert_int_equal(b.consecutive_failures, 0);
    assert_true(rd_breaker_is_pristine(&b, 2));
    fail_n(&b, &spec_policy, 3, 4);
    assert_int_equal(rd_breaker_status_at(&b, 3), RD_BREAKER_CLOSED);
}

/* Outcomes of calls that started before the breaker opened. */
static void test_outcomes_while_open_are_stale(void **state)
{
    const rd_outcome outcomes[] = {RD_OUTCOME_SUCCESS, RD_OUTCOME_TRANSIENT_FAILURE,
                                   RD_OUTCOME_PERMANENT_FAILURE};
    for (size_t i = 0; i < 3; i++) {
        rd_breaker b = opened_at_zero();
        rd_breaker before = b;
        assert_int_equal(rd_breaker_record(&b, &spec_policy, 29999, outcomes[i], 0),
                         RD_TRANSITION_NONE);
        assert_same_state(&b, &before);
        assert_int_equal(b.last_seen_ms, 29999);
    }
}

/* Half-open outcomes without the live permit: no token, or another one. */
static void test_half_open_outcomes_without_permit_are_stale(void **state)
{
    const rd_outcome outcomes[] = {RD_OUTCOME_SUCCESS, RD_OUTCOME_TRANSIENT_FAILURE,
                                   RD_OUTCOME_PERMANENT_FAILURE};
    const uint64_t tokens[] = {0, TOKEN_B};
    for (size_t i = 0; i < 3; i++) {
        for (size_t k = 0; k < 2; k++) {
            rd_breaker b = opened_at_zero();
            rd_breaker_admit(&b, &spec_policy, 30000, LEASE_MS, TOKEN_A, NULL);
            rd_breaker before = b;
            assert_int_equal(rd_breaker_record(&b, &spec_policy, 30010, outcomes[i], tokens[k]),
                             RD_TRANSITION_NONE);
            assert_same_state(&b, &before);
        }
    }
    /* and with no probe granted at all */
    rd_breaker b = opened_at_zero();
    rd_breaker before = b;
    assert_int_equal(rd_breaker_record(&b, &spec_policy, 30000, RD_OUTCOME_SUCCESS, TOKEN_A),
                     RD_TRANSITION_NONE);
    assert_same_state(&b, &before);
}

/* The probe holder's permanent error frees the permit and decides nothing. */
static void test_permanent_error_from_probe_frees_permit(void **state)
{
    rd_breaker b = opened_at_zero();
    rd_breaker_admit(&b, &spec_policy, 30000, LEASE_MS, TOKEN_A, NULL);
    assert_int_equal(rd_breaker_record(&b, &spec_policy, 30010,
                                       RD_OUTCOME_PERMANENT_FAILURE, TOKEN_A),
                     RD_TRANSITION_NONE);
    assert_int_equal(rd_breaker_status_at(&b, 30010), RD_BREAKER_HALF_OPEN);
    assert_int_equal(b.probe_token, 0);
    assert_int_equal(b.generation, 1);
    assert_int_equal(b.opens_total, 1);
    rd_breaker_transition tr;
    assert_int_equal(rd_breaker_admit(&b, &spec_policy, 30011, LEASE_MS, TOKEN_B, &tr),
                     RD_ADMIT_PROBE);
    assert_int_equal(tr, RD_TRANSITION_PROBE_GRANTED);
}

/* Token 0 means "no probe" and is never handed out. */
static void test_zero_token_is_never_granted(void **state)
{
    rd_breaker b = opened_at_zero();
    assert_int_equal(rd_breaker_admit(&b, &spec_policy, 30000, LEASE_MS, 0, NULL), RD_ADMIT_NO);
    assert_int_equal(b.probe_token, 0);
    assert_int_equal(rd_breaker_admit(&b, &spec_policy, 30000, LEASE_MS, TOKEN_A, NULL),
                     RD_ADMIT_PROBE);
}

/* Each opening is a new epoch: generation and opens_total count them all. */
static void test_generation_counts_every_open(void **state)
{
    rd_breaker b = opened_at_zero();                                  /* 1: opened */
    rd_breaker_admit(&b, &spec_policy, 30000, LEASE_MS, TOKEN_A, NULL);
    rd_breaker_record(&b, &spec_policy, 30001, RD_OUTCOME_TRANSIENT_FAILURE, TOKEN_A); /* 2 */
    rd_breaker_admit(&b, &spec_policy, 60001, LEASE_MS, TOKEN_B, NULL);
    rd_breaker_record(&b, &spec_policy, 60002, RD_OUTCOME_SUCCESS, TOKEN_B);            /* closed */
    assert_int_equal(b.generation, 2);
    fail_n(&b, &spec_policy, 60003, 5);                                                 /* 3 */
    assert_int_equal(b.generation, 3);
    assert_int_equal(b.opens_total, 3);
    assert_int_equal(b.opened_at_ms, 60003);
}

static void test_last_seen_follows_every_call(void **state)
{
    rd_breaker b = opened_at_zero();
    rd_breaker_admit(&b, &spec_policy, 700, LEASE_MS, TOKEN_A, NULL);
    assert_int_equal(b.last_seen_ms, 700);
    rd_breaker_record(&b, &spec_policy, 800, RD_OUTCOME_SUCCESS, 0);
    assert_int_equal(b.last_seen_ms, 800);
}

static void test_pristine_only_when_nothing_to_remember(void **state)
{
    rd_breaker b = fresh(0);
    rd_breaker_record(&b, &spec_policy, 1, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    assert_false(rd_breaker_is_pristine(&b, 1)); /* a streak in progress */
    b = opened_at_zero();
    assert_false(rd_breaker_is_pristine(&b, 1));
    assert_false(rd_breaker_is_pristine(&b, 40000)); /* half-open is not clean */
}

/* What an idle breaker may be forgotten as: a CLOSED one without a probe
 * or a live hold, a failure streak or not; never an OPEN one (its own rule
 * in the stores), one probing, or one held. */
static void test_idle_forgettable(void **state)
{
    rd_breaker b = fresh(0);
    assert_true(rd_breaker_idle_forgettable(&b, 1));
    rd_breaker_record(&b, &spec_policy, 1, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    assert_true(rd_breaker_idle_forgettable(&b, 1)); /* an idle streak says nothing now */
    assert_int_equal(rd_breaker_force(&b, RD_FORCE_CLOSED, 2, 100), RD_OK);
    assert_false(rd_breaker_idle_forgettable(&b, 50)); /* held */
    assert_true(rd_breaker_idle_forgettable(&b, 102));  /* the hold has ended */
    b = opened_at_zero();
    assert_false(rd_breaker_idle_forgettable(&b, 1));
    rd_breaker_admit(&b, &spec_policy, 40000, LEASE_MS, TOKEN_A, NULL);
    assert_false(rd_breaker_idle_forgettable(&b, 40000)); /* probing */
}

static void test_status_names(void **state)
{
    assert_string_equal(rd_breaker_status_name(RD_BREAKER_CLOSED), "closed");
    assert_string_equal(rd_breaker_status_name(RD_BREAKER_OPEN), "open");
    assert_string_equal(rd_breaker_status_name(RD_BREAKER_HALF_OPEN), "half_open");
    assert_string_equal(rd_breaker_status_name(RD_BREAKER_UNSPECIFIED), "unspecified");
}

/* A timeout near INT64_MAX saturates instead of wrapping into the past. */
static void test_huge_timeout_does_not_wrap(void **state)
{
    rd_breaker_policy p = spec_policy;
    p.open_timeout_ms = INT64_MAX;
    rd_breaker b = fresh(0);
    fail_n(&b, &p, 1000, 5);
    assert_int_equal(b.open_until_ms, INT64_MAX);
    assert_int_equal(rd_breaker_status_at(&b, 2000), RD_BREAKER_OPEN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_is_closed_and_pristine),
        cmocka_unit_test(test_opens_after_threshold_transient_failures),
        cmocka_unit_test(test_rapid_failures_after_open_are_stale),
        cmocka_unit_test(test_half_opens_exactly_at_open_until),
        cmocka_unit_test(test_exactly_one_probe),
        cmocka_unit_test(test_expired_lease_regrants_probe),
        cmocka_unit_test(test_outcome_after_own_lease_expired_is_stale),
        cmocka_unit_test(test_probe_success_closes_and_resets),
        cmocka_unit_test(test_failed_probe_reopens_and_restarts_timer),
        cmocka_unit_test(test_success_threshold_two_needs_two_probes),
        cmocka_unit_test(test_reopen_forgets_probe_successes),
        cmocka_unit_test(test_permanent_errors_do_not_count),
        cmocka_unit_test(test_permanent_error_resets_the_streak),
        cmocka_unit_test(test_success_resets_the_streak),
        cmocka_unit_test(test_outcomes_while_open_are_stale),
        cmocka_unit_test(test_half_open_outcomes_without_permit_are_stale),
        cmocka_unit_test(test_permanent_error_from_probe_frees_permit),
        cmocka_unit_test(test_zero_token_is_never_granted),
        cmocka_unit_test(test_generation_counts_every_open),
        cmocka_unit_test(test_last_seen_follows_every_call),
        cmocka_unit_test(test_pristine_only_when_nothing_to_remember),
        cmocka_unit_test(test_idle_forgettable),
        cmocka_unit_test(test_status_names),
        cmocka_unit_test(test_huge_timeout_does_not_wrap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
