/* The bytes of a call: answers packed (on the stack, or into the worker's
 * slab) and requests read (in place, inflated, or gathered); see
 * call_bytes.h. */
#include "transport/call_bytes.h"

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <string.h>

#include "domain/log.h"
#include "transport/inflate.h"
#include "transport/pbpack.h"

/* Most answers (a Decide answer is under 1 KiB) are packed on the stack in
 * one pass and copied once; a larger one (GetBreakerState for many tools,
 * a long turn trace) is sized first and packed into the end of a slice,
 * whose packed part is then taken without a copy. */
#define ENCODE_STACK_BYTES 4096

static grpc_slice pack_to_slice(const ProtobufCMessage *msg)
{
    uint8_t buf[ENCODE_STACK_BYTES];
    size_t len = rd_pb_pack_backward(msg, buf, sizeof buf);
    if (len != SIZE_MAX)
        return grpc_slice_from_copied_buffer((const char *)buf + sizeof buf - len, len);
    size_t cap = protobuf_c_message_get_packed_size(msg) + RD_PB_PACK_SLACK;
    grpc_slice room = grpc_slice_malloc(cap);
    len = rd_pb_pack_backward(msg, GRPC_SLICE_START_PTR(room), cap);
    if (len == SIZE_MAX) { /* the slack promise broken: never seen; do not abort */
        rd_log(RD_LOG_ERROR, "pbpack refused a buffer with its slack", "");
        len = protobuf_c_message_pack(msg, GRPC_SLICE_START_PTR(room));
        cap = len;
    }
    grpc_slice packed = grpc_slice_sub(room, cap - len, cap);
    grpc_slice_unref(room);
    return packed;
}

grpc_byte_buffer *rd_encode_message(const ProtobufCMessage *msg)
{
    grpc_slice slice = pack_to_slice(msg);
    grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&slice, 1);
    grpc_slice_unref(slice);
    return bb;
}

/* Answers of the hot handlers are pieces of one large slice, the worker's
 * slab: one allocation per SLAB_BYTES of answers instead of one per answer
 * (whose malloc and free under load cost more than the answer). A handler
 * writes its answer straight into the slab's free room when it fits
 * (rd_rpc.answer_room; answers are written backwards, so the room is
 * handed out from its end); any other is copied in. Each piece holds a
 * reference to the whole slab, so a client that stops reading keeps at
 * most one slab alive per answer it has not taken. */
#define SLAB_BYTES (32 * 1024)
#define SLAB_PIECE_MAX (SLAB_BYTES / 8)

void rd_worker_release_slab(rd_worker *w)
{
    if (w->has_slab)
        grpc_slice_unref(w->slab);
    w->has_slab = false;
    w->slab_free = 0;
}

/* A slab with at least `need` bytes of free room. */
static void slab_ensure(rd_worker *w, size_t need)
{
    if (!w->has_slab || w->slab_free < need) {
        rd_worker_release_slab(w);
        w->slab = grpc_slice_malloc(SLAB_BYTES);
        w->has_slab = true;
        w->slab_free = SLAB_BYTES;
    }
}

/* The free room, for a handler to write its answer into. */
void rd_worker_open_answer_room(rd_worker *w, rd_rpc *rpc)
{
    slab_ensure(w, SLAB_PIECE_MAX);
    rpc->answer_room = GRPC_SLICE_START_PTR(w->slab);
    rpc->answer_room_cap = w->slab_free;
}

static grpc_slice slab_piece(rd_worker *w, const uint8_t *bytes, size_t len)
{
    bool in_place = w->has_slab && len <= w->slab_free &&
                    bytes == GRPC_SLICE_START_PTR(w->slab) + w->slab_free - len;
    if (!in_place) {
        if (len > SLAB_PIECE_MAX)
            return grpc_slice_from_copied_buffer((const char *)bytes, len);
        slab_ensure(w, len);
        memcpy(GRPC_SLICE_START_PTR(w->slab) + w->slab_free - len, bytes, len);
    }
    w->slab_free -= len;
    return grpc_slice_sub(w->slab, w->slab_free, w->slab_free + len);
}

/* A handler's reply: packed here, or already packed (in the slab's room or
 * the arena). */
grpc_byte_buffer *rd_worker_encode_reply(rd_worker *w, const rd_reply *reply)
{
    if (!reply->bytes)
        return rd_encode_message(reply->msg);
    grpc_slice slice = slab_piece(w, reply->bytes, reply->len);
    grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&slice, 1);
    grpc_slice_unref(slice);
    return bb;
}

/* The request as one contiguous slice. One that arrived in one
 * uncompressed slice (nearly all do) is read in place, through a
 * reference: the buffer is ours once its completion is delivered, as gRPC's
 * C++ reader, which peeks at the received slices, relies on. A compressed
 * one is inflated with a ceiling (inflate.h); any other is gathered by
 * gRPC's reader. The transport thread's
 * writes to the slice happen inside libgrpc, ordered by locks
 * ThreadSanitizer cannot see; tests/faults/tsan.supp leaves them untracked. */
int rd_request_bytes(grpc_byte_buffer *bb, size_t max_bytes, grpc_slice *out, rd_status *st)
{
    if (bb->type == GRPC_BB_RAW && bb->data.raw.compression == GRPC_COMPRESS_NONE &&
        bb->data.raw.slice_buffer.count == 1) {
        *out = grpc_slice_ref(bb->data.raw.slice_buffer.slices[0]);
        return RD_OK;
    }
    if (bb->type == GRPC_BB_RAW && bb->data.raw.compression != GRPC_COMPRESS_NONE)
        return rd_inflate_request(bb, max_bytes, out, st);
    grpc_byte_buffer_reader reader;
    if (!grpc_byte_buffer_reader_init(&reader, bb))
        return rd_status_set(st, RD_ERR_INVALID, "request: cannot read the message");
    *out = grpc_byte_buffer_reader_readall(&reader);
    grpc_byte_buffer_reader_destroy(&reader);
    return RD_OK;
}
