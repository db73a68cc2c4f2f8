/* The weak-word groups of the shipped rules (config/rules.yaml, the end of
 * the message pass): a message no rule above knows is read by word class
 * instead of falling to the unknown default, and every stronger signal
 * still outranks it (docs/CLASSIFICATION.md, "Evaluation order"). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "classify_shipped.h"

#define T RD_TRANSIENT
#define P RD_PERMANENT

/* One message per group, in words no earlier rule reads. */
static void test_each_group_reads_its_word_class(void **state)
{
    const rd_config *cfg = *state;
    static const shipped_case cases[] = {
        {.message = "panic: unreachable branch in planner", .want_retryability = P,
         .want_category = RD_CAT_LOGIC, .want_rule = "text.weak_program_failure"},
        {.message = "lookup of invoice inv_77 returned nil", .want_retryability = P,
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_group_reads_its_word_class),
        cmocka_unit_test(test_stronger_signals_outrank_weak_words),
        cmocka_unit_test(test_weak_words_are_the_message_tier),
    };
    return cmocka_run_group_tests(tests, load_shipped, free_shipped);
}
