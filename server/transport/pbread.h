/* One-pass decoding of protobuf-c messages of a simple shape, for the
 * requests of the hot RPCs.
 *
 * protobuf_c_message_unpack() handles every message protobuf allows: it
 * scans the input once to find and count the fields, then decodes them,
 * looking each field up by number. The requests of recoveryd's API have
 * fields numbered 1..n of a few types, and arrive well formed; for them one
 * forward pass that indexes the field table by number does the same work
 * for a fraction of the cost.
 *
 * rd_pb_read() decodes what it is sure to decode exactly as protobuf-c
 * would, and declines everything else (returns NULL): malformed input, an
 * unknown field, a nested message sent twice (which protobuf merges), a
 * field type or label it does not handle. The caller then falls back to
 * protobuf_c_message_unpack(), whose answer stands. tests/unit/test_pbpack.c
 * and the pbpack fuzz target check that an accepted input packs to the same
 * bytes as protobuf-c's decoding of it, and that nothing protobuf-c rejects
 * is accepted. */
#ifndef RD_TRANSPORT_PBREAD_H
#define RD_TRANSPORT_PBREAD_H

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>

#include "domain/arena.h"

/* The message decoded from data[0, len) into the arena (strings included,
 * NUL-terminated as protobuf-c's), or NULL when declined. data is only read
 * and may be freed once this returns. */
ProtobufCMessage *rd_pb_read(const ProtobufCMessageDescriptor *d, rd_arena *a,
                             const uint8_t *data, size_t len);

#endif
