/* The texts of the decision engine's answers: reasons and trace details are
 * the bytes of the printf forms they replaced, cut between characters, and a
 * transport that checked its input (text_checked) gets the same texts as one
 * that did not. Over the in-memory store. Configuration:
 * tests/unit/fixtures/decide/. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "decide_calls.h"

/* ---- texts: the same bytes as the printf forms they replaced ---- */

static void printf_detail(char *out, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A detail as printf wrote it, then cut and made safe like any trace text. */
static void printf_detail(char *out, size_t cap, const char *fmt, ...)
{
    char buf[RD_TRACE_TEXT_MAX * 2];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    size_t len = n < 0 ? 0 : (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1;
    rd_trace_copy_text(out, cap, buf, len);
}

static void assert_detail(const rd_decision *d, rd_event_type type, const char *tool,
                          const char *want)
{
    assert_string_equal(event_of(d, type, tool)->detail, want);
}

/* A tool id whose details run past the 255-byte cut, with a 2- and a
 * 3-byte character where the cut falls; the largest attempt number. */
static void test_texts_match_printf_forms(void **state)
{
    fixture *f = *state;
    char tool[RD_ID_MAX + 1], want[RD_TRACE_TEXT_MAX], reason[128];
    memset(tool, 'x', 226);
    strcpy(tool + 226, "\xC3\xA9\xE2\x82\xAC_flight");
    rd_tool_error err = timeout_error();
    rd_decision d = fail_once(f, tool, &err, 1, 0);
    const rd_classification *c = &d.classification.classification;
    printf_detail(want, sizeof want, "%s timed out (limit %" PRId64 " ms)", tool, (int64_t)30000);
    assert_detail(&d, RD_EV_TOOL_TIMEOUT, tool, want);
    printf_detail(want, sizeof want, "%s error (%s, rule %s)",
                  rd_retryability_name(c->retryability), rd_category_name(c->category), c->rule_id);
    assert_detail(&d, RD_EV_TOOL_ERROR, tool, want);
    printf_detail(want, sizeof want, "retry %u of %u after %" PRId64 " ms", 1u, 4u, d.delay_ms);
    assert_detail(&d, RD_EV_RETRY, tool, want);
    snprintf(reason, sizeof reason, "transient error: retry %u of %u%s", 1u, 4u, "");
    assert_string_equal(d.reason, reason);

    d = fail_once(f, tool, &err, UINT32_MAX, 0);
    snprintf(reason, sizeof reason, "max attempts (%u) reached", 5u);
    assert_string_equal(d.reason, reason);
    printf_detail(want, sizeof want, "Gave up on %s: %s", tool, reason);
    assert_detail(&d, RD_EV_GAVE_UP, tool, want);

    for (int i = 0; i < 3; i++) /* the fifth failure opens the breaker */
        d = fail_once(f, tool, &err, 1, 0);
    printf_detail(want, sizeof want, "Circuit breaker opened for %s", tool);
    assert_detail(&d, RD_EV_CIRCUIT_OPENED, tool, want);
    printf_detail(want, sizeof want, "Circuit breaker open for %s: failing fast", tool);
    assert_detail(&d, RD_EV_FAIL_FAST, tool, want);

    rd_outcome_input ok = outcome("flight_search", true, UINT32_MAX);
    rd_outcome_result r = record_ok(f, &ok);
    printf_detail(want, sizeof want, "%s succeeded on retry (attempt %u)", "flight_search",
                  UINT32_MAX);
    assert_string_equal(r.trace[0].detail, want);
}

static int setup_checked(void **state)
{
    int rc = setup(state);
    if (rc == 0)
        ((fixture *)*state)->ctx.text_checked = true;
    return rc;
}

/* The texts of two decisions, field by field. */
static void assert_same_texts(const rd_decision *a, const rd_decision *b)
{
    assert_string_equal(a->reason, b->reason);
    const char *llm_a = a->classification.llm_message, *llm_b = b->classification.llm_message;
    assert_true((llm_a == NULL) == (llm_b == NULL));
    if (llm_a)
        assert_string_equal(llm_a, llm_b);
    assert_int_equal(a->classification.llm_message_len, b->classification.llm_message_len);
    assert_int_equal(a->classification.llm_message_len, llm_a ? strlen(llm_a) : 0);
    assert_int_equal(a->n_trace, b->n_trace);
    for (size_t i = 0; i < a->n_trace; i++) {
        assert_string_equal(a->trace[i].tool_id, b->trace[i].tool_id);
        assert_string_equal(a->trace[i].error, b->trace[i].error);
        assert_string_equal(a->trace[i].detail, b->trace[i].detail);
    }
    assert_event_lengths(a);
    assert_event_lengths(b);
}

/* A transport that checked the input (text_checked) gets the same texts
 * as one that did not: the unchecked copies keep every byte and still cut
 * between characters. The message is longer than a trace text, so the
 * trace keeps its head and tail; the tool id runs details past theirs. */
static void test_checked_input_gives_the_same_texts(void **state)
{
    fixture *f = *state;
    char tool[RD_ID_MAX + 1], message[400];
    memset(tool, 'x', 226);
    strcpy(tool + 226, "\xC3\xA9\xE2\x82\xAC_flight");
    memset(message, 'm', 254);
    strcpy(message + 254, "\xE2\x82\xAC 503 Service Unavailable \xC3\xA9");
    rd_tool_error err = error_text(message);
    rd_decide_input in = input(tool, &err, 1);
    /* two RETRY answers (a timeout adds its event), then the last attempt,
     * whose answer carries the text for the model */
    const uint32_t attempts[] = {1, 1, 5};
    for (int i = 0; i < 3; i++) {
        err.kind = i == 1 ? RD_KIND_TIMEOUT : RD_KIND_UNSPECIFIED;
        in.attempt = attempts[i];
        rd_outcome_input ok = outcome(tool, true, 1); /* each pair starts on the same breaker */
        record_ok(f, &ok);
        f->ctx.text_checked = false;
        rd_rng_seed(&f->rng, 7); /* the same jitter, so the same retry detail */
        rd_decision plain = decide_ok(f, &in);
        f->ctx.text_checked = true;
        rd_rng_seed(&f->rng, 7);
        rd_decision checked = decide_ok(f, &in);
        assert_int_equal(checked.action == RD_ACTION_RETRY, i < 2);
        assert_true((checked.classification.llm_message != NULL) == (i == 2));
        assert_same_texts(&plain, &checked);
        const rd_trace_event *ev = event_of(&checked, RD_EV_TOOL_ERROR, tool);
        /* Too long for the trace: its head and tail around the marker, the
         * tail (where a traceback's cause is) kept whole. */
        assert_true(strlen(ev->error) <= RD_TRACE_TEXT_MAX - 1);
        assert_non_null(strstr(ev->error, " bytes cut ...]"));
        const char *end = "503 Service Unavailable \xC3\xA9";
        assert_string_equal(ev->error + strlen(ev->error) - strlen(end), end);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_texts_match_printf_forms),
        cmocka_unit_test_setup_teardown(test_texts_match_printf_forms, setup_checked, teardown),
        T(test_checked_input_gives_the_same_texts),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
