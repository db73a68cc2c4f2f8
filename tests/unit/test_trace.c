/* Trace names, safe text, timestamps and the turn summary (000 8.2, 003 4.2,
 * 004 decision B). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "domain/arena.h"
#include "domain/breaker.h"
#include "domain/classify.h"
#include "domain/err.h"
#include "domain/trace.h"
#include "mixed_text.h"

/* ---- names ---- */

static void test_event_type_names(void **state)
{
    static const char *const expected[RD_EV_COUNT] = {
        "ToolError", "ToolTimeout", "CircuitOpened", "CircuitHalfOpened", "CircuitClosed",
        "Retry", "RetrySucceeded", "ToolSucceeded", "ToolFailed", "AlternativeUsed",
        "DefaultUsed", "Skipped", "Escalated", "GaveUp", "FailFast", "TurnTimeout",
        "EffectChecked",
    };
    for (int t = 0; t < RD_EV_COUNT; t++)
        assert_string_equal(rd_event_type_name((rd_event_type)t), expected[t]);
    assert_string_equal(rd_event_type_name(RD_EV_COUNT), "Unknown");
}

static void test_action_names(void **state)
{
    assert_string_equal(rd_action_name(RD_ACTION_PROCEED), "proceed");
    assert_string_equal(rd_action_name(RD_ACTION_RETRY), "retry");
    assert_string_equal(rd_action_name(RD_ACTION_USE_ALTERNATIVE), "use_alternative");
    assert_string_equal(rd_action_name(RD_ACTION_FAIL_FAST), "fail_fast");
    assert_string_equal(rd_action_name(RD_ACTION_ESCALATE), "escalate");
    assert_string_equal(rd_action_name(RD_ACTION_GIVE_UP), "give_up");
    assert_string_equal(rd_action_name(RD_ACTION_PARTIAL), "partial");
    assert_string_equal(rd_action_name(RD_ACTION_UNSPECIFIED), "");
}

/* ---- safe text ---- */

static void test_copy_plain_text(void **state)
{
    char buf[16];
    rd_trace_copy_text(buf, sizeof buf, "Connection timeout", 10);
    assert_string_equal(buf, "Connection");
    rd_trace_copy_text(buf, sizeof buf, NULL, 5);
    assert_string_equal(buf, "");
}

/* "é" is 2 bytes, "€" 3, "😀" 4: a character that does not fit whole is
 * dropped whole. */
static void test_truncation_on_utf8_boundary(void **state)
{
    char buf[6];
    rd_trace_copy_text(buf, sizeof buf, "abcd\xC3\xA9", 6); /* "abcdé", room for 5 */
    assert_string_equal(buf, "abcd");
    rd_trace_copy_text(buf, sizeof buf, "ab\xE2\x82\xAC" "c", 6); /* "ab€c" fits exactly */
    assert_string_equal(buf, "ab\xE2\x82\xAC");
    rd_trace_copy_text(buf, sizeof buf, "a\xF0\x9F\x98\x80" "b", 6); /* "a😀b" */
    assert_string_equal(buf, "a\xF0\x9F\x98\x80");
    rd_trace_copy_text(buf, sizeof buf, "ab\xF0\x9F\x98\x80", 6); /* emoji would end at 6 */
    assert_string_equal(buf, "ab");
}

static void test_nul_bytes_replaced(void **state)
{
    char buf[16];
    rd_trace_copy_text(buf, sizeof buf, "a\0b\0c", 5);
    assert_int_equal(strlen(buf), 5);
    assert_string_equal(buf, "a?b?c");
}

static void test_invalid_utf8_replaced(void **state)
{
    char buf[32];
    /* stray continuation, overlong '/', surrogate, a lead byte cut short */
    rd_trace_copy_text(buf, sizeof buf, "x\x80y\xC0\xAFz\xED\xA0\x80w\xE2\x82", 12);
    assert_string_equal(buf, "x?y??z???w??");
    /* above U+10FFFF and 0xFF */
    rd_trace_copy_text(buf, sizeof buf, "\xF4\x90\x80\x80\xFF", 5);
    assert_string_equal(buf, "?????");
}

static void test_zero_capacity_untouched(void **state)
{
    char buf[2] = {'k', 'k'};
    rd_trace_copy_text(buf, 0, "abc", 3);
    assert_int_equal(buf[0], 'k');
    rd_trace_copy_text(buf, 1, "abc", 3);
    assert_string_equal(buf, "");
}

/* The ASCII-run fast path against the per-character reference, on mixed
 * text in heap blocks of exactly its length (ASan sees any over-read), for
 * every room from none to more than enough, with both replacements in use. */
static void check_sanitize_against_reference(const char *src, size_t len, const char *repl)
{
    size_t repl_len = strlen(repl);
    char got[512], want[512];
    for (size_t room = 0; room <= 3 * len + 4 && room < sizeof got; room++) {
        memset(got, 'Z', sizeof got);
        size_t used_got, used_want;
        size_t n = rd_utf8_sanitize(got, room, src, len, repl, repl_len, &used_got);
        size_t m = ref_utf8_sanitize(want, room, src, len, repl, repl_len, &used_want);
        assert_int_equal(n, m);
        assert_int_equal(used_got, used_want);
        assert_memory_equal(got, want, n);
        assert_int_equal(got[room], 'Z'); /* nothing written past room */
    }
}

static void test_sanitize_matches_reference(void **state)
{
    mixed_rng rng = {UINT64_C(0x9E3779B97F4A7C15)};
    for (int round = 0; round < 400; round++) {
        char text[120];
        size_t len = mixed_text(&rng, text, sizeof text);
        char *src = malloc(len ? len : 1);
        assert_non_null(src);
        memcpy(src, text, len);
        check_sanitize_against_reference(src, len, "?");
        check_sanitize_against_reference(src, len, "\xEF\xBF\xBD");

        size_t valid = 0;
        while (valid < len && ref_utf8_char_len((const unsigned char *)src + valid, len - valid))
            valid += ref_utf8_char_len((const unsigned char *)src + valid, len - valid);
        assert_int_equal(rd_utf8_valid_len(src, len), valid);

        char copy[64], want[64];
        size_t used;
        rd_trace_copy_text(copy, sizeof copy, src, len);
        want[ref_utf8_sanitize(want, sizeof want - 1, src, len, "?", 1, &used)] = '\0';
        assert_string_equal(copy, want);
        free(src);
    }
}

/* Every byte value as a lone byte and as the start of each longer form. */
static void test_char_len_every_lead_byte(void **state)
{
    unsigned char s[4];
    for (int c = 0; c < 256; c++)
        for (int tail = 0x00; tail <= 0xFF; tail += 0x10) {
            s[0] = (unsigned char)c;
            s[1] = s[2] = s[3] = (unsigned char)tail;
            for (size_t avail = 1; avail <= 4; avail++)
                assert_int_equal(rd_utf8_char_len(s, avail), ref_utf8_char_len(s, avail));
        }
}

/* ---- timestamps ---- */

static void test_rfc3339_known_instants(void **state)
{
    char buf[32];
    assert_int_equal(rd_format_rfc3339(buf, sizeof buf, 1762338645000), 24); /* 003 4.4 */
    assert_string_equal(buf, "2025-11-05T10:30:45.000Z");
    rd_format_rfc3339(buf, sizeof buf, 1762338645123);
    assert_string_equal(buf, "2025-11-05T10:30:45.123Z");
    rd_format_rfc3339(buf, sizeof buf, 951868799007); /* leap day */
    assert_string_equal(buf, "2000-02-29T23:59:59.007Z");
    rd_format_rfc3339(buf, sizeof buf, 0);
    assert_string_equal(buf, "1970-01-01T00:00:00.000Z");
    rd_format_rfc3339(buf, sizeof buf, -1);
    assert_string_equal(buf, "1969-12-31T23:59:59.999Z");
    /* past year 9999 gmtime_r writes it: the length is still the text's */
    char wide[64];
    size_t len = rd_format_rfc3339(wide, sizeof wide, 253402300800000);
    assert_string_equal(wide, "10000-01-01T00:00:00.000Z");
    assert_int_equal(len, strlen(wide));
}

/* Each name's length is its text's, for every value and one past the end. */
static void test_name_texts_carry_their_lengths(void **state)
{
    (void)state;
    for (int v = -1; v <= RD_EV_COUNT; v++) {
        rd_text t = rd_event_type_text((rd_event_type)v);
        assert_int_equal(t.len, strlen(t.s));
        assert_string_equal(t.s, rd_event_type_name((rd_event_type)v));
    }
    for (int v = -1; v <= RD_ACTION_PARTIAL + 1; v++) {
        rd_text t = rd_action_text((rd_action)v);
        assert_int_equal(t.len, strlen(t.s));
        assert_string_equal(t.s, rd_action_name((rd_action)v));
    }
    for (int v = -1; v <= RD_BREAKER_HALF_OPEN + 1; v++) {
        rd_text t = rd_breaker_status_text((rd_breaker_status)v);
        assert_int_equal(t.len, strlen(t.s));
    }
    for (int v = -1; v <= RD_PERMANENT + 1; v++) {
        rd_text t = rd_retryability_text((rd_retryability)v);
        assert_int_equal(t.len, strlen(t.s));
    }
    assert_string_equal(rd_event_type_text(RD_EV_TOOL_ERROR).s, "ToolError");
    assert_string_equal(rd_action_text(RD_ACTION_RETRY).s, "retry");
    assert_string_equal(rd_breaker_status_text(RD_BREAKER_HALF_OPEN).s, "half_open");
    assert_string_equal(rd_retryability_text(RD_TRANSIENT).s, "transient");
}

/* The text of consecutive instants, some in the same second as the one
 * before (the formatter reuses that second's text), against gmtime_r. */
static void test_rfc3339_matches_gmtime(void **state)
{
    (void)state;
    uint64_t x = 0x853C49E6748FEA9Bull;
    int64_t ms = 1762338645000;
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int64_t step[] = {0, 1, 999, 1000, -1, -1000, (int64_t)(x % 100000000000ull) - 50000000000};
        ms += step[x % 7];
        char got[32], want[64];
        size_t len = rd_format_rfc3339(got, sizeof got, ms);
        assert_int_equal(len, strlen(got));
        int64_t secs = ms / 1000 - (ms % 1000 < 0), rem = ms - secs * 1000;
        time_t t = (time_t)secs;
        struct tm tm;
        assert_non_null(gmtime_r(&t, &tm));
        snprintf(want, sizeof want, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)rem);
        assert_string_equal(got, want);
    }
}

/* ---- turn summary ---- */

typedef struct fixture {
    rd_arena arena;
    rd_trace_event events[32];
    size_t n;
    rd_turn_summary s;
} fixture;

static int setup(void **state)
{
    static fixture f;
    memset(&f, 0, sizeof f);
    rd_arena_init(&f.arena, 4096);
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    rd_arena_free(&f->arena);
    return 0;
}

static void add(fixture *f, rd_event_type type, const char *tool_id, bool executed,
                const char *detail)
{
    rd_trace_event *ev = &f->events[f->n++];
    memset(ev, 0, sizeof *ev);
    ev->type = type;
    strcpy(ev->tool_id, tool_id);
    strcpy(ev->detail, detail ? detail : "");
    ev->executed = executed;
}

static void summarize(fixture *f)
{
    assert_int_equal(rd_turn_summarize(f->events, f->n, &f->arena, &f->s), RD_OK);
}

/* 003 4.2: flight done, hotel and activity cut off by the turn deadline. */
static void test_summary_partial_results_sentence(void **state)
{
    fixture *f = *state;
    add(f, RD_EV_TOOL_SUCCEEDED, "flight_search", true, NULL);
    add(f, RD_EV_TURN_TIMEOUT, "hotel_search", false, "turn deadline reached");
    add(f, RD_EV_SKIPPED, "hotel_search", false, "skipped: turn deadline reached");
    add(f, RD_EV_TURN_TIMEOUT, "activity_search", false, "turn deadline reached");
    add(f, RD_EV_SKIPPED, "activity_search", false, "skipped: turn deadline reached");
    summarize(f);
    assert_string_equal(f->s.partial_result,
                        "Completed flight search, but hotel search and activity search "
                        "timed out");
    assert_int_equal(f->s.n_completed, 1);
    assert_string_equal(f->s.completed[0], "flight_search");
    assert_int_equal(f->s.n_timed_out, 2);
    assert_string_equal(f->s.timed_out[0], "hotel_search");
    assert_string_equal(f->s.timed_out[1], "activity_search");
    assert_int_equal(f->s.n_skipped, 0);
    assert_false(f->s.turn_failed);
}

static void test_summary_all_buckets(void **state)
{
    fixture *f = *state;
    add(f, RD_EV_TOOL_SUCCEEDED, "a_tool", true, NULL);
    add(f, RD_EV_RETRY_SUCCEEDED, "b_tool", true, NULL);
    add(f, RD_EV_TOOL_SUCCEEDED, "c_tool", true, NULL);
    add(f, RD_EV_TOOL_TIMEOUT, "slow", true, NULL);
    add(f, RD_EV_TOOL_ERROR, "bad", false, NULL);
    add(f, RD_EV_ESCALATED, "bad", false, "Escalated bad: permanent error: input_validation");
    add(f, RD_EV_SKIPPED, "dep", false, "skipped: dependency bad failed");
    add(f, RD_EV_ESCALATED, "needs_dep", false,
        "Required tool skipped due to dependency failure: needs_dep needs bad");
    summarize(f);
    assert_string_equal(f->s.partial_result,
                        "Completed a tool, b tool and c tool, but slow timed out; bad failed; "
                        "dep and needs dep skipped");
    assert_int_equal(f->s.n_failed, 1);
    assert_int_equal(f->s.n_skipped, 2);
}

/* The last decisive event wins: a timeout followed by a success completes,
 * a failure followed by a success completes, a retry alone decides nothing. */
static void test_summary_last_word_wins(void **state)
{
    fixture *f = *state;
    add(f, RD_EV_TOOL_TIMEOUT, "flight_search", true, NULL);
    add(f, RD_EV_RETRY, "flight_search", false, NULL);
    add(f, RD_EV_RETRY_SUCCEEDED, "flight_search", true, NULL);
    add(f, RD_EV_TOOL_FAILED, "hotel_search", true, NULL);
    add(f, RD_EV_TOOL_SUCCEEDED, "hotel_search", true, NULL);
    add(f, RD_EV_TOOL_SUCCEEDED, "car_search", true, NULL);
    add(f, RD_EV_GAVE_UP, "car_search", false, NULL);
    add(f, RD_EV_RETRY, "train_search", false, NULL);
    summarize(f);
    assert_int_equal(f->s.n_completed, 2);
    assert_int_equal(f->s.n_failed, 1);
    assert_string_equal(f->s.failed[0], "car_search");
    assert_int_equal(f->s.n_timed_out, 0);
    assert_string_equal(f->s.partial_result,
                        "Completed flight search and hotel search; car search failed");
}

static void test_summary_nothing_completed(void **state)
{
    fixture *f = *state;
    add(f, RD_EV_FAIL_FAST, "flight_search", false, NULL);
    add(f, RD_EV_TOOL_TIMEOUT, "hotel_search", true, NULL);
    summarize(f);
    assert_string_equal(f->s.partial_result,
                        "No tool completed; hotel search timed out; flight search failed");
}

/* A tool the deadline cut off and that a cascade then skips stays timed out. */
static void test_summary_deadline_beats_skip(void **state)
{
    fixture *f = *state;
    add(f, RD_EV_TURN_TIMEOUT, "hotel_search", false, "turn deadline reached");
    add(f, RD_EV_SKIPPED, "hotel_search", false, "skipped: dependency flight_search failed");
    summarize(f);
    assert_int_equal(f->s.n_timed_out, 1);
    assert_int_equal(f->s.n_skipped, 0);
}

static void test_summary_empty_turn(void **state)
{
    fixture *f = *state;
    summarize(f);
    assert_string_equal(f->s.partial_result, "");
    assert_int_equal(f->s.n_completed + f->s.n_failed + f->s.n_timed_out + f->s.n_skipped, 0);
    assert_true(f->s.turn_failed); /* nothing ran */
}

/* 004 decision B: a failure whose kind means "never ran" leaves the turn
 * failed; a timeout means the tool ran, so the turn did not fail. */
static void test_turn_failed_only_when_nothing_executed(void **state)
{
    fixture *f = *state;
    add(f, RD_EV_TOOL_ERROR, "flight_search", false, NULL); /* invalid_parameters */
    add(f, RD_EV_ESCALATED, "flight_search", false, "Escalated flight_search: permanent");
    summarize(f);
    assert_true(f->s.turn_failed);

    f->n = 0;
    add(f, RD_EV_TOOL_TIMEOUT, "flight_search", true, NULL);
    add(f, RD_EV_TOOL_ERROR, "flight_search", true, NULL);
    add(f, RD_EV_GAVE_UP, "flight_search", false, NULL);
    summarize(f);
    assert_false(f->s.turn_failed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_event_type_names),
        cmocka_unit_test(test_action_names),
        cmocka_unit_test(test_copy_plain_text),
        cmocka_unit_test(test_truncation_on_utf8_boundary),
        cmocka_unit_test(test_nul_bytes_replaced),
        cmocka_unit_test(test_invalid_utf8_replaced),
        cmocka_unit_test(test_zero_capacity_untouched),
        cmocka_unit_test(test_sanitize_matches_reference),
        cmocka_unit_test(test_char_len_every_lead_byte),
        cmocka_unit_test(test_rfc3339_known_instants),
        cmocka_unit_test(test_rfc3339_matches_gmtime),
        cmocka_unit_test(test_name_texts_carry_their_lengths),
        cmocka_unit_test_setup_teardown(test_summary_partial_results_sentence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_summary_all_buckets, setup, teardown),
        cmocka_unit_test_setup_teardown(test_summary_last_word_wins, setup, teardown),
        cmocka_unit_test_setup_teardown(test_summary_nothing_completed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_summary_deadline_beats_skip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_summary_empty_turn, setup, teardown),
        cmocka_unit_test_setup_teardown(test_turn_failed_only_when_nothing_executed, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
