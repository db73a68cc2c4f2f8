/* Backoff arithmetic, the retry-time rule, and the per-thread PRNG that
 * jitters the backoff. */
#include "domain/retry.h"

#include <math.h>
#include <sys/random.h>
#include <time.h>

/* 2^63 as a double: every double below it converts to int64_t safely. */
#define INT64_LIMIT_AS_DOUBLE 9223372036854775808.0

/* Rounds a non-negative double to the nearest whole unit, halves away
 * from zero as llround() does, without the undefined behaviour of
 * converting an out-of-range double. Below 2^63 a double minus its whole
 * part is exact, so the comparison needs no library call. */
static int64_t round_to_whole(double units)
{
    if (!(units > 0.0))
        return 0; /* negative, zero or NaN */
    if (units >= INT64_LIMIT_AS_DOUBLE)
        return INT64_MAX;
    int64_t whole = (int64_t)units;
    return whole + (units - (double)whole >= 0.5);
}

int64_t rd_backoff_base_ms(const rd_retry_policy *p, uint32_t attempt)
{
    if (p->initial_delay_ms <= 0)
        return 0;
    int64_t cap = p->max_delay_ms > 0 ? p->max_delay_ms : INT64_MAX;
    uint32_t exponent = attempt > 1 ? attempt - 1 : 0;
    /* pow() saturates to +inf instead of overflowing, so attempt 1000 (or
     * UINT32_MAX) simply lands on the cap. x^0 is 1 for every x, NaN
     * included, so the first retry (the most frequent) skips the call. */
    double growth = exponent == 0 ? 1.0 : pow(p->multiplier, (double)exponent);
    double delay = (double)p->initial_delay_ms * growth;
    if (!(delay < (double)cap))
        return cap; /* also catches +inf and NaN */
    int64_t rounded = round_to_whole(delay);
    return rounded < cap ? rounded : cap;
}

/* The jittered delay in ms, unrounded. */
static double jittered_ms(const rd_retry_policy *p, uint32_t attempt, double unit_random)
{
    int64_t base = rd_backoff_base_ms(p, attempt);
    double percent = p->jitter_percent;
    if (!(percent > 0.0))
        return (double)base;
    if (percent > 100.0)
        percent = 100.0; /* more would allow negative delays */
    if (!(unit_random >= 0.0))
        unit_random = 0.0;
    if (unit_random >= 1.0)
        unit_random = nextafter(1.0, 0.0);

    double spread = (double)base * percent / 100.0;
    /* unit_random 0 -> base - spread, 0.5 -> base, towards 1 -> base + spread */
    return (double)base - spread + 2.0 * spread * unit_random;
}

int64_t rd_backoff_jittered_us(const rd_retry_policy *p, uint32_t attempt, double unit_random)
{
    return round_to_whole(jittered_ms(p, attempt, unit_random) * 1000.0);
}

int64_t rd_ms_to_us(int64_t ms)
{
    if (ms <= 0)
        return 0;
    return ms <= INT64_MAX / 1000 ? ms * 1000 : INT64_MAX;
}

int64_t rd_us_to_ms(int64_t us)
{
    if (us <= 0)
        return 0;
    return us / 1000 + (us % 1000 >= 500);
}

/* ---- xoshiro256** seeded through splitmix64 ---- */

static uint64_t rotate_left(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

/* splitmix64 spreads one seed over the four state words; it never yields an
 * all-zero state, which xoshiro could not leave. */
static uint64_t splitmix64_next(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void rd_rng_seed(rd_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64_next(&seed);
}

void rd_rng_seed_os(rd_rng *r)
{
    uint64_t seed = 0;
    if (getrandom(&seed, sizeof seed, GRND_NONBLOCK) != (ssize_t)sizeof seed) {
        /* No entropy yet (early boot) or no syscall: distinct enough for
         * jitter and probe tokens, which need no secrecy. */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed = ((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec) ^
               (uint64_t)(uintptr_t)r;
    }
    rd_rng_seed(r, seed);
}

uint64_t rd_rng_next(rd_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotate_left(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotate_left(s[3], 45);
    return result;
}

double rd_rng_unit(rd_rng *r)
{
    /* The top 53 bits fill a double's mantissa exactly: uniform on [0, 1). */
    return (double)(rd_rng_next(r) >> 11) * 0x1.0p-53;
}

bool rd_retry_time_exceeded(const rd_retry_policy *p, uint32_t attempt, int64_t elapsed_ms,
                            bool ended_in_timeout, int64_t wait_ms)
{
    if (attempt <= 1 || ended_in_timeout)
        elapsed_ms = 0;
    if (elapsed_ms > INT64_MAX - wait_ms)
        return true;
    return elapsed_ms + wait_ms >= p->max_total_time_ms;
}
