/* Strings holding a NUL byte, found on the wire.
 *
 * The decoders hand strings on as C strings, which end at the first NUL:
 * "nulx\0a" would become "nulx", and two ids one. rd_pb_nul_field() finds
 * such a string in the encoded request, before any decoder has cut it, so
 * the request is refused naming the field instead of answered for the
 * shorter string. */
#ifndef RD_TRANSPORT_PBNUL_H
#define RD_TRANSPORT_PBNUL_H

#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* True when a string field of message type d in data[0, len), nested
 * messages included, holds a NUL byte; `field` (of `size` bytes) then
 * receives its name as the codec writes field names ("error.message",
 * "plan[1].depends_on[0]", "tool_ids[3]"). Malformed bytes end the search
 * (false): the decoder refuses those itself. Reads data only; costs one
 * memchr() over the request when no byte of it is 0. */
bool rd_pb_nul_field(const ProtobufCMessageDescriptor *d, const uint8_t *data, size_t len,
                     char *field, size_t size);

#endif
