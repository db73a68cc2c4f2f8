/* A tool's recent latency distribution: counts of calls per latency
 * bucket, over the current and the previous window of window_ms (so
 * "recent" is between one and two windows), kept by the store
 * (rd_store_ops.latency) and shared by every replica. Fixed size whatever
 * the traffic: RD_LATENCY_BUCKETS counters per window.
 *
 * Buckets grow by about a quarter each: bucket i holds latencies up to
 * rd_latency_bucket_bound(i) ms; the last one holds everything longer. A
 * percentile is the bound of the bucket it falls in, so it is never below
 * the true value and at most ~25 % above it. */
#ifndef RD_DOMAIN_LATENCY_H
#define RD_DOMAIN_LATENCY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RD_LATENCY_BUCKETS 48

typedef struct rd_latency_hist {
    uint64_t counts[RD_LATENCY_BUCKETS];
} rd_latency_hist;

/* The per-tool setting (defaults / manifest `latency:`). */
typedef struct rd_latency_policy {
    bool enabled;                /* record latencies and let Decide use them */
    int64_t window_ms;           /* a window; the distribution spans one to two */
    uint32_t min_samples;        /* fewer calls in the distribution: not used */
    /* The per-call timeout handed out with PROCEED and RETRY follows the
     * measured p99 times this factor (0 = off, keep timeout_ms), never
     * below timeout_min_ms nor above the tool's timeout_ms. */
    double timeout_factor;
    int64_t timeout_min_ms;
} rd_latency_policy;

/* The bucket of a latency (negative counts as 0). */
size_t rd_latency_bucket(int64_t latency_ms);
/* The most a latency in bucket i can be, in ms (INT64_MAX for the last). */
int64_t rd_latency_bucket_bound(size_t i);

uint64_t rd_latency_total(const rd_latency_hist *h);
/* What a percentile in the last (unbounded) bucket reads as: just past
 * the last bound. */
#define RD_LATENCY_OVER_MS 2000001
/* The q-quantile (0 < q <= 1) as its bucket's bound; -1 when empty. */
int64_t rd_latency_percentile(const rd_latency_hist *h, double q);

/* Which window now_ms falls in (now_ms / window_ms). */
static inline int64_t rd_latency_window_index(int64_t now_ms, int64_t window_ms)
{
    return window_ms > 0 ? now_ms / window_ms : 0;
}

#endif
