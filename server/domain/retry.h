/* Retry policy arithmetic (000 section 2). Pure functions. */
#ifndef RD_DOMAIN_RETRY_H
#define RD_DOMAIN_RETRY_H

#include "domain/types.h"

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

/* Whether the retry-time budget (max_total_time_ms) forbids scheduling
 * another attempt `wait_ms` from now: retry time + wait_ms reaches it.
 * `elapsed_ms` is the retry time the caller reports: wall time since the
 * first attempt failed, not counting attempts that ended at a timeout. The
 * budget bounds fast failures repeating, so the reported time counts as 0
 *  - on attempt 1 (`attempt` <= 1): no retry has been spent yet, however
 *    long the first attempt ran;
 *  - after an attempt that ended at the tool's timeout (`ended_in_timeout`:
 *    a timeout error reported with elapsed_ms >= the tool's timeout, which
 *    cannot be time spent on quick failures): it ran to a limit the tool's
 *    timeout already bounds, and max_attempts and the
 *    turn deadline bound what follows. Otherwise a tool whose timeout is
 *    longer than the budget (30 s against 2 s by default) would never be
 *    retried after timing out.
 * The wait itself always counts: a retry_after beyond the budget ends the
 * retries. */
bool rd_retry_time_exceeded(const rd_retry_policy *p, uint32_t attempt, int64_t elapsed_ms,
                            bool ended_in_timeout, int64_t wait_ms);

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
