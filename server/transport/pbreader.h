/* The forward protobuf reader shared by the generic one-pass decoder
 * (pbread.c) and the hot requests read straight into the engine's structs
 * (requests.c). Both decline anything protobuf-c would read in another way,
 * so the limits below are protobuf-c's (1.4): a varint of at most 10
 * bytes, a tag or a length of at most 5. */
#ifndef RD_TRANSPORT_PBREADER_H
#define RD_TRANSPORT_PBREADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RD_PBR_TAG_BYTES 5
#define RD_PBR_VARINT_BYTES 10

typedef struct rd_pbr {
    const uint8_t *p;   /* the next byte to read */
    const uint8_t *end; /* one past the last */
} rd_pbr;

/* A varint of at most max_bytes bytes. Declines a ten-byte varint whose
 * last byte carries bits beyond 64 (protobuf-c reads those as "true" in a
 * bool but drops them elsewhere). */
static inline bool rd_pbr_long_varint(rd_pbr *r, unsigned max_bytes, uint64_t *v)
{
    uint64_t x = 0;
    for (unsigned i = 0; i < max_bytes && r->p < r->end; i++) {
        uint8_t b = *r->p++;
        if (i == 9 && b > 1)
            return false;
        x |= (uint64_t)(b & 0x7F) << (7 * i);
        if (!(b & 0x80)) {
            *v = x;
            return true;
        }
    }
    return false;
}

/* Most tags, lengths and values of a request take one byte. */
static inline bool rd_pbr_varint(rd_pbr *r, unsigned max_bytes, uint64_t *v)
{
    if (r->p < r->end && *r->p < 0x80) {
        *v = *r->p++;
        return true;
    }
    return rd_pbr_long_varint(r, max_bytes, v);
}

/* A length-delimited value's bytes [*at, *at + *len), after its tag. */
static inline bool rd_pbr_bytes(rd_pbr *r, const uint8_t **at, size_t *len)
{
    uint64_t n;
    if (!rd_pbr_varint(r, RD_PBR_TAG_BYTES, &n) || n > (uint64_t)(r->end - r->p))
        return false;
    *at = r->p;
    *len = (size_t)n;
    r->p += n;
    return true;
}

#endif
