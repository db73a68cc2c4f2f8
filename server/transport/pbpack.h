/* Packing a protobuf-c message in one pass, from the last byte backwards.
 *
 * protobuf-c's own protobuf_c_message_pack() sizes every nested message
 * again for each enclosing length prefix, so a message three levels deep
 * is walked four times; for recoveryd's answers (a Decide answer nests the
 * classification, the breaker and the trace events) that was the largest
 * cost of our own making after the decision itself. Writing backwards, a
 * nested message's length is known once its bytes are written, so every
 * field is visited once.
 *
 * The output is byte for byte what protobuf_c_message_pack() writes for the
 * same message (same field order, same presence rules, unknown fields
 * last); tests/unit/test_pbpack.c and the fuzz targets check that for every
 * message type of the API. */
#ifndef RD_TRANSPORT_PBPACK_H
#define RD_TRANSPORT_PBPACK_H

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>

/* The packer checks for room once per field, for the most that field can
 * take, so it may refuse a buffer of exactly the packed size; one of the
 * packed size plus this many bytes is always enough. */
#define RD_PB_PACK_SLACK 15

/* Packs msg into the end of buf[0, cap). Returns the packed length n, the
 * bytes being buf[cap - n, cap); or SIZE_MAX when cap is too small (see
 * RD_PB_PACK_SLACK), in which case buf's content is unspecified (nothing is
 * written outside it). The caller owns buf and msg; nothing is allocated. */
size_t rd_pb_pack_backward(const ProtobufCMessage *msg, uint8_t *buf, size_t cap);

/* The size of one element of a repeated field's array, in protobuf-c's
 * structs, for a field of this type. */
size_t rd_pb_element_size(ProtobufCType type);

#endif
