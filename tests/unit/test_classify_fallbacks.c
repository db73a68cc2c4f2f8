/* What decides an error whose text no rule knows (docs/CLASSIFICATION.md,
 * "Evaluation order"): the weak-word groups at the end of the message pass
 * read it by word class, and an exception type the text names stands for
 * the missing field (domain/type_in_text.h); every stronger signal still
 * outranks both, and a text with neither is the unknown default. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "classify_shipped.h"
#include "domain/type_in_text.h"

#define T RD_TRANSIENT
#define P RD_PERMANENT

/* One message per group, in words no earlier rule reads. */
static void test_each_group_reads_its_word_class(void **state)
{
    const rd_config *cfg = *state;
    static const shipped_case cases[] = {
        {.message = "panic: unreachable branch in planner", .want_retryability = P,
         .want_category = RD_CAT_LOGIC, .want_rule = "text.weak_program_failure"},
        {.message = "the widget executable is missing", .want_retryability = P,
         .want_category = RD_CAT_RESOURCE, .want_rule = "text.weak_missing"},
        {.message = "widget 7 is outside your access scope", .want_retryability = P,
         .want_category = RD_CAT_PERMISSION, .want_rule = "text.weak_permission"},
        {.message = "widget count must stay even", .want_retryability = P,
         .want_category = RD_CAT_INPUT_VALIDATION, .want_rule = "text.weak_input"},
        {.message = "shard 3 is busy", .want_retryability = T,
         .want_category = RD_CAT_EXTERNAL_SERVICE, .want_rule = "text.weak_busy"},
        {.message = "job evicted by the scheduler; it will be retried", .want_retryability = T,
         .want_category = RD_CAT_TRANSIENT, .want_rule = "text.weak_retry"},
        {.message = "cannot frobnicate the widget", .want_retryability = P,
         .want_category = RD_CAT_LOGIC, .want_rule = "text.weak_cannot"},
        /* a generic type named in the text reads as the generic pass reads
         * the same type given as a field */
        {.message = "ValueError: widget 7", .want_retryability = P,
         .want_category = RD_CAT_INPUT_VALIDATION, .want_rule = "text.weak_input"},
        {.message = "RuntimeError: widget 7", .want_retryability = P,
         .want_category = RD_CAT_LOGIC, .want_rule = "text.weak_cannot"},
    };
    check_cases(cfg, cases, sizeof cases / sizeof cases[0]);
}

/* Weak words decide only what nothing stronger decided. */
static void test_stronger_signals_outrank_weak_words(void **state)
{
    const rd_config *cfg = *state;
    static const shipped_case cases[] = {
        /* type names are word classes written together, read with the
         * word groups, before the weak words */
        {.message = "InvoiceNotFoundError: inv_77", .want_retryability = P,
         .want_category = RD_CAT_RESOURCE, .want_rule = "text.not_found"},
        {.message = "ShardUnavailableError: shard 3 is busy", .want_retryability = T,
         .want_category = RD_CAT_EXTERNAL_SERVICE, .want_rule = "text.service_unavailable"},
        /* a word group of the message pass */
        {.message = "access denied for widget 7", .want_retryability = P,
         .want_category = RD_CAT_PERMISSION, .want_rule = "text.permission"},
        {.message = "connection closed by peer", .want_retryability = T,
         .want_category = RD_CAT_TRANSIENT, .want_rule = "text.network"},
        /* a structured field */
        {.http_status = 503, .message = "cannot frobnicate the widget", .want_retryability = T,
         .want_category = RD_CAT_EXTERNAL_SERVICE, .want_rule = "http.server_error"},
        {.exception_type = "KeyError", .message = "widget count must stay even",
         .want_retryability = P, .want_category = RD_CAT_LOGIC,
         .want_rule = "exception.program_bug"},
        /* weak words still come before the generic exception types, which
         * decide only a text that says nothing at all */
        {.exception_type = "TypeError", .message = "widget count must stay even",
         .want_retryability = P, .want_category = RD_CAT_INPUT_VALIDATION,
         .want_rule = "text.weak_input"},
        {.exception_type = "RuntimeError", .message = "zork", .want_retryability = P,
         .want_category = RD_CAT_LOGIC, .want_rule = "generic.program_state"},
        /* and a text with no known word is still the unknown default */
        {.message = "zork", .want_retryability = T, .want_category = RD_CAT_UNKNOWN,
         .want_rule = "unknown"},
    };
    check_cases(cfg, cases, sizeof cases / sizeof cases[0]);
}

/* The groups answer as message patterns: the tier a caller is told. */
static void test_weak_words_are_the_message_tier(void **state)
{
    (void)state;
    assert_int_equal(rd_rule_tier("text.weak_input"), RD_TIER_MESSAGE);
    assert_int_equal(rd_rule_tier("text.weak_cannot"), RD_TIER_MESSAGE);
}

/* ---- the type a text names ---- */

static void expect_name(const char *msg, size_t len, const char *want)
{
    char out[RD_TYPE_IN_TEXT_MAX];
    memset(out, 'x', sizeof out);
    bool found = rd_type_named_in_text(msg, len, out, sizeof out);
    if (!want) {
        if (found)
            fprintf(stderr, "named %s in \"%.*s\"\n", out, (int)len, msg);
        assert_false(found);
        return;
    }
    assert_true(found);
    assert_string_equal(out, want);
}

static void test_type_named_at_the_start_or_last_line(void **state)
{
    (void)state;
    static const struct {
        const char *msg;
        const char *want; /* NULL: none */
    } cases[] = {
        {"KeyError: 'x'", "KeyError"},
        {"  java.net.SocketException: Connection reset", "java.net.SocketException"},
        {"DiscordAPIError[50001]: Missing Access", "DiscordAPIError"},
        {"RangeError", "RangeError"},
        {"pkg.Fault(Exception): boom", NULL},
        {"pkg.BadThingException(\"x\")", "pkg.BadThingException"},
        {"Traceback (most recent call last):\n  File \"t.py\", line 1, in <module>\n"
         "ZeroDivisionError: division by zero\n\n", "ZeroDivisionError"},
        /* not a name followed by its text */
        {"Some Error: x", NULL},
        {"KeyErrorX: y", NULL},
        {"KeyError x", NULL},
        {"error: ErrorCode 7", NULL},
        {"", NULL},
        {"\n\n", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_name(cases[i].msg, strlen(cases[i].msg), cases[i].want);
}

static void test_type_name_bounds(void **state)
{
    (void)state;
    /* nothing past len is read: "KeyError" cut to "KeyErr" names nothing */
    expect_name("KeyError: x", 6, NULL);
    expect_name("KeyError: x", 8, "KeyError");
    /* a NUL ends the name like any other byte that is not part of one */
    expect_name("KeyError\0: x", 11, NULL);
    /* a name longer than the buffer is not taken, nor cut */
    char longname[RD_TYPE_IN_TEXT_MAX + 16];
    memset(longname, 'a', sizeof longname);
    memcpy(longname + sizeof longname - 7, "Error: ", 7);
    expect_name(longname, sizeof longname, NULL);
    char out[8];
    assert_false(rd_type_named_in_text("KeyError: x", 11, out, sizeof out));
    assert_false(rd_type_named_in_text(NULL, 0, out, sizeof out));
}

/* The named type decides what nothing else decided, and a specific type
 * what only a weak word decided, as the field would; never over a given
 * field. */
static void test_named_type_stands_for_the_missing_field(void **state)
{
    const rd_config *cfg = *state;
    static const shipped_case cases[] = {
        {.message = "java.util.NoSuchElementException: zork", .want_retryability = P,
         .want_category = RD_CAT_RESOURCE, .want_rule = "exception.not_found"},
        {.message = "Traceback (most recent call last):\n  File \"t.py\", line 9\n"
                    "ClosedChannelException: zork",
         .want_retryability = P, .want_category = RD_CAT_LOGIC,
         .want_rule = "exception.closed_handle"},
        /* a specific type outranks the weak words, as the field would */
        {.message = "java.util.NoSuchElementException: widget count must stay even",
         .want_retryability = P, .want_category = RD_CAT_RESOURCE,
         .want_rule = "exception.not_found"},
        /* (the rule takes its category from the words when they are
         * sure: no traceback lines, whose words the fitted weights read
         * as input_validation) */
        {.message = "LookupError: cannot frobnicate the widget",
         .want_retryability = P, .want_category = RD_CAT_LOGIC,
         .want_rule = "exception.program_bug_more"},
        /* a type only the generic pass holds does not */
        {.message = "RuntimeError: widget count must stay even", .want_retryability = P,
         .want_category = RD_CAT_INPUT_VALIDATION, .want_rule = "text.weak_input"},
        /* a rule that reads the text still comes first */
        {.message = "java.util.NoSuchElementException: connection refused",
         .want_retryability = T, .want_category = RD_CAT_TRANSIENT, .want_rule = "text.network"},
        /* a named type no table holds leaves the default */
        {.message = "FrobnicatorError: zork", .want_retryability = T,
         .want_category = RD_CAT_UNKNOWN, .want_rule = "unknown"},
    };
    check_cases(cfg, cases, sizeof cases / sizeof cases[0]);
    /* a type given as a field is not replaced by the one in the text: no
     * rule decides, only the message's words (their weights, fitted on
     * the corpus) or the unknown default */
    const shipped_case given = {.exception_type = "Exception",
                                .message = "java.util.NoSuchElementException: zork"};
    rd_classification c = classify_shipped(cfg, &given);
    assert_true(c.decided_by == RD_TIER_WORDS || c.decided_by == RD_TIER_DEFAULT);
    assert_int_not_equal(c.category, RD_CAT_RESOURCE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_type_named_at_the_start_or_last_line),
        cmocka_unit_test(test_type_name_bounds),
        cmocka_unit_test(test_named_type_stands_for_the_missing_field),
        cmocka_unit_test(test_each_group_reads_its_word_class),
        cmocka_unit_test(test_stronger_signals_outrank_weak_words),
        cmocka_unit_test(test_weak_words_are_the_message_tier),
    };
    return cmocka_run_group_tests(tests, load_shipped, free_shipped);
}
