/* Hot requests read straight into the engine's structs (see requests.h).
 *
 * Every field number and wire type is recovery.proto's, through the
 * constants the build writes from its descriptors (gen/rd_pbfields.h);
 * every check is the field's rule in codec.h, which codec.c applies to the
 * same field on the generic path. A field may come once only, so the value
 * checked is the value kept. */
#include "transport/requests.h"

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "domain/trace.h"
#include "rd_pbfields.h"
#include "transport/codec.h"
#include "transport/pbreader.h"

#define F RD_PB_FIELD
#define BIT(n) (UINT32_C(1) << (n))

/* Each message's fields by their one-byte tag: the number when the tag
 * carries the field's wire type, else 0. A Decide's plan is left out, so it
 * is declined: the generic path reads plans. */
typedef uint8_t tag_table[128];

#define FIELD(msg, name) [RD_PB_TAG(msg, name)] = RD_PB_FIELD(msg, name)

/* One bit of `seen` per field number. Fields of two-byte tags (20 and
 * up: the MCP annotations, the idempotency key, scopes) are declined, so the
 * generic path reads a request that sends them. */
_Static_assert(RD_PB_LAST(ToolError) < 32 && RD_PB_LAST(DecideRequest) < 32 &&
               RD_PB_LAST(ClassifyRequest) < 16 && RD_PB_LAST(RecordOutcomeRequest) < 32,
               "the hot requests' field numbers fit `seen`");

static const tag_table TOOL_ERROR_TAGS = {
    FIELD(ToolError, message), FIELD(ToolError, http_status), FIELD(ToolError, grpc_code),
    FIELD(ToolError, code), FIELD(ToolError, exception_type), FIELD(ToolError, kind),
    FIELD(ToolError, source), FIELD(ToolError, retry_after_ms),
};

static const tag_table DECIDE_TAGS = {
    FIELD(DecideRequest, tool_id), FIELD(DecideRequest, error), FIELD(DecideRequest, attempt),
    FIELD(DecideRequest, elapsed_ms), FIELD(DecideRequest, turn_id),
    FIELD(DecideRequest, turn_remaining_ms), FIELD(DecideRequest, executor_id),
    FIELD(DecideRequest, outcome_id), FIELD(DecideRequest, permit_id),
};

static const tag_table CLASSIFY_TAGS = {
    FIELD(ClassifyRequest, tool_id), FIELD(ClassifyRequest, error),
};

static const tag_table OUTCOME_TAGS = {
    FIELD(RecordOutcomeRequest, tool_id), FIELD(RecordOutcomeRequest, success),
    FIELD(RecordOutcomeRequest, error), FIELD(RecordOutcomeRequest, latency_ms),
    FIELD(RecordOutcomeRequest, attempt), FIELD(RecordOutcomeRequest, turn_id),
    FIELD(RecordOutcomeRequest, outcome_id), FIELD(RecordOutcomeRequest, permit_id),
    FIELD(RecordOutcomeRequest, executor_id),
};

/* A message's id fields by number: the field's rule, and where its
 * `const char *` is in the input struct. */
typedef struct text_slot {
    const rd_field_rule *rule;
    size_t offset;
} text_slot;

#define TEXT_SLOT(msg, name, rule_, type) \
    [RD_PB_FIELD(msg, name)] = {&(rule_), offsetof(type, name)}

static const text_slot OUTCOME_TEXTS[16] = {
    TEXT_SLOT(RecordOutcomeRequest, tool_id, RD_RULE_TOOL_ID, rd_outcome_input),
    TEXT_SLOT(RecordOutcomeRequest, turn_id, RD_RULE_TURN_ID, rd_outcome_input),
    TEXT_SLOT(RecordOutcomeRequest, outcome_id, RD_RULE_OUTCOME_ID, rd_outcome_input),
    TEXT_SLOT(RecordOutcomeRequest, permit_id, RD_RULE_PERMIT_ID, rd_outcome_input),
    TEXT_SLOT(RecordOutcomeRequest, executor_id, RD_RULE_EXECUTOR_ID, rd_outcome_input),
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

/* A request, whose tool_id (each hot request's, RD_RULE_TOOL_ID) is
 * required: one never sent is declined here. */
static inline __attribute__((always_inline)) bool read_request(
    const uint8_t *data, size_t len, const tag_table tags, field_fn read, rd_arena *a, void *in,
    rd_tool_error *err, const char *const *tool_id)
{
    return read_message(data, len, tags, read, a, in, err) && (*tool_id)[0] != '\0';
}

/* A string field that passes its rule (codec.h), copied into the arena.
 * A field the rule refuses is declined, and the codec then names it. */
static bool text(rd_arena *a, const field *f, const rd_field_rule *rule, const char **out)
{
    const char *s = (const char *)f->at;
    if (!rd_rule_text_ok(rule, s, f->len))
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

static bool number(const rd_field_rule *rule, int64_t v)
{
    return rd_rule_number_ok(rule, v);
}

/* f as the string field its slot names in the input struct `in`; a field
 * without a slot is declined. */
static bool text_in(rd_arena *a, const field *f, const text_slot slots[16], void *in)
{
    const text_slot *t = &slots[f->number];
    return t->rule && text(a, f, t->rule, (const char **)((char *)in + t->offset));
}

static bool tool_error_field(rd_arena *a, const field *f, void *msg, rd_tool_error *e)
{
    int32_t v = int32_of(f);
    switch (f->number) {
    case F(ToolError, message):
        e->message_len = f->len;
        return text(a, f, &RD_RULE_ERROR_MESSAGE, &e->message);
    case F(ToolError, http_status):
        e->http_status = v;
        return number(&RD_RULE_ERROR_HTTP_STATUS, v);
    case F(ToolError, grpc_code):
        e->grpc_code = v;
        return number(&RD_RULE_ERROR_GRPC_CODE, v);
    case F(ToolError, code):
        return text(a, f, &RD_RULE_ERROR_CODE, &e->code);
    case F(ToolError, exception_type):
        return text(a, f, &RD_RULE_ERROR_EXCEPTION_TYPE, &e->exception_type);
    case F(ToolError, kind):
        e->kind = (rd_error_kind)v;
        return number(&RD_RULE_ERROR_KIND, v);
    case F(ToolError, source):
        e->source = (rd_error_source)v;
        return number(&RD_RULE_ERROR_SOURCE, v);
    case F(ToolError, retry_after_ms):
        e->retry_after_ms = (int64_t)f->varint;
        return number(&RD_RULE_ERROR_RETRY_AFTER_MS, e->retry_after_ms);
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
    case F(DecideRequest, error):
        in->error = err;
        return read_tool_error(a, f->at, f->len, err);
    case F(DecideRequest, attempt):
        in->attempt = (uint32_t)int32_of(f);
        return number(&RD_RULE_ATTEMPT, int32_of(f));
    case F(DecideRequest, elapsed_ms):
        in->elapsed_ms = v;
        return number(&RD_RULE_ELAPSED_MS, v);
    case F(DecideRequest, turn_remaining_ms):
        in->has_turn_remaining = true;
        in->turn_remaining_ms = v;
        return number(&RD_RULE_TURN_REMAINING_MS, v);
    case F(DecideRequest, tool_id):
        return text(a, f, &RD_RULE_TOOL_ID, &in->tool_id);
    case F(DecideRequest, turn_id):
        return text(a, f, &RD_RULE_TURN_ID, &in->turn_id);
    case F(DecideRequest, executor_id):
        return text(a, f, &RD_RULE_EXECUTOR_ID, &in->executor_id);
    case F(DecideRequest, outcome_id):
        return text(a, f, &RD_RULE_OUTCOME_ID, &in->outcome_id);
    case F(DecideRequest, permit_id):
        return text(a, f, &RD_RULE_PERMIT_ID, &in->permit_id);
    }
    return false;
}

bool rd_request_decide(const uint8_t *data, size_t len, rd_arena *a, rd_decide_input *in,
                       rd_tool_error *err)
{
    *in = (rd_decide_input){.tool_id = "", .turn_id = "", .executor_id = "", .outcome_id = "",
                            .permit_id = "", .idempotency_key = ""};
    return read_request(data, len, DECIDE_TAGS, decide_field, a, in, err, &in->tool_id);
}

static bool classify_field(rd_arena *a, const field *f, void *tool_id, rd_tool_error *err)
{
    if (f->number == F(ClassifyRequest, tool_id))
        return text(a, f, &RD_RULE_TOOL_ID, tool_id);
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
    case F(RecordOutcomeRequest, success):
        in->success = f->varint != 0; /* protobuf-c: any other value is true */
        return true;
    case F(RecordOutcomeRequest, error):
        in->error = err;
        return read_tool_error(a, f->at, f->len, err);
    case F(RecordOutcomeRequest, latency_ms):
        in->latency_ms = v;
        return number(&RD_RULE_LATENCY_MS, v);
    case F(RecordOutcomeRequest, attempt):
        in->attempt = (uint32_t)int32_of(f);
        return number(&RD_RULE_ATTEMPT, int32_of(f));
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
