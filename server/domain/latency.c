/* Latency buckets and percentiles (see latency.h). */
#include "domain/latency.h"

/* Bounds in ms: 1, 2, 3, ... each about 1.25 times the one before,
 * rounded; the last bucket is unbounded. 47 bounds reach ~33 minutes. */
static const int64_t BOUNDS[RD_LATENCY_BUCKETS - 1] = {
    1,     2,     3,     4,     5,     6,     8,      10,     13,     16,     20,     25,
    32,    40,    50,    64,    80,    100,    130,    160,    200,    250,    320,    400,
    500,   640,   800,   1000,  1300,  1600,  2000,   2500,   3200,   4000,   5000,   6400,
    8000,  10000, 13000, 16000, 20000, 25000, 32000,  40000,  60000,  120000, 2000000,
};

size_t rd_latency_bucket(int64_t latency_ms)
{
    size_t lo = 0, hi = RD_LATENCY_BUCKETS - 1; /* the answer is in [lo, hi] */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (latency_ms <= BOUNDS[mid])
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

int64_t rd_latency_bucket_bound(size_t i)
{
    return i < RD_LATENCY_BUCKETS - 1 ? BOUNDS[i] : INT64_MAX;
}

uint64_t rd_latency_total(const rd_latency_hist *h)
{
    uint64_t n = 0;
    for (size_t i = 0; i < RD_LATENCY_BUCKETS; i++)
        n += h->counts[i];
    return n;
}

int64_t rd_latency_percentile(const rd_latency_hist *h, double q)
{
    uint64_t total = rd_latency_total(h);
    if (total == 0)
        return -1;
    /* The smallest bucket whose cumulative count reaches ceil(q * total). */
    double want = q * (double)total;
    uint64_t rank = (uint64_t)want;
    if ((double)rank < want)
        rank++;
    if (rank == 0)
        rank = 1;
    uint64_t seen = 0;
    for (size_t i = 0; i < RD_LATENCY_BUCKETS; i++) {
        seen += h->counts[i];
        if (seen >= rank)
            return i < RD_LATENCY_BUCKETS - 1 ? BOUNDS[i] : RD_LATENCY_OVER_MS;
    }
    return RD_LATENCY_OVER_MS;
}
