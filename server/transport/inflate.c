#include "transport/inflate.h"

#include <grpc/compression.h>
#include <grpc/slice_buffer.h>
#include <stdbool.h>
#include <string.h>
#include <zlib.h>

/* Output grows in steps, so a small request costs one small buffer. */
#define FIRST_ROOM 4096

int rd_inflate_request(const grpc_byte_buffer *bb, size_t max_bytes, grpc_slice *out,
                       rd_status *st)
{
    int window;
    switch (bb->data.raw.compression) {
    case GRPC_COMPRESS_GZIP: window = 15 + 16; break;
    case GRPC_COMPRESS_DEFLATE: window = 15; break;
    default:
        return rd_status_set(st, RD_ERR_INVALID, "request: compressed with an unknown algorithm");
    }
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, window) != Z_OK)
        return rd_status_set(st, RD_ERR_NOMEM, "request: cannot start inflating");
    size_t cap = FIRST_ROOM < max_bytes ? FIRST_ROOM : max_bytes;
    grpc_slice room = grpc_slice_malloc(cap);
    size_t used = 0;
    int zrc = Z_OK;
    const grpc_slice_buffer *in = &bb->data.raw.slice_buffer;
    for (size_t i = 0; i < in->count && zrc != Z_STREAM_END; i++) {
        z.next_in = GRPC_SLICE_START_PTR(in->slices[i]);
        z.avail_in = (uInt)GRPC_SLICE_LENGTH(in->slices[i]);
        /* zlib may hold output back after taking all the input: go on while
         * the last call filled the room. */
        bool full = false;
        while ((z.avail_in > 0 || full) && zrc != Z_STREAM_END) {
            if (used == cap) {
                if (cap >= max_bytes) {
                    inflateEnd(&z);
                    grpc_slice_unref(room);
                    return rd_status_set(st, RD_ERR_EXHAUSTED,
                                         "request: inflates past server.max_receive_bytes "
                                         "(%zu bytes)", max_bytes);
                }
                size_t bigger = cap * 2 < max_bytes ? cap * 2 : max_bytes;
                grpc_slice grown = grpc_slice_malloc(bigger);
                memcpy(GRPC_SLICE_START_PTR(grown), GRPC_SLICE_START_PTR(room), used);
                grpc_slice_unref(room);
                room = grown;
                cap = bigger;
            }
            z.next_out = GRPC_SLICE_START_PTR(room) + used;
            z.avail_out = (uInt)(cap - used);
            zrc = inflate(&z, Z_NO_FLUSH);
            used = cap - z.avail_out;
            full = z.avail_out == 0;
            if (zrc != Z_OK && zrc != Z_STREAM_END && zrc != Z_BUF_ERROR)
                break;
        }
        if (zrc != Z_OK && zrc != Z_STREAM_END && zrc != Z_BUF_ERROR)
            break;
    }
    inflateEnd(&z);
    if (zrc != Z_STREAM_END) {
        grpc_slice_unref(room);
        return rd_status_set(st, RD_ERR_INVALID, "request: the compressed message is not valid");
    }
    *out = grpc_slice_sub(room, 0, used);
    grpc_slice_unref(room);
    return RD_OK;
}
