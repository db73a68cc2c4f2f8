/* Shadow mode in the decision engine (engine/shadow.c) over the in-memory
 * store: the decision is made and recorded as in enforce mode, the answer
 * is the permissive one, and shadow_action / shadow_reason say what enforce
 * mode answers. Configuration: tests/unit/fixtures/decide/ (5 attempts
 * within 2000 ms; the breaker opens after 5 transient failures). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/config.h"
#include "domain/arena.h"
#include "domain/err.h"
#include "domain/store.h"
#include "domain/trace.h"
#include "engine/decide.h"

#define FIXTURE RD_SOURCE_DIR "/tests/unit/fixtures/decide/recovery.yaml"
#include "engine_fixture.h"

/* A tool without a manifest: it follows the defaults, whose mode a test sets. */
#define TOOL "shadowed_api"

static void set_mode(fixture *f, rd_decision_mode mode)
{
    f->config.defaults.mode = mode;
}

static rd_tool_error error_text(const char *message, rd_error_kind kind)
{
    return (rd_tool_error){.message = message, .message_len = strlen(message), .code = "",
                           .exception_type = "", .kind = kind};
}

static rd_decision decide(fixture *f, const rd_tool_error *err, uint32_t attempt,
                          int64_t elapsed_ms, const char *turn_id)
{
    rd_decide_input in = {.tool_id = TOOL, .error = err, .attempt = attempt,
                          .elapsed_ms = elapsed_ms, .turn_id = turn_id, .executor_id = "",
                          .outcome_id = "", .permit_id = ""};
    rd_decision d;
    if (rd_engine_decide(&f->engine, &in, &f->ctx, &d, &f->st) != RD_OK)
        fail_msg("decide: %s", f->st.msg);
    return d;
}

static rd_decision fail_attempt(fixture *f, uint32_t attempt, int64_t elapsed_ms)
{
    rd_tool_error err = error_text("Connection reset by peer", RD_KIND_TRANSPORT_ERROR);
    return decide(f, &err, attempt, elapsed_ms, "");
}

static void open_the_breaker(fixture *f)
{
    for (int i = 0; i < 5; i++)
        fail_attempt(f, 1, 0);
}

static bool has_event(const rd_decision *d, rd_event_type type, rd_action decision)
{
    for (size_t i = 0; i < d->n_trace; i++)
        if (d->trace[i].type == type && d->trace[i].decision == decision)
            return true;
    return false;
}

static void test_enforce_answers_carry_no_shadow(void **state)
{
    fixture *f = *state;
    open_the_breaker(f);
    rd_decision d = decide(f, NULL, 0, 0, "");
    assert_int_equal(d.action, RD_ACTION_FAIL_FAST);
    assert_int_equal(d.shadow_action, RD_ACTION_UNSPECIFIED);
    assert_string_equal(d.shadow_reason, "");
}

static void test_admission_on_open_breaker_proceeds(void **state)
{
    fixture *f = *state;
    set_mode(f, RD_MODE_SHADOW);
    open_the_breaker(f);
    rd_decision d = decide(f, NULL, 0, 0, "turn-a");
    assert_int_equal(d.action, RD_ACTION_PROCEED);
    assert_int_equal(d.shadow_action, RD_ACTION_FAIL_FAST);
    assert_string_equal(d.shadow_reason, "circuit open");
    assert_non_null(strstr(d.reason, "shadow mode: enforce mode answers fail_fast"));
    assert_false(d.has_classification); /* no "Tool Not Called" text */
    assert_int_equal(d.n_cascade, 0);
    assert_string_equal(d.permit_id, "");
    /* Recorded as enforce mode records it. */
    assert_int_equal(d.breaker.status, RD_BREAKER_OPEN);
    assert_true(has_event(&d, RD_EV_FAIL_FAST, RD_ACTION_FAIL_FAST));
    rd_turn_trace t;
    assert_int_equal(rd_engine_turn_trace(&f->engine, "turn-a", &f->ctx, &t, &f->st), RD_OK);
    assert_int_equal(t.n_events, d.n_trace);
    assert_int_equal(t.events[t.n_events - 1].decision, RD_ACTION_FAIL_FAST);
}

static void test_failure_on_open_breaker_retries_while_attempts_remain(void **state)
{
    fixture *f = *state;
    set_mode(f, RD_MODE_SHADOW);
    open_the_breaker(f);
    rd_decision d = fail_attempt(f, 2, 150);
    assert_int_equal(d.action, RD_ACTION_RETRY);
    assert_int_equal(d.shadow_action, RD_ACTION_FAIL_FAST);
    assert_true(d.delay_ms >= 180 && d.delay_ms <= 220); /* 200 ms +- 10 % */
    assert_int_equal(d.delay_us / 1000, d.delay_ms - (d.delay_us % 1000 >= 500));
    assert_true(d.has_classification);
    assert_string_equal(d.classification.llm_message, "");
    assert_int_equal(d.breaker.status, RD_BREAKER_OPEN);
    assert_int_equal(d.breaker.opens_total, 1);
    /* The last attempt: no retry remains under max_attempts (5). */
    d = fail_attempt(f, 5, 150);
    assert_int_equal(d.action, RD_ACTION_FAIL_FAST);
    assert_int_equal(d.shadow_action, RD_ACTION_FAIL_FAST);
    assert_string_equal(d.reason, d.shadow_reason);
}

static void test_give_up_on_retry_time_becomes_retry(void **state)
{
    fixture *f = *state;
    set_mode(f, RD_MODE_SHADOW);
    rd_decision d = fail_attempt(f, 3, 1950); /* 1950 + ~400 ms passes max_total_time_ms 2000 */
    assert_int_equal(d.action, RD_ACTION_RETRY);
    assert_int_equal(d.shadow_action, RD_ACTION_GIVE_UP);
    assert_non_null(strstr(d.shadow_reason, "max total retry time"));
    assert_true(d.delay_ms >= 360 && d.delay_ms <= 440);
    assert_true(has_event(&d, RD_EV_GAVE_UP, RD_ACTION_GIVE_UP));
    d = fail_attempt(f, 5, 0); /* attempts spent: GIVE_UP stays */
    assert_int_equal(d.action, RD_ACTION_GIVE_UP);
    assert_int_equal(d.shadow_action, RD_ACTION_GIVE_UP);
}

static void test_retry_that_misses_the_turn_deadline_stays(void **state)
{
    fixture *f = *state;
    set_mode(f, RD_MODE_SHADOW);
    open_the_breaker(f);
    rd_tool_error err = error_text("Connection reset by peer", RD_KIND_TRANSPORT_ERROR);
    rd_decide_input in = {.tool_id = TOOL, .error = &err, .attempt = 2, .turn_id = "",
                          .has_turn_remaining = true, .turn_remaining_ms = 50,
                          .executor_id = "", .outcome_id = "", .permit_id = ""};
    rd_decision d;
    assert_int_equal(rd_engine_decide(&f->engine, &in, &f->ctx, &d, &f->st), RD_OK);
    assert_int_equal(d.action, RD_ACTION_FAIL_FAST);
    assert_int_equal(d.shadow_action, RD_ACTION_FAIL_FAST);
}

static void test_answers_enforce_agrees_with_are_unchanged(void **state)
{
    fixture *f = *state;
    set_mode(f, RD_MODE_SHADOW);
    rd_decision d = fail_attempt(f, 1, 0);
    assert_int_equal(d.action, RD_ACTION_RETRY);
    assert_int_equal(d.shadow_action, RD_ACTION_RETRY);
    assert_string_equal(d.reason, d.shadow_reason);
    rd_tool_error bad = error_text("Invalid parameters: missing field 'date'",
                                   RD_KIND_INVALID_PARAMETERS);
    d = decide(f, &bad, 1, 0, "");
    assert_int_equal(d.action, RD_ACTION_ESCALATE); /* a permanent error is not a threshold */
    assert_int_equal(d.shadow_action, RD_ACTION_ESCALATE);
    d = decide(f, NULL, 0, 0, "");
    assert_int_equal(d.action, RD_ACTION_PROCEED);
    assert_int_equal(d.shadow_action, RD_ACTION_PROCEED);
}

/* A mode switch is a new policy over the same store: nothing is lost. */
static void test_switching_modes_keeps_the_breaker(void **state)
{
    fixture *f = *state;
    open_the_breaker(f);
    rd_decision before = decide(f, NULL, 0, 0, "");
    assert_int_equal(before.action, RD_ACTION_FAIL_FAST);
    set_mode(f, RD_MODE_SHADOW);
    f->ctx.now_ms += 1000;
    rd_decision shadow = decide(f, NULL, 0, 0, "");
    assert_int_equal(shadow.action, RD_ACTION_PROCEED);
    assert_int_equal(shadow.breaker.status, RD_BREAKER_OPEN);
    assert_int_equal(shadow.breaker.opened_at_ms, before.breaker.opened_at_ms);
    assert_int_equal(shadow.breaker.opens_total, before.breaker.opens_total);
    set_mode(f, RD_MODE_ENFORCE);
    rd_decision after = decide(f, NULL, 0, 0, "");
    assert_int_equal(after.action, RD_ACTION_FAIL_FAST);
    assert_int_equal(after.breaker.generation, before.breaker.generation);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_enforce_answers_carry_no_shadow),
        T(test_admission_on_open_breaker_proceeds),
        T(test_failure_on_open_breaker_retries_while_attempts_remain),
        T(test_give_up_on_retry_time_becomes_retry),
        T(test_retry_that_misses_the_turn_deadline_stays),
        T(test_answers_enforce_agrees_with_are_unchanged),
        T(test_switching_modes_keeps_the_breaker),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
