/* What an answer of the classifier (server/domain/classify.c) holds
 * besides the rule, on a hand-built ruleset: the unknown default, the
 * suggestion a rule or its category gives, a manifest's overrides, the
 * kind and whether the tool ran, and the names of kinds, categories and
 * retryabilities. Hand-built, so the engine's semantics are checked
 * independently of the YAML loader. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "domain/classify.h"
#include "classify_fixture.h"

static rd_pattern pat(const char *lowered, bool boundary_start, bool boundary_end)
{
    return (rd_pattern){(char *)lowered, strlen(lowered), boundary_start, boundary_end};
}

static void test_unknown_default_transient_or_configured(void **state)
{
    rd_ruleset rs = make_ruleset(RD_TRANSIENT);
    rd_tool_error e = text_error("something odd happened");
    rd_classification c = classify(&rs, NULL, "t", &e);
    assert_string_equal(c.rule_id, "unknown");
    assert_int_equal(c.retryability, RD_TRANSIENT);
    assert_int_equal(c.category, RD_CAT_UNKNOWN);
    assert_string_equal(c.suggestion, "sugg unknown");
    assert_false(c.overridden);

    rs = make_ruleset(RD_PERMANENT);
    c = classify(&rs, NULL, "t", &e);
    assert_int_equal(c.retryability, RD_PERMANENT);
    assert_string_equal(c.rule_id, "unknown");

    /* Not set at all (a hand-made ruleset): 000 1.3's transient. */
    rs = make_ruleset(RD_RETRYABILITY_UNSPECIFIED);
    assert_int_equal(classify(&rs, NULL, "t", &e).retryability, RD_TRANSIENT);

    /* No rules and no error at all still give a complete answer. */
    c = classify(NULL, NULL, NULL, NULL);
    assert_string_equal(c.rule_id, "unknown");
    assert_int_equal(c.retryability, RD_TRANSIENT);
    assert_non_null(c.suggestion);
    assert_true(c.executed);
    assert_int_equal(c.retry_after_ms, 0);
}

static void test_suggestion_defaults_to_category(void **state)
{
    rd_ruleset rs = make_ruleset(RD_TRANSIENT);
    rd_tool_error e = text_error("timeout");
    assert_string_equal(classify(&rs, NULL, "t", &e).suggestion, "sugg transient");
}

static void test_override_replaces_only_fields_it_sets(void **state)
{
    rd_ruleset rs = make_ruleset(RD_TRANSIENT);
    rd_int_range r503[] = {{503, 503}};
    rd_pattern p503[] = {pat("503", true, true)};
    rd_pattern psusp[] = {pat("suspended", false, false)};
    rd_override ovs[] = {
        {.when = {.patterns = psusp, .n_patterns = 1}, .retryability = RD_PERMANENT,
         .category = RD_CAT_PERMISSION, .suggestion = (char *)"account suspended"},
        {.when = {.http_status = r503, .n_http_status = 1}, .retryability = RD_PERMANENT},
        {.when = {.patterns = p503, .n_patterns = 1}, .retryability = RD_PERMANENT,
         .category = RD_CAT_LOGIC},
    };
    rd_tool_config tool = {.id = (char *)"custom_api", .overrides = ovs, .n_overrides = 3};

    rd_tool_error e = text_error("Service unavailable (503)");
    e.http_status = 503;
    rd_classification c = classify(&rs, &tool, "custom_api", &e);
    assert_true(c.overridden);
    assert_string_equal(c.rule_id, "s.http5xx"); /* the base rule stays named */
    assert_int_equal(c.retryability, RD_PERMANENT);
    assert_int_equal(c.category, RD_CAT_EXTERNAL_SERVICE); /* not set: kept */
    assert_string_equal(c.suggestion, "sugg external");

    /* First matching override wins, and sets all three fields. */
    e = text_error("account suspended (503)");
    e.http_status = 503;
    c = classify(&rs, &tool, "custom_api", &e);
    assert_true(c.overridden);
    assert_int_equal(c.category, RD_CAT_PERMISSION);
    assert_string_equal(c.suggestion, "account suspended");

    /* Category changed without a suggestion: the new category's default. */
    e = text_error("upstream said 503");
    c = classify(&rs, &tool, "custom_api", &e);
    assert_string_equal(c.rule_id, "m.5xx");
    assert_int_equal(c.category, RD_CAT_LOGIC);
    assert_string_equal(c.suggestion, "sugg logic");

    /* Nothing matches: the base answer, not overridden. */
    e = text_error("");
    e.http_status = 502;
    c = classify(&rs, &tool, "custom_api", &e);
    assert_false(c.overridden);
    assert_int_equal(c.retryability, RD_TRANSIENT);

    /* Without the manifest no override applies. */
    e.http_status = 503;
    c = classify(&rs, NULL, "custom_api", &e);
    assert_false(c.overridden);
    assert_int_equal(c.retryability, RD_TRANSIENT);
}

static void test_override_applies_after_unknown_default(void **state)
{
    rd_ruleset rs = make_ruleset(RD_TRANSIENT);
    rd_pattern p[] = {pat("weird", false, false)};
    rd_override ov = {.when = {.patterns = p, .n_patterns = 1}, .retryability = RD_PERMANENT};
    rd_tool_config tool = {.id = (char *)"x", .overrides = &ov, .n_overrides = 1};
    rd_tool_error e = text_error("a weird failure");
    rd_classification c = classify(&rs, &tool, "x", &e);
    assert_string_equal(c.rule_id, "unknown");
    assert_true(c.overridden);
    assert_int_equal(c.retryability, RD_PERMANENT);
    assert_int_equal(c.category, RD_CAT_UNKNOWN);
}

static void test_kind_given_wins_over_rule_kind(void **state)
{
    rd_ruleset rs = make_ruleset(RD_TRANSIENT);
    rd_tool_error e = text_error("read timeout");
    rd_classification c = classify(&rs, NULL, "t", &e);
    assert_int_equal(c.kind, RD_KIND_TIMEOUT); /* from the rule */
    assert_true(c.executed);

    e.kind = RD_KIND_EXECUTION_ERROR;
    c = classify(&rs, NULL, "t", &e);
    assert_int_equal(c.kind, RD_KIND_EXECUTION_ERROR);

    e = text_error("");
    e.kind = RD_KIND_INVALID_PARAMETERS;
    c = classify(&rs, NULL, "t", &e);
    assert_string_equal(c.rule_id, "s.kind_invalid");
    assert_false(c.executed);

    e = text_error("nothing known");
    c = classify(&rs, NULL, "t", &e);
    assert_int_equal(c.kind, RD_KIND_UNSPECIFIED);
    assert_true(c.executed);
}

static void test_executed_map_for_every_kind(void **state)
{
    assert_false(rd_kind_executed(RD_KIND_UNKNOWN_TOOL));
    assert_false(rd_kind_executed(RD_KIND_NOT_PERMITTED));
    assert_false(rd_kind_executed(RD_KIND_INVALID_PARAMETERS));
    assert_false(rd_kind_executed(RD_KIND_LIMIT_EXCEEDED));
    assert_false(rd_kind_executed(RD_KIND_CANCELED));
    assert_true(rd_kind_executed(RD_KIND_TIMEOUT));
    assert_true(rd_kind_executed(RD_KIND_TRANSPORT_ERROR));
    assert_true(rd_kind_executed(RD_KIND_EXECUTION_ERROR));
    assert_true(rd_kind_executed(RD_KIND_INTERNAL_ERROR));
    assert_true(rd_kind_executed(RD_KIND_UNSPECIFIED));
    assert_true(rd_kind_executed((rd_error_kind)42));

    /* classify copies the map for the given kind. */
    rd_ruleset rs = make_ruleset(RD_TRANSIENT);
    for (int k = 0; k < RD_KIND_COUNT; k++) {
        rd_tool_error e = text_error("x");
        e.kind = (rd_error_kind)k;
        rd_classification c = classify(&rs, NULL, "t", &e);
        assert_int_equal(c.kind, k);
        assert_int_equal(c.executed, rd_kind_executed((rd_error_kind)k));
    }
}

static void test_names(void **state)
{
    const char *kinds[RD_KIND_COUNT] = {"",
                                        "unknown_tool",
                                        "not_permitted",
                                        "invalid_parameters",
                                        "limit_exceeded",
                                        "canceled",
                                        "timeout",
                                        "transport_error",
                                        "execution_error",
                                        "internal_error"};
    for (int k = 0; k < RD_KIND_COUNT; k++)
        assert_string_equal(rd_kind_name((rd_error_kind)k), kinds[k]);
    assert_string_equal(rd_kind_name((rd_error_kind)99), "");

    const char *cats[RD_CAT_COUNT] = {"",           "transient", "input_validation",
                                      "external_service", "permission", "logic",
                                      "resource",   "unknown"};
    for (int c = 0; c < RD_CAT_COUNT; c++)
        assert_string_equal(rd_category_name((rd_category)c), cats[c]);
    assert_string_equal(rd_category_name((rd_category)99), "");

    assert_string_equal(rd_retryability_name(RD_TRANSIENT), "transient");
    assert_string_equal(rd_retryability_name(RD_PERMANENT), "permanent");
    assert_string_equal(rd_retryability_name(RD_RETRYABILITY_UNSPECIFIED), "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unknown_default_transient_or_configured),
        cmocka_unit_test(test_suggestion_defaults_to_category),
        cmocka_unit_test(test_override_replaces_only_fields_it_sets),
        cmocka_unit_test(test_override_applies_after_unknown_default),
        cmocka_unit_test(test_kind_given_wins_over_rule_kind),
        cmocka_unit_test(test_executed_map_for_every_kind),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests_name("classify answers", tests, NULL, NULL);
}
