/* Compressed requests inflated with a ceiling enforced while inflating.
 *
 * gRPC 1.51 inflates a compressed message whole before anything checks its
 * size, so 1 MB of gzip became 1000 MiB in memory. With
 * server.accept_compressed the core is told not to inflate
 * (GRPC_ARG_ENABLE_PER_MESSAGE_DECOMPRESSION = 0) and hands the message
 * over compressed; this inflates it and stops at `max_bytes` of output. */
#ifndef RD_TRANSPORT_INFLATE_H
#define RD_TRANSPORT_INFLATE_H

#include <grpc/byte_buffer.h>
#include <grpc/slice.h>
#include <stddef.h>

#include "domain/err.h"

/* The inflated bytes of a compressed byte buffer (gzip or deflate) as one
 * slice the caller unrefs; RD_ERR_INVALID for bad data or an algorithm we do
 * not inflate, RD_ERR_EXHAUSTED when it inflates past max_bytes. */
int rd_inflate_request(const grpc_byte_buffer *bb, size_t max_bytes, grpc_slice *out,
                       rd_status *st);

#endif
