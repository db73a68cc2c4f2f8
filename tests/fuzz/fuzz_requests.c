/* The Decide request reader (transport/requests.c) on arbitrary bytes: it
 * must never read past its input, and whatever it accepts must be a request
 * protobuf-c decodes and codec.c accepts, into the same structs
 * (tests/unit/request_compare.h). Declining is always allowed: the generic
 * path then answers, and fuzz_rpc_decide covers it. */
#include <stdlib.h>

#include "../unit/request_compare.h"
#include "fuzz_support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static rd_arena arena;
    if (!arena.chunk_size)
        rd_arena_init(&arena, 1 << 16);
    /* A copy of exactly the input's size: ASan sees any read past it. */
    uint8_t *bytes = malloc(size ? size : 1);
    if (!bytes)
        abort();
    memcpy(bytes, data, size);
    char why[256];
    bool accepted;
    const char *wrong = decide_reader_mismatch(bytes, size, &arena, &accepted, why, sizeof why);
    if (wrong) {
        fprintf(stderr, "fuzz requests: %s\n", wrong);
        abort();
    }
    free(bytes);
    rd_arena_reset(&arena);
    return 0;
}
