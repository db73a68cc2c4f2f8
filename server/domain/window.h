/* A sliding time window of counters, in buckets: the arithmetic shared by
 * retry budgets, the failure-rate breaker and live ranking (docs/FLEET.md).
 *
 * The window of window_ms is cut into RD_WINDOW_BUCKETS buckets of
 * window_ms / RD_WINDOW_BUCKETS (at least 1 ms). A bucket is named by its
 * absolute number floor(now / width); the sum at `now` covers the current
 * bucket and the RD_WINDOW_BUCKETS - 1 before it, so the span counted is
 * between (B-1)/B and all of window_ms. A slot that still holds an older
 * bucket is emptied when written. The Redis store keeps the same buckets in
 * a hash (server/store/redis_scripts.c), so both give the same counts.
 *
 * Pure: no clock, no lock, no allocation; the caller serialises access. */
#ifndef RD_DOMAIN_WINDOW_H
#define RD_DOMAIN_WINDOW_H

#include <stdint.h>

#define RD_WINDOW_BUCKETS 10
#define RD_WINDOW_FIELDS 3

typedef struct rd_window {
    int64_t bucket[RD_WINDOW_BUCKETS];                 /* absolute number held by each slot */
    uint32_t count[RD_WINDOW_BUCKETS][RD_WINDOW_FIELDS];
} rd_window;

/* Bucket width for a window (>= 1). */
int64_t rd_window_width_ms(int64_t window_ms);

void rd_window_clear(rd_window *w);

/* Adds add[i] to field i of the bucket holding now_ms (saturating). */
void rd_window_add(rd_window *w, int64_t window_ms, int64_t now_ms,
                   const uint32_t add[RD_WINDOW_FIELDS]);

/* Sums each field over the window ending at now_ms. */
void rd_window_sum(const rd_window *w, int64_t window_ms, int64_t now_ms,
                   uint64_t out[RD_WINDOW_FIELDS]);

#endif
