/* Copies of the short texts that make up details, reasons and answers.
 *
 * Most pieces copied on the hot path are under 16 bytes (names, numbers,
 * tool ids). A call to the C library's memcpy costs more than such a copy,
 * so rd_copy does them inline with two overlapping loads and stores, and
 * hands longer ones to memcpy. dst and src must not overlap. */
#ifndef RD_CORE_COPY_H
#define RD_CORE_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline void rd_copy(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (n >= 16) {
        memcpy(d, s, n);
    } else if (n >= 8) {
        uint64_t head, tail;
        memcpy(&head, s, 8);
        memcpy(&tail, s + n - 8, 8);
        memcpy(d, &head, 8);
        memcpy(d + n - 8, &tail, 8);
    } else if (n >= 4) {
        uint32_t head, tail;
        memcpy(&head, s, 4);
        memcpy(&tail, s + n - 4, 4);
        memcpy(d, &head, 4);
        memcpy(d + n - 4, &tail, 4);
    } else if (n > 0) {
        /* 1..3 bytes: the first, the middle and the last (some the same) */
        d[0] = s[0];
        d[n / 2] = s[n / 2];
        d[n - 1] = s[n - 1];
    }
}

#endif
