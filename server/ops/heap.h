/* Returning freed memory to the system after a burst.
 *
 * main.c keeps up to 64 MiB of freed heap (M_TRIM_THRESHOLD) so steady
 * load does not fault pages in again and again; but glibc trims only the
 * top of each heap, and a burst of hostile streams leaves gigabytes of free
 * chunks below live ones (docs/SECURITY.md). rd_heap_tick, called from
 * the main loop, reads the resident size once a second and runs
 * malloc_trim(0), which releases the free pages inside every arena:
 *   - when it has grown more than RD_HEAP_TRIM_SLACK past what the last
 *     trim left (a burst under way);
 *   - when it stays more than RD_HEAP_TRIM_SLACK above the lowest size
 *     seen, every 5 s (the burst's memory is freed after the growth
 *     stopped); a trim there that returns less than the slack doubles that
 *     interval, up to a minute, so a heap that is large because it is in
 *     use is not walked every few seconds. */
#ifndef RD_OPS_HEAP_H
#define RD_OPS_HEAP_H

#include <stdbool.h>
#include <stdint.h>

#define RD_HEAP_TRIM_SLACK (32u << 20)

typedef struct rd_heap_trimmer {
    int64_t next_check_ms;
    uint64_t after_trim_bytes;   /* resident size after the last trim */
    uint64_t lowest_bytes;       /* lowest resident size seen */
    int64_t next_settle_ms;      /* when the second rule may trim again */
    int64_t settle_interval_ms;
    uint64_t trims;
} rd_heap_trimmer;

/* Resident bytes of this process (0 if /proc cannot be read). */
uint64_t rd_heap_resident_bytes(void);
/* Trims when due; returns true when it trimmed. */
bool rd_heap_tick(rd_heap_trimmer *t, int64_t now_mono_ms);

#endif
