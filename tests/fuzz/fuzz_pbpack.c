/* The one-pass packer (transport/pbpack.c) on whatever protobuf-c can
 * decode: the first byte of the input picks one of the messages recoveryd
 * packs (tests/unit/pb_messages.h), the rest is decoded as that message with
 * protobuf-c (unknown fields, repeated and nested messages included), and
 * the packer must write exactly protobuf-c's bytes for it. Inputs that do
 * not decode are skipped. */
#include <protobuf-c/protobuf-c.h>
#include <stdio.h>
#include <stdlib.h>

#include "../unit/pb_messages.h"
#include "fuzz_support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const ProtobufCMessageDescriptor *d = rd_test_pb_messages[data[0] % RD_TEST_PB_MESSAGES_COUNT];
    ProtobufCMessage *msg = protobuf_c_message_unpack(d, NULL, size - 1, data + 1);
    if (!msg)
        return 0;
    const char *why = fuzz_packing_mismatch(msg);
    if (why) {
        fprintf(stderr, "fuzz pbpack: %s: %s\n", why, d->name);
        abort();
    }
    protobuf_c_message_free_unpacked(msg, NULL);
    return 0;
}
