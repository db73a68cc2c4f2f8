/* The retry hint (rd_retry_hint_from_text and the retry_after_ms of an
 * answer): the forms a text gives it in, texts that give none, reads that
 * stay within the given length wherever the trigger lies, the cap, and a
 * hint passed on only with a transient answer unless the caller gave it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "domain/classify.h"
#include "classify_fixture.h"

static void test_retry_after_given_extracted_capped(void **state)
{
    rd_ruleset rs = make_ruleset(RD_TRANSIENT);
    rd_tool_error e = text_error("Rate limited. Please try again in 1.8s");
    assert_int_equal(classify(&rs, NULL, "t", &e).retry_after_ms, 1800);
    e.retry_after_ms = 2500; /* given beats the text */
    assert_int_equal(classify(&rs, NULL, "t", &e).retry_after_ms, 2500);
    e.retry_after_ms = INT64_C(36000000); /* ten hours */
    assert_int_equal(classify(&rs, NULL, "t", &e).retry_after_ms, 3600000);
    e = text_error("retry after 99999 hours");
    assert_int_equal(classify(&rs, NULL, "t", &e).retry_after_ms, 3600000);
    e = text_error("no hint");
    assert_int_equal(classify(&rs, NULL, "t", &e).retry_after_ms, 0);
}

static int64_t hint(const char *s) { return rd_retry_hint_from_text(s, strlen(s)); }

static void test_retry_hint_forms(void **state)
{
    assert_int_equal(hint("Please try again in 1.8s"), 1800);
    assert_int_equal(hint("try again in 20ms"), 20);
    assert_int_equal(hint("Retry-After: 30"), 30000);
    assert_int_equal(hint("retry after 20 seconds"), 20000);
    assert_int_equal(hint("try again in 5m"), 300000);
    assert_int_equal(hint("retry in 2 minutes"), 120000);
    assert_int_equal(hint("retry-after-ms: 1500"), 1500);
    assert_int_equal(hint("Limit reached. Please try again in 1.898s. Visit ..."), 1898);
    assert_int_equal(hint("Please try again in 7m12s."), 432000);
    assert_int_equal(hint("{\"retryDelay\": \"22s\"}"), 22000);
    assert_int_equal(hint("RETRY_AFTER=2"), 2000);
    assert_int_equal(hint("retry after 1 hour"), 3600000);
    assert_int_equal(hint("try again in 2h"), 3600000); /* capped */
    assert_int_equal(hint("try again in 99999999999999999999999999s"), 3600000);
    assert_int_equal(hint("try again in 0.5 sec"), 500);
}

static void test_retry_hint_absent_or_unparseable(void **state)
{
    assert_int_equal(hint(""), 0);
    assert_int_equal(rd_retry_hint_from_text(NULL, 10), 0);
    assert_int_equal(hint("Connection timeout after 30s"), 0);
    assert_int_equal(hint("please try again in a moment"), 0);
    assert_int_equal(hint("Retry-After: Wed, 21 Oct 2015 07:28:00 GMT"), 0);
    assert_int_equal(hint("retry after"), 0);
    assert_int_equal(hint("try again in 0s"), 0);
    /* A failed first trigger does not stop a later one. */
    assert_int_equal(hint("try again in a bit; Retry-After: 4"), 4000);
}

/* The text lives in a heap block of exactly `len` bytes, so ASan reports any
 * read past the given length. */
static int64_t hint_exact(const char *s, size_t len)
{
    char *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    memcpy(copy, s, len);
    int64_t ms = rd_retry_hint_from_text(copy, len);
    free(copy);
    return ms;
}

static void test_retry_hint_respects_length(void **state)
{
    const char *s = "try again in 5s and more";
    assert_int_equal(hint_exact(s, 13), 0);    /* "try again in " */
    assert_int_equal(hint_exact(s, 14), 5000); /* "5" with no unit: seconds */
    assert_int_equal(hint_exact(s, 15), 5000);
    assert_int_equal(hint_exact("retry in 1.", 11), 1000);
    assert_int_equal(hint_exact("retry-after-ms", 14), 0);
    for (size_t n = 0; n <= strlen(s); n++)
        (void)hint_exact(s, n);
}

/* The 'y' of a trigger at every offset of the sixteen-byte blocks and
 * eight-byte words the scan looks at, in either case, with other 'y's and
 * non-ASCII bytes before it. */
static void test_retry_hint_at_every_offset(void **state)
{
    const char *forms[] = {"Retry-After: 3", "TRY AGAIN IN 3s", "yY \xC3\xBF retry in 3s"};
    for (size_t f = 0; f < sizeof forms / sizeof *forms; f++)
        for (size_t pad = 0; pad < 48; pad++) {
            char text[80];
            memset(text, pad % 2 ? 'x' : '\xD9', pad);
            strcpy(text + pad, forms[f]);
            assert_int_equal(hint_exact(text, strlen(text)), 3000);
            assert_int_equal(hint_exact(text, strlen(text) - 2), 0); /* number cut off */
        }
}

static void test_retry_hint_only_for_transient_answers(void **state)
{
    rd_ruleset rs = make_ruleset(RD_TRANSIENT);
    rd_tool_error e = text_error("invalid request, try again in 5s");
    rd_classification c = classify(&rs, NULL, "t", &e);
    assert_string_equal(c.rule_id, "m.invalid");
    assert_int_equal(c.retry_after_ms, 0); /* permanent: the text is not read for a hint */
    e.retry_after_ms = 700;                /* a hint the caller gave is passed on */
    assert_int_equal(classify(&rs, NULL, "t", &e).retry_after_ms, 700);
    e = text_error("read timeout, try again in 5s");
    assert_int_equal(classify(&rs, NULL, "t", &e).retry_after_ms, 5000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_retry_after_given_extracted_capped),
        cmocka_unit_test(test_retry_hint_forms),
        cmocka_unit_test(test_retry_hint_absent_or_unparseable),
        cmocka_unit_test(test_retry_hint_respects_length),
        cmocka_unit_test(test_retry_hint_at_every_offset),
        cmocka_unit_test(test_retry_hint_only_for_transient_answers),
    };
    return cmocka_run_group_tests_name("retry hints", tests, NULL, NULL);
}
