/* One-pass decoding of simple protobuf-c messages (see pbread.h).
 *
 * Every rule below mirrors protobuf_c_message_unpack() (protobuf-c 1.4):
 * varint limits as pbreader.h's, the last value of a singular field
 * winning, a oneof's case set to the member last seen. Whatever protobuf-c
 * would treat in any other way is declined. */
#include "transport/pbread.h"

#include <stdbool.h>

#include "transport/pbreader.h"

#define DEPTH_MAX 16     /* nested messages; deeper input goes to protobuf-c */
#define FIELDS_MAX 64    /* fields of one message: one bit each in seen_messages */

/* The field a tag names, or NULL: numbers are 1..n in the descriptors we
 * read, so the table is indexed by number. */
static const ProtobufCFieldDescriptor *field_of(const ProtobufCMessageDescriptor *d, uint64_t number)
{
    if (number == 0 || number > d->n_fields)
        return NULL;
    const ProtobufCFieldDescriptor *f = &d->fields[number - 1];
    return f->id == number ? f : NULL;
}

/* The wire type each field type of ours arrives in, plus one: 0 marks a
 * type declined (the fixed-width and floating types, bytes). */
static const uint8_t wire_type_plus_one[] = {
    [PROTOBUF_C_TYPE_INT32] = PROTOBUF_C_WIRE_TYPE_VARINT + 1,
    [PROTOBUF_C_TYPE_INT64] = PROTOBUF_C_WIRE_TYPE_VARINT + 1,
    [PROTOBUF_C_TYPE_UINT32] = PROTOBUF_C_WIRE_TYPE_VARINT + 1,
    [PROTOBUF_C_TYPE_UINT64] = PROTOBUF_C_WIRE_TYPE_VARINT + 1,
    [PROTOBUF_C_TYPE_BOOL] = PROTOBUF_C_WIRE_TYPE_VARINT + 1,
    [PROTOBUF_C_TYPE_ENUM] = PROTOBUF_C_WIRE_TYPE_VARINT + 1,
    [PROTOBUF_C_TYPE_STRING] = PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED + 1,
    [PROTOBUF_C_TYPE_MESSAGE] = PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED + 1,
};

/* The wire type a field of ours arrives in, or -1 for a field declined.
 * A table rather than a chain of tests: this runs for every field read. */
static int wire_type_of(const ProtobufCFieldDescriptor *f)
{
    if ((unsigned)f->type >= sizeof wire_type_plus_one)
        return -1;
    int wire = (int)wire_type_plus_one[f->type] - 1;
    if (f->label == PROTOBUF_C_LABEL_NONE)
        return wire;
    /* repeated strings and messages only; proto2 presence rules are not ours */
    return f->label == PROTOBUF_C_LABEL_REPEATED && wire == PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED
               ? wire : -1;
}

/* The next field: its descriptor, and its value as a varint or as the
 * bytes [*at, *at + *len). False when declined. */
static inline __attribute__((always_inline)) bool next_field(
    rd_pbr *r, const ProtobufCMessageDescriptor *d, const ProtobufCFieldDescriptor **field,
    uint64_t *varint, const uint8_t **at, size_t *len)
{
    uint64_t tag;
    if (!rd_pbr_varint(r, RD_PBR_TAG_BYTES, &tag))
        return false;
    const ProtobufCFieldDescriptor *f = field_of(d, tag >> 3);
    if (!f || wire_type_of(f) != (int)(tag & 7))
        return false;
    *field = f;
    if ((tag & 7) == PROTOBUF_C_WIRE_TYPE_VARINT)
        return rd_pbr_varint(r, RD_PBR_VARINT_BYTES, varint);
    return rd_pbr_bytes(r, at, len);
}

/* How many times field f occurs in r's bytes, so that its array is sized
 * once, when its first value is met. Declines what next_field() declines. */
static bool count_occurrences(const ProtobufCMessageDescriptor *d, rd_pbr r,
                              const ProtobufCFieldDescriptor *f, size_t *count)
{
    *count = 0;
    while (r.p < r.end) {
        const ProtobufCFieldDescriptor *g;
        uint64_t v;
        const uint8_t *at;
        size_t len;
        if (!next_field(&r, d, &g, &v, &at, &len))
            return false;
        *count += g == f;
    }
    return true;
}

static char *copy_string(rd_arena *a, const uint8_t *at, size_t len)
{
    return rd_arena_strndup(a, (const char *)at, len);
}

static void store_varint(const ProtobufCFieldDescriptor *f, void *member, uint64_t v)
{
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_UINT64:
        *(uint64_t *)member = v;
        break;
    case PROTOBUF_C_TYPE_BOOL:
        *(protobuf_c_boolean *)member = v != 0;
        break;
    default: /* int32, uint32, enum: the low 32 bits, as protobuf-c */
        *(uint32_t *)member = (uint32_t)v;
        break;
    }
}

static ProtobufCMessage *read_message(const ProtobufCMessageDescriptor *d, rd_arena *a,
                                      const uint8_t *data, size_t len, int depth);

/* The next slot of a repeated field's array; the array is allocated at the
 * field's first value, for all of them (the quantifier counts the filled
 * slots). `rest` holds the bytes after this value. */
static void **next_slot(const ProtobufCMessageDescriptor *d, const ProtobufCFieldDescriptor *f,
                        char *base, rd_arena *a, rd_pbr rest)
{
    size_t *n = (size_t *)(base + f->quantifier_offset);
    void ***array = (void ***)(base + f->offset);
    if (*n == 0) {
        size_t later;
        if (!count_occurrences(d, rest, f, &later) ||
            !(*array = rd_arena_alloc_uninit(a, (later + 1) * sizeof **array)))
            return NULL;
    }
    return &(*array)[(*n)++];
}

/* One length-delimited value into its member or its array. */
static bool store_bytes(const ProtobufCMessageDescriptor *d, const ProtobufCFieldDescriptor *f,
                        char *base, rd_arena *a, const uint8_t *at, size_t len, rd_pbr rest,
                        int depth)
{
    void *value;
    if (f->type == PROTOBUF_C_TYPE_STRING)
        value = copy_string(a, at, len);
    else
        value = read_message(f->descriptor, a, at, len, depth + 1);
    if (!value)
        return false;
    void **slot = f->label == PROTOBUF_C_LABEL_REPEATED ? next_slot(d, f, base, a, rest)
                                                       : (void **)(base + f->offset);
    if (!slot)
        return false;
    *slot = value;
    return true;
}

static ProtobufCMessage *read_message(const ProtobufCMessageDescriptor *d, rd_arena *a,
                                      const uint8_t *data, size_t len, int depth)
{
    if (depth > DEPTH_MAX || d->n_fields > FIELDS_MAX)
        return NULL;
    rd_pbr r = {data, data + len};
    ProtobufCMessage *msg = rd_arena_alloc_uninit(a, d->sizeof_message);
    if (!msg)
        return NULL;
    d->message_init(msg);
    char *base = (char *)msg;
    uint64_t seen_messages = 0;
    while (r.p < r.end) {
        const ProtobufCFieldDescriptor *f;
        uint64_t v = 0;
        const uint8_t *at = NULL;
        size_t n = 0;
        if (!next_field(&r, d, &f, &v, &at, &n))
            return NULL;
        uint64_t bit = UINT64_C(1) << (f->id - 1);
        if (f->type == PROTOBUF_C_TYPE_MESSAGE && f->label != PROTOBUF_C_LABEL_REPEATED) {
            if (seen_messages & bit)
                return NULL; /* sent twice: protobuf merges the two */
            seen_messages |= bit;
        }
        if (!at)
            store_varint(f, base + f->offset, v);
        else if (!store_bytes(d, f, base, a, at, n, r, depth))
            return NULL;
        if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
            *(uint32_t *)(base + f->quantifier_offset) = f->id;
    }
    return msg;
}

ProtobufCMessage *rd_pb_read(const ProtobufCMessageDescriptor *d, rd_arena *a,
                             const uint8_t *data, size_t len)
{
    return read_message(d, a, data, len, 0);
}
