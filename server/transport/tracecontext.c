/* Trace context from gRPC metadata (see tracecontext.h). */
#include "transport/tracecontext.h"

#include <string.h>

static bool key_is(grpc_slice key, const char *name, size_t len)
{
    return GRPC_SLICE_LENGTH(key) == len && memcmp(GRPC_SLICE_START_PTR(key), name, len) == 0;
}

void rd_trace_ctx_from_metadata(const grpc_metadata_array *md, bool want_state,
                                rd_trace_ctx *out)
{
    /* Not the whole struct: the 0.5 KiB tracestate buffer only needs its
     * first byte on the calls (nearly all) that carry none. */
    out->valid = false;
    out->state[0] = '\0';
    out->state_len = 0;
    out->state_discarded = false;
    unsigned parents = 0;
    for (size_t i = 0; i < md->count; i++) {
        grpc_slice key = md->metadata[i].key, value = md->metadata[i].value;
        const char *v = (const char *)GRPC_SLICE_START_PTR(value);
        if (key_is(key, "traceparent", 11)) {
            /* Two traceparent headers name no single parent: neither counts. */
            if (++parents == 1)
                rd_traceparent_parse(v, GRPC_SLICE_LENGTH(value), out);
            else
                out->valid = false;
        } else if (want_state && key_is(key, "tracestate", 10)) {
            rd_tracestate_append(out, v, GRPC_SLICE_LENGTH(value));
        }
    }
    if (!out->valid) {
        out->state[0] = '\0';
        out->state_len = 0;
    }
}
