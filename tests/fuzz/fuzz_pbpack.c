/* The one-pass packer (transport/pbpack.c) on whatever protobuf-c can
 * decode: the first byte of the input picks one of the messages recoveryd
 * packs (tests/unit/pb_messages.h), the rest is decoded as that message with
 * protobuf-c (unknown fields, repeated and nested messages included), and
 * the packer must write exactly protobuf-c's bytes for it. The one-pass
 * reader (pbread.c) reads the same bytes: it must decline what protobuf-c
 * rejects, and what it accepts must pack to protobuf-c's bytes. */
#include <protobuf-c/protobuf-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/pb_messages.h"
#include "domain/arena.h"
#include "fuzz_support.h"
#include "transport/pbread.h"

/* pbread's contract against protobuf-c's decoding ref (NULL: rejected). */
static const char *reader_mismatch(const ProtobufCMessageDescriptor *d, const ProtobufCMessage *ref,
                                   const uint8_t *data, size_t len)
{
    static rd_arena arena;
    if (!arena.chunk_size)
        rd_arena_init(&arena, 1 << 16);
    ProtobufCMessage *fast = rd_pb_read(d, &arena, data, len);
    const char *why = NULL;
    if (fast && !ref) {
        why = "accepted what protobuf-c rejects";
    } else if (fast) {
        size_t n = protobuf_c_message_get_packed_size(ref);
        uint8_t *want = malloc(n + 1), *got = malloc(n + 1);
        if (!want || !got)
            abort();
        if (protobuf_c_message_get_packed_size(fast) != n ||
            protobuf_c_message_pack(ref, want) != n || protobuf_c_message_pack(fast, got) != n ||
            memcmp(want, got, n) != 0)
            why = "read other values than protobuf-c";
        free(want);
        free(got);
    }
    rd_arena_reset(&arena);
    return why;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const ProtobufCMessageDescriptor *d = rd_test_pb_messages[data[0] % RD_TEST_PB_MESSAGES_COUNT];
    ProtobufCMessage *msg = protobuf_c_message_unpack(d, NULL, size - 1, data + 1);
    const char *why = reader_mismatch(d, msg, data + 1, size - 1);
    if (why) {
        fprintf(stderr, "fuzz pbread: %s: %s\n", why, d->name);
        abort();
    }
    if (!msg)
        return 0;
    why = fuzz_packing_mismatch(msg);
    if (why) {
        fprintf(stderr, "fuzz pbpack: %s: %s\n", why, d->name);
        abort();
    }
    protobuf_c_message_free_unpacked(msg, NULL);
    return 0;
}
