/* Copies of the short texts that make up details, reasons and answers.
 *
 * Most pieces copied on the hot path are under 128 bytes (names, numbers,
 * tool ids, error texts). A call to the C library's memcpy costs more than
 * such a copy, and so does the `rep movsb` gcc puts in its place when a
 * profile says the size is small (a start-up of ~9 cycles each, ~15 copies
 * per Decide answer). rd_copy does them inline with overlapping 16-, 8- or
 * 4-byte loads and stores from both ends, and hands longer ones to memcpy.
 * dst and src must not overlap. */
#ifndef RD_CORE_COPY_H
#define RD_CORE_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* 16 bytes, as one unaligned vector load and store where the target has
 * them (a fixed-size memcpy is compiled to that). */
static inline void rd_copy16(unsigned char *d, const unsigned char *s)
{
    unsigned char block[16];
    memcpy(block, s, 16);
    memcpy(d, block, 16);
}

/* 16 <= n <= 128: blocks from the start and blocks ending at the end, as
 * many as cover n from each side (they overlap in the middle). */
static inline void rd_copy_16_to_128(unsigned char *d, const unsigned char *s, size_t n)
{
    size_t blocks = n > 64 ? 4 : n > 32 ? 2 : 1;
    for (size_t i = 0; i < blocks; i++) {
        rd_copy16(d + 16 * i, s + 16 * i);
        rd_copy16(d + n - 16 * (i + 1), s + n - 16 * (i + 1));
    }
}

/* Longer copies, out of line: the C library picks the best way for the
 * machine, and the inlined paths above stay free of whatever the compiler
 * would expand a variable-length memcpy into. */
static __attribute__((noinline, unused)) void rd_copy_long(unsigned char *d,
                                                           const unsigned char *s, size_t n)
{
    memcpy(d, s, n);
}

static inline void rd_copy(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (n > 128) {
        rd_copy_long(d, s, n);
    } else if (n >= 16) {
        rd_copy_16_to_128(d, s, n);
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
