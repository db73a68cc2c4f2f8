#include "ops/heap.h"

#include <malloc.h>
#include <stdio.h>
#include <unistd.h>

#define CHECK_INTERVAL_MS 1000
#define SETTLE_MIN_MS 5000
#define SETTLE_MAX_MS 60000

uint64_t rd_heap_resident_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long size = 0, resident = 0;
    int n = f ? fscanf(f, "%llu %llu", &size, &resident) : 0;
    if (f)
        fclose(f);
    return n == 2 ? (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
}

static uint64_t trim(rd_heap_trimmer *t)
{
    malloc_trim(0);
    t->trims++;
    t->after_trim_bytes = rd_heap_resident_bytes();
    return t->after_trim_bytes;
}

bool rd_heap_tick(rd_heap_trimmer *t, int64_t now_mono_ms)
{
    if (now_mono_ms < t->next_check_ms)
        return false;
    t->next_check_ms = now_mono_ms + CHECK_INTERVAL_MS;
    uint64_t rss = rd_heap_resident_bytes();
    if (rss == 0)
        return false;
    if (t->lowest_bytes == 0 || rss < t->lowest_bytes)
        t->lowest_bytes = rss;
    if (t->after_trim_bytes == 0 || rss < t->after_trim_bytes)
        t->after_trim_bytes = rss;
    if (t->settle_interval_ms == 0)
        t->settle_interval_ms = SETTLE_MIN_MS;
    if (rss - t->after_trim_bytes > RD_HEAP_TRIM_SLACK) {
        trim(t);
        t->next_settle_ms = now_mono_ms + SETTLE_MIN_MS;
        t->settle_interval_ms = SETTLE_MIN_MS;
        return true;
    }
    if (rss - t->lowest_bytes > RD_HEAP_TRIM_SLACK && now_mono_ms >= t->next_settle_ms) {
        uint64_t after = trim(t);
        bool returned = rss > after && rss - after > RD_HEAP_TRIM_SLACK;
        t->settle_interval_ms = returned ? SETTLE_MIN_MS
                                         : (t->settle_interval_ms * 2 > SETTLE_MAX_MS
                                                ? SETTLE_MAX_MS
                                                : t->settle_interval_ms * 2);
        t->next_settle_ms = now_mono_ms + t->settle_interval_ms;
        return true;
    }
    return false;
}
