/* Hot requests read straight into the core's structs (see requests.h).
 *
 * Field numbers are recovery.proto's. Each check below is codec.c's check
 * of the same field, applied to the value as read; a field may come once
 * only, so the value checked is the value kept. */
#include "transport/requests.h"

#include <protobuf-c/protobuf-c.h>

#include "core/trace.h"
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

#define BIT(n) (UINT32_C(1) << (n))
#define VARINT_TAG(n) ((n) << 3 | PROTOBUF_C_WIRE_TYPE_VARINT)
#define BYTES_TAG(n) ((n) << 3 | PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED)

/* Each message's fields by their one-byte tag (every field number is under
 * 16): the number when the tag carries the field's wire type, else 0. */
typedef uint8_t tag_table[128];

static const tag_table TOOL_ERROR_TAGS = {
    [BYTES_TAG(TOOL_ERROR_MESSAGE)] = TOOL_ERROR_MESSAGE,
    [VARINT_TAG(TOOL_ERROR_HTTP_STATUS)] = TOOL_ERROR_HTTP_STATUS,
    [VARINT_TAG(TOOL_ERROR_GRPC_CODE)] = TOOL_ERROR_GRPC_CODE,
    [BYTES_TAG(TOOL_ERROR_CODE)] = TOOL_ERROR_CODE,
    [BYTES_TAG(TOOL_ERROR_EXCEPTION_TYPE)] = TOOL_ERROR_EXCEPTION_TYPE,
    [VARINT_TAG(TOOL_ERROR_KIND)] = TOOL_ERROR_KIND,
    [VARINT_TAG(TOOL_ERROR_SOURCE)] = TOOL_ERROR_SOURCE,
    [VARINT_TAG(TOOL_ERROR_RETRY_AFTER_MS)] = TOOL_ERROR_RETRY_AFTER_MS,
};

static const tag_table DECIDE_TAGS = {
    [BYTES_TAG(DECIDE_TOOL_ID)] = DECIDE_TOOL_ID,
    [BYTES_TAG(DECIDE_ERROR)] = DECIDE_ERROR,
    [VARINT_TAG(DECIDE_ATTEMPT)] = DECIDE_ATTEMPT,
    [VARINT_TAG(DECIDE_ELAPSED_MS)] = DECIDE_ELAPSED_MS,
    [BYTES_TAG(DECIDE_TURN_ID)] = DECIDE_TURN_ID,
    [VARINT_TAG(DECIDE_TURN_REMAINING_MS)] = DECIDE_TURN_REMAINING_MS,
    [BYTES_TAG(DECIDE_PLAN)] = DECIDE_PLAN,
    [BYTES_TAG(DECIDE_EXECUTOR_ID)] = DECIDE_EXECUTOR_ID,
    [BYTES_TAG(DECIDE_OUTCOME_ID)] = DECIDE_OUTCOME_ID,
    [BYTES_TAG(DECIDE_PERMIT_ID)] = DECIDE_PERMIT_ID,
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

/* int32 and enum fields keep the varint's low 32 bits, as protobuf-c. */
static int32_t int32_of(const field *f)
{
    return (int32_t)(uint32_t)f->varint;
}

static bool in_range(int64_t v, int64_t lo, int64_t hi)
{
    return v >= lo && v <= hi;
}

static bool tool_error_field(rd_arena *a, const field *f, rd_tool_error *e)
{
    int32_t v = int32_of(f);
    switch (f->number) {
    case TOOL_ERROR_MESSAGE:
        e->message_len = f->len;
        return text(a, f, RD_MESSAGE_MAX, &e->message);
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
    rd_pbr r = {data, data + len};
    uint32_t seen = 0;
    field f;
    while (r.p < r.end)
        if (!next_field(&r, TOOL_ERROR_TAGS, &seen, &f) || !tool_error_field(a, &f, e))
            return false;
    return true;
}

static bool decide_field(rd_arena *a, const field *f, rd_decide_input *in, rd_tool_error *err)
{
    int64_t v = (int64_t)f->varint;
    switch (f->number) {
    case DECIDE_TOOL_ID:
        return text(a, f, RD_ID_MAX, &in->tool_id);
    case DECIDE_ERROR:
        in->error = err;
        return read_tool_error(a, f->at, f->len, err);
    case DECIDE_ATTEMPT:
        in->attempt = (uint32_t)int32_of(f);
        return in_range(int32_of(f), 0, RD_ATTEMPT_MAX);
    case DECIDE_ELAPSED_MS:
        in->elapsed_ms = v;
        return in_range(v, 0, RD_DURATION_MS_MAX);
    case DECIDE_TURN_ID:
        return text(a, f, RD_ID_MAX, &in->turn_id);
    case DECIDE_TURN_REMAINING_MS:
        in->has_turn_remaining = true;
        in->turn_remaining_ms = v;
        return in_range(v, -RD_DURATION_MS_MAX, RD_DURATION_MS_MAX);
    case DECIDE_EXECUTOR_ID:
        return text(a, f, RD_ID_MAX, &in->executor_id);
    case DECIDE_OUTCOME_ID:
        return text(a, f, RD_ID_MAX, &in->outcome_id);
    case DECIDE_PERMIT_ID:
        return text(a, f, RD_PERMIT_ID_MAX, &in->permit_id);
    }
    return false;
}

bool rd_request_decide(const uint8_t *data, size_t len, rd_arena *a, rd_decide_input *in,
                       rd_tool_error *err)
{
    *in = (rd_decide_input){.tool_id = "", .turn_id = "", .executor_id = "", .outcome_id = "",
                            .permit_id = ""};
    rd_pbr r = {data, data + len};
    uint32_t seen = 0;
    field f;
    while (r.p < r.end)
        if (!next_field(&r, DECIDE_TAGS, &seen, &f) || !decide_field(a, &f, in, err))
            return false;
    return in->tool_id[0] != '\0'; /* required */
}
