/* The one-pass packer (transport/pbpack.c) against protobuf-c's own
 * protobuf_c_message_pack(): the same bytes for every message recoveryd
 * packs, filled at random through their descriptors (every field type,
 * presence rule, oneof, repeated and packed field, unknown fields, lengths
 * on both sides of each varint size), a buffer one byte short refused
 * without a write outside it, and a few messages whose bytes are written
 * out by hand. The one-pass reader (transport/pbread.c) is checked here
 * too, against protobuf_c_message_unpack() on the same bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "all_types2.pb-c.h"
#include "all_types3.pb-c.h"
#include "domain/arena.h"
#include "pb_messages.h"
#include "transport/pbpack.h"
#include "transport/pbread.h"
#include "transport/pbwire.h"

#define RANDOM_MESSAGES_PER_TYPE 400
#define MAX_DEPTH 4

/* ---- the comparison ---- */

/* Packs msg both ways and checks the packer's contract: the same bytes, at
 * the end of any buffer with RD_PB_PACK_SLACK to spare, and SIZE_MAX from
 * one a byte short of the size. */
static void assert_packs_like_protobuf_c(const ProtobufCMessage *msg)
{
    size_t len = protobuf_c_message_get_packed_size(msg);
    uint8_t *expected = malloc(len + 1);
    assert_non_null(expected);
    assert_int_equal(protobuf_c_message_pack(msg, expected), len);

    /* The size and the slack, in a heap block of that size: ASan sees any
     * write outside it. */
    size_t cap = len + RD_PB_PACK_SLACK;
    uint8_t *fitting = malloc(cap);
    assert_non_null(fitting);
    assert_int_equal(rd_pb_pack_backward(msg, fitting, cap), len);
    assert_memory_equal(fitting + RD_PB_PACK_SLACK, expected, len);
    free(fitting);

    /* Exactly the size: packed, or refused, never wrong. */
    uint8_t *exact = malloc(len + 1);
    assert_non_null(exact);
    size_t n = rd_pb_pack_backward(msg, exact, len);
    if (n != SIZE_MAX) {
        assert_int_equal(n, len);
        assert_memory_equal(exact, expected, len);
    }
    free(exact);

    /* Larger: the bytes end the buffer, and what is in front is untouched. */
    enum { SLACK = RD_PB_PACK_SLACK + 37 };
    uint8_t *roomy = malloc(len + SLACK);
    assert_non_null(roomy);
    memset(roomy, 0xA5, len + SLACK);
    assert_int_equal(rd_pb_pack_backward(msg, roomy, len + SLACK), len);
    assert_memory_equal(roomy + SLACK, expected, len);
    for (size_t i = 0; i < SLACK; i++)
        assert_int_equal(roomy[i], 0xA5);
    free(roomy);

    if (len > 0) {
        uint8_t *short_buf = malloc(len - 1 + 1);
        assert_non_null(short_buf);
        assert_int_equal(rd_pb_pack_backward(msg, short_buf, len - 1), SIZE_MAX);
        free(short_buf);
    }
    free(expected);
}

/* ---- random messages through their descriptors ---- */

typedef struct {
    uint64_t state;
    rd_arena *arena;
} gen;

static uint64_t next_random(gen *g)
{
    g->state ^= g->state << 13;
    g->state ^= g->state >> 7;
    g->state ^= g->state << 17;
    return g->state;
}

static unsigned below(gen *g, unsigned n)
{
    return (unsigned)(next_random(g) % n);
}

/* Values at the edges of every varint size, and some at random. */
static uint64_t random_integer(gen *g)
{
    static const uint64_t edges[] = {
        0, 1, 127, 128, 16383, 16384, 0x7fffffff, 0x80000000, 0xffffffff,
        (uint64_t)-1, (uint64_t)INT64_MIN, (uint64_t)INT64_MAX, (uint64_t)-128,
    };
    if (below(g, 2))
        return edges[below(g, sizeof edges / sizeof edges[0])];
    return next_random(g) >> below(g, 64);
}

/* Text lengths on both sides of the 1-, 2- and 3-byte length prefixes. */
static size_t random_length(gen *g)
{
    static const size_t edges[] = { 0, 1, 126, 127, 128, 129, 16383, 16384, 20000 };
    if (below(g, 4) == 0)
        return edges[below(g, sizeof edges / sizeof edges[0])];
    return below(g, 40);
}

static char *random_text(gen *g)
{
    size_t n = random_length(g);
    char *s = rd_arena_alloc(g->arena, n + 1);
    for (size_t i = 0; i < n; i++)
        s[i] = (char)(1 + below(g, 255)); /* any byte but NUL */
    s[n] = '\0';
    return s;
}

static ProtobufCMessage *random_message(gen *g, const ProtobufCMessageDescriptor *d, int depth);

/* One value of the field's type into member (an element or the field). */
static void random_value(gen *g, const ProtobufCFieldDescriptor *f, void *member, int depth)
{
    uint64_t v = random_integer(g);
    switch (f->type) {
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_ENUM:
    case PROTOBUF_C_TYPE_FLOAT: {
        uint32_t v32 = (uint32_t)v;
        if (f->type == PROTOBUF_C_TYPE_FLOAT && below(g, 4) == 0)
            v32 = 0x80000000u; /* -0.0: left out like 0 */
        memcpy(member, &v32, 4);
        break;
    }
    case PROTOBUF_C_TYPE_DOUBLE:
        if (below(g, 4) == 0)
            v = 0x8000000000000000ull;
        memcpy(member, &v, 8);
        break;
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_FIXED64:
        memcpy(member, &v, 8);
        break;
    case PROTOBUF_C_TYPE_BOOL:
        *(protobuf_c_boolean *)member = (protobuf_c_boolean)below(g, 3); /* 2 packs as 1 */
        break;
    case PROTOBUF_C_TYPE_STRING:
        *(char **)member = random_text(g);
        break;
    case PROTOBUF_C_TYPE_BYTES: {
        ProtobufCBinaryData *bd = member;
        bd->len = random_length(g);
        bd->data = bd->len ? (uint8_t *)random_text(g) : NULL;
        if (bd->data)
            bd->len = strlen((char *)bd->data);
        break;
    }
    case PROTOBUF_C_TYPE_MESSAGE:
        *(ProtobufCMessage **)member =
            depth < MAX_DEPTH ? random_message(g, f->descriptor, depth + 1) : NULL;
        break;
    }
}

static void random_repeated(gen *g, const ProtobufCFieldDescriptor *f, char *base, int depth)
{
    size_t count = below(g, 4);
    if (f->type != PROTOBUF_C_TYPE_MESSAGE && below(g, 8) == 0)
        count = 130; /* a packed payload past 128 bytes */
    if (depth >= MAX_DEPTH && f->type == PROTOBUF_C_TYPE_MESSAGE)
        count = 0;
    size_t size = rd_pb_element_size(f->type);
    char *array = count ? rd_arena_alloc(g->arena, count * size) : NULL;
    for (size_t i = 0; i < count; i++)
        random_value(g, f, array + i * size, depth);
    *(size_t *)(base + f->quantifier_offset) = count;
    *(char **)(base + f->offset) = array;
}

/* A oneof: one member chosen (or none), its case set; now and then the case
 * names a string or message member left NULL, which protobuf-c leaves out. */
static void random_oneof(gen *g, const ProtobufCMessageDescriptor *d, unsigned first, char *base,
                         int depth)
{
    unsigned members[16], n = 0;
    unsigned qoffset = d->fields[first].quantifier_offset;
    for (unsigned i = first; i < d->n_fields && n < 16; i++)
        if ((d->fields[i].flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
            d->fields[i].quantifier_offset == qoffset)
            members[n++] = i;
    unsigned pick = below(g, n + 1);
    if (pick == n)
        return; /* none set */
    const ProtobufCFieldDescriptor *f = &d->fields[members[pick]];
    *(uint32_t *)(base + qoffset) = f->id;
    if (below(g, 8) != 0)
        random_value(g, f, base + f->offset, depth);
}

static void random_unknown_fields(gen *g, ProtobufCMessage *m)
{
    if (below(g, 6) != 0)
        return;
    unsigned n = 1 + below(g, 3);
    m->unknown_fields = rd_arena_alloc(g->arena, n * sizeof *m->unknown_fields);
    m->n_unknown_fields = n;
    for (unsigned i = 0; i < n; i++) {
        ProtobufCMessageUnknownField *u = &m->unknown_fields[i];
        u->tag = 1000 + below(g, 1u << 20);
        u->wire_type = below(g, 2) ? PROTOBUF_C_WIRE_TYPE_32BIT : PROTOBUF_C_WIRE_TYPE_64BIT;
        u->len = u->wire_type == PROTOBUF_C_WIRE_TYPE_32BIT ? 4 : 8;
        u->data = rd_arena_alloc(g->arena, u->len);
        for (size_t b = 0; b < u->len; b++)
            u->data[b] = (uint8_t)next_random(g);
    }
}

static void random_field(gen *g, const ProtobufCMessageDescriptor *d, unsigned i, char *base,
                         int depth)
{
    const ProtobufCFieldDescriptor *f = &d->fields[i];
    if (f->label == PROTOBUF_C_LABEL_REPEATED) {
        random_repeated(g, f, base, depth);
    } else if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
        /* the group's first member decides for the whole group */
        for (unsigned j = 0; j < i; j++)
            if ((d->fields[j].flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
                d->fields[j].quantifier_offset == f->quantifier_offset)
                return;
        random_oneof(g, d, i, base, depth);
    } else if (below(g, 3) != 0) {
        random_value(g, f, base + f->offset, depth);
        if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->quantifier_offset)
            *(protobuf_c_boolean *)(base + f->quantifier_offset) = below(g, 2);
    }
}

static ProtobufCMessage *random_message(gen *g, const ProtobufCMessageDescriptor *d, int depth)
{
    ProtobufCMessage *m = rd_arena_alloc(g->arena, d->sizeof_message);
    d->message_init(m);
    for (unsigned i = 0; i < d->n_fields; i++)
        random_field(g, d, i, (char *)m, depth);
    random_unknown_fields(g, m);
    return m;
}

static void check_random_messages(const ProtobufCMessageDescriptor *d, uint64_t seed)
{
    rd_arena arena;
    rd_arena_init(&arena, 1 << 16);
    gen g = { seed, &arena };
    for (int i = 0; i < RANDOM_MESSAGES_PER_TYPE; i++) {
        assert_packs_like_protobuf_c(random_message(&g, d, 0));
        rd_arena_reset(&arena);
    }
    rd_arena_free(&arena);
}

static void test_api_messages_pack_like_protobuf_c(void **state)
{
    (void)state;
    for (size_t t = 0; t < RD_TEST_PB_MESSAGES_COUNT; t++)
        check_random_messages(rd_test_pb_messages[t], 0x9E3779B97F4A7C15ull + t);
}

/* What the API does not use yet: every scalar type, proto2's required and
 * optional fields with defaults, packed fields, oneofs of every kind. */
static void test_every_field_type_packs_like_protobuf_c(void **state)
{
    (void)state;
    check_random_messages(&pbtest__all2__descriptor, 0xD1B54A32D192ED03ull);
    check_random_messages(&pbtest3__all3__descriptor, 0x8CB92BA72F3D8DD7ull);
}

/* ---- the one-pass reader (transport/pbread.c) ---- */

/* pbread's contract on data[0, len) read as d: what protobuf-c rejects is
 * declined, and what is accepted packs to protobuf-c's decoding's bytes.
 * Returns whether it was accepted. */
static bool reads_like_protobuf_c(const ProtobufCMessageDescriptor *d, rd_arena *arena,
                                  const uint8_t *data, size_t len)
{
    ProtobufCMessage *ref = protobuf_c_message_unpack(d, NULL, len, data);
    ProtobufCMessage *fast = rd_pb_read(d, arena, data, len);
    if (!ref) {
        assert_null(fast);
        return false;
    }
    if (fast) {
        size_t n = protobuf_c_message_get_packed_size(ref);
        assert_int_equal(protobuf_c_message_get_packed_size(fast), n);
        uint8_t *want = malloc(n + 1), *got = malloc(n + 1);
        assert_non_null(want);
        assert_non_null(got);
        protobuf_c_message_pack(ref, want);
        protobuf_c_message_pack(fast, got);
        assert_memory_equal(got, want, n);
        free(want);
        free(got);
    }
    protobuf_c_message_free_unpacked(ref, NULL);
    return fast != NULL;
}

/* Random messages of every type, packed, then read back whole, cut short
 * at every length and with one byte changed at every offset. */
static void test_reader_agrees_with_protobuf_c(void **state)
{
    (void)state;
    rd_arena arena;
    rd_arena_init(&arena, 1 << 16);
    gen g = { 0x2545F4914F6CDD1Dull, &arena };
    size_t accepted = 0;
    for (size_t t = 0; t < RD_TEST_PB_MESSAGES_COUNT; t++) {
        const ProtobufCMessageDescriptor *d = rd_test_pb_messages[t];
        for (int i = 0; i < RANDOM_MESSAGES_PER_TYPE / 8; i++) {
            ProtobufCMessage *m = random_message(&g, d, 0);
            size_t len = protobuf_c_message_get_packed_size(m);
            uint8_t *bytes = malloc(len + 1);
            assert_non_null(bytes);
            protobuf_c_message_pack(m, bytes);
            accepted += reads_like_protobuf_c(d, &arena, bytes, len);
            for (size_t cut = 0; cut < len && cut < 64; cut++)
                reads_like_protobuf_c(d, &arena, bytes, cut);
            for (size_t at = 0; at < len && at < 64; at++) {
                uint8_t was = bytes[at];
                bytes[at] = (uint8_t)next_random(&g);
                reads_like_protobuf_c(d, &arena, bytes, len);
                bytes[at] = was;
            }
            free(bytes);
            rd_arena_reset(&arena);
        }
    }
    assert_true(accepted > 0);
    rd_arena_free(&arena);
}

/* The requests executors send are read in one pass, not declined. */
static void test_reader_takes_the_usual_requests(void **state)
{
    (void)state;
    Recovery__V1__ToolError err = RECOVERY__V1__TOOL_ERROR__INIT;
    err.message = "503 Service Unavailable";
    err.http_status = 503;
    err.kind = RECOVERY__V1__ERROR_KIND__ERROR_KIND_EXECUTION_ERROR;
    Recovery__V1__PlanStep step = RECOVERY__V1__PLAN_STEP__INIT, *steps[] = {&step, &step};
    char *deps[] = {"search", "geo"};
    step.tool_id = "book";
    step.depends_on = deps;
    step.n_depends_on = 2;
    step.has_default_case = RECOVERY__V1__PLAN_STEP__HAS_DEFAULT_DEFAULT_VALUE;
    step.default_value = "none";
    Recovery__V1__DecideRequest req = RECOVERY__V1__DECIDE_REQUEST__INIT;
    req.tool_id = "search";
    req.error = &err;
    req.attempt = 1;
    req.elapsed_ms = -5; /* ten bytes on the wire */
    req.turn_budget_case = RECOVERY__V1__DECIDE_REQUEST__TURN_BUDGET_TURN_REMAINING_MS;
    req.turn_remaining_ms = 0; /* a oneof member is sent even when zero */
    req.plan = steps;
    req.n_plan = 2;
    uint8_t bytes[512];
    size_t len = protobuf_c_message_pack(&req.base, bytes);
    rd_arena arena;
    rd_arena_init(&arena, 0);
    assert_true(reads_like_protobuf_c(&recovery__v1__decide_request__descriptor, &arena, bytes, len));
    Recovery__V1__DecideRequest *r = (void *)rd_pb_read(&recovery__v1__decide_request__descriptor,
                                                       &arena, bytes, len);
    assert_non_null(r);
    assert_string_equal(r->error->message, "503 Service Unavailable");
    assert_int_equal(r->turn_budget_case, RECOVERY__V1__DECIDE_REQUEST__TURN_BUDGET_TURN_REMAINING_MS);
    assert_int_equal(r->n_plan, 2);
    assert_string_equal(r->plan[1]->depends_on[1], "geo");
    assert_int_equal(r->elapsed_ms, -5);
    rd_arena_free(&arena);
}

/* Bytes the reader leaves to protobuf-c, which merges them, rejects them
 * or keeps what the reader does not model. */
static void test_reader_declines_what_it_does_not_model(void **state)
{
    (void)state;
    static const struct {
        const char *what;
        uint8_t bytes[16];
        size_t len;
    } cases[] = {
        /* error { message: "a" } error { http_status: 503 } */
        {"a nested message sent twice (merged)",
         {0x12, 0x03, 0x0A, 0x01, 'a', 0x12, 0x03, 0x10, 0xF7, 0x03}, 10},
        /* tool_id "a" with its length in six bytes */
        {"a length in more than five bytes (rejected)",
         {0x0A, 0x81, 0x80, 0x80, 0x80, 0x80, 0x00, 'a'}, 8},
        {"attempt as an eleven-byte varint (rejected)",
         {0x18, 0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, 12},
        {"field 99 (kept as an unknown field)", {0x98, 0x06, 0x01}, 3},
        {"tool_id as a varint (rejected)", {0x08, 0x01}, 2},
        {"a length past the end (rejected)", {0x0A, 0x05, 'a'}, 3},
    };
    rd_arena arena;
    rd_arena_init(&arena, 0);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const ProtobufCMessageDescriptor *d = &recovery__v1__decide_request__descriptor;
        if (rd_pb_read(d, &arena, cases[i].bytes, cases[i].len))
            fail_msg("accepted %s", cases[i].what);
        reads_like_protobuf_c(d, &arena, cases[i].bytes, cases[i].len);
    }
    rd_arena_free(&arena);
}

/* ---- messages written out by hand ---- */

/* msg packs to exactly these bytes, which protobuf-c agrees with. */
static void assert_packs_to(const ProtobufCMessage *msg, const uint8_t *expected, size_t len)
{
    uint8_t buf[64];
    size_t n = rd_pb_pack_backward(msg, buf, sizeof buf);
    assert_int_equal(n, len);
    assert_memory_equal(buf + sizeof buf - n, expected, n);
    assert_packs_like_protobuf_c(msg);
}

static void test_empty_message_is_no_bytes(void **state)
{
    (void)state;
    Recovery__V1__DecideResponse resp = RECOVERY__V1__DECIDE_RESPONSE__INIT;
    uint8_t buf[1];
    assert_int_equal(rd_pb_pack_backward(&resp.base, buf, 0), 0);
    assert_int_equal(rd_pb_pack_backward(&resp.base, buf, sizeof buf), 0);
}

/* ClassifyResponse { classification { retryability: 1, llm_message: "x" } }:
 * field 1 (message, 5 bytes) holding field 1 varint 1 and field 9 "x". */
static void test_nested_message_bytes(void **state)
{
    (void)state;
    Recovery__V1__Classification c = RECOVERY__V1__CLASSIFICATION__INIT;
    c.retryability = 1;
    c.llm_message = "x";
    Recovery__V1__ClassifyResponse resp = RECOVERY__V1__CLASSIFY_RESPONSE__INIT;
    resp.classification = &c;
    static const uint8_t expected[] = { 0x0a, 0x05, 0x08, 0x01, 0x4a, 0x01, 'x' };
    assert_packs_to(&resp.base, expected, sizeof expected);
}

/* A negative enum value is a ten-byte varint (int32 sign-extended). */
static void test_negative_enum_is_ten_bytes(void **state)
{
    (void)state;
    Recovery__V1__DecideResponse resp = RECOVERY__V1__DECIDE_RESPONSE__INIT;
    resp.action = (Recovery__V1__Action)-1;
    static const uint8_t expected[] = { 0x08, 0xff, 0xff, 0xff, 0xff, 0xff,
                                        0xff, 0xff, 0xff, 0xff, 0x01 };
    assert_packs_to(&resp.base, expected, sizeof expected);
}

/* A trace event's text of 200 bytes inside DecideResponse.trace: the
 * event's own length prefix takes two bytes, the text's too. */
static void test_two_byte_length_prefixes(void **state)
{
    (void)state;
    char text[201];
    memset(text, 'e', 200);
    text[200] = '\0';
    Recovery__V1__TraceEvent ev = RECOVERY__V1__TRACE_EVENT__INIT;
    ev.error = text;
    Recovery__V1__TraceEvent *events[] = { &ev };
    Recovery__V1__DecideResponse resp = RECOVERY__V1__DECIDE_RESPONSE__INIT;
    resp.n_trace = 1;
    resp.trace = events;
    uint8_t buf[512];
    size_t n = rd_pb_pack_backward(&resp.base, buf, sizeof buf);
    const uint8_t *p = buf + sizeof buf - n;
    /* trace = field 10, length 203 (0xcb 0x01); error = field 4, length 200 (0xc8 0x01) */
    static const uint8_t head[] = { 0x52, 0xcb, 0x01, 0x22, 0xc8, 0x01, 'e' };
    assert_int_equal(n, 3 + 3 + 200);
    assert_memory_equal(p, head, sizeof head);
    assert_packs_like_protobuf_c(&resp.base);
}

/* Varints at every bit length's edges (2^k - 1, 2^k, 2^k + 1): the length
 * the writer reserves is the number of bytes it writes, and the bytes are
 * base-128 groups, least significant first, high bit set on all but the
 * last. */
static void test_varints_at_every_bit_length(void **state)
{
    (void)state;
    for (unsigned k = 0; k < 64; k++) {
        uint64_t edge = (uint64_t)1 << k;
        uint64_t values[] = { edge - 1, edge, edge + 1, k == 63 ? UINT64_MAX : 0 };
        for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
            uint64_t v = values[i];
            uint8_t mine[16], theirs[16];
            rd_pbw w = rd_pbw_over(mine, sizeof mine);
            rd_pbw_varint(&w, v);
            size_t n = 0;
            uint64_t rest = v; /* the reference: 7 bits a byte, low first */
            do {
                theirs[n++] = (uint8_t)(rest >= 0x80 ? (rest & 0x7f) | 0x80 : rest);
                rest >>= 7;
            } while (rest);
            assert_int_equal(rd_pbw_varint_len(v), n);
            assert_int_equal(rd_pbw_written(&w), n);
            assert_memory_equal(w.pos, theirs, n);
        }
    }
}

/* Every buffer size short of the answer is refused, none written past. */
static void test_every_short_buffer_is_refused(void **state)
{
    (void)state;
    Recovery__V1__BreakerState b = RECOVERY__V1__BREAKER_STATE__INIT;
    b.tool_id = "flight_search";
    b.state = RECOVERY__V1__BREAKER_STATUS__BREAKER_STATUS_OPEN;
    Recovery__V1__RecordOutcomeResponse resp = RECOVERY__V1__RECORD_OUTCOME_RESPONSE__INIT;
    resp.breaker = &b;
    resp.duplicate = 1;
    size_t len = protobuf_c_message_get_packed_size(&resp.base);
    for (size_t cap = 0; cap < len; cap++) {
        uint8_t *buf = malloc(cap + 1);
        assert_non_null(buf);
        assert_int_equal(rd_pb_pack_backward(&resp.base, buf, cap), SIZE_MAX);
        free(buf);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_api_messages_pack_like_protobuf_c),
        cmocka_unit_test(test_every_field_type_packs_like_protobuf_c),
        cmocka_unit_test(test_empty_message_is_no_bytes),
        cmocka_unit_test(test_nested_message_bytes),
        cmocka_unit_test(test_negative_enum_is_ten_bytes),
        cmocka_unit_test(test_two_byte_length_prefixes),
        cmocka_unit_test(test_varints_at_every_bit_length),
        cmocka_unit_test(test_every_short_buffer_is_refused),
        cmocka_unit_test(test_reader_agrees_with_protobuf_c),
        cmocka_unit_test(test_reader_takes_the_usual_requests),
        cmocka_unit_test(test_reader_declines_what_it_does_not_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
