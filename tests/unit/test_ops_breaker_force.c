/* Operator holds on the breaker state machine (rd_breaker_force). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "domain/breaker.h"
#include "domain/err.h"

static const rd_breaker_policy policy = {
    .failure_threshold = 2, .success_threshold = 1, .open_timeout_ms = 1000};

static void open_it(rd_breaker *b, int64_t at)
{
    rd_breaker_record(b, &policy, at, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    rd_breaker_record(b, &policy, at, RD_OUTCOME_TRANSIENT_FAILURE, 0);
}

static void test_hold_open_reports_and_refuses(void **state)
{
    (void)state;
    rd_breaker b;
    rd_breaker_init(&b, 0);
    assert_int_equal(rd_breaker_force(&b, RD_FORCE_OPEN, 100, 0), RD_OK);
    assert_true(rd_breaker_hold_live(&b, 1000000));
    assert_int_equal(rd_breaker_status_at(&b, 1000000), RD_BREAKER_OPEN);
    assert_int_equal(rd_breaker_admit(&b, &policy, 1000000, 100, 7, NULL), RD_ADMIT_NO);
    assert_false(rd_breaker_is_pristine(&b, 1000000));
}

static void test_hold_closed_admits_without_probe_and_ignores_outcomes(void **state)
{
    (void)state;
    rd_breaker b;
    rd_breaker_init(&b, 0);
    open_it(&b, 10);
    assert_int_equal(rd_breaker_force(&b, RD_FORCE_CLOSED, 20, 0), RD_OK);
    rd_breaker_transition t;
    assert_int_equal(rd_breaker_admit(&b, &policy, 5000, 100, 7, &t), RD_ADMIT_YES);
    assert_int_equal(t, RD_TRANSITION_NONE);
    assert_int_equal(b.probe_token, 0);
    assert_int_equal(rd_breaker_record(&b, &policy, 5001, RD_OUTCOME_SUCCESS, 0),
                     RD_TRANSITION_NONE);
    /* released: the breaker's own state (half-open by now) applies again */
    rd_breaker_force(&b, RD_FORCE_RELEASE, 5002, 0);
    assert_int_equal(rd_breaker_status_at(&b, 5002), RD_BREAKER_HALF_OPEN);
}

static void test_ttl_ends_the_hold(void **state)
{
    (void)state;
    rd_breaker b;
    rd_breaker_init(&b, 0);
    rd_breaker_force(&b, RD_FORCE_OPEN, 1000, 250);
    assert_int_equal(b.forced_until_ms, 1250);
    assert_int_equal(rd_breaker_status_at(&b, 1249), RD_BREAKER_OPEN);
    assert_int_equal(rd_breaker_status_at(&b, 1250), RD_BREAKER_CLOSED);
    assert_false(rd_breaker_hold_live(&b, 1250));
    /* a huge ttl saturates instead of wrapping into the past */
    rd_breaker_force(&b, RD_FORCE_OPEN, 1000, INT64_MAX);
    assert_true(rd_breaker_hold_live(&b, INT64_MAX - 1));
}

static void test_reset_bumps_generation_and_kills_old_permits(void **state)
{
    (void)state;
    rd_breaker b;
    rd_breaker_init(&b, 0);
    open_it(&b, 10);
    assert_int_equal(rd_breaker_admit(&b, &policy, 2000, 500, 42, NULL), RD_ADMIT_PROBE);
    uint64_t gen = b.generation;
    rd_breaker_force(&b, RD_FORCE_OPEN, 2001, 0);
    assert_int_equal(rd_breaker_force(&b, RD_FORCE_RESET, 2002, 0), RD_OK);
    assert_int_equal(b.generation, gen + 1);
    assert_int_equal(b.opens_total, 1);
    assert_int_equal(b.forced, RD_BREAKER_UNSPECIFIED);
    assert_int_equal(rd_breaker_status_at(&b, 2003), RD_BREAKER_CLOSED);
    assert_int_equal(rd_breaker_record(&b, &policy, 2004, RD_OUTCOME_SUCCESS, 42),
                     RD_TRANSITION_NONE);
    assert_true(rd_breaker_is_pristine(&b, 2004));
}

static void test_bad_commands_change_nothing(void **state)
{
    (void)state;
    rd_breaker b;
    rd_breaker_init(&b, 0);
    assert_int_equal(rd_breaker_force(&b, (rd_force_mode)0, 1, 0), RD_ERR_INVALID);
    assert_int_equal(rd_breaker_force(&b, RD_FORCE_OPEN, 1, -1), RD_ERR_INVALID);
    assert_int_equal(b.forced, RD_BREAKER_UNSPECIFIED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hold_open_reports_and_refuses),
        cmocka_unit_test(test_hold_closed_admits_without_probe_and_ignores_outcomes),
        cmocka_unit_test(test_ttl_ends_the_hold),
        cmocka_unit_test(test_reset_bumps_generation_and_kills_old_permits),
        cmocka_unit_test(test_bad_commands_change_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
