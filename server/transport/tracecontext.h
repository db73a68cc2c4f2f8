/* The W3C trace context of an RPC, from its `traceparent` and `tracestate`
 * metadata (domain/tracectx.h parses the values). Runs on every call: it
 * only compares the keys' lengths and bytes until one matches. */
#ifndef RD_TRANSPORT_TRACECONTEXT_H
#define RD_TRANSPORT_TRACECONTEXT_H

#include <grpc/grpc.h>

#include "domain/tracectx.h"

/* out->valid is false when the call carries no traceparent, more than one,
 * or an invalid one (the call is then handled without trace context, never
 * refused); the tracestate is kept only beside a valid traceparent, and
 * read only when want_state (only the span exporter passes it on). */
void rd_trace_ctx_from_metadata(const grpc_metadata_array *md, bool want_state,
                                rd_trace_ctx *out);

#endif
