/* The hot answers packed straight from the core's structs
 * (transport/answers.c) against the reference path: the protobuf-c message
 * answer_reference.h builds from the same struct, packed by protobuf-c
 * itself. Structs
 * are generated at random (empty and long strings, zero, negative and
 * 64-bit values, every enum value, up to a few dozen cascade steps and trace
 * events, events of one instant and of several), and every answer must be
 * the same bytes, refused (SIZE_MAX) by a buffer one byte short without a
 * write outside it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "domain/arena.h"
#include "transport/answers.h"
#include "answer_reference.h"

#define RANDOM_STRUCTS 600
#define LIST_MAX 40

/* ---- a small deterministic generator ---- */

static uint64_t rng_state = 0x9E3779B97F4A7C15u;

static uint64_t next_u64(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static uint32_t below(uint32_t n)
{
    return (uint32_t)(next_u64() % n);
}

/* Zero often (proto3 leaves it out), else small, large or negative. */
static int64_t any_i64(void)
{
    switch (below(5)) {
    case 0:
        return 0;
    case 1:
        return below(200);
    case 2:
        return -(int64_t)below(100000) - 1;
    case 3:
        return (int64_t)(next_u64() >> 1);
    default:
        return (int64_t)next_u64();
    }
}

static uint32_t any_u32(void)
{
    return below(3) == 0 ? 0 : (below(2) ? below(300) : (uint32_t)next_u64());
}

/* NULL, "", or printable text of 1..cap-1 bytes with a multi-byte character
 * now and then, in the arena. */
static const char *any_text(rd_arena *a, size_t cap, bool may_be_null)
{
    uint32_t pick = below(6);
    if (pick == 0)
        return may_be_null ? NULL : "";
    if (pick == 1)
        return "";
    size_t n = 1 + below((uint32_t)cap - 1);
    char *s = rd_arena_alloc(a, n + 1);
    assert_non_null(s);
    for (size_t i = 0; i < n; i++) {
        if (i + 2 <= n && below(20) == 0) {
            s[i++] = (char)0xC3; /* "é" */
            s[i] = (char)0xA9;
        } else {
            s[i] = (char)(' ' + below(95));
        }
    }
    return s;
}

static void fill_text(char *dst, size_t cap)
{
    const char *pattern = "upstream connect error or disconnect/reset before headers; ";
    size_t n = below((uint32_t)cap);
    for (size_t i = 0; i < n; i++)
        dst[i] = pattern[i % strlen(pattern)];
    dst[n] = '\0';
}

/* ---- random core structs ---- */

static void any_classification(rd_arena *a, rd_classify_result *r)
{
    rd_classification *k = &r->classification;
    k->retryability = (rd_retryability)below(3);
    k->category = (rd_category)below(RD_CAT_COUNT);
    k->kind = (rd_error_kind)below(RD_KIND_COUNT);
    k->executed = below(2);
    k->retry_after_ms = any_i64();
    k->suggestion = any_text(a, 300, false);
    k->rule_id = any_text(a, 40, false);
    k->overridden = below(2);
    k->decided_by = (rd_tier)below(RD_TIER_COUNT);
    k->effects = (rd_effects)below(4);
    k->effect_safety = (rd_effect_safety)below(5);
    k->effect_reason = any_text(a, 200, true);
    r->llm_message = any_text(a, 600, true);
    r->llm_message_len = r->llm_message ? strlen(r->llm_message) : 0;
}

static void any_breaker(rd_arena *a, rd_breaker_view *v)
{
    v->tool_id = any_text(a, RD_ID_MAX, true);
    v->status = (rd_breaker_status)below(4);
    v->consecutive_failures = any_u32();
    v->consecutive_successes = any_u32();
    v->failure_threshold = any_u32();
    v->success_threshold = any_u32();
    v->opened_at_ms = any_i64();
    v->open_until_ms = any_i64();
    v->probe_in_flight = below(2);
    v->opens_total = (uint64_t)any_i64();
    v->generation = (uint64_t)any_i64();
    v->forced = (rd_breaker_status)below(4);
    v->forced_until_ms = any_i64();
    if (below(2)) {
        v->latency_samples = (uint64_t)any_i64();
        v->latency_p50_ms = any_i64();
        v->latency_p90_ms = any_i64();
        v->latency_p99_ms = any_i64();
    }
    v->scope_level = any_text(a, RD_SCOPE_DIMENSION_MAX, false);
    v->scope_level_len = strlen(v->scope_level);
}

static void any_event(rd_trace_event *e, int64_t instant)
{
    memset(e, 0, sizeof *e);
    e->type = (rd_event_type)below(RD_EV_COUNT);
    fill_text(e->tool_id, sizeof e->tool_id);
    fill_text(e->error, sizeof e->error);
    fill_text(e->detail, sizeof e->detail);
    e->tool_id_len = (uint16_t)strlen(e->tool_id);
    e->error_len = (uint16_t)strlen(e->error);
    e->detail_len = (uint16_t)strlen(e->detail);
    e->retryability = (rd_retryability)below(3);
    e->breaker = (rd_breaker_status)below(4);
    e->retry_count = any_u32();
    e->decision = (rd_action)below(8);
    /* Often the instant of the event before (one Decide answer), sometimes
     * another, and now and then before the epoch. */
    e->timestamp_ms = below(3) ? instant : (below(4) ? -(int64_t)below(1000000) : instant + below(5000));
    e->timeout_ms = any_i64();
    e->sequence = (uint64_t)any_i64();
    if (below(2)) { /* a call with trace context: both ids, 32 and 16 hex digits */
        for (size_t i = 0; i < RD_TRACE_ID_HEX; i++)
            e->trace_id[i] = "0123456789abcdef"[below(16)];
        for (size_t i = 0; i < RD_SPAN_ID_HEX; i++)
            e->span_id[i] = "0123456789abcdef"[below(16)];
    }
}

static rd_trace_event *any_events(rd_arena *a, size_t *n)
{
    *n = below(4) == 0 ? below(LIST_MAX) : below(4);
    rd_trace_event *ev = rd_arena_alloc(a, (*n ? *n : 1) * sizeof *ev);
    assert_non_null(ev);
    int64_t instant = 1763800000000 + below(1000000);
    for (size_t i = 0; i < *n; i++)
        any_event(&ev[i], instant);
    return ev;
}

static rd_cascade_step *any_cascade(rd_arena *a, size_t *n)
{
    *n = below(3) == 0 ? below(LIST_MAX) : 0;
    rd_cascade_step *s = rd_arena_alloc(a, (*n ? *n : 1) * sizeof *s);
    assert_non_null(s);
    for (size_t i = 0; i < *n; i++) {
        s[i].tool_id = any_text(a, 64, true);
        s[i].action = (rd_cascade_action)below(4);
        s[i].default_value = any_text(a, 100, true);
        s[i].reason = any_text(a, 100, true);
    }
    return s;
}

static void any_decision(rd_arena *a, rd_decision *d)
{
    memset(d, 0, sizeof *d);
    d->action = (rd_action)below(9);
    d->delay_ms = any_i64();
    d->delay_us = any_i64();
    d->alternative_tool_id = any_text(a, 64, true);
    d->timeout_ms = any_i64();
    d->permit_id = any_text(a, 40, true);
    d->has_classification = below(2);
    if (d->has_classification)
        any_classification(a, &d->classification);
    any_breaker(a, &d->breaker);
    d->reason = any_text(a, 120, true);
    d->cascade = any_cascade(a, &d->n_cascade);
    d->trace = any_events(a, &d->n_trace);
    d->duplicate = below(2);
    d->shadow_action = (rd_action)below(8);
    d->shadow_reason = any_text(a, 120, true);
    d->verify_tool_id = any_text(a, RD_ID_MAX, true);
    d->idempotency_key = any_text(a, RD_ID_MAX, true);
}

/* ---- the comparison ---- */

typedef size_t (*answer_fn)(uint8_t *buf, size_t cap, const void *subject);

/* The reference bytes of msg, and the answer written into buffers of the
 * exact size (fits), of a size to spare (ends the buffer, touches nothing
 * in front), and one byte short (refused). Heap blocks of those sizes let
 * ASan see any write outside them. */
static void assert_answer_matches(const ProtobufCMessage *msg, answer_fn write,
                                  const void *subject)
{
    assert_non_null(msg);
    size_t len = protobuf_c_message_get_packed_size(msg);
    uint8_t *expected = malloc(len + 1);
    assert_non_null(expected);
    assert_int_equal(protobuf_c_message_pack(msg, expected), len);

    enum { SPARE = RD_ANSWER_SLACK };
    uint8_t *roomy = malloc(len + SPARE);
    assert_non_null(roomy);
    memset(roomy, 0xAB, len + SPARE);
    size_t n = write(roomy, len + SPARE, subject);
    assert_int_equal(n, len);
    assert_memory_equal(roomy + SPARE, expected, len);
    for (size_t i = 0; i < SPARE; i++)
        assert_int_equal(roomy[i], 0xAB);
    free(roomy);

    uint8_t *exact = malloc(len + 1);
    assert_non_null(exact);
    n = write(exact, len, subject);
    if (n != SIZE_MAX) { /* the writer may want a field head's room to spare */
        assert_int_equal(n, len);
        assert_memory_equal(exact, expected, len);
    }
    free(exact);
    if (len > 0) {
        uint8_t *short_by_one = malloc(len - 1 ? len - 1 : 1);
        assert_non_null(short_by_one);
        assert_int_equal(write(short_by_one, len - 1, subject), SIZE_MAX);
        free(short_by_one);
    }
    free(expected);
}

static size_t classify_answer(uint8_t *buf, size_t cap, const void *subject)
{
    return rd_answer_classify(buf, cap, subject);
}

typedef struct {
    const char *turn_id;
    const rd_decision *d;
} decide_subject;

static size_t decide_answer(uint8_t *buf, size_t cap, const void *subject)
{
    const decide_subject *s = subject;
    return rd_answer_decide(buf, cap, s->turn_id, s->d);
}

static size_t outcome_answer(uint8_t *buf, size_t cap, const void *subject)
{
    return rd_answer_outcome(buf, cap, subject);
}

typedef struct {
    const rd_breaker_view *views;
    size_t n;
} breakers_subject;

static size_t breakers_answer(uint8_t *buf, size_t cap, const void *subject)
{
    const breakers_subject *s = subject;
    return rd_answer_breakers(buf, cap, s->views, s->n);
}

/* ---- tests ---- */

/* RANDOM_STRUCTS cases of one kind, each with an arena of its own. */
static void for_random_structs(void (*check_one)(rd_arena *a))
{
    rd_arena a;
    rd_arena_init(&a, 0);
    for (int i = 0; i < RANDOM_STRUCTS; i++) {
        check_one(&a);
        rd_arena_reset(&a);
    }
    rd_arena_free(&a);
}

static void check_classify(rd_arena *a)
{
    rd_classify_result r;
    any_classification(a, &r);
    assert_answer_matches((ProtobufCMessage *)ref_classify_out(a, &r), classify_answer, &r);
}

static void check_decide(rd_arena *a)
{
    rd_decision d;
    any_decision(a, &d);
    decide_subject s = {any_text(a, RD_ID_MAX, true), &d};
    assert_answer_matches((ProtobufCMessage *)ref_decide_out(a, s.turn_id, &d),
                          decide_answer, &s);
}

static void check_outcome(rd_arena *a)
{
    rd_outcome_result r;
    memset(&r, 0, sizeof r);
    any_breaker(a, &r.breaker);
    r.duplicate = below(2);
    assert_answer_matches((ProtobufCMessage *)ref_outcome_out(a, &r), outcome_answer, &r);
}

static void check_breakers(rd_arena *a)
{
    size_t n = below(4) == 0 ? below(300) : below(3);
    rd_breaker_view *v = rd_arena_alloc(a, (n ? n : 1) * sizeof *v);
    assert_non_null(v);
    for (size_t j = 0; j < n; j++)
        any_breaker(a, &v[j]);
    breakers_subject s = {v, n};
    assert_answer_matches((ProtobufCMessage *)ref_breakers_out(a, v, n), breakers_answer,
                          &s);
}

static void classify_answers_match_protobuf_c(void **state)
{
    (void)state;
    for_random_structs(check_classify);
}

static void decide_answers_match_protobuf_c(void **state)
{
    (void)state;
    for_random_structs(check_decide);
}

static void outcome_answers_match_protobuf_c(void **state)
{
    (void)state;
    for_random_structs(check_outcome);
}

static void breaker_answers_match_protobuf_c(void **state)
{
    (void)state;
    for_random_structs(check_breakers);
}

/* A Decide answer as the benchmark's transient error gets it, decoded
 * field by field: the bytes carry what the struct says. */
static void decide_answer_carries_the_decision(void **state)
{
    (void)state;
    rd_trace_event ev[2];
    memset(ev, 0, sizeof ev);
    ev[0].type = RD_EV_TOOL_ERROR;
    strcpy(ev[0].tool_id, "flight_search");
    strcpy(ev[0].error, "Connection timeout");
    ev[0].tool_id_len = (uint16_t)strlen(ev[0].tool_id);
    ev[0].error_len = (uint16_t)strlen(ev[0].error);
    ev[0].retryability = RD_TRANSIENT;
    ev[0].breaker = RD_BREAKER_CLOSED;
    ev[0].decision = RD_ACTION_RETRY;
    ev[0].timestamp_ms = 1762338645000; /* 2025-11-05T10:30:45Z */
    ev[1] = ev[0];
    ev[1].type = RD_EV_RETRY;
    ev[1].retry_count = 2;
    ev[1].sequence = 7;
    rd_decision d;
    memset(&d, 0, sizeof d);
    d.action = RD_ACTION_RETRY;
    d.delay_ms = 250;
    d.delay_us = 249612;
    d.breaker.tool_id = "flight_search";
    d.breaker.status = RD_BREAKER_CLOSED;
    d.breaker.failure_threshold = 5;
    d.reason = "transient error: retry 2 of 4";
    d.trace = ev;
    d.n_trace = 2;

    uint8_t buf[2048];
    size_t n = rd_answer_decide(buf, sizeof buf, "turn-1", &d);
    assert_int_not_equal(n, SIZE_MAX);
    Recovery__V1__DecideResponse *r =
        recovery__v1__decide_response__unpack(NULL, n, buf + sizeof buf - n);
    assert_non_null(r);
    assert_int_equal(r->action, RECOVERY__V1__ACTION__ACTION_RETRY);
    assert_int_equal(r->delay_ms, 250);
    assert_int_equal(r->delay_us, 249612);
    assert_null(r->classification);
    assert_string_equal(r->breaker->tool_id, "flight_search");
    assert_int_equal(r->breaker->failure_threshold, 5);
    assert_string_equal(r->reason, "transient error: retry 2 of 4");
    assert_int_equal(r->n_trace, 2);
    assert_string_equal(r->trace[0]->event_type, "ToolError");
    assert_string_equal(r->trace[0]->turn_id, "turn-1");
    assert_string_equal(r->trace[0]->error, "Connection timeout");
    assert_string_equal(r->trace[0]->classification, "transient");
    assert_string_equal(r->trace[0]->circuit_breaker_state, "closed");
    assert_string_equal(r->trace[0]->decision, "retry");
    assert_string_equal(r->trace[0]->timestamp, "2025-11-05T10:30:45.000Z");
    assert_string_equal(r->trace[1]->event_type, "Retry");
    assert_int_equal(r->trace[1]->retry_count, 2);
    assert_int_equal(r->trace[1]->sequence, 7);
    assert_string_equal(r->trace[1]->timestamp, "2025-11-05T10:30:45.000Z");
    recovery__v1__decide_response__free_unpacked(r, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(classify_answers_match_protobuf_c),
        cmocka_unit_test(decide_answers_match_protobuf_c),
        cmocka_unit_test(outcome_answers_match_protobuf_c),
        cmocka_unit_test(breaker_answers_match_protobuf_c),
        cmocka_unit_test(decide_answer_carries_the_decision),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
