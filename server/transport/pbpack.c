/* One-pass backward packing of protobuf-c messages (see pbpack.h).
 *
 * The fields are visited from the last to the first and each value is
 * written in front of what follows it: the value, then (for a
 * length-delimited field) its length, then its tag. The presence rules are
 * protobuf-c's, field by field, so the bytes equal protobuf_c_message_pack's. */
#include "transport/pbpack.h"

#include <stdbool.h>
#include <string.h>

typedef struct {
    uint8_t *start; /* the buffer's first byte */
    uint8_t *end;   /* one past its last byte */
    uint8_t *pos;   /* the first byte written so far */
    bool full;      /* some write did not fit: the result is SIZE_MAX */
} writer;

/* The most a tag and a scalar (or a length) take: 5 + 10 bytes. */
#define FIELD_HEAD_MAX RD_PB_PACK_SLACK

static inline size_t written(const writer *w)
{
    return (size_t)(w->end - w->pos);
}

/* Every write is preceded by one check that room for it is left, so the
 * writes themselves need none; a failed check leaves pos where it was. */
static inline bool room(writer *w, size_t n)
{
    if ((size_t)(w->pos - w->start) >= n)
        return true;
    w->full = true;
    return false;
}

static inline unsigned varint_len(uint64_t v)
{
    return v < 0x80 ? 1 : (unsigned)(64 - __builtin_clzll(v) + 6) / 7;
}

static inline void emit_varint(writer *w, uint64_t v)
{
    if (v < 0x80) {
        *--w->pos = (uint8_t)v;
        return;
    }
    uint8_t *p = w->pos -= varint_len(v);
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p = (uint8_t)v;
}

static inline void emit_raw(writer *w, const void *data, size_t n)
{
    if (n) {
        w->pos -= n;
        memcpy(w->pos, data, n);
    }
}

static inline void emit_little_endian(writer *w, uint64_t v, size_t n)
{
    uint8_t *p = w->pos -= n;
    for (size_t i = 0; i < n; i++, v >>= 8)
        p[i] = (uint8_t)v;
}

static inline void emit_tag(writer *w, uint32_t id, ProtobufCWireType wire)
{
    emit_varint(w, ((uint64_t)id << 3) | (uint64_t)wire);
}

static uint32_t zigzag32(int32_t v)
{
    return v < 0 ? ~((uint32_t)v << 1) : (uint32_t)v << 1;
}

static uint64_t zigzag64(int64_t v)
{
    return v < 0 ? ~((uint64_t)v << 1) : (uint64_t)v << 1;
}

static void put_message(writer *w, const ProtobufCMessage *msg);

/* A scalar's value alone (no tag), room for FIELD_HEAD_MAX checked by the
 * caller; returns its wire type. */
static ProtobufCWireType emit_scalar(writer *w, ProtobufCType type, const void *member)
{
    switch (type) {
    case PROTOBUF_C_TYPE_SINT32:
        emit_varint(w, zigzag32(*(const int32_t *)member));
        return PROTOBUF_C_WIRE_TYPE_VARINT;
    case PROTOBUF_C_TYPE_ENUM:
    case PROTOBUF_C_TYPE_INT32: /* negative: sign-extended to 10 bytes */
        emit_varint(w, (uint64_t)(int64_t)*(const int32_t *)member);
        return PROTOBUF_C_WIRE_TYPE_VARINT;
    case PROTOBUF_C_TYPE_UINT32:
        emit_varint(w, *(const uint32_t *)member);
        return PROTOBUF_C_WIRE_TYPE_VARINT;
    case PROTOBUF_C_TYPE_SINT64:
        emit_varint(w, zigzag64(*(const int64_t *)member));
        return PROTOBUF_C_WIRE_TYPE_VARINT;
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_UINT64:
        emit_varint(w, *(const uint64_t *)member);
        return PROTOBUF_C_WIRE_TYPE_VARINT;
    case PROTOBUF_C_TYPE_BOOL:
        emit_varint(w, *(const protobuf_c_boolean *)member ? 1 : 0);
        return PROTOBUF_C_WIRE_TYPE_VARINT;
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_FLOAT:
        emit_little_endian(w, *(const uint32_t *)member, 4);
        return PROTOBUF_C_WIRE_TYPE_32BIT;
    default: /* 64-bit fixed; length-delimited types never come here */
        emit_little_endian(w, *(const uint64_t *)member, 8);
        return PROTOBUF_C_WIRE_TYPE_64BIT;
    }
}

static bool is_length_delimited(ProtobufCType type)
{
    return type == PROTOBUF_C_TYPE_STRING || type == PROTOBUF_C_TYPE_BYTES ||
           type == PROTOBUF_C_TYPE_MESSAGE;
}

/* n bytes of payload, with room left in front for their length and tag. */
static bool put_payload(writer *w, const void *data, size_t n)
{
    if (!room(w, n + FIELD_HEAD_MAX))
        return false;
    emit_raw(w, data, n);
    return true;
}

/* A string, bytes or message value and its length; false if it did not fit,
 * else room for the tag is left. */
static bool put_length_delimited(writer *w, ProtobufCType type, const void *member)
{
    size_t mark = written(w);
    if (type == PROTOBUF_C_TYPE_STRING) {
        const char *s = *(const char *const *)member;
        if (!put_payload(w, s, s ? strlen(s) : 0))
            return false;
    } else if (type == PROTOBUF_C_TYPE_BYTES) {
        const ProtobufCBinaryData *bd = member;
        if (!put_payload(w, bd->data, bd->len))
            return false;
    } else {
        const ProtobufCMessage *sub = *(const ProtobufCMessage *const *)member;
        if (sub)
            put_message(w, sub);
        if (!room(w, FIELD_HEAD_MAX))
            return false;
    }
    emit_varint(w, written(w) - mark);
    return true;
}

static void put_single(writer *w, const ProtobufCFieldDescriptor *f, const void *member)
{
    if (is_length_delimited(f->type)) {
        if (put_length_delimited(w, f->type, member))
            emit_tag(w, f->id, PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED);
    } else if (room(w, FIELD_HEAD_MAX)) {
        emit_tag(w, f->id, emit_scalar(w, f->type, member));
    }
}

/* protobuf-c's test for leaving a proto3 field without presence out. */
static bool is_zeroish(ProtobufCType type, const void *member)
{
    switch (type) {
    case PROTOBUF_C_TYPE_BOOL:
    case PROTOBUF_C_TYPE_ENUM:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_FIXED32:
        return *(const uint32_t *)member == 0;
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_FIXED64:
        return *(const uint64_t *)member == 0;
    case PROTOBUF_C_TYPE_FLOAT:
        return *(const float *)member == 0; /* -0.0 too, as protobuf-c */
    case PROTOBUF_C_TYPE_DOUBLE:
        return *(const double *)member == 0;
    case PROTOBUF_C_TYPE_STRING: {
        const char *s = *(const char *const *)member;
        return !s || !*s;
    }
    case PROTOBUF_C_TYPE_BYTES:
        return ((const ProtobufCBinaryData *)member)->len == 0;
    case PROTOBUF_C_TYPE_MESSAGE:
        return *(const void *const *)member == NULL;
    }
    return false;
}

static bool is_pointer_type(ProtobufCType type)
{
    return type == PROTOBUF_C_TYPE_MESSAGE || type == PROTOBUF_C_TYPE_STRING;
}

/* A string or message member that protobuf-c leaves out when optional. */
static bool pointer_absent(const ProtobufCFieldDescriptor *f, const void *member)
{
    const void *p = *(const void *const *)member;
    return !p || p == f->default_value;
}

size_t rd_pb_element_size(ProtobufCType type)
{
    switch (type) {
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_DOUBLE:
        return 8;
    case PROTOBUF_C_TYPE_BOOL:
        return sizeof(protobuf_c_boolean);
    case PROTOBUF_C_TYPE_STRING:
    case PROTOBUF_C_TYPE_MESSAGE:
        return sizeof(void *);
    case PROTOBUF_C_TYPE_BYTES:
        return sizeof(ProtobufCBinaryData);
    default:
        return 4;
    }
}

static void put_repeated(writer *w, const ProtobufCFieldDescriptor *f, size_t count,
                         const void *member)
{
    if (count == 0)
        return;
    const char *array = *(const char *const *)member;
    size_t size = rd_pb_element_size(f->type);
    if (!(f->flags & PROTOBUF_C_FIELD_FLAG_PACKED)) {
        for (size_t i = count; i-- > 0;)
            put_single(w, f, array + i * size);
        return;
    }
    size_t mark = written(w);
    for (size_t i = count; i-- > 0;) {
        if (!room(w, FIELD_HEAD_MAX))
            return;
        emit_scalar(w, f->type, array + i * size);
    }
    if (!room(w, FIELD_HEAD_MAX))
        return;
    emit_varint(w, written(w) - mark);
    emit_tag(w, f->id, PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED);
}

/* A proto3 field without presence whose type is a string or a varint
 * scalar (most fields of recoveryd's answers): the zero test and the write
 * in one switch. False for the other types, which take the general path. */
static bool put_plain_field(writer *w, const ProtobufCFieldDescriptor *f, const void *member)
{
    uint64_t v;
    switch (f->type) {
    case PROTOBUF_C_TYPE_STRING: { /* written here, not via put_single: 15 % of packing */
        const char *s = *(const char *const *)member;
        if (!s || !*s)
            return true;
        size_t n = strlen(s);
        if (room(w, n + FIELD_HEAD_MAX)) {
            emit_raw(w, s, n);
            emit_varint(w, n);
            emit_tag(w, f->id, PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED);
        }
        return true;
    }
    case PROTOBUF_C_TYPE_ENUM:
    case PROTOBUF_C_TYPE_INT32:
        v = (uint64_t)(int64_t)*(const int32_t *)member;
        break;
    case PROTOBUF_C_TYPE_UINT32:
        v = *(const uint32_t *)member;
        break;
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_UINT64:
        v = *(const uint64_t *)member;
        break;
    case PROTOBUF_C_TYPE_BOOL:
        v = *(const protobuf_c_boolean *)member != 0;
        break;
    default:
        return false;
    }
    if (v != 0 && room(w, FIELD_HEAD_MAX)) {
        emit_varint(w, v);
        emit_tag(w, f->id, PROTOBUF_C_WIRE_TYPE_VARINT);
    }
    return true;
}

/* One field under protobuf_c_message_pack's presence rules, label by label. */
static void put_field(writer *w, const ProtobufCMessage *msg, const ProtobufCFieldDescriptor *f)
{
    const char *base = (const char *)msg;
    const void *member = base + f->offset;
    const void *quantifier = base + f->quantifier_offset;
    bool in_oneof = (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) != 0;

    if (f->label == PROTOBUF_C_LABEL_NONE && !in_oneof) { /* most proto3 fields */
        if (!put_plain_field(w, f, member) && !is_zeroish(f->type, member))
            put_single(w, f, member);
    } else if (f->label == PROTOBUF_C_LABEL_REQUIRED) {
        put_single(w, f, member);
    } else if (f->label != PROTOBUF_C_LABEL_REPEATED && in_oneof) {
        if (*(const uint32_t *)quantifier != f->id)
            return;
        if (is_pointer_type(f->type) && pointer_absent(f, member))
            return;
        put_single(w, f, member);
    } else if (f->label == PROTOBUF_C_LABEL_OPTIONAL) {
        bool absent = is_pointer_type(f->type) ? pointer_absent(f, member)
                                               : !*(const protobuf_c_boolean *)quantifier;
        if (!absent)
            put_single(w, f, member);
    } else {
        put_repeated(w, f, *(const size_t *)quantifier, member);
    }
}

/* Unknown fields come last in protobuf-c's output, so they are written first. */
static void put_unknown_fields(writer *w, const ProtobufCMessage *msg)
{
    for (size_t i = msg->n_unknown_fields; i-- > 0;) {
        const ProtobufCMessageUnknownField *u = &msg->unknown_fields[i];
        if (!put_payload(w, u->data, u->len))
            return;
        emit_tag(w, u->tag, u->wire_type);
    }
}

static void put_message(writer *w, const ProtobufCMessage *msg)
{
    put_unknown_fields(w, msg);
    const ProtobufCMessageDescriptor *d = msg->descriptor;
    for (size_t i = d->n_fields; i-- > 0;)
        put_field(w, msg, &d->fields[i]);
}

size_t rd_pb_pack_backward(const ProtobufCMessage *msg, uint8_t *buf, size_t cap)
{
    writer w = { buf, buf + cap, buf + cap, false };
    put_message(&w, msg);
    return w.full ? SIZE_MAX : written(&w);
}
