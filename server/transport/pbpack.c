/* One-pass backward packing of protobuf-c messages (see pbpack.h).
 *
 * The fields are visited from the last to the first and each value is
 * written in front of what follows it: the value, then (for a
 * length-delimited field) its length, then its tag. The presence rules are
 * protobuf-c's, field by field, so the bytes equal protobuf_c_message_pack's. */
#include "transport/pbpack.h"

#include "transport/pbwire.h"

#define FIELD_HEAD_MAX RD_PBW_HEAD_MAX
_Static_assert(RD_PB_PACK_SLACK >= RD_PBW_HEAD_MAX, "the slack covers one field head");

static inline void emit_little_endian(rd_pbw *w, uint64_t v, size_t n)
{
    uint8_t *p = w->pos -= n;
    for (size_t i = 0; i < n; i++, v >>= 8)
        p[i] = (uint8_t)v;
}

static uint32_t zigzag32(int32_t v)
{
    return v < 0 ? ~((uint32_t)v << 1) : (uint32_t)v << 1;
}

static uint64_t zigzag64(int64_t v)
{
    return v < 0 ? ~((uint64_t)v << 1) : (uint64_t)v << 1;
}

static void put_message(rd_pbw *w, const ProtobufCMessage *msg);

/* A scalar's value alone (no tag), room for FIELD_HEAD_MAX checked by the
 * caller; returns its wire type. */
static ProtobufCWireType emit_scalar(rd_pbw *w, ProtobufCType type, const void *member)
{
    switch (type) {
    case PROTOBUF_C_TYPE_SINT32:
        rd_pbw_varint(w, zigzag32(*(const int32_t *)member));
        return PROTOBUF_C_WIRE_TYPE_VARINT;
    case PROTOBUF_C_TYPE_ENUM:
    case PROTOBUF_C_TYPE_INT32: /* negative: sign-extended to 10 bytes */
        rd_pbw_varint(w, (uint64_t)(int64_t)*(const int32_t *)member);
        return PROTOBUF_C_WIRE_TYPE_VARINT;
    case PROTOBUF_C_TYPE_UINT32:
        rd_pbw_varint(w, *(const uint32_t *)member);
        return PROTOBUF_C_WIRE_TYPE_VARINT;
    case PROTOBUF_C_TYPE_SINT64:
        rd_pbw_varint(w, zigzag64(*(const int64_t *)member));
        return PROTOBUF_C_WIRE_TYPE_VARINT;
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_UINT64:
        rd_pbw_varint(w, *(const uint64_t *)member);
        return PROTOBUF_C_WIRE_TYPE_VARINT;
    case PROTOBUF_C_TYPE_BOOL:
        rd_pbw_varint(w, *(const protobuf_c_boolean *)member ? 1 : 0);
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
static bool put_payload(rd_pbw *w, const void *data, size_t n)
{
    if (!rd_pbw_room(w, n + FIELD_HEAD_MAX))
        return false;
    rd_pbw_raw(w, data, n);
    return true;
}

/* A string, bytes or message value and its length; false if it did not fit,
 * else room for the tag is left. */
static bool put_length_delimited(rd_pbw *w, ProtobufCType type, const void *member)
{
    size_t mark = rd_pbw_written(w);
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
        if (!rd_pbw_room(w, FIELD_HEAD_MAX))
            return false;
    }
    rd_pbw_varint(w, rd_pbw_written(w) - mark);
    return true;
}

static void put_single(rd_pbw *w, const ProtobufCFieldDescriptor *f, const void *member)
{
    if (is_length_delimited(f->type)) {
        if (put_length_delimited(w, f->type, member))
            rd_pbw_tag(w, f->id, PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED);
    } else if (rd_pbw_room(w, FIELD_HEAD_MAX)) {
        rd_pbw_tag(w, f->id, emit_scalar(w, f->type, member));
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

static void put_repeated(rd_pbw *w, const ProtobufCFieldDescriptor *f, size_t count,
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
    size_t mark = rd_pbw_written(w);
    for (size_t i = count; i-- > 0;) {
        if (!rd_pbw_room(w, FIELD_HEAD_MAX))
            return;
        emit_scalar(w, f->type, array + i * size);
    }
    if (!rd_pbw_room(w, FIELD_HEAD_MAX))
        return;
    rd_pbw_varint(w, rd_pbw_written(w) - mark);
    rd_pbw_tag(w, f->id, PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED);
}

/* A proto3 field without presence whose type is a string or a varint
 * scalar (most fields of recoveryd's answers): the zero test and the write
 * in one switch. False for the other types, which take the general path. */
static bool put_plain_field(rd_pbw *w, const ProtobufCFieldDescriptor *f, const void *member)
{
    uint64_t v;
    switch (f->type) {
    case PROTOBUF_C_TYPE_STRING: /* here, not via put_single: 15 % of packing */
        rd_pbw_string_field(w, f->id, *(const char *const *)member);
        return true;
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
    rd_pbw_uint_field(w, f->id, v);
    return true;
}

/* One field under protobuf_c_message_pack's presence rules, label by label. */
static void put_field(rd_pbw *w, const ProtobufCMessage *msg, const ProtobufCFieldDescriptor *f)
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
static void put_unknown_fields(rd_pbw *w, const ProtobufCMessage *msg)
{
    for (size_t i = msg->n_unknown_fields; i-- > 0;) {
        const ProtobufCMessageUnknownField *u = &msg->unknown_fields[i];
        if (!put_payload(w, u->data, u->len))
            return;
        rd_pbw_tag(w, u->tag, u->wire_type);
    }
}

static void put_message(rd_pbw *w, const ProtobufCMessage *msg)
{
    put_unknown_fields(w, msg);
    const ProtobufCMessageDescriptor *d = msg->descriptor;
    for (size_t i = d->n_fields; i-- > 0;)
        put_field(w, msg, &d->fields[i]);
}

size_t rd_pb_pack_backward(const ProtobufCMessage *msg, uint8_t *buf, size_t cap)
{
    rd_pbw w = rd_pbw_over(buf, cap);
    put_message(&w, msg);
    return w.full ? SIZE_MAX : rd_pbw_written(&w);
}
