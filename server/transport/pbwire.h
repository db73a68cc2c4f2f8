/* The backward protobuf writer shared by the generic packer (pbpack.c) and
 * the answers written straight from the engine's structs (answers.c).
 *
 * A writer fills a caller's buffer from its end towards its start: a value
 * is written in front of what follows it, so a nested message's length is
 * known once its bytes are written. Every write is preceded by a room()
 * check for the most it can take, of its own (the *_field functions) or
 * for a whole message (the rd_pbw_put_* ones); the writes themselves check
 * nothing. A failed check sets `full` and leaves `pos` where it was, so a
 * writer that ran out of room keeps refusing cheaply and the caller sees
 * `full` once, at the end. */
#ifndef RD_TRANSPORT_PBWIRE_H
#define RD_TRANSPORT_PBWIRE_H

#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>


typedef struct rd_pbw {
    uint8_t *start; /* the buffer's first byte */
    uint8_t *end;   /* one past its last byte */
    uint8_t *pos;   /* the first byte written so far */
    bool full;      /* some write did not fit: the result is unusable */
} rd_pbw;

/* The most a tag and a scalar (or a length) take: 5 + 10 bytes. */
#define RD_PBW_HEAD_MAX 15

static inline rd_pbw rd_pbw_over(uint8_t *buf, size_t cap)
{
    rd_pbw w = { buf, buf + cap, buf + cap, false };
    return w;
}

static inline size_t rd_pbw_written(const rd_pbw *w)
{
    return (size_t)(w->end - w->pos);
}

static inline bool rd_pbw_room(rd_pbw *w, size_t n)
{
    if ((size_t)(w->pos - w->start) >= n)
        return true;
    w->full = true;
    return false;
}

/* ceil(significant bits / 7) as a multiply and a shift: a division by 7
 * becomes a `div` wherever the profile-guided build optimizes for size. */
static inline unsigned rd_pbw_varint_len(uint64_t v)
{
    return v < 0x80 ? 1 : (unsigned)((63 - __builtin_clzll(v)) * 9 + 73) >> 6;
}

static inline void rd_pbw_varint(rd_pbw *w, uint64_t v)
{
    if (v < 0x80) {
        *--w->pos = (uint8_t)v;
        return;
    }
    uint8_t *p = w->pos -= rd_pbw_varint_len(v);
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p = (uint8_t)v;
}

static inline void rd_pbw_raw(rd_pbw *w, const void *data, size_t n)
{
    if (n) {
        w->pos -= n;
        memcpy(w->pos, data, n);
    }
}

static inline void rd_pbw_tag(rd_pbw *w, uint32_t id, ProtobufCWireType wire)
{
    rd_pbw_varint(w, ((uint64_t)id << 3) | (uint64_t)wire);
}

/* ---- whole fields, with proto3's rule that a zero value is left out ---- */

/* A one-byte tag and a one-byte value (field 1..15, value 0..127, the
 * usual case), written with one move of pos: a byte stored through pos may
 * alias the writer itself, so each separate byte write reloads it. */
static inline bool rd_pbw_short_head(rd_pbw *w, uint32_t id, ProtobufCWireType wire, uint64_t v)
{
    if (id >= 16 || v >= 0x80)
        return false;
    uint8_t *p = w->pos - 2;
    p[0] = (uint8_t)(id << 3 | (uint32_t)wire);
    p[1] = (uint8_t)v;
    w->pos = p;
    return true;
}

/* Fields written into room reserved beforehand: the caller has checked,
 * with one rd_pbw_room() for a whole message, for RD_PBW_HEAD_MAX bytes per
 * field plus the bytes of its texts. */
static inline void rd_pbw_put_uint(rd_pbw *w, uint32_t id, uint64_t v)
{
    if (v != 0 && !rd_pbw_short_head(w, id, PROTOBUF_C_WIRE_TYPE_VARINT, v)) {
        rd_pbw_varint(w, v);
        rd_pbw_tag(w, id, PROTOBUF_C_WIRE_TYPE_VARINT);
    }
}

/* int32 and enums: a negative value is sign-extended to ten bytes. */
static inline void rd_pbw_put_int32(rd_pbw *w, uint32_t id, int32_t v)
{
    rd_pbw_put_uint(w, id, (uint64_t)(int64_t)v);
}

static inline void rd_pbw_put_int64(rd_pbw *w, uint32_t id, int64_t v)
{
    rd_pbw_put_uint(w, id, (uint64_t)v);
}

static inline void rd_pbw_put_bool(rd_pbw *w, uint32_t id, bool v)
{
    rd_pbw_put_uint(w, id, v ? 1 : 0);
}

/* s[0, n): left out when empty. */
static inline void rd_pbw_put_bytes(rd_pbw *w, uint32_t id, const char *s, size_t n)
{
    if (n != 0) {
        rd_pbw_raw(w, s, n);
        if (!rd_pbw_short_head(w, id, PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED, n)) {
            rd_pbw_varint(w, n);
            rd_pbw_tag(w, id, PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED);
        }
    }
}

/* The same, each checking its own room. */
static inline void rd_pbw_uint_field(rd_pbw *w, uint32_t id, uint64_t v)
{
    if (v != 0 && rd_pbw_room(w, RD_PBW_HEAD_MAX))
        rd_pbw_put_uint(w, id, v);
}

static inline void rd_pbw_bytes_field(rd_pbw *w, uint32_t id, const char *s, size_t n)
{
    if (n != 0 && rd_pbw_room(w, n + RD_PBW_HEAD_MAX))
        rd_pbw_put_bytes(w, id, s, n);
}

/* A NUL-terminated string; NULL and "" are left out. */
static inline void rd_pbw_string_field(rd_pbw *w, uint32_t id, const char *s)
{
    if (s && *s)
        rd_pbw_bytes_field(w, id, s, strlen(s));
}

/* A nested message: take the mark before writing its fields (backwards),
 * then close it, which writes its length and tag. Present even when empty. */
static inline size_t rd_pbw_mark(const rd_pbw *w)
{
    return rd_pbw_written(w);
}

static inline void rd_pbw_close_message(rd_pbw *w, uint32_t id, size_t mark)
{
    size_t len = rd_pbw_written(w) - mark;
    if (rd_pbw_room(w, RD_PBW_HEAD_MAX) &&
        !rd_pbw_short_head(w, id, PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED, len)) {
        rd_pbw_varint(w, len);
        rd_pbw_tag(w, id, PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED);
    }
}

#endif
