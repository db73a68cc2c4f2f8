/* Backoff arithmetic (000 section 2, 003 section 2) and the jitter PRNG. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdbool.h>

#include "domain/retry.h"

/* The defaults of issue 3: 100 ms, x2, 800 ms cap, +-10 %. */
static const rd_retry_policy default_policy = {
    .initial_delay_ms = 100,
    .multiplier = 2.0,
    .max_delay_ms = 800,
    .jitter_percent = 10.0,
    .max_attempts = 5,
    .max_total_time_ms = 2000,
};

/* The largest double below 1: the top of rd_rng_unit's range. */
#define UNIT_MAX 0.99999999999999989

/* 003 2.1: 100, 200, 400, 800 before attempts 2..5. */
/* The jittered delay as an executor sleeping whole milliseconds sees it. */
static int64_t jittered_ms(const rd_retry_policy *p, uint32_t attempt, double unit_random)
{
    return rd_us_to_ms(rd_backoff_jittered_us(p, attempt, unit_random));
}

static void test_base_delays_double(void **state)
{
    assert_int_equal(rd_backoff_base_ms(&default_policy, 1), 100);
    assert_int_equal(rd_backoff_base_ms(&default_policy, 2), 200);
    assert_int_equal(rd_backoff_base_ms(&default_policy, 3), 400);
    assert_int_equal(rd_backoff_base_ms(&default_policy, 4), 800);
}

static void test_base_delay_capped_at_max(void **state)
{
    assert_int_equal(rd_backoff_base_ms(&default_policy, 5), 800);
    assert_int_equal(rd_backoff_base_ms(&default_policy, 6), 800);
    rd_retry_policy p = default_policy;
    p.max_delay_ms = 300;
    assert_int_equal(rd_backoff_base_ms(&p, 2), 200);
    assert_int_equal(rd_backoff_base_ms(&p, 3), 300);
}

/* 003 2.5: initial 50, cap 2000 -> 50 then 100. */
static void test_tool_overrides(void **state)
{
    rd_retry_policy p = default_policy;
    p.initial_delay_ms = 50;
    p.max_delay_ms = 2000;
    p.max_attempts = 3;
    assert_int_equal(rd_backoff_base_ms(&p, 1), 50);
    assert_int_equal(rd_backoff_base_ms(&p, 2), 100);
    assert_int_equal(rd_backoff_base_ms(&p, 7), 2000);
}

static void test_huge_attempts_do_not_overflow(void **state)
{
    assert_int_equal(rd_backoff_base_ms(&default_policy, 1000), 800);
    assert_int_equal(rd_backoff_base_ms(&default_policy, UINT32_MAX), 800);
    assert_int_equal(jittered_ms(&default_policy, 1000, 0.0), 720);

    rd_retry_policy uncapped = default_policy;
    uncapped.max_delay_ms = 0; /* no cap: saturates instead of wrapping */
    assert_int_equal(rd_backoff_base_ms(&uncapped, 1000), INT64_MAX);
    assert_int_equal(rd_backoff_jittered_us(&uncapped, 1000, UNIT_MAX), INT64_MAX);
    assert_true(rd_backoff_jittered_us(&uncapped, 1000, 0.0) > 0);
}

static void test_multiplier_one_is_constant(void **state)
{
    rd_retry_policy p = default_policy;
    p.multiplier = 1.0;
    for (uint32_t attempt = 1; attempt <= 10; attempt++)
        assert_int_equal(rd_backoff_base_ms(&p, attempt), 100);
    assert_int_equal(rd_backoff_base_ms(&p, 1000), 100);
}

static void test_fractional_multiplier_rounds_to_nearest(void **state)
{
    rd_retry_policy p = default_policy;
    p.multiplier = 1.5;
    p.max_delay_ms = 10000;
    assert_int_equal(rd_backoff_base_ms(&p, 2), 150);
    assert_int_equal(rd_backoff_base_ms(&p, 3), 225);
    assert_int_equal(rd_backoff_base_ms(&p, 4), 338); /* 337.5 */
}

/* The C library's rounding and pow(), as the backoff was first written:
 * the arithmetic that replaced them must give the same whole units. */
static int64_t reference_us(const rd_retry_policy *p, uint32_t attempt, double u)
{
    double raw = (double)p->initial_delay_ms * pow(p->multiplier, (double)(attempt - 1));
    int64_t base = raw < (double)p->max_delay_ms ? (int64_t)llround(raw) : p->max_delay_ms;
    double spread = (double)base * p->jitter_percent / 100.0;
    return (int64_t)llround(((double)base - spread + 2.0 * spread * u) * 1000.0);
}

static void test_rounding_matches_the_c_library(void **state)
{
    rd_rng rng;
    rd_rng_seed(&rng, 42);
    for (int i = 0; i < 200000; i++) {
        rd_retry_policy p = default_policy;
        p.initial_delay_ms = 1 + (int64_t)(rd_rng_unit(&rng) * 5000);
        p.multiplier = 1.0 + rd_rng_unit(&rng) * 3.0;
        p.max_delay_ms = 1000000;
        p.jitter_percent = rd_rng_unit(&rng) * 100.0;
        uint32_t attempt = 1 + (uint32_t)(rd_rng_unit(&rng) * 6);
        double u = rd_rng_unit(&rng);
        int64_t want = reference_us(&p, attempt, u);
        if (rd_backoff_jittered_us(&p, attempt, u) != want)
            fail_msg("initial %lld multiplier %.17g jitter %.17g attempt %u unit %.17g: "
                     "%lld us, the C library gives %lld", (long long)p.initial_delay_ms,
                     p.multiplier, p.jitter_percent, attempt, u,
                     (long long)rd_backoff_jittered_us(&p, attempt, u), (long long)want);
    }
}

/* unit_random 0 -> base - j, 0.5 -> base, just below 1 -> base + j. */
static void test_jitter_bounds(void **state)
{
    assert_int_equal(jittered_ms(&default_policy, 1, 0.0), 90);
    assert_int_equal(jittered_ms(&default_policy, 1, 0.5), 100);
    assert_int_equal(jittered_ms(&default_policy, 1, UNIT_MAX), 110);
    assert_int_equal(jittered_ms(&default_policy, 1, 0.25), 95);
    assert_int_equal(jittered_ms(&default_policy, 4, 0.0), 720);
    assert_int_equal(jittered_ms(&default_policy, 4, 0.5), 800);
    assert_int_equal(jittered_ms(&default_policy, 4, UNIT_MAX), 880);
}

/* The microsecond delay is the same draw, unrounded to the ms. */
static void test_jitter_in_microseconds(void **state)
{
    assert_int_equal(rd_backoff_jittered_us(&default_policy, 1, 0.0), 90000);
    assert_int_equal(rd_backoff_jittered_us(&default_policy, 1, 0.5), 100000);
    assert_int_equal(rd_backoff_jittered_us(&default_policy, 1, 0.123456), 92469);
    assert_int_equal(jittered_ms(&default_policy, 1, 0.123456), 92);
    assert_int_equal(rd_backoff_jittered_us(&default_policy, 1, UNIT_MAX), 110000);
    assert_int_equal(rd_backoff_jittered_us(&default_policy, 1, NAN), 90000);
    rd_retry_policy none = default_policy;
    none.jitter_percent = 0;
    assert_int_equal(rd_backoff_jittered_us(&none, 2, 0.7), 200000);
}

static void test_unit_conversions(void **state)
{
    assert_int_equal(rd_ms_to_us(1500), 1500000);
    assert_int_equal(rd_ms_to_us(-1), 0);
    assert_int_equal(rd_ms_to_us(INT64_MAX / 1000), INT64_MAX / 1000 * 1000);
    assert_int_equal(rd_ms_to_us(INT64_MAX / 1000 + 1), INT64_MAX);
    assert_int_equal(rd_us_to_ms(92469), 92);
    assert_int_equal(rd_us_to_ms(92500), 93);
    assert_int_equal(rd_us_to_ms(499), 0);
    assert_int_equal(rd_us_to_ms(-7), 0);
    assert_int_equal(rd_us_to_ms(INT64_MAX), INT64_MAX / 1000 + 1);
}

static void test_jitter_out_of_range_unit_is_clamped(void **state)
{
    assert_int_equal(jittered_ms(&default_policy, 1, -3.0), 90);
    assert_int_equal(jittered_ms(&default_policy, 1, 1.0), 110);
    assert_int_equal(jittered_ms(&default_policy, 1, 7.0), 110);
    assert_int_equal(jittered_ms(&default_policy, 1, NAN), 90);
}

static void test_no_jitter_is_exact(void **state)
{
    rd_retry_policy p = default_policy;
    p.jitter_percent = 0;
    assert_int_equal(jittered_ms(&p, 3, 0.0), 400);
    assert_int_equal(jittered_ms(&p, 3, UNIT_MAX), 400);
}

static void test_jitter_never_negative(void **state)
{
    rd_retry_policy p = default_policy;
    p.jitter_percent = 250; /* beyond 100 % is treated as 100 % */
    assert_int_equal(jittered_ms(&p, 1, 0.0), 0);
    assert_int_equal(jittered_ms(&p, 1, UNIT_MAX), 200);
    p.initial_delay_ms = 0;
    assert_int_equal(jittered_ms(&p, 3, 0.0), 0);
    p.initial_delay_ms = -5;
    assert_int_equal(rd_backoff_base_ms(&p, 1), 0);
}

/* 003 2.2 over many samples: all within +-10 %, mean on base, spread. */
static void check_jitter_distribution(uint32_t attempt, int64_t base)
{
    rd_rng rng;
    rd_rng_seed(&rng, 20251107);
    int64_t lo = base - base / 10, hi = base + base / 10;
    bool seen[2001] = {false};
    size_t distinct = 0;
    double sum = 0;
    const int samples = 10000;
    for (int i = 0; i < samples; i++) {
        int64_t d = jittered_ms(&default_policy, attempt, rd_rng_unit(&rng));
        assert_in_range(d, lo, hi);
        sum += (double)d;
        if (!seen[d - lo]) {
            seen[d - lo] = true;
            distinct++;
        }
    }
    double mean = sum / samples;
    assert_true(fabs(mean - (double)base) <= (double)base * 0.01);
    /* every whole millisecond of the range turns up */
    assert_int_equal(distinct, (size_t)(hi - lo + 1));
}

static void test_jitter_distribution_100ms(void **state)
{
    check_jitter_distribution(1, 100);
}

static void test_jitter_distribution_800ms(void **state)
{
    check_jitter_distribution(4, 800);
}

static void test_retry_time_budget(void **state)
{
    (void)state;
    /* Fast failures: 1900 ms of retry time + a 100 ms delay reaches 2000. */
    assert_false(rd_retry_time_exceeded(&default_policy, 2, 1899, false, 100));
    assert_true(rd_retry_time_exceeded(&default_policy, 2, 1900, false, 100));
    /* Attempt 1 and a timed-out attempt are not bounded by the budget. */
    assert_false(rd_retry_time_exceeded(&default_policy, 1, 30000, false, 100));
    assert_false(rd_retry_time_exceeded(&default_policy, 3, 55000, true, 400));
    /* ... but the wait still counts: a 5 s retry_after ends the retries. */
    assert_true(rd_retry_time_exceeded(&default_policy, 1, 0, false, 5000));
    assert_true(rd_retry_time_exceeded(&default_policy, 3, 0, true, 2000));
    /* No overflow on absurd input. */
    assert_true(rd_retry_time_exceeded(&default_policy, 2, INT64_MAX, false, 100));
}

static void test_rng_is_deterministic_per_seed(void **state)
{
    rd_rng a, b, c;
    rd_rng_seed(&a, 42);
    rd_rng_seed(&b, 42);
    rd_rng_seed(&c, 43);
    int differ = 0;
    for (int i = 0; i < 100; i++) {
        uint64_t x = rd_rng_next(&a);
        assert_int_equal(x, rd_rng_next(&b));
        differ += x != rd_rng_next(&c);
    }
    assert_true(differ > 95);
}

static void test_rng_seed_zero_is_usable(void **state)
{
    rd_rng r;
    rd_rng_seed(&r, 0);
    uint64_t first = rd_rng_next(&r);
    assert_true(first != 0 || rd_rng_next(&r) != 0);
    assert_true(r.s[0] | r.s[1] | r.s[2] | r.s[3]);
}

static void test_rng_unit_is_uniform_on_0_1(void **state)
{
    rd_rng r;
    rd_rng_seed(&r, 7);
    enum { BUCKETS = 10, DRAWS = 100000 };
    int count[BUCKETS] = {0};
    for (int i = 0; i < DRAWS; i++) {
        double u = rd_rng_unit(&r);
        assert_true(u >= 0.0 && u < 1.0);
        count[(int)(u * BUCKETS)]++;
    }
    for (int i = 0; i < BUCKETS; i++)
        assert_in_range(count[i], DRAWS / BUCKETS * 95 / 100, DRAWS / BUCKETS * 105 / 100);
}

static void test_rng_os_seeds_differ(void **state)
{
    rd_rng a, b;
    rd_rng_seed_os(&a);
    rd_rng_seed_os(&b);
    assert_true(rd_rng_next(&a) != rd_rng_next(&b));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_base_delays_double),
        cmocka_unit_test(test_retry_time_budget),
        cmocka_unit_test(test_base_delay_capped_at_max),
        cmocka_unit_test(test_tool_overrides),
        cmocka_unit_test(test_huge_attempts_do_not_overflow),
        cmocka_unit_test(test_multiplier_one_is_constant),
        cmocka_unit_test(test_fractional_multiplier_rounds_to_nearest),
        cmocka_unit_test(test_rounding_matches_the_c_library),
        cmocka_unit_test(test_jitter_bounds),
        cmocka_unit_test(test_jitter_in_microseconds),
        cmocka_unit_test(test_unit_conversions),
        cmocka_unit_test(test_jitter_out_of_range_unit_is_clamped),
        cmocka_unit_test(test_no_jitter_is_exact),
        cmocka_unit_test(test_jitter_never_negative),
        cmocka_unit_test(test_jitter_distribution_100ms),
        cmocka_unit_test(test_jitter_distribution_800ms),
        cmocka_unit_test(test_rng_is_deterministic_per_seed),
        cmocka_unit_test(test_rng_seed_zero_is_usable),
        cmocka_unit_test(test_rng_unit_is_uniform_on_0_1),
        cmocka_unit_test(test_rng_os_seeds_differ),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
