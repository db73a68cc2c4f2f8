/* Hot requests read straight into the core's structs (see requests.h).
 *
 * Field numbers are recovery.proto's. Each check below is codec.c's check
 * of the same field, applied to the value as read; a field may come once
 * only, so the value checked is the value kept. */
#include "transport/requests.h"

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "domain/trace.h"
#include "transport/codec.h"
#include "transport/pbreader.h"

enum {
    TOOL_ERROR_MESSAGE = 1,
    TOOL_ERROR_HTTP_STATUS,
    TOOL_ERROR_GRPC_CODE,
    TOOL_ERROR_CODE,
    TOOL_ERROR_EXCEPTION_TYPE,
    TOOL_ERROR_KIND,
    TOOL_ERROR_SOURCE,
    TOOL_ERROR_RETRY_AFTER_MS,
};

enum {
    DECIDE_TOOL_ID = 1,
    DECIDE_ERROR,
    DECIDE_ATTEMPT,
    DECIDE_ELAPSED_MS,
    DECIDE_TURN_ID,
    DECIDE_TURN_REMAINING_MS,
    DECIDE_PLAN, /* declined: the generic path reads plans */
    DECIDE_EXECUTOR_ID,
    DECIDE_OUTCOME_ID,
    DECIDE_PERMIT_ID,
};

enum {
    CLASSIFY_TOOL_ID = 1,
    CLASSIFY_ERROR,
};

enum {
    OUTCOME_TOOL_ID = 1,
    OUTCOME_SUCCESS,
    OUTCOME_ERROR,
    OUTCOME_LATENCY_MS,
    OUTCOME_ATTEMPT,
    OUTCOME_TURN_ID,
    OUTCOME_OUTCOME_ID,
    OUTCOME_PERMIT_ID,
    OUTCOME_EXECUTOR_ID,
};

#define BIT(n) (UINT32_C(1) << (n))
#define VARINT_TAG(n) ((n) << 3 | PROTOBUF_C_WIRE_TYPE_VARINT)
#define BYTES_TAG(n) ((n) << 3 | PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED)

/* Each message's fields by their one-byte tag (every field number is under
 * 16): the number when the tag carries the field's wire type, else 0. */
typedef uint8_t tag_table[128];

#define BYTES_FIELD(n) [BYTES_TAG(n)] = (n)
#define VARINT_FIELD(n) [VARINT_TAG(n)] = (n)

static const tag_table TOOL_ERROR_TAGS = {
    BYTES_FIELD(TOOL_ERROR_MESSAGE), VARINT_FIELD(TOOL_ERROR_HTTP_STATUS),
    VARINT_FIELD(TOOL_ERROR_GRPC_CODE), BYTES_FIELD(TOOL_ERROR_CODE),
    BYTES_FIELD(TOOL_ERROR_EXCEPTION_TYPE), VARINT_FIELD(TOOL_ERROR_KIND),
    VARINT_FIELD(TOOL_ERROR_SOURCE), VARINT_FIELD(TOOL_ERROR_RETRY_AFTER_MS),
};

static const tag_table DECIDE_TAGS = {
    BYTES_FIELD(DECIDE_TOOL_ID), BYTES_FIELD(DECIDE_ERROR), VARINT_FIELD(DECIDE_ATTEMPT),
    VARINT_FIELD(DECIDE_ELAPSED_MS), BYTES_FIELD(DECIDE_TURN_ID),
    VARINT_FIELD(DECIDE_TURN_REMAINING_MS), BYTES_FIELD(DECIDE_PLAN),
    BYTES_FIELD(DECIDE_EXECUTOR_ID), BYTES_FIELD(DECIDE_OUTCOME_ID), BYTES_FIELD(DECIDE_PERMIT_ID),
};

static const tag_table CLASSIFY_TAGS = {
    BYTES_FIELD(CLASSIFY_TOOL_ID), BYTES_FIELD(CLASSIFY_ERROR),
};

static const tag_table OUTCOME_TAGS = {
    BYTES_FIELD(OUTCOME_TOOL_ID), VARINT_FIELD(OUTCOME_SUCCESS), BYTES_FIELD(OUTCOME_ERROR),
    VARINT_FIELD(OUTCOME_LATENCY_MS), VARINT_FIELD(OUTCOME_ATTEMPT), BYTES_FIELD(OUTCOME_TURN_ID),
    BYTES_FIELD(OUTCOME_OUTCOME_ID), BYTES_FIELD(OUTCOME_PERMIT_ID),
    BYTES_FIELD(OUTCOME_EXECUTOR_ID),
};

/* A message's string fields by number: the field's limit, and where its
 * `const char *` is in the input struct. */
typedef struct text_slot {
    size_t max;
    size_t offset;
} text_slot;

#define ID_SLOT(type, member) {RD_ID_MAX, offsetof(type, member)}

static const text_slot OUTCOME_TEXTS[16] = {
    [OUTCOME_TOOL_ID] = ID_SLOT(rd_outcome_input, tool_id),
    [OUTCOME_TURN_ID] = ID_SLOT(rd_outcome_input, turn_id),
    [OUTCOME_OUTCOME_ID] = ID_SLOT(rd_outcome_input, outcome_id),
    [OUTCOME_PERMIT_ID] = {RD_PERMIT_ID_MAX, offsetof(rd_outcome_input, permit_id)},
    [OUTCOME_EXECUTOR_ID] = ID_SLOT(rd_outcome_input, executor_id),
};

/* One field as read: its number, and its value as a varint or as bytes. */
typedef struct field {
    uint32_t number;
    uint64_t varint;
    const uint8_t *at;
    size_t len;
} field;

/* The next field of r (which is not at its end), or false: a tag of more
 * than one byte, a field unknown, sent before (`seen`) or of another wire
 * type than its declaration's, or malformed bytes. */
static inline __attribute__((always_inline)) bool next_field(rd_pbr *r, const tag_table tags,
                                                             uint32_t *seen, field *f)
{
    uint8_t tag = *r->p;
    if (tag >= 0x80 || !tags[tag] || (*seen & BIT(tags[tag])))
        return false;
    r->p++;
    f->number = tags[tag];
    *seen |= BIT(f->number);
    if ((tag & 7) == PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED)
        return rd_pbr_bytes(r, &f->at, &f->len);
    return rd_pbr_varint(r, RD_PBR_VARINT_BYTES, &f->varint);
}

/* Reads one field of a message into msg (err: where its ToolError goes). */
typedef bool (*field_fn)(rd_arena *a, const field *f, void *msg, rd_tool_error *err);

/* Every field of data[0, len) through `read`. Inlined, so each message's
 * `read` is a direct call. */
static inline __attribute__((always_inline)) bool read_message(
    const uint8_t *data, size_t len, const tag_table tags, field_fn read, rd_arena *a, void *msg,
    rd_tool_error *err)
{
    rd_pbr r = {data, data + len};
    uint32_t seen = 0;
    field f = {0}; /* set before use; gcc -O3 cannot tell */
    while (r.p < r.end)
        if (!next_field(&r, tags, &seen, &f) || !read(a, &f, msg, err))
            return false;
    return true;
}

/* A request, whose tool_id (each hot request's) is required. */
static inline __attribute__((always_inline)) bool read_request(
    const uint8_t *data, size_t len, const tag_table tags, field_fn read, rd_arena *a, void *in,
    rd_tool_error *err, const char *const *tool_id)
{
    return read_message(data, len, tags, read, a, in, err) && (*tool_id)[0] != '\0';
}

/* A string field of at most max bytes of valid UTF-8 (which has no NUL, so
 * the C string is the whole field), copied into the arena. */
static bool text(rd_arena *a, const field *f, size_t max, const char **out)
{
    const char *s = (const char *)f->at;
    if (f->len > max || rd_utf8_valid_len(s, f->len) != f->len)
        return false;
    char *copy = rd_arena_strndup(a, s, f->len);
    *out = copy;
    return copy != NULL;
}

/* An id field: text() without control characters (codec.c's check_id);
 * one is declined, and the codec then names the field. */
static bool id_text(rd_arena *a, const field *f, size_t max, const char **out)
{
    return !rd_codec_has_control((const char *)f->at, f->len) && text(a, f, max, out);
}

/* int32 and enum fields keep the varint's low 32 bits, as protobuf-c. */
static int32_t int32_of(const field *f)
{
    return (int32_t)(uint32_t)f->varint;
}

static bool in_range(int64_t v, int64_t lo, int64_t hi)
{
    return v >= lo && v <= hi;
}

/* f as the string field its slot names in the input struct `in`; a field
 * without a slot is declined. */
static bool text_in(rd_arena *a, const field *f, const text_slot slots[16], void *in)
{
    const text_slot *t = &slots[f->number];
    return t->max && id_text(a, f, t->max, (const char **)((char *)in + t->offset));
}

static bool tool_error_field(rd_arena *a, const field *f, void *msg, rd_tool_error *e)
{
    int32_t v = int32_of(f);
    switch (f->number) {
    case TOOL_ERROR_MESSAGE:
        e->message_len = f->len;
        return text(a, f, SIZE_MAX, &e->message); /* the gRPC receive limit bounds it */
    case TOOL_ERROR_HTTP_STATUS:
        e->http_status = v;
        return v == 0 || in_range(v, RD_HTTP_STATUS_MIN, RD_HTTP_STATUS_MAX);
    case TOOL_ERROR_GRPC_CODE:
        e->grpc_code = v;
        return in_range(v, 0, RD_GRPC_CODE_MAX);
    case TOOL_ERROR_CODE:
        return text(a, f, RD_SHORT_FIELD_MAX, &e->code);
    case TOOL_ERROR_EXCEPTION_TYPE:
        return text(a, f, RD_SHORT_FIELD_MAX, &e->exception_type);
    case TOOL_ERROR_KIND:
        e->kind = (rd_error_kind)v;
        return in_range(v, 0, RD_KIND_COUNT - 1);
    case TOOL_ERROR_SOURCE:
        e->source = (rd_error_source)v;
        return in_range(v, 0, RD_SOURCE_COUNT - 1);
    case TOOL_ERROR_RETRY_AFTER_MS:
        e->retry_after_ms = (int64_t)f->varint;
        return in_range(e->retry_after_ms, 0, RD_DURATION_MS_MAX);
    }
    return false;
}

static bool read_tool_error(rd_arena *a, const uint8_t *data, size_t len, rd_tool_error *e)
{
    *e = (rd_tool_error){.message = "", .code = "", .exception_type = ""};
    return read_message(data, len, TOOL_ERROR_TAGS, tool_error_field, a, NULL, e);
}

static bool decide_field(rd_arena *a, const field *f, void *msg, rd_tool_error *err)
{
    rd_decide_input *in = msg;
    int64_t v = (int64_t)f->varint;
    switch (f->number) {
    case DECIDE_ERROR:
        in->error = err;
        return read_tool_error(a, f->at, f->len, err);
    case DECIDE_ATTEMPT:
        in->attempt = (uint32_t)int32_of(f);
        return in_range(int32_of(f), 0, RD_ATTEMPT_MAX);
    case DECIDE_ELAPSED_MS:
        in->elapsed_ms = v;
        return in_range(v, 0, RD_DURATION_MS_MAX);
    case DECIDE_TURN_REMAINING_MS:
        in->has_turn_remaining = true;
        in->turn_remaining_ms = v;
        return in_range(v, -RD_DURATION_MS_MAX, RD_DURATION_MS_MAX);
    case DECIDE_TOOL_ID:
        return id_text(a, f, RD_ID_MAX, &in->tool_id);
    case DECIDE_TURN_ID:
        return id_text(a, f, RD_ID_MAX, &in->turn_id);
    case DECIDE_EXECUTOR_ID:
        return id_text(a, f, RD_ID_MAX, &in->executor_id);
    case DECIDE_OUTCOME_ID:
        return id_text(a, f, RD_ID_MAX, &in->outcome_id);
    case DECIDE_PERMIT_ID:
        return id_text(a, f, RD_PERMIT_ID_MAX, &in->permit_id);
    }
    return false;
}

bool rd_request_decide(const uint8_t *data, size_t len, rd_arena *a, rd_decide_input *in,
                       rd_tool_error *err)
{
    *in = (rd_decide_input){.tool_id = "", .turn_id = "", .executor_id = "", .outcome_id = "",
                            .permit_id = ""};
    return read_request(data, len, DECIDE_TAGS, decide_field, a, in, err, &in->tool_id);
}

static bool classify_field(rd_arena *a, const field *f, void *tool_id, rd_tool_error *err)
{
    if (f->number == CLASSIFY_TOOL_ID)
        return id_text(a, f, RD_ID_MAX, tool_id);
    return read_tool_error(a, f->at, f->len, err);
}

bool rd_request_classify(const uint8_t *data, size_t len, rd_arena *a, const char **tool_id,
                         rd_tool_error *err)
{
    *tool_id = "";
    err->message = NULL; /* set when an error is read: it is required too */
    return read_request(data, len, CLASSIFY_TAGS, classify_field, a, tool_id, err, tool_id) &&
           err->message;
}

static bool outcome_field(rd_arena *a, const field *f, void *msg, rd_tool_error *err)
{
    rd_outcome_input *in = msg;
    int64_t v = (int64_t)f->varint;
    switch (f->number) {
    case OUTCOME_SUCCESS:
        in->success = f->varint != 0; /* protobuf-c: any other value is true */
        return true;
    case OUTCOME_ERROR:
        in->error = err;
        return read_tool_error(a, f->at, f->len, err);
    case OUTCOME_LATENCY_MS:
        in->latency_ms = v;
        return in_range(v, 0, RD_DURATION_MS_MAX);
    case OUTCOME_ATTEMPT:
        in->attempt = (uint32_t)int32_of(f);
        return in_range(int32_of(f), 0, RD_ATTEMPT_MAX);
    }
    return text_in(a, f, OUTCOME_TEXTS, in);
}

bool rd_request_outcome(const uint8_t *data, size_t len, rd_arena *a, rd_outcome_input *in,
                        rd_tool_error *err)
{
    *in = (rd_outcome_input){.tool_id = "", .turn_id = "", .outcome_id = "", .permit_id = "",
                             .executor_id = ""};
    /* success may come after the error: checked once both are read */
    return read_request(data, len, OUTCOME_TAGS, outcome_field, a, in, err, &in->tool_id) &&
           !(in->success && in->error);
}
