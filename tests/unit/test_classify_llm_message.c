/* The text for the model when a tool failed (rd_llm_message): its exact
 * wording, a cut only between whole characters and never past the buffer,
 * NULs and ill-formed UTF-8 replaced, and the fast path giving the bytes
 * of a character-by-character reference on random mixed text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "domain/classify.h"
#include "classify_fixture.h"
#include "mixed_text.h"

static const char LLM_EXPECTED[] = "Tool Execution Failed\n"
                                   "Tool: search\n"
                                   "Error Type: RateLimitError\n"
                                   "Message: Too many requests\n"
                                   "\n"
                                   "The tool failed and cannot be used for this request.";

static void test_llm_message_exact_text(void **state)
{
    char buf[512];
    const char *msg = "Too many requests";
    size_t n = rd_llm_message(buf, sizeof buf, "search", "RateLimitError", msg, strlen(msg));
    assert_string_equal(buf, LLM_EXPECTED);
    assert_int_equal(n, strlen(LLM_EXPECTED));

    /* Only message_len bytes of the message are used. */
    n = rd_llm_message(buf, sizeof buf, "search", "RateLimitError", "Too many requests!!!", 17);
    assert_string_equal(buf, LLM_EXPECTED);

    n = rd_llm_message(buf, sizeof buf, NULL, NULL, NULL, 5);
    assert_string_equal(buf, "Tool Execution Failed\nTool: \nError Type: \nMessage: \n\n"
                             "The tool failed and cannot be used for this request.");
    assert_int_equal(n, strlen(buf));
}

static void test_llm_message_truncates_on_character_boundary(void **state)
{
    const char *msg = "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 end"; /* é € 😀 */
    char full[512];
    size_t full_len = rd_llm_message(full, sizeof full, "t\xC3\xA9", "E", msg, strlen(msg));
    assert_int_equal(full_len, strlen(full));

    for (size_t cap = 1; cap <= full_len + 1; cap++) {
        char buf[512];
        memset(buf, 'Z', sizeof buf);
        size_t n = rd_llm_message(buf, cap, "t\xC3\xA9", "E", msg, strlen(msg));
        assert_true(n < cap);
        assert_int_equal(buf[n], '\0');
        assert_int_equal(buf[cap], 'Z'); /* nothing written past cap */
        assert_memory_equal(buf, full, n);
        assert_true(valid_utf8(buf, n));
        /* Stops only where the next character would not fit. */
        if (n < full_len) {
            size_t next = 1;
            while (n + next < full_len && ((unsigned char)full[n + next] & 0xC0) == 0x80)
                next++;
            assert_true(n + next > cap - 1);
        }
        /* Pieces known to be valid: the same bytes, cut at the same place. */
        char valid[512];
        memset(valid, 'Z', sizeof valid);
        assert_int_equal(rd_llm_message_valid(valid, cap, RD_TEXT("t\xC3\xA9"), RD_TEXT("E"), msg,
                                              strlen(msg)),
                         n);
        assert_memory_equal(valid, buf, n + 1);
        assert_int_equal(valid[cap], 'Z');
    }
    assert_int_equal(rd_llm_message(full, sizeof full, "t", "E", msg, strlen(msg)) > 0, 1);

    char canary = 'Q';
    assert_int_equal(rd_llm_message(&canary, 0, "t", "E", msg, strlen(msg)), 0);
    assert_int_equal(canary, 'Q');
}

static void test_llm_message_replaces_nul_and_invalid_utf8(void **state)
{
    char buf[512];
    const char msg[] = {'a', '\0', 'b', (char)0xFF, (char)0xC3, 'c', (char)0xED, (char)0xA0,
                        (char)0x80, (char)0xE2, (char)0x82};
    size_t n = rd_llm_message(buf, sizeof buf, "t\xFF", "E", msg, sizeof msg);
    assert_int_equal(n, strlen(buf)); /* no NUL inside */
    assert_true(valid_utf8(buf, n));
    assert_non_null(strstr(buf, "Tool: t\xEF\xBF\xBD\n"));
    /* a, U+FFFD, b, U+FFFD, U+FFFD, c, then 3 bytes of a surrogate and a
     * cut-off sequence: one U+FFFD per byte. */
    assert_non_null(strstr(buf, "Message: a\xEF\xBF\xBD"
                                "b\xEF\xBF\xBD\xEF\xBF\xBD"
                                "c\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\n"));
}

/* The text for the model as it was built before the ASCII-run fast path:
 * one character at a time, each piece whole or not at all, nothing after
 * the first piece that does not fit. */
typedef struct ref_out {
    char *buf;
    size_t cap, len;
    bool full;
} ref_out;

static void ref_put(ref_out *o, const char *s, size_t n)
{
    if (o->full || n > o->cap - 1 - o->len) {
        o->full = true;
        return;
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

static void ref_put_text(ref_out *o, const char *s, size_t n)
{
    for (size_t i = 0; i < n && !o->full;) {
        size_t k = ref_utf8_char_len((const unsigned char *)s + i, n - i);
        ref_put(o, k ? s + i : "\xEF\xBF\xBD", k ? k : 3);
        i += k ? k : 1;
    }
}

static size_t ref_llm_message(char *buf, size_t cap, const char *tool, const char *type,
                              const char *msg, size_t msg_len)
{
    ref_out o = {buf, cap, 0, false};
    const char *parts[] = {"Tool Execution Failed\nTool: ", tool, "\nError Type: ", type,
                           "\nMessage: "};
    for (size_t i = 0; i < 5; i++)
        ref_put_text(&o, parts[i], strlen(parts[i]));
    ref_put_text(&o, msg, msg_len);
    const char *tail = "\n\nThe tool failed and cannot be used for this request.";
    ref_put_text(&o, tail, strlen(tail));
    buf[o.len] = '\0';
    return o.len;
}

/* The fast path gives the reference's bytes for mixed ASCII, UTF-8,
 * ill-formed and control input, whatever the buffer size. */
static void test_llm_message_matches_reference(void **state)
{
    mixed_rng rng = {UINT64_C(0xD1B54A32D192ED03)};
    for (int round = 0; round < 150; round++) {
        char tool[24], type[24], text[160];
        tool[mixed_text(&rng, tool, sizeof tool - 1)] = '\0';
        type[mixed_text(&rng, type, sizeof type - 1)] = '\0';
        size_t len = mixed_text(&rng, text, sizeof text);
        char *msg = malloc(len ? len : 1); /* exactly len bytes, for ASan */
        assert_non_null(msg);
        memcpy(msg, text, len);
        char want[1024], got[1024];
        size_t full = ref_llm_message(want, sizeof want, tool, type, msg, len);
        for (size_t cap = 1; cap <= full + 2; cap++) {
            size_t m = ref_llm_message(want, cap, tool, type, msg, len);
            size_t n = rd_llm_message(got, cap, tool, type, msg, len);
            assert_int_equal(n, m);
            assert_memory_equal(got, want, n + 1);
        }
        free(msg);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_llm_message_exact_text),
        cmocka_unit_test(test_llm_message_truncates_on_character_boundary),
        cmocka_unit_test(test_llm_message_replaces_nul_and_invalid_utf8),
        cmocka_unit_test(test_llm_message_matches_reference),
    };
    return cmocka_run_group_tests_name("llm message", tests, NULL, NULL);
}
