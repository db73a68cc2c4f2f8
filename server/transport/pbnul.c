/* A walk over an encoded request for strings holding NUL (see pbnul.h). */
#include "transport/pbnul.h"

#include <stdio.h>
#include <string.h>

#include "transport/pbreader.h"

#define DEPTH_MAX 16     /* deeper nesting is not searched (no request nests so) */
#define COUNTED_MAX 32   /* field numbers whose repeated index is counted */

/* Appends "name" or "name[i]" (a repeated field's i-th value) to the
 * field name built so far, as prefix.name. */
static void name_field(char *field, size_t size, const char *prefix,
                       const ProtobufCFieldDescriptor *f, unsigned index)
{
    const char *dot = prefix[0] ? "." : "";
    if (f->label == PROTOBUF_C_LABEL_REPEATED)
        snprintf(field, size, "%s%s%s[%u]", prefix, dot, f->name, index);
    else
        snprintf(field, size, "%s%s%s", prefix, dot, f->name);
}

/* Skips a value of wire type `wire` that is not length-delimited. */
static bool skip_value(rd_pbr *r, unsigned wire)
{
    uint64_t v;
    size_t width = wire == PROTOBUF_C_WIRE_TYPE_64BIT ? 8 : 4;
    switch (wire) {
    case PROTOBUF_C_WIRE_TYPE_VARINT:
        return rd_pbr_varint(r, RD_PBR_VARINT_BYTES, &v);
    case PROTOBUF_C_WIRE_TYPE_64BIT:
    case PROTOBUF_C_WIRE_TYPE_32BIT:
        if ((size_t)(r->end - r->p) < width)
            return false;
        r->p += width;
        return true;
    }
    return false; /* groups: not in our API; the decoder decides */
}

static bool search(const ProtobufCMessageDescriptor *d, const uint8_t *data, size_t len,
                   const char *prefix, char *field, size_t size, int depth)
{
    rd_pbr r = {data, data + len};
    unsigned seen[COUNTED_MAX] = {0};
    while (r.p < r.end) {
        uint64_t tag;
        const uint8_t *at;
        size_t n;
        if (!rd_pbr_varint(&r, RD_PBR_TAG_BYTES, &tag))
            return false;
        unsigned wire = (unsigned)(tag & 7);
        if (wire != PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED) {
            if (!skip_value(&r, wire))
                return false;
            continue;
        }
        if (!rd_pbr_bytes(&r, &at, &n))
            return false;
        uint64_t number = tag >> 3;
        const ProtobufCFieldDescriptor *f =
            number <= UINT32_MAX ? protobuf_c_message_descriptor_get_field(d, (unsigned)number)
                                 : NULL;
        if (!f)
            continue; /* unknown: the decoder keeps or refuses it */
        unsigned index = number < COUNTED_MAX ? seen[number]++ : 0;
        if (f->type == PROTOBUF_C_TYPE_STRING && memchr(at, 0, n)) {
            name_field(field, size, prefix, f, index);
            return true;
        }
        if (f->type == PROTOBUF_C_TYPE_MESSAGE && depth < DEPTH_MAX) {
            char inner[128];
            name_field(inner, sizeof inner, prefix, f, index);
            if (search(f->descriptor, at, n, inner, field, size, depth + 1))
                return true;
        }
    }
    return false;
}

bool rd_pb_nul_field(const ProtobufCMessageDescriptor *d, const uint8_t *data, size_t len,
                     char *field, size_t size)
{
    if (len == 0 || !memchr(data, 0, len))
        return false;
    return search(d, data, len, "", field, size, 0);
}
