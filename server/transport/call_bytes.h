/* The bytes in and out of a call (call.c): answers packed into slices
 * gRPC sends from, requests read into one contiguous slice. */
#ifndef RD_TRANSPORT_CALL_BYTES_H
#define RD_TRANSPORT_CALL_BYTES_H

#include <grpc/byte_buffer.h>
#include <protobuf-c/protobuf-c.h>

#include "domain/err.h"
#include "transport/server_internal.h"

/* A message packed into a new byte buffer. */
grpc_byte_buffer *rd_encode_message(const ProtobufCMessage *msg);
/* Hands a handler the free room of w's answer slab (rpc->answer_room). */
void rd_worker_open_answer_room(rd_worker *w, rd_rpc *rpc);
/* A handler's reply as a byte buffer: packed here, or already packed (in
 * the slab's room or the arena) and taken as a piece of the slab. */
grpc_byte_buffer *rd_worker_encode_reply(rd_worker *w, const rd_reply *reply);
/* The request as one slice the caller unrefs; a compressed one inflated up
 * to max_bytes (inflate.h). */
int rd_request_bytes(grpc_byte_buffer *bb, size_t max_bytes, grpc_slice *out, rd_status *st);

#endif
