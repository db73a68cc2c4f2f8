/* Retry policy arithmetic (000 section 2). Pure functions. */
#ifndef RD_CORE_RETRY_H
#define RD_CORE_RETRY_H

#include "core/types.h"

/* Delay before the attempt after `attempt` failed attempts (attempt >= 1):
 * initial_delay_ms * multiplier^(attempt-1), capped at max_delay_ms. */
int64_t rd_backoff_base_ms(const rd_retry_policy *p, uint32_t attempt);

/* The base delay moved by up to +-jitter_percent, in microseconds:
 * unit_random in [0, 1) maps linearly onto [base - j, base + j]. Never
 * negative; saturates at INT64_MAX. Microseconds because whole
 * milliseconds would leave a 100 ms +-10 % delay only 21 values, so
 * concurrent retries would still collide; the jitter is there to spread
 * them. */
int64_t rd_backoff_jittered_us(const rd_retry_policy *p, uint32_t attempt, double unit_random);

/* Unit conversions for non-negative delays: ms -> us saturates at INT64_MAX,
 * us -> ms rounds to the nearest ms. Negative input gives 0. */
int64_t rd_ms_to_us(int64_t ms);
int64_t rd_us_to_ms(int64_t us);

/* A small fast PRNG (xoshiro256**), one per worker thread; seeded from the OS. */
typedef struct rd_rng { uint64_t s[4]; } rd_rng;
void rd_rng_seed(rd_rng *r, uint64_t seed);
void rd_rng_seed_os(rd_rng *r);
uint64_t rd_rng_next(rd_rng *r);
double rd_rng_unit(rd_rng *r); /* [0, 1) */

#endif
