/* The process's two clocks, read in one place. The decision core never
 * reads a clock itself (time is passed in); these are for the layers that
 * supply it. */
#ifndef RD_PLATFORM_CLOCK_H
#define RD_PLATFORM_CLOCK_H

#include <stdint.h>

/* Unix time in ms (CLOCK_REALTIME): what breakers and traces record. */
int64_t rd_clock_unix_ms(void);
/* Monotonic ms (CLOCK_MONOTONIC): for intervals and timeouts. */
int64_t rd_clock_mono_ms(void);
/* The same clock in µs. */
int64_t rd_clock_mono_us(void);

#endif
