/* The request readers (transport/requests.c: Decide, Classify,
 * RecordOutcome), each on the same arbitrary bytes: none may read past its
 * input, and whatever one accepts must be a request protobuf-c decodes and
 * codec.c accepts, into the same structs (tests/unit/request_compare.h).
 * Declining is always allowed: the generic path then answers, and the
 * fuzz_rpc_* targets cover it. */
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
    for (int i = 0; i < RD_READERS; i++) {
        char why[256];
        bool accepted;
        const char *wrong = reader_mismatch(&rd_readers[i], bytes, size, &arena, &accepted, why,
                                            sizeof why);
        if (wrong) {
            fprintf(stderr, "fuzz requests: %s: %s\n", rd_readers[i].name, wrong);
            abort();
        }
        rd_arena_reset(&arena);
    }
    free(bytes);
    return 0;
}
