/* Bucketed sliding-window counters (see window.h). */
#include "domain/window.h"

#include <string.h>

int64_t rd_window_width_ms(int64_t window_ms)
{
    int64_t w = window_ms / RD_WINDOW_BUCKETS;
    return w > 0 ? w : 1;
}

static int64_t bucket_of(int64_t window_ms, int64_t now_ms)
{
    return (now_ms < 0 ? 0 : now_ms) / rd_window_width_ms(window_ms);
}

void rd_window_clear(rd_window *w)
{
    memset(w, 0, sizeof *w);
}

void rd_window_add(rd_window *w, int64_t window_ms, int64_t now_ms,
                   const uint32_t add[RD_WINDOW_FIELDS])
{
    int64_t b = bucket_of(window_ms, now_ms);
    int slot = (int)(b % RD_WINDOW_BUCKETS);
    if (w->bucket[slot] != b) {
        /* The slot held an older bucket (or a future one after a clock step
         * back); either way it is not part of this window any more. */
        w->bucket[slot] = b;
        memset(w->count[slot], 0, sizeof w->count[slot]);
    }
    for (int f = 0; f < RD_WINDOW_FIELDS; f++) {
        uint32_t *c = &w->count[slot][f];
        *c = add[f] > UINT32_MAX - *c ? UINT32_MAX : *c + add[f];
    }
}

void rd_window_sum(const rd_window *w, int64_t window_ms, int64_t now_ms,
                   uint64_t out[RD_WINDOW_FIELDS])
{
    int64_t b = bucket_of(window_ms, now_ms);
    for (int f = 0; f < RD_WINDOW_FIELDS; f++)
        out[f] = 0;
    for (int s = 0; s < RD_WINDOW_BUCKETS; s++) {
        if (w->bucket[s] > b || w->bucket[s] <= b - RD_WINDOW_BUCKETS)
            continue;
        for (int f = 0; f < RD_WINDOW_FIELDS; f++)
            out[f] += w->count[s][f];
    }
}
