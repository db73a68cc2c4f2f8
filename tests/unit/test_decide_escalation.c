/* Where the decision engine sends a failure it does not retry (003 sections
 * 1.5, 5 and 6): to an alternative tool, to escalation with a text for the
 * model, and down the dependency graph as a cascade; a manifest's override
 * of the classification. Over the in-memory store. Configuration:
 * tests/unit/fixtures/decide/. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "decide_calls.h"

/* ---- 6.4, 6.5: alternatives and escalation ---- */

static void test_permanent_with_alternative(void **state)
{
    fixture *f = *state;
    rd_tool_error err = error_text("Invalid hotel id");
    rd_decision d = fail_once(f, "hotel_search", &err, 1, 0);
    assert_int_equal(d.action, RD_ACTION_USE_ALTERNATIVE);
    assert_string_equal(d.alternative_tool_id, "hotel_search_backup");
    assert_int_equal(d.timeout_ms, 20000); /* the alternative's own timeout */
    assert_int_equal(d.n_cascade, 0);
    assert_string_equal(event_of(&d, RD_EV_ALTERNATIVE_USED, "hotel_search")->detail,
                        "Used alternative tool hotel_search_backup for hotel_search");
}

static void test_permanent_without_alternative_escalates(void **state)
{
    fixture *f = *state;
    rd_tool_error err = error_text("Invalid airport code: XYZ");
    rd_decision d = fail_once(f, "flight_search", &err, 1, 0);
    assert_int_equal(d.action, RD_ACTION_ESCALATE);
    assert_string_equal(d.reason, "permanent error: input_validation");
    assert_int_equal(d.classification.classification.retryability, RD_PERMANENT);
    assert_string_equal(d.classification.llm_message,
                        "Tool Execution Failed\nTool: flight_search\n"
                        "Error Type: input_validation\nMessage: Invalid airport code: XYZ\n\n"
                        "The tool failed and cannot be used for this request.");
    assert_int_equal(d.classification.llm_message_len, strlen(d.classification.llm_message));
    const rd_trace_event *ev = event_of(&d, RD_EV_ESCALATED, "flight_search");
    assert_int_equal(ev->decision, RD_ACTION_ESCALATE);

    err.exception_type = "ValueError";
    d = fail_once(f, "flight_search", &err, 1, 0);
    assert_non_null(strstr(d.classification.llm_message, "Error Type: ValueError\n"));
}

static void test_open_breaker_uses_alternative(void **state)
{
    fixture *f = *state;
    rd_decision d = open_breaker(f, "hotel_search");
    assert_int_equal(d.breaker.status, RD_BREAKER_OPEN);
    assert_int_equal(d.action, RD_ACTION_USE_ALTERNATIVE);
    assert_string_equal(d.alternative_tool_id, "hotel_search_backup");

    d = admission(f, "hotel_search");
    assert_int_equal(d.action, RD_ACTION_USE_ALTERNATIVE);
    assert_string_equal(d.alternative_tool_id, "hotel_search_backup");
    assert_int_equal(d.timeout_ms, 20000);

    /* when the alternative's own breaker is open too, fail fast */
    open_breaker(f, "hotel_search_backup");
    d = admission(f, "hotel_search");
    assert_int_equal(d.action, RD_ACTION_FAIL_FAST);
    assert_string_equal(d.alternative_tool_id, "");
}

/* ---- 5.x: cascades ---- */

static const rd_cascade_step *step_of(const rd_decision *d, const char *tool_id)
{
    for (size_t i = 0; i < d->n_cascade; i++)
        if (strcmp(d->cascade[i].tool_id, tool_id) == 0)
            return &d->cascade[i];
    fail_msg("no cascade step for %s", tool_id);
    return NULL;
}

static void test_cascade_from_request_plan(void **state)
{
    fixture *f = *state;
    const char *on_flight[] = {"flight_search"};
    rd_plan_step plan[] = {
        {.tool_id = "flight_search", .default_value = ""},
        {.tool_id = "compare_prices", .depends_on = on_flight, .n_depends_on = 1,
         .optional = true, .default_value = ""},
        {.tool_id = "create_itinerary", .depends_on = on_flight, .n_depends_on = 1,
         .default_value = ""},
        {.tool_id = "price_table", .depends_on = on_flight, .n_depends_on = 1,
         .has_default = true, .default_value = "{}"},
        {.tool_id = "hotel_search", .default_value = ""},
    };
    rd_tool_error err = error_text("Invalid airport code: XYZ");
    rd_decide_input in = input("flight_search", &err, 1);
    in.plan = plan;
    in.n_plan = 5;
    in.turn_id = "turn-5";
    rd_decision d = decide_ok(f, &in);
    assert_int_equal(d.action, RD_ACTION_ESCALATE);
    assert_int_equal(d.n_cascade, 3); /* 5.4: hotel_search untouched */
    assert_int_equal(step_of(&d, "compare_prices")->action, RD_CASCADE_SKIP);
    assert_int_equal(step_of(&d, "create_itinerary")->action, RD_CASCADE_ESCALATE);
    assert_int_equal(step_of(&d, "price_table")->action, RD_CASCADE_USE_DEFAULT);
    assert_string_equal(step_of(&d, "price_table")->default_value, "{}");

    assert_string_equal(event_of(&d, RD_EV_SKIPPED, "compare_prices")->detail,
                        "skipped: dependency flight_search failed");
    assert_string_equal(event_of(&d, RD_EV_ESCALATED, "create_itinerary")->detail,
                        "Required tool skipped due to dependency failure: "
                        "create_itinerary needs flight_search");
    assert_string_equal(event_of(&d, RD_EV_DEFAULT_USED, "price_table")->detail,
                        "Used default value for price_table");
    assert_int_equal(find_event(d.trace, d.n_trace, RD_EV_SKIPPED, "hotel_search"), -1);

    rd_turn_trace t = turn_ok(f, "turn-5");
    assert_int_equal(t.n_events, d.n_trace);
    assert_int_equal(t.summary.n_failed, 1);
    assert_string_equal(t.summary.failed[0], "flight_search");
    assert_int_equal(t.summary.n_skipped, 2);
}

static void test_cascade_from_manifest_graph(void **state)
{
    fixture *f = *state;
    rd_tool_error err = error_text("Invalid airport code: XYZ");
    rd_decision d = fail_once(f, "flight_search", &err, 1, 0);
    assert_int_equal(d.action, RD_ACTION_ESCALATE);
    assert_int_equal(d.n_cascade, 3);
    /* BFS: direct dependents in manifest (id) order, then theirs */
    assert_string_equal(d.cascade[0].tool_id, "compare_prices");
    assert_int_equal(d.cascade[0].action, RD_CASCADE_SKIP);
    assert_string_equal(d.cascade[1].tool_id, "price_summary");
    assert_int_equal(d.cascade[1].action, RD_CASCADE_USE_DEFAULT);
    assert_string_equal(d.cascade[1].default_value, "[]");
    assert_string_equal(d.cascade[2].tool_id, "create_itinerary");
    assert_int_equal(d.cascade[2].action, RD_CASCADE_ESCALATE);
}

/* Only a tool that ends failed cascades. */
static void test_no_cascade_on_retry_or_alternative(void **state)
{
    fixture *f = *state;
    rd_tool_error err = timeout_error();
    assert_int_equal(fail_once(f, "flight_search", &err, 1, 0).n_cascade, 0);
    rd_decision d = fail_once(f, "search_api", &err, 5, 0); /* GIVE_UP, no dependents */
    assert_int_equal(d.action, RD_ACTION_GIVE_UP);
    assert_int_equal(d.n_cascade, 0);
    rd_decision opened = open_breaker(f, "flight_search");
    assert_int_equal(opened.action, RD_ACTION_FAIL_FAST);
    assert_int_equal(opened.n_cascade, 3);
}

/* ---- 1.5: a manifest's classification override ---- */

/* 1.5 through the engine: the manifest's override applies. */
static void test_classify_applies_manifest_override(void **state)
{
    fixture *f = *state;
    rd_tool_error err = error_text("Service unavailable (503)");
    err.http_status = 503;
    rd_classify_result r;
    assert_int_equal(rd_engine_classify(&f->engine, "custom_api", &err, &f->ctx, &r, &f->st),
                     RD_OK);
    assert_int_equal(r.classification.retryability, RD_PERMANENT);
    assert_true(r.classification.overridden);
    assert_non_null(strstr(r.llm_message, "Tool: custom_api\n"));
    assert_int_equal(r.llm_message_len, strlen(r.llm_message));
    assert_int_equal(rd_engine_classify(&f->engine, "flight_search", &err, &f->ctx, &r, &f->st),
                     RD_OK);
    assert_int_equal(r.classification.retryability, RD_TRANSIENT);
}

/* The same override on the Decide path: the manifest's permanent 503
 * escalates at once where a tool without a manifest would retry. */
static void test_decide_applies_manifest_override(void **state)
{
    fixture *f = *state;
    rd_tool_error err = error_text("Service unavailable (503)");
    err.http_status = 503;
    rd_decision d = fail_once(f, "custom_api", &err, 1, 0);
    assert_true(d.classification.classification.overridden);
    assert_int_equal(d.classification.classification.retryability, RD_PERMANENT);
    assert_int_equal(d.action, RD_ACTION_ESCALATE);
    d = fail_once(f, "flight_search", &err, 1, 0);
    assert_false(d.classification.classification.overridden);
    assert_int_equal(d.action, RD_ACTION_RETRY);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_permanent_with_alternative),
        T(test_permanent_without_alternative_escalates),
        T(test_open_breaker_uses_alternative),
        T(test_cascade_from_request_plan),
        T(test_cascade_from_manifest_graph),
        T(test_no_cascade_on_retry_or_alternative),
        T(test_classify_applies_manifest_override),
        T(test_decide_applies_manifest_override),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
