/* Tests of the error classifier (server/domain/classify.c).
 *
 * Part A builds rulesets by hand, so the engine's semantics are checked
 * independently of the YAML loader. Part B loads the shipped configuration
 * (config/recovery.yaml -> rules.yaml, tools.d) and checks what users of
 * the service rely on: 003 section 1, one message per pattern group of 002,
 * the 004 additions and the structured tables. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "config/config.h"
#include "domain/classify.h"
#include "domain/err.h"
#include "domain/matcher.h"
#include "classify_shipped.h"
#include "mixed_text.h"

#ifndef RD_SOURCE_DIR
#define RD_SOURCE_DIR "."
#endif

/* ======================================================================
 * Part A: engine semantics on hand-built rulesets
 * ====================================================================== */

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

static rd_pattern pat(const char *lowered, bool boundary_start, bool boundary_end)
{
    return (rd_pattern){(char *)lowered, strlen(lowered), boundary_start, boundary_end};
}

static rd_tool_error text_error(const char *message)
{
    return (rd_tool_error){.message = message, .message_len = strlen(message), .code = "",
                           .exception_type = ""};
}

static rd_tool_error bytes_error(const char *bytes, size_t len)
{
    return (rd_tool_error){.message = bytes, .message_len = len, .code = "", .exception_type = ""};
}

/* Condition storage for the hand-built ruleset (the loader owns these in
 * real use; here they are static and never freed). */
static rd_pattern P_INVALID[] = {{(char *)"invalid", 7, true, true}};
static rd_int_range R_429[] = {{429, 429}};
static rd_int_range R_5XX[] = {{500, 599}};
static rd_int_range R_GRPC_UNAVAILABLE[] = {{14, 14}};
static char *C_QUOTA[] = {(char *)"insufficient_quota"};
static char *E_TIMEOUT[] = {(char *)"ConnectTimeout", (char *)"asyncio.TimeoutError"};
static rd_error_kind K_INVALID[] = {RD_KIND_INVALID_PARAMETERS};
static rd_pattern P_TIMEOUT[] = {{(char *)"timeout", 7, false, false}};
static char *T_BASH[] = {(char *)"bash"};
static rd_pattern P_CMD_NOT_FOUND[] = {{(char *)"command not found", 17, false, false}};
static char *T_WEB[] = {(char *)"web_*"};
static rd_pattern P_REDIRECT[] = {{(char *)"redirect", 8, false, false}};
static rd_pattern P_429[] = {{(char *)"429", 3, true, true}};
static rd_pattern P_5XX[] = {{(char *)"500", 3, true, true}, {(char *)"503", 3, true, true}};
static rd_pattern P_ALPHA[] = {{(char *)"alpha", 5, false, false}};
static rd_pattern P_ALPHA_BETA[] = {{(char *)"alpha beta", 10, false, false}};
static rd_error_source S_MCP[] = {RD_SOURCE_MCP};
static rd_pattern P_CLOSED[] = {{(char *)"closed", 6, false, false}};

/* Deliberately starts with a message rule: structured rules must still be
 * tried first, whatever their place in the file. */
static rd_rule RULES[] = {
    {.id = (char *)"m.invalid", .when = {.patterns = P_INVALID, .n_patterns = 1},
     .retryability = RD_PERMANENT, .category = RD_CAT_INPUT_VALIDATION},
    {.id = (char *)"s.http429", .when = {.http_status = R_429, .n_http_status = 1},
     .retryability = RD_TRANSIENT, .category = RD_CAT_EXTERNAL_SERVICE, .structured = true},
    {.id = (char *)"s.http5xx", .when = {.http_status = R_5XX, .n_http_status = 1},
     .retryability = RD_TRANSIENT, .category = RD_CAT_EXTERNAL_SERVICE, .structured = true},
    {.id = (char *)"s.grpc14", .when = {.grpc_code = R_GRPC_UNAVAILABLE, .n_grpc_code = 1},
     .retryability = RD_TRANSIENT, .category = RD_CAT_EXTERNAL_SERVICE, .structured = true},
    {.id = (char *)"s.quota", .when = {.codes = C_QUOTA, .n_codes = 1},
     .retryability = RD_PERMANENT, .category = RD_CAT_RESOURCE,
     .suggestion = (char *)"add credits", .structured = true},
    {.id = (char *)"s.exc_timeout",
     .when = {.exception_types = E_TIMEOUT, .n_exception_types = 2},
     .retryability = RD_TRANSIENT, .category = RD_CAT_TRANSIENT, .kind = RD_KIND_TIMEOUT,
     .structured = true},
    {.id = (char *)"s.kind_invalid", .when = {.kinds = K_INVALID, .n_kinds = 1},
     .retryability = RD_PERMANENT, .category = RD_CAT_INPUT_VALIDATION, .structured = true},
    {.id = (char *)"m.timeout", .when = {.patterns = P_TIMEOUT, .n_patterns = 1},
     .retryability = RD_TRANSIENT, .category = RD_CAT_TRANSIENT, .kind = RD_KIND_TIMEOUT},
    {.id = (char *)"m.bash",
     .when = {.tools = T_BASH, .n_tools = 1, .patterns = P_CMD_NOT_FOUND, .n_patterns = 1},
     .retryability = RD_PERMANENT, .category = RD_CAT_INPUT_VALIDATION},
    {.id = (char *)"m.web",
     .when = {.tools = T_WEB, .n_tools = 1, .patterns = P_REDIRECT, .n_patterns = 1},
     .retryability = RD_PERMANENT, .category = RD_CAT_INPUT_VALIDATION},
    {.id = (char *)"m.429", .when = {.patterns = P_429, .n_patterns = 1},
     .retryability = RD_TRANSIENT, .category = RD_CAT_EXTERNAL_SERVICE},
    {.id = (char *)"m.5xx", .when = {.patterns = P_5XX, .n_patterns = 2},
     .retryability = RD_TRANSIENT, .category = RD_CAT_EXTERNAL_SERVICE},
    {.id = (char *)"m.first", .when = {.patterns = P_ALPHA, .n_patterns = 1},
     .retryability = RD_PERMANENT, .category = RD_CAT_LOGIC},
    {.id = (char *)"m.second", .when = {.patterns = P_ALPHA_BETA, .n_patterns = 1},
     .retryability = RD_TRANSIENT, .category = RD_CAT_TRANSIENT},
    {.id = (char *)"m.mcp_closed",
     .when = {.sources = S_MCP, .n_sources = 1, .patterns = P_CLOSED, .n_patterns = 1},
     .retryability = RD_TRANSIENT, .category = RD_CAT_TRANSIENT},
};

static rd_ruleset make_ruleset(rd_retryability unknown)
{
    rd_ruleset rs = {.rules = RULES, .n_rules = LEN(RULES), .unknown_retryability = unknown};
    rs.category_suggestion[RD_CAT_TRANSIENT] = (char *)"sugg transient";
    rs.category_suggestion[RD_CAT_INPUT_VALIDATION] = (char *)"sugg input";
    rs.category_suggestion[RD_CAT_EXTERNAL_SERVICE] = (char *)"sugg external";
    rs.category_suggestion[RD_CAT_PERMISSION] = (char *)"sugg permission";
    rs.category_suggestion[RD_CAT_LOGIC] = (char *)"sugg logic";
    rs.category_suggestion[RD_CAT_RESOURCE] = (char *)"sugg resource";
    rs.category_suggestion[RD_CAT_UNKNOWN] = (char *)"sugg unknown";
    return rs;
}

static rd_classification classify(const rd_ruleset *rs, const rd_tool_config *tool,
                                  const char *tool_id, const rd_tool_error *err)
{
    rd_classification c;
    memset(&c, 0xA5, sizeof c); /* every field must be written */
    rd_classify(rs, tool, tool_id, err, &c);
    return c;
}

static const char *rule_for_text(const char *tool_id, const char *message)
{
    rd_ruleset rs = make_ruleset(RD_TRANSIENT);
    rd_tool_error e = text_error(message);
    return classify(&rs, NULL, tool_id, &e).rule_id;
}

static void test_structured_rule_beats_earlier_message_rule(void **state)
{
    rd_ruleset rs = make_ruleset(RD_TRANSIENT);
    rd_tool_error e = text_error("invalid request");
    e.http_status = 429;
    rd_classification c = classify(&rs, NULL, "t", &e);
    assert_string_equal(c.rule_id, "s.http429");
    assert_int_equal(c.retryability, RD_TRANSIENT);
    assert_int_equal(c.category, RD_CAT_EXTERNAL_SERVICE);
    assert_false(c.overridden);

    /* Without the status the message decides. */
    e.http_status = 0;
    c = classify(&rs, NULL, "t", &e);
    assert_string_equal(c.rule_id, "m.invalid");
    assert_int_equal(c.retryability, RD_PERMANENT);
}

static void test_first_matching_rule_in_file_order_wins(void **state)
{
    assert_string_equal(rule_for_text("t", "alpha beta gamma"), "m.first");
    /* 429 (structured) listed before 5xx: a status matches exactly one. */
    rd_ruleset rs = make_ruleset(RD_TRANSIENT);
    rd_tool_error e = text_error("");
    e.http_status = 503;
    assert_string_equal(classify(&rs, NULL, "t", &e).rule_id, "s.http5xx");
    e.http_status = 0;
    e.grpc_code = 14;
    assert_string_equal(classify(&rs, NULL, "t", &e).rule_id, "s.grpc14");
}

static void test_number_patterns_match_whole_tokens_only(void **state)
{
    assert_string_equal(rule_for_text("t", "took 4290 ms"), "unknown");
    assert_string_equal(rule_for_text("t", "port 5001 closed"), "unknown");
    assert_string_equal(rule_for_text("t", "id 1429"), "unknown");
    assert_string_equal(rule_for_text("t", "error_429"), "unknown"); /* '_' is a token byte */
    assert_string_equal(rule_for_text("t", "429abc"), "unknown");
    assert_string_equal(rule_for_text("t", "HTTP 429"), "m.429");
    assert_string_equal(rule_for_text("t", "429"), "m.429");
    assert_string_equal(rule_for_text("t", "(429)"), "m.429");
    /* A rejected occurrence does not hide a later good one. */
    assert_string_equal(rule_for_text("t", "after 4290 ms got 429"), "m.429");
    assert_string_equal(rule_for_text("t", "status=500;"), "m.5xx");
    assert_string_equal(rule_for_text("t", "upstream said 503."), "m.5xx");
}

static void test_word_boundaries_at_both_ends(void **state)
{
    assert_string_equal(rule_for_text("t", "Invalid"), "m.invalid");
    assert_string_equal(rule_for_text("t", "value (invalid)"), "m.invalid");
    assert_string_equal(rule_for_text("t", "cache invalidated"), "unknown");
    assert_string_equal(rule_for_text("t", "preinvalid"), "unknown");
    /* No boundary flags: substring anywhere. */
    assert_string_equal(rule_for_text("t", "ReadTimeoutError"), "m.timeout");
}

static void test_matching_is_case_insensitive(void **state)
{
    assert_string_equal(rule_for_text("t", "CONNECTION TIMEOUT"), "m.timeout");
    assert_string_equal(rule_for_text("t", "InVaLiD"), "m.invalid");
    assert_string_equal(rule_for_text("bash", "bash: x: Command Not Found"), "m.bash");
}

static void test_exception_type_exact_or_last_dotted_part(void **state)
{
    rd_match m = {.exception_types = E_TIMEOUT, .n_exception_types = 2};
    rd_tool_error e = text_error("");
    const char *yes[] = {"requests.exceptions.ConnectTimeout", "ConnectTimeout",
                         "connecttimeout", "httpx.CONNECTTIMEOUT", "asyncio.TimeoutError",
                         "ASYNCIO.timeouterror"};
    const char *no[] = {"", "ConnectTimeoutError", "requests.ConnectTimeout.Extra",
                        "TimeoutError", "foo.asyncio.TimeoutError", "Connect", "."};
    for (size_t i = 0; i < LEN(yes); i++) {
        e.exception_type = yes[i];
        if (!rd_match_error(&m, "t", &e))
            fail_msg("expected match for \"%s\"", yes[i]);
    }
    for (size_t i = 0; i < LEN(no); i++) {
        e.exception_type = no[i];
        if (rd_match_error(&m, "t", &e))
            fail_msg("unexpected match for \"%s\"", no[i]);
    }
    rd_ruleset rs = make_ruleset(RD_TRANSIENT);
    e.exception_type = "requests.exceptions.ConnectTimeout";
    rd_classification c = classify(&rs, NULL, "t", &e);
    assert_string_equal(c.rule_id, "s.exc_timeout");
    assert_int_equal(c.kind, RD_KIND_TIMEOUT);
}

static void test_tool_condition_exact_or_prefix(void **state)
{
    assert_string_equal(rule_for_text("bash", "command not found"), "m.bash");
    assert_string_equal(rule_for_text("bash2", "command not found"), "unknown");
    assert_string_equal(rule_for_text("Bash", "command not found"), "unknown");
    assert_string_equal(rule_for_text("", "command not found"), "unknown");
    assert_string_equal(rule_for_text("web_fetch", "too many redirects"), "m.web");
    assert_string_equal(rule_for_text("web_", "redirect"), "m.web");
    assert_string_equal(rule_for_text("web", "redirect"), "unknown");
    assert_string_equal(rule_for_text("my_web_fetch", "redirect"), "unknown");

    rd_ruleset rs = make_ruleset(RD_TRANSIENT);
    rd_tool_error e = text_error("redirect");
    assert_string_equal(classify(&rs, NULL, NULL, &e).rule_id, "unknown");
}

static void test_code_and_source_conditions(void **state)
{
    rd_ruleset rs = make_ruleset(RD_TRANSIENT);
    rd_tool_error e = text_error("rate limit");
    e.code = "INSUFFICIENT_QUOTA";
    rd_classification c = classify(&rs, NULL, "t", &e);
    assert_string_equal(c.rule_id, "s.quota");
    assert_string_equal(c.suggestion, "add credits"); /* the rule's own text */
    e.code = "insufficient_quota_v2";
    assert_string_equal(classify(&rs, NULL, "t", &e).rule_id, "unknown");

    e = text_error("connection closed");
    assert_string_equal(classify(&rs, NULL, "t", &e).rule_id, "unknown");
    e.source = RD_SOURCE_MCP;
    assert_string_equal(classify(&rs, NULL, "t", &e).rule_id, "m.mcp_closed");
    e.source = RD_SOURCE_LLM;
    assert_string_equal(classify(&rs, NULL, "t", &e).rule_id, "unknown");
}

static void test_unset_fields_never_match_a_condition(void **state)
{
    rd_int_range zero_range[] = {{0, 599}};
    rd_error_kind unspecified[] = {RD_KIND_UNSPECIFIED};
    rd_match by_status = {.http_status = zero_range, .n_http_status = 1};
    rd_match by_grpc = {.grpc_code = zero_range, .n_grpc_code = 1};
    rd_match by_kind = {.kinds = unspecified, .n_kinds = 1};
    rd_tool_error e = text_error("anything");
    assert_false(rd_match_error(&by_status, "t", &e));
    assert_false(rd_match_error(&by_grpc, "t", &e));
    assert_false(rd_match_error(&by_kind, "t", &e));
    e.http_status = 200;
    assert_true(rd_match_error(&by_status, "t", &e));
    assert_false(rd_match_error(NULL, "t", &e));
    assert_false(rd_match_error(&by_status, "t", NULL));
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

static bool valid_utf8(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t k = p[i] < 0x80 ? 1 : (p[i] & 0xE0) == 0xC0 ? 2 : (p[i] & 0xF0) == 0xE0 ? 3
                                   : (p[i] & 0xF8) == 0xF0 ? 4 : 0;
        if (k == 0 || i + k > n)
            return false;
        for (size_t j = 1; j < k; j++)
            if ((p[i + j] & 0xC0) != 0x80)
                return false;
        i += k;
    }
    return true;
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

/* Heap block of exactly len bytes: ASan catches any over-read. */
static rd_classification classify_bytes(const char *tool_id, const char *bytes, size_t len)
{
    rd_ruleset rs = make_ruleset(RD_TRANSIENT);
    char *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    memcpy(copy, bytes, len);
    rd_tool_error e = bytes_error(copy, len);
    rd_classification c = classify(&rs, NULL, tool_id, &e);
    free(copy);
    return c;
}

static void test_hostile_messages(void **state)
{
    /* Text after NUL bytes is still read. */
    assert_string_equal(classify_bytes("t", "\0\0read timeout", 14).rule_id, "m.timeout");
    /* Invalid UTF-8 around a token: bytes >= 0x80 are not token bytes. */
    assert_string_equal(classify_bytes("t", "\xFF\xFE" "429\xC3", 6).rule_id, "m.429");
    /* A pattern cut off by the length does not match. */
    assert_string_equal(classify_bytes("t", "timeout", 6).rule_id, "unknown");
    assert_string_equal(classify_bytes("t", "got 4290", 7).rule_id, "m.429");
    /* Empty messages, with and without a pointer. */
    assert_string_equal(classify_bytes("t", "", 0).rule_id, "unknown");
    rd_ruleset rs = make_ruleset(RD_TRANSIENT);
    rd_tool_error e = bytes_error(NULL, 100);
    assert_string_equal(classify(&rs, NULL, "t", &e).rule_id, "unknown");
}

static void test_64k_messages(void **state)
{
    size_t len = 65536;
    char *big = malloc(len);
    assert_non_null(big);

    memset(big, 'a', len);
    assert_string_equal(classify_bytes("t", big, len).rule_id, "unknown");
    memcpy(big + len - 3, "503", 3);
    assert_string_equal(classify_bytes("t", big, len).rule_id, "unknown"); /* "a503" */
    big[len - 4] = ' ';
    assert_string_equal(classify_bytes("t", big, len).rule_id, "m.5xx");

    memset(big, '4', len); /* digits everywhere, no whole-token 429 */
    assert_string_equal(classify_bytes("t", big, len).rule_id, "unknown");

    for (size_t i = 0; i < len; i++)
        big[i] = (char)(i * 131 + 7); /* every byte value, NULs included */
    rd_classification c = classify_bytes("t", big, len);
    assert_non_null(c.rule_id);
    assert_int_equal(rd_retry_hint_from_text(big, len) >= 0, 1);

    char *out = malloc(4 * len);
    assert_non_null(out);
    size_t n = rd_llm_message(out, 4 * len, "t", "E", big, len);
    assert_true(n < 4 * len);
    assert_true(valid_utf8(out, n));
    assert_int_equal(strlen(out), n);
    n = rd_llm_message(out, 1000, "t", "E", big, len);
    assert_true(n < 1000 && valid_utf8(out, n));
    free(out);
    free(big);
}


/* ---- mixed rules: structured conditions refined by message patterns ---- */

static rd_int_range R_403[] = {{403, 403}};
static rd_pattern P_RATE[] = {{(char *)"rate limit", 10, false, false}};
static rd_pattern P_SPECIAL[] = {{(char *)"special", 7, false, false}};
static rd_pattern P_BOOM[] = {{(char *)"boom", 4, false, false}};
static char *C_E1[] = {(char *)"E1"};
static rd_error_kind K_TIMEOUT[] = {RD_KIND_TIMEOUT};

/* A message rule first, then a mixed rule before the structured rule it
 * refines, a mixed rule after a structured rule that already decides, and
 * a rule qualified only by tool (a message rule). */
static rd_rule MIXED_RULES[] = {
    {.id = (char *)"m.rate", .when = {.patterns = P_RATE, .n_patterns = 1},
     .retryability = RD_TRANSIENT, .category = RD_CAT_EXTERNAL_SERVICE},
    {.id = (char *)"x.forbidden_rate",
     .when = {.http_status = R_403, .n_http_status = 1, .patterns = P_RATE, .n_patterns = 1},
     .retryability = RD_TRANSIENT, .category = RD_CAT_EXTERNAL_SERVICE},
    {.id = (char *)"s.forbidden", .when = {.http_status = R_403, .n_http_status = 1},
     .retryability = RD_PERMANENT, .category = RD_CAT_PERMISSION},
    {.id = (char *)"s.code", .when = {.codes = C_E1, .n_codes = 1},
     .retryability = RD_PERMANENT, .category = RD_CAT_LOGIC},
    {.id = (char *)"x.code_refined",
     .when = {.codes = C_E1, .n_codes = 1, .patterns = P_SPECIAL, .n_patterns = 1},
     .retryability = RD_TRANSIENT, .category = RD_CAT_TRANSIENT},
    {.id = (char *)"m.tool_only",
     .when = {.tools = T_BASH, .n_tools = 1, .patterns = P_BOOM, .n_patterns = 1},
     .retryability = RD_PERMANENT, .category = RD_CAT_INPUT_VALIDATION},
    {.id = (char *)"s.kind", .when = {.kinds = K_TIMEOUT, .n_kinds = 1},
     .retryability = RD_TRANSIENT, .category = RD_CAT_TRANSIENT},
};

/* rule_id with the rules evaluated one by one and with the compiled
 * matcher; both must agree. */
static const char *mixed_rule_for(const char *tool_id, rd_tool_error e)
{
    rd_ruleset rs = {.rules = MIXED_RULES, .n_rules = LEN(MIXED_RULES)};
    rd_classification plain = classify(&rs, NULL, tool_id, &e);
    assert_int_equal(rd_matcher_build(&rs, &rs.matcher), RD_OK);
    rd_classification compiled = classify(&rs, NULL, tool_id, &e);
    rd_matcher_free(rs.matcher);
    assert_string_equal(plain.rule_id, compiled.rule_id);
    return plain.rule_id;
}

static void test_mixed_rules_refine_structured_signals(void **state)
{
    rd_tool_error e = text_error("API rate limit exceeded for 203.0.113.7");
    e.http_status = 403;
    /* structured pass first: the mixed rule beats the earlier message rule */
    assert_string_equal(mixed_rule_for("t", e), "x.forbidden_rate");
    /* patterns that do not occur: the next structured rule decides */
    e = text_error("Forbidden");
    e.http_status = 403;
    assert_string_equal(mixed_rule_for("t", e), "s.forbidden");
    /* without the status the same text is a message rule's */
    e = text_error("API rate limit exceeded");
    assert_string_equal(mixed_rule_for("t", e), "m.rate");
    /* file order inside the structured pass: the earlier pure rule wins */
    e = text_error("something special");
    e.code = "e1";
    assert_string_equal(mixed_rule_for("t", e), "s.code");
    /* tool and source do not make a rule structured */
    e = text_error("boom");
    e.kind = RD_KIND_TIMEOUT;
    assert_string_equal(mixed_rule_for("bash", e), "s.kind");
    e.kind = RD_KIND_UNSPECIFIED;
    assert_string_equal(mixed_rule_for("bash", e), "m.tool_only");

    assert_false(rd_match_is_structured(&MIXED_RULES[0].when));
    assert_true(rd_match_is_structured(&MIXED_RULES[1].when));
    assert_true(rd_match_is_structured(&MIXED_RULES[2].when));
    assert_false(rd_match_is_structured(&MIXED_RULES[5].when));
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

/* ---- the multi-pattern matcher ---- */

static rd_pattern MP_HERS[] = {{(char *)"hers", 4, false, false}};
static rd_pattern MP_HIS[] = {{(char *)"his", 3, false, false}};
static rd_pattern MP_SHE[] = {{(char *)"she", 3, false, false}};
static rd_pattern MP_HE[] = {{(char *)"he", 2, false, false}};
static rd_pattern MP_ABC[] = {{(char *)"abc", 3, false, false}};
static rd_pattern MP_BC[] = {{(char *)"bc", 2, false, false}};
static rd_pattern MP_CAT[] = {{(char *)"cat", 3, true, true}};
static rd_pattern MP_429[] = {{(char *)"429", 3, true, true}};
static rd_pattern MP_END[] = {{(char *)"end", 3, false, true}};
/* the same text twice in one rule, and shared with another rule */
static rd_pattern MP_SHARED[] = {{(char *)"bc", 2, false, false}, {(char *)"bc", 2, false, false}};

static rd_rule MATCHER_RULES[] = {
    {.id = (char *)"hers", .when = {.patterns = MP_HERS, .n_patterns = 1}},
    {.id = (char *)"his", .when = {.patterns = MP_HIS, .n_patterns = 1}},
    {.id = (char *)"she", .when = {.patterns = MP_SHE, .n_patterns = 1}},
    {.id = (char *)"he", .when = {.patterns = MP_HE, .n_patterns = 1}},
    {.id = (char *)"abc", .when = {.patterns = MP_ABC, .n_patterns = 1}},
    {.id = (char *)"bc", .when = {.patterns = MP_BC, .n_patterns = 1}},
    {.id = (char *)"cat", .when = {.patterns = MP_CAT, .n_patterns = 1}},
    {.id = (char *)"429", .when = {.patterns = MP_429, .n_patterns = 1}},
    {.id = (char *)"end", .when = {.patterns = MP_END, .n_patterns = 1}},
    {.id = (char *)"shared", .when = {.patterns = MP_SHARED, .n_patterns = 2}},
};

typedef struct hit_log {
    unsigned seen;    /* bit per rule index */
    size_t visits;
    size_t bound;     /* what visit returns */
} hit_log;

static size_t log_hit(void *ctx, size_t rule)
{
    hit_log *h = ctx;
    h->seen |= 1u << rule;
    h->visits++;
    return h->bound;
}

#define BIT(name) (1u << rule_index(name))

static unsigned rule_index(const char *id)
{
    for (unsigned i = 0; i < LEN(MATCHER_RULES); i++)
        if (strcmp(MATCHER_RULES[i].id, id) == 0)
            return i;
    fail_msg("no rule %s", id);
    return 0;
}

/* Rules hit in bytes[0..len), from a heap copy of exactly len bytes so
 * ASan sees any read past the end. */
static hit_log scan_bytes(const rd_matcher *m, const char *bytes, size_t len, size_t bound)
{
    char *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    memcpy(copy, bytes, len);
    hit_log h = {0, 0, bound};
    rd_matcher_scan(m, copy, len, bound, log_hit, &h);
    free(copy);
    return h;
}

static unsigned hits(const rd_matcher *m, const char *text)
{
    return scan_bytes(m, text, strlen(text), SIZE_MAX).seen;
}

static int build_matcher_rules(void **state)
{
    rd_ruleset rs = {.rules = MATCHER_RULES, .n_rules = LEN(MATCHER_RULES)};
    rd_matcher *m = NULL;
    if (rd_matcher_build(&rs, &m) != RD_OK)
        return -1;
    *state = m;
    return 0;
}

static int free_matcher_rules(void **state)
{
    rd_matcher_free(*state);
    return 0;
}

static void test_matcher_overlapping_and_suffix_patterns(void **state)
{
    const rd_matcher *m = *state;
    assert_int_equal(rd_matcher_pattern_count(m), 9); /* "bc" twice in one rule counts once */
    /* every overlapping occurrence is found in one pass */
    assert_int_equal(hits(m, "ushers"), BIT("she") | BIT("he") | BIT("hers"));
    assert_int_equal(hits(m, "USHERS"), BIT("she") | BIT("he") | BIT("hers"));
    assert_int_equal(hits(m, "this"), BIT("his"));
    /* a pattern that is a suffix of another is reported with it */
    assert_int_equal(hits(m, "abc"), BIT("abc") | BIT("bc") | BIT("shared"));
    assert_int_equal(hits(m, "xbc"), BIT("bc") | BIT("shared"));
    assert_int_equal(hits(m, "ab c"), 0);
    assert_int_equal(hits(m, ""), 0);
    /* a rule listing the same pattern twice is visited once per occurrence */
    hit_log h = scan_bytes(m, "bc", 2, SIZE_MAX);
    assert_int_equal(h.visits, 2); /* rules "bc" and "shared" */
}

static void test_matcher_boundaries(void **state)
{
    const rd_matcher *m = *state;
    /* at the start and end of the buffer, and between non-token bytes */
    assert_int_equal(hits(m, "cat"), BIT("cat"));
    assert_int_equal(hits(m, "a cat."), BIT("cat"));
    assert_int_equal(hits(m, "(CAT)"), BIT("cat"));
    assert_int_equal(hits(m, "concat"), 0);
    assert_int_equal(hits(m, "cats"), 0);
    assert_int_equal(hits(m, "_cat"), 0);
    assert_int_equal(hits(m, "cat9"), 0);
    /* a rejected occurrence does not hide a later one */
    assert_int_equal(hits(m, "cats and a cat"), BIT("cat"));
    assert_int_equal(hits(m, "x4290 or 429"), BIT("429"));
    assert_int_equal(hits(m, "4290"), 0);
    /* boundary at one end only */
    assert_int_equal(hits(m, "weekend"), BIT("end"));
    assert_int_equal(hits(m, "endless"), 0);
    /* bytes >= 0x80 and NUL are not token bytes */
    assert_int_equal(scan_bytes(m, "\xC3" "cat\xA9", 5, SIZE_MAX).seen, BIT("cat"));
    assert_int_equal(scan_bytes(m, "\0cat\0", 5, SIZE_MAX).seen, BIT("cat"));
    /* NUL inside a would-be match breaks it; text after NUL is read */
    assert_int_equal(scan_bytes(m, "he\0rs", 5, SIZE_MAX).seen, BIT("he"));
    assert_int_equal(scan_bytes(m, "\0\0\0his", 6, SIZE_MAX).seen, BIT("his"));
    /* only len bytes are read */
    assert_int_equal(scan_bytes(m, "hers", 3, SIZE_MAX).seen, BIT("he"));
}

static void test_matcher_bound_limits_visits(void **state)
{
    const rd_matcher *m = *state;
    /* rules at or past the bound are not visited */
    hit_log h = scan_bytes(m, "ushers abc", 10, rule_index("he"));
    assert_int_equal(h.seen, BIT("she") | BIT("hers"));
}

static void test_matcher_64k_is_linear(void **state)
{
    const rd_matcher *m = *state;
    size_t len = 65536;
    char *big = malloc(len);
    assert_non_null(big);
    /* a hit at every other byte: each occurrence visits its rules once */
    for (size_t i = 0; i < len; i += 2)
        memcpy(big + i, "he", 2);
    hit_log h = scan_bytes(m, big, len, SIZE_MAX);
    assert_int_equal(h.seen, BIT("he"));
    assert_int_equal(h.visits, len / 2);
    /* the pattern at the very end of the buffer */
    memset(big, 'x', len);
    memcpy(big + len - 3, "cat", 3);
    big[len - 4] = ' ';
    assert_int_equal(scan_bytes(m, big, len, SIZE_MAX).seen, BIT("cat"));
    free(big);
}

/* Texts of every length up to well past the one from which two walks
 * read them (matcher.c): an occurrence at every offset, across the point
 * where the walks meet included, is found and visited once. */
static void test_matcher_two_walks_find_every_offset(void **state)
{
    const rd_matcher *m = *state;
    char text[160];
    for (size_t len = 4; len <= sizeof text; len++)
        for (size_t at = 0; at + 4 <= len; at++) {
            memset(text, ' ', sizeof text);
            memcpy(text + at, "hers", 4);
            hit_log h = scan_bytes(m, text, len, SIZE_MAX);
            assert_int_equal(h.seen, BIT("he") | BIT("hers"));
            assert_int_equal(h.visits, 2);
        }
}

/* rd_matcher_build on an empty ruleset and on rules without patterns */
static void test_matcher_without_patterns(void **state)
{
    rd_ruleset empty = {0};
    rd_matcher *m = NULL;
    assert_int_equal(rd_matcher_build(&empty, &m), RD_OK);
    assert_int_equal(rd_matcher_pattern_count(m), 0);
    hit_log h = {0, 0, SIZE_MAX};
    rd_matcher_scan(m, "anything", 8, SIZE_MAX, log_hit, &h);
    assert_int_equal(h.visits, 0);
    rd_matcher_free(m);
    rd_matcher_free(NULL);
}

/* ======================================================================
 * Part B: the shipped rules (config/recovery.yaml and what it references)
 * ====================================================================== */

#define T RD_TRANSIENT
#define P RD_PERMANENT

static void test_shipped_003_section_1(void **state)
{
    const rd_config *cfg = *state;
    static const shipped_case cases[] = {
        /* 1.1 - 1.4, message only, as the scenarios give them */
        {.message = "Connection timeout after 30s", .want_retryability = T,
         .want_category = RD_CAT_TRANSIENT, .want_rule = "text.timeout"},
        {.message = "Invalid airport code: XYZ", .want_retryability = P,
         .want_category = RD_CAT_INPUT_VALIDATION},
        {.message = "Rate limit exceeded (429)", .want_retryability = T,
         .want_category = RD_CAT_EXTERNAL_SERVICE, .want_rule = "text.rate_limited"},
        {.message = "Authentication failed (401)", .want_retryability = P,
         .want_category = RD_CAT_PERMISSION, .want_rule = "text.auth"},
        /* 1.5 without the manifest: 503 is transient */
        {.message = "Service unavailable (503)", .want_retryability = T,
         .want_category = RD_CAT_EXTERNAL_SERVICE},
        {.message = "Service unavailable (503)", .http_status = 503, .want_retryability = T,
         .want_category = RD_CAT_EXTERNAL_SERVICE, .want_rule = "http.server_error"},
        /* 4.1 / 4.3 */
        {.message = "Tool timeout after 30s", .want_retryability = T,
         .want_category = RD_CAT_TRANSIENT, .want_rule = "text.timeout"},
    };
    check_cases(cfg, cases, LEN(cases));

    rd_classification c = classify_shipped(cfg, &cases[0]);
    assert_int_equal(c.kind, RD_KIND_TIMEOUT);
    assert_true(c.executed);
    assert_int_equal(c.retry_after_ms, 0); /* "after 30s" is not a retry hint */
    c = classify_shipped(cfg, &cases[6]);
    assert_int_equal(c.kind, RD_KIND_TIMEOUT);
    assert_false(c.overridden);
}

/* 003 1.5: the custom_api manifest treats 503 as permanent. */
static void test_shipped_003_1_5_manifest_override(void **state)
{
    const rd_config *cfg = *state;
    assert_non_null(rd_config_find_tool(cfg, "custom_api"));
    shipped_case k = {.tool_id = "custom_api", .message = "Service unavailable (503)",
                      .http_status = 503};
    rd_classification c = classify_shipped(cfg, &k);
    assert_int_equal(c.retryability, RD_PERMANENT);
    assert_true(c.overridden);
    assert_string_equal(c.rule_id, "http.server_error");

    /* 003 gives the error as text only; the manifest matches that too. */
    k.http_status = 0;
    c = classify_shipped(cfg, &k);
    assert_int_equal(c.retryability, RD_PERMANENT);
    assert_true(c.overridden);
    assert_string_equal(c.rule_id, "text.service_unavailable");
    assert_non_null(strstr(c.suggestion, "suspended"));

    /* The same error from another tool is not overridden. */
    k.tool_id = "flight_search";
    c = classify_shipped(cfg, &k);
    assert_int_equal(c.retryability, RD_TRANSIENT);
    assert_false(c.overridden);
}

static void test_shipped_002_pattern_groups(void **state)
{
    const rd_config *cfg = *state;
    static const shipped_case cases[] = {
        /* transient / network */
        {.message = "Connection refused", .want_retryability = T,
         .want_category = RD_CAT_TRANSIENT, .want_rule = "text.network"},
        {.message = "read ECONNRESET", .want_retryability = T, .want_category = RD_CAT_TRANSIENT,
         .want_rule = "text.network"},
        {.message = "getaddrinfo EAI_AGAIN api.example.com", .want_retryability = T,
         .want_category = RD_CAT_TRANSIENT, .want_rule = "text.dns"},
        {.message = "connect: Network is unreachable", .want_retryability = T,
         .want_category = RD_CAT_TRANSIENT, .want_rule = "text.network"},
        /* timeouts */
        {.message = "Request timed out", .want_retryability = T,
         .want_category = RD_CAT_TRANSIENT, .want_rule = "text.timeout"},
        {.message = "rpc error: code = DeadlineExceeded desc = deadline exceeded",
         .want_retryability = T, .want_category = RD_CAT_TRANSIENT, .want_rule = "text.timeout"},
        /* rate limits */
        {.message = "429 Too Many Requests", .want_retryability = T,
         .want_category = RD_CAT_EXTERNAL_SERVICE, .want_rule = "text.rate_limited"},
        {.message = "Quota exceeded for quota metric 'Requests' per minute",
         .want_retryability = T, .want_category = RD_CAT_EXTERNAL_SERVICE,
         .want_rule = "text.rate_limited"},
        /* 5xx */
        {.message = "502 Bad Gateway", .want_retryability = T,
         .want_category = RD_CAT_EXTERNAL_SERVICE, .want_rule = "text.service_unavailable"},
        {.message = "HTTP 500", .want_retryability = T, .want_category = RD_CAT_EXTERNAL_SERVICE,
         .want_rule = "text.http_5xx"},
        /* permission, auth, read-only */
        {.message = "Permission denied (os error 13)", .want_retryability = P,
         .want_category = RD_CAT_PERMISSION, .want_rule = "text.permission"},
        {.message = "403 Forbidden", .want_retryability = P, .want_category = RD_CAT_PERMISSION,
         .want_rule = "text.permission"},
        {.message = "Unauthorized: bearer token rejected", .want_retryability = P,
         .want_category = RD_CAT_PERMISSION, .want_rule = "text.auth"},
        {.message = "Read-only file system", .want_retryability = P,
         .want_category = RD_CAT_PERMISSION, .want_rule = "text.read_only"},
        /* files, directories, disk, memory */
        {.message = "No such file or directory (os error 2)", .want_retryability = P,
         .want_category = RD_CAT_RESOURCE, .want_rule = "text.file_not_found"},
        /* convention: the wrong kind of path is input, not a missing resource */
        {.message = "Not a directory: /etc/passwd/x", .want_retryability = P,
         .want_category = RD_CAT_INPUT_VALIDATION, .want_rule = "text.wrong_file_type"},
        {.message = "write failed: No space left on device", .want_retryability = P,
         .want_category = RD_CAT_RESOURCE, .want_rule = "text.disk_full"},
        {.message = "Disk quota exceeded", .want_retryability = P,
         .want_category = RD_CAT_RESOURCE, .want_rule = "text.disk_quota"},
        {.message = "Cannot allocate memory", .want_retryability = P,
         .want_category = RD_CAT_RESOURCE, .want_rule = "text.memory"},
        /* invalid input, missing arguments, malformed, types */
        {.message = "invalid argument: count must be positive", .want_retryability = P,
         .want_category = RD_CAT_INPUT_VALIDATION, .want_rule = "text.invalid_input"},
        {.message = "missing required parameter 'query'", .want_retryability = P,
         .want_category = RD_CAT_INPUT_VALIDATION, .want_rule = "text.missing_argument"},
        {.message = "Malformed JSON in request body", .want_retryability = P,
         .want_category = RD_CAT_INPUT_VALIDATION, .want_rule = "text.malformed"},
        {.message = "expected string, got number", .want_retryability = P,
         .want_category = RD_CAT_INPUT_VALIDATION, .want_rule = "text.type_error"},
        /* "unexpected" is not "expected" */
        {.message = "Unexpected EOF", .want_retryability = T, .want_category = RD_CAT_TRANSIENT,
         .want_rule = "text.network"},
        {.message = "something nobody has seen before", .want_retryability = T,
         .want_category = RD_CAT_UNKNOWN, .want_rule = "unknown"},
    };
    check_cases(cfg, cases, LEN(cases));
    /* whole tokens only: nothing here is a status code (no 429 or 500
     * rule); no rule knows it, and its words ("took", "ms") say a slow
     * call, transient */
    const shipped_case slow = {.message = "Query took 4290 ms on port 5001"};
    rd_classification c = classify_shipped(cfg, &slow);
    assert_string_equal(c.rule_id, "words");
    assert_int_equal(c.retryability, RD_TRANSIENT);
}

static void test_shipped_002_per_tool_rules(void **state)
{
    const rd_config *cfg = *state;
    static const shipped_case cases[] = {
        {.tool_id = "bash", .message = "bash: foo: command not found", .want_retryability = P,
         .want_category = RD_CAT_INPUT_VALIDATION, .want_rule = "text.bash_command_not_found"},
        {.tool_id = "bash", .message = "Script failed with exit code 2", .want_retryability = P,
         .want_category = RD_CAT_LOGIC, .want_rule = "text.bash_exit_code"},
        /* generic groups still come first for bash */
        {.tool_id = "bash", .message = "curl: (7) Connection refused, exit code 7",
         .want_retryability = T, .want_category = RD_CAT_TRANSIENT, .want_rule = "text.network"},
        /* another tool: "not found" is a missing resource */
        {.tool_id = "python_exec", .message = "foo: command not found", .want_retryability = P,
         .want_category = RD_CAT_RESOURCE, .want_rule = "text.not_found"},
        {.tool_id = "read_file", .message = "cannot read binary file", .want_retryability = P,
         .want_category = RD_CAT_INPUT_VALIDATION, .want_rule = "text.file_binary"},
        {.tool_id = "read_file", .message = "stream is not valid UTF-8", .want_retryability = P,
         .want_category = RD_CAT_INPUT_VALIDATION, .want_rule = "text.file_binary"},
        {.tool_id = "read_file", .message = "File too large (12 MB)", .want_retryability = P,
         .want_category = RD_CAT_RESOURCE, .want_rule = "text.file_too_large"},
        {.tool_id = "web_fetch", .message = "SSL handshake failed", .want_retryability = T,
         .want_category = RD_CAT_EXTERNAL_SERVICE, .want_rule = "text.web_tls"},
        {.tool_id = "web_fetch", .message = "certificate verify failed: unable to get local issuer",
         .want_retryability = P, .want_category = RD_CAT_EXTERNAL_SERVICE,
         .want_rule = "text.web_certificate_invalid"},
        /* a redirect loop is the server's doing (corpus convention) */
        {.tool_id = "web_fetch", .message = "Too many redirects", .want_retryability = P,
         .want_category = RD_CAT_EXTERNAL_SERVICE, .want_rule = "text.redirect_loop"},
        {.tool_id = "web_fetch", .message = "301 Moved Permanently: redirect to https://new.example",
         .want_retryability = P, .want_category = RD_CAT_INPUT_VALIDATION,
         .want_rule = "text.web_redirect"},
    };
    check_cases(cfg, cases, LEN(cases));
    /* another tool: the bash rule does not apply, and what decides instead
     * is a later tier (the words tier or the default, as the corpus's
     * counts have it), never a message pattern */
    const shipped_case other = {.tool_id = "python_exec",
                                .message = "Script failed with exit code 2"};
    rd_classification c = classify_shipped(cfg, &other);
    assert_string_not_equal(c.rule_id, "text.bash_exit_code");
    assert_true(c.decided_by == RD_TIER_WORDS || c.decided_by == RD_TIER_DEFAULT);
}

static void test_shipped_004_llm_and_mcp_additions(void **state)
{
    const rd_config *cfg = *state;
    const rd_error_source L = RD_SOURCE_LLM, M = RD_SOURCE_MCP;
    const shipped_case cases[] = {
        {.source = L, .message = "ratelimit reached", .want_retryability = T,
         .want_category = RD_CAT_EXTERNAL_SERVICE, .want_rule = "text.rate_limited"},
        {.source = L, .message = "Overloaded", .want_retryability = T,
         .want_category = RD_CAT_EXTERNAL_SERVICE, .want_rule = "text.rate_limited"},
        {.source = L, .message = "Incorrect API key provided: sk-abc", .want_retryability = P,
         .want_category = RD_CAT_PERMISSION, .want_rule = "text.auth"},
        {.source = L, .message = "Request had invalid authentication credentials. UNAUTHENTICATED",
         .want_retryability = P, .want_category = RD_CAT_PERMISSION, .want_rule = "text.auth"},
        {.source = L,
         .message = "429 You exceeded your current quota, please check your plan and billing "
                    "details. rate limit",
         .want_retryability = P, .want_category = RD_CAT_EXTERNAL_SERVICE,
         .want_rule = "text.quota_exhausted"},
        /* convention: billing exhaustion is the provider refusing service */
        {.source = L, .message = "Your credit balance is too low to access the API",
         .want_retryability = P, .want_category = RD_CAT_EXTERNAL_SERVICE,
         .want_rule = "text.quota_exhausted"},
        {.source = L, .message = "402 Payment Required", .want_retryability = P,
         .want_category = RD_CAT_EXTERNAL_SERVICE, .want_rule = "text.quota_exhausted"},
        /* Google's per-minute RESOURCE_EXHAUSTED borrows the billing words */
        {.source = L,
         .message = "429 RESOURCE_EXHAUSTED. You exceeded your current quota, please check "
                    "your plan and billing details.",
         .want_retryability = T, .want_category = RD_CAT_EXTERNAL_SERVICE,
         .want_rule = "text.resource_exhausted_status"},
        /* convention: an unknown model is a missing resource */
        {.source = L, .message = "model_not_found: unknown model 'gpt-9'", .want_retryability = P,
         .want_category = RD_CAT_RESOURCE, .want_rule = "text.model_unknown"},
        {.source = L, .message = "The requested model is not available", .want_retryability = P,
         .want_category = RD_CAT_RESOURCE, .want_rule = "text.llm_model_unavailable"},
        /* Bedrock throttling says "tokens" but is not a context limit */
        {.source = L,
         .message = "An error occurred (ThrottlingException) when calling the Converse "
                    "operation: Too many tokens, please wait before trying again.",
         .want_retryability = T, .want_category = RD_CAT_EXTERNAL_SERVICE,
         .want_rule = "text.aws_throttled"},
        {.source = L, .message = "context deadline exceeded", .want_retryability = T,
         .want_category = RD_CAT_TRANSIENT, .want_rule = "text.timeout"},
        {.source = L, .message = "This model's maximum context length is 8192 tokens",
         .want_retryability = P, .want_category = RD_CAT_INPUT_VALIDATION,
         .want_rule = "text.context_length"},
        {.source = L, .message = "connect ECONNABORTED", .want_retryability = T,
         .want_category = RD_CAT_TRANSIENT, .want_rule = "text.timeout"},
        {.source = L, .message = "socket hang up", .want_retryability = T,
         .want_category = RD_CAT_TRANSIENT, .want_rule = "text.network"},
        {.source = L, .message = "write EPIPE", .want_retryability = T,
         .want_category = RD_CAT_TRANSIENT, .want_rule = "text.network"},
        {.source = L, .message = "ssl: wrong version number", .want_retryability = T,
         .want_category = RD_CAT_TRANSIENT, .want_rule = "text.llm_tls"},
        {.source = M, .message = "MCP error -32001: Request timed out", .want_retryability = T,
         .want_category = RD_CAT_TRANSIENT, .want_rule = "text.timeout"},
    };
    check_cases(cfg, cases, LEN(cases));
}

static void test_shipped_structured_tables(void **state)
{
    const rd_config *cfg = *state;
    const char *msg = "Invalid airport code: XYZ"; /* never read by structured rules */
    const shipped_case cases[] = {
        {.message = msg, .http_status = 429, .want_retryability = T,
         .want_category = RD_CAT_EXTERNAL_SERVICE, .want_rule = "http.rate_limited"},
        {.http_status = 503, .want_retryability = T, .want_category = RD_CAT_EXTERNAL_SERVICE,
         .want_rule = "http.server_error"},
        {.http_status = 408, .want_retryability = T, .want_category = RD_CAT_TRANSIENT,
         .want_rule = "http.request_timeout"},
        {.http_status = 425, .want_retryability = T, .want_category = RD_CAT_TRANSIENT},
        {.http_status = 401, .want_retryability = P, .want_category = RD_CAT_PERMISSION,
         .want_rule = "http.unauthorized"},
        {.http_status = 403, .want_retryability = P, .want_category = RD_CAT_PERMISSION},
        {.http_status = 404, .want_retryability = P, .want_category = RD_CAT_RESOURCE,
         .want_rule = "http.not_found"},
        {.http_status = 400, .want_retryability = P, .want_category = RD_CAT_INPUT_VALIDATION},
        {.http_status = 409, .want_retryability = P, .want_category = RD_CAT_LOGIC},
        {.http_status = 413, .want_retryability = P, .want_category = RD_CAT_INPUT_VALIDATION},
        {.http_status = 422, .want_retryability = P, .want_category = RD_CAT_INPUT_VALIDATION},
        {.http_status = 501, .want_retryability = P, .want_category = RD_CAT_LOGIC},
        /* convention: UNAVAILABLE means the channel reached no server */
        {.grpc_code = 14, .message = msg, .want_retryability = T,
         .want_category = RD_CAT_TRANSIENT, .want_rule = "grpc.unavailable"},
        {.grpc_code = 4, .want_retryability = T, .want_category = RD_CAT_TRANSIENT,
         .want_rule = "grpc.deadline_exceeded"},
        {.grpc_code = 8, .want_retryability = T, .want_category = RD_CAT_EXTERNAL_SERVICE},
        {.grpc_code = 10, .want_retryability = T, .want_category = RD_CAT_TRANSIENT},
        {.grpc_code = 3, .message = "connection reset", .want_retryability = P,
         .want_category = RD_CAT_INPUT_VALIDATION, .want_rule = "grpc.invalid_argument"},
        {.grpc_code = 5, .want_retryability = P, .want_category = RD_CAT_RESOURCE},
        {.grpc_code = 7, .want_retryability = P, .want_category = RD_CAT_PERMISSION},
        {.grpc_code = 16, .want_retryability = P, .want_category = RD_CAT_PERMISSION},
        {.grpc_code = 9, .want_retryability = P, .want_category = RD_CAT_LOGIC},
        {.grpc_code = 12, .want_retryability = P, .want_category = RD_CAT_LOGIC},
        {.grpc_code = 11, .want_retryability = P, .want_category = RD_CAT_INPUT_VALIDATION},
        {.code = "ECONNRESET", .want_retryability = T, .want_category = RD_CAT_TRANSIENT,
         .want_rule = "errno.econnreset"},
        {.code = "econnrefused", .want_retryability = T, .want_category = RD_CAT_TRANSIENT,
         .want_rule = "errno.econnrefused"},
        {.code = "ETIMEDOUT", .want_retryability = T, .want_category = RD_CAT_TRANSIENT,
         .want_rule = "errno.timeout"},
        {.code = "EAI_AGAIN", .want_retryability = T, .want_category = RD_CAT_TRANSIENT},
        {.code = "EPIPE", .want_retryability = T, .want_category = RD_CAT_TRANSIENT},
        {.code = "EHOSTUNREACH", .want_retryability = T, .want_category = RD_CAT_TRANSIENT},
        /* convention: every DNS resolution failure is transient */
        {.code = "ENOTFOUND", .want_retryability = T, .want_category = RD_CAT_TRANSIENT,
         .want_rule = "errno.dns"},
        {.code = "ENOENT", .want_retryability = P, .want_category = RD_CAT_RESOURCE},
        {.code = "EACCES", .want_retryability = P, .want_category = RD_CAT_PERMISSION},
        {.code = "EPERM", .want_retryability = P, .want_category = RD_CAT_PERMISSION},
        {.code = "ENOSPC", .want_retryability = P, .want_category = RD_CAT_RESOURCE},
        {.code = "ENOMEM", .want_retryability = P, .want_category = RD_CAT_RESOURCE},
        {.code = "EROFS", .want_retryability = P, .want_category = RD_CAT_PERMISSION},
        {.code = "rate_limit_exceeded", .want_retryability = T,
         .want_category = RD_CAT_EXTERNAL_SERVICE, .want_rule = "code.rate_limited"},
        {.code = "overloaded_error", .want_retryability = T,
         .want_category = RD_CAT_EXTERNAL_SERVICE},
        {.code = "ThrottlingException", .want_retryability = T,
         .want_category = RD_CAT_EXTERNAL_SERVICE},
        /* OpenAI sends insufficient_quota with HTTP 429: the code decides */
        {.code = "insufficient_quota", .http_status = 429, .want_retryability = P,
         .want_category = RD_CAT_EXTERNAL_SERVICE, .want_rule = "code.quota_exhausted"},
        {.code = "context_length_exceeded", .http_status = 400, .want_retryability = P,
         .want_category = RD_CAT_INPUT_VALIDATION},
        {.code = "invalid_api_key", .want_retryability = P, .want_category = RD_CAT_PERMISSION},
        {.code = "-32700", .want_retryability = P, .want_category = RD_CAT_INPUT_VALIDATION},
        {.code = "-32600", .want_retryability = P, .want_category = RD_CAT_INPUT_VALIDATION},
        {.code = "-32601", .want_retryability = P, .want_category = RD_CAT_LOGIC},
        {.code = "-32602", .want_retryability = P, .want_category = RD_CAT_INPUT_VALIDATION,
         .want_rule = "jsonrpc.invalid_params"},
        {.code = "-32603", .want_retryability = T, .want_category = RD_CAT_EXTERNAL_SERVICE},
        {.code = "-32001", .source = RD_SOURCE_MCP, .want_retryability = T,
         .want_category = RD_CAT_TRANSIENT, .want_rule = "mcp.request_timeout"},
        {.exception_type = "requests.exceptions.ConnectTimeout", .want_retryability = T,
         .want_category = RD_CAT_TRANSIENT, .want_rule = "exception.timeout"},
        {.exception_type = "openai.AuthenticationError", .want_retryability = P,
         .want_category = RD_CAT_PERMISSION},
        {.exception_type = "FileNotFoundError", .want_retryability = P,
         .want_category = RD_CAT_RESOURCE},
        /* conventions: a made-up tool name is input; cancellation is logic */
        {.kind = RD_KIND_UNKNOWN_TOOL, .want_retryability = P,
         .want_category = RD_CAT_INPUT_VALIDATION},
        {.kind = RD_KIND_NOT_PERMITTED, .want_retryability = P,
         .want_category = RD_CAT_PERMISSION},
        {.kind = RD_KIND_INVALID_PARAMETERS, .want_retryability = P,
         .want_category = RD_CAT_INPUT_VALIDATION},
        {.kind = RD_KIND_LIMIT_EXCEEDED, .want_retryability = P,
         .want_category = RD_CAT_RESOURCE},
        {.kind = RD_KIND_CANCELED, .want_retryability = P, .want_category = RD_CAT_LOGIC},
        {.kind = RD_KIND_TIMEOUT, .message = msg, .want_retryability = T,
         .want_category = RD_CAT_TRANSIENT, .want_rule = "kind.timeout"},
        {.kind = RD_KIND_TRANSPORT_ERROR, .want_retryability = T,
         .want_category = RD_CAT_TRANSIENT},
        /* execution_error and internal_error leave the decision to the text */
        {.kind = RD_KIND_EXECUTION_ERROR, .message = msg, .want_retryability = P,
         .want_category = RD_CAT_INPUT_VALIDATION},
        {.kind = RD_KIND_INTERNAL_ERROR, .want_retryability = T,
         .want_category = RD_CAT_UNKNOWN, .want_rule = "unknown"},
    };
    check_cases(cfg, cases, LEN(cases));

    /* The kinds set by rules carry the executed meaning. */
    shipped_case k = {.code = "-32602"};
    rd_classification c = classify_shipped(cfg, &k);
    assert_int_equal(c.kind, RD_KIND_INVALID_PARAMETERS);
    assert_false(c.executed);
    k = (shipped_case){.code = "-32001"};
    c = classify_shipped(cfg, &k);
    assert_int_equal(c.kind, RD_KIND_TIMEOUT);
    assert_true(c.executed);
}


static void test_shipped_mixed_rules(void **state)
{
    const rd_config *cfg = *state;
    static const shipped_case cases[] = {
        /* GitHub sends rate limits as 403 */
        {.http_status = 403,
         .message = "API rate limit exceeded for 203.0.113.7. (But here's the good news: ...)",
         .want_retryability = T, .want_category = RD_CAT_EXTERNAL_SERVICE,
         .want_rule = "http.forbidden_rate_limited"},
        {.http_status = 403, .message = "Resource not accessible by integration",
         .want_retryability = P, .want_category = RD_CAT_PERMISSION, .want_rule = "http.forbidden"},
        /* Google sends a bad API key as 400 INVALID_ARGUMENT */
        {.http_status = 400, .message = "400 INVALID_ARGUMENT. API key not valid. Please pass a "
                                        "valid API key.",
         .want_retryability = P, .want_category = RD_CAT_PERMISSION,
         .want_rule = "http.bad_request_auth"},
        {.http_status = 400, .message = "contents is not specified", .want_retryability = P,
         .want_category = RD_CAT_INPUT_VALIDATION, .want_rule = "http.bad_request"},
        /* RESOURCE_EXHAUSTED as a size limit, and as a quota */
        {.grpc_code = 8,
         .message = "rpc error: code = ResourceExhausted desc = grpc: received message larger "
                    "than max (8653241 vs. 4194304)",
         .want_retryability = P, .want_category = RD_CAT_INPUT_VALIDATION,
         .want_rule = "grpc.message_too_large"},
        {.grpc_code = 8, .message = "Quota exceeded for quota metric 'Read requests'",
         .want_retryability = T, .want_category = RD_CAT_EXTERNAL_SERVICE,
         .want_rule = "grpc.resource_exhausted"},
        /* a generic exception type carrying a server status */
        {.exception_type = "ValueError", .message = "Search API error: 503",
         .want_retryability = T, .want_category = RD_CAT_EXTERNAL_SERVICE,
         .want_rule = "exception.generic_with_server_status"},
        {.exception_type = "ValueError", .message = "Bad query", .want_retryability = P,
         .want_category = RD_CAT_INPUT_VALIDATION, .want_rule = "generic.value_or_type"},
        /* MCP's -32602 for a tool the server switched off */
        {.code = "-32602", .message = "MCP error -32602: Tool delete_repository disabled",
         .want_retryability = P, .want_category = RD_CAT_PERMISSION,
         .want_rule = "jsonrpc.tool_disabled"},
        /* a cancellation fired by a timeout is a timeout */
        {.kind = RD_KIND_CANCELED, .message = "The operation was aborted due to timeout",
         .want_retryability = T, .want_category = RD_CAT_TRANSIENT,
         .want_rule = "kind.canceled_by_timeout"},
        {.kind = RD_KIND_CANCELED, .message = "This operation was aborted",
         .want_retryability = P, .want_category = RD_CAT_LOGIC, .want_rule = "kind.canceled"},
    };
    check_cases(cfg, cases, LEN(cases));
}

/* The misfires of generic words, each fixed by ordering or boundaries. */
/* Which structured field wins when they disagree (docs/CLASSIFICATION.md,
 * "Precedence"), and the generic pass after the message pass. */
static void test_shipped_precedence(void **state)
{
    const rd_config *cfg = *state;
    static const shipped_case cases[] = {
        /* a provider's code outranks the HTTP status ... */
        {.code = "card_declined", .http_status = 402, .message = "Your card was declined.",
         .want_retryability = P, .want_category = RD_CAT_INPUT_VALIDATION,
         .want_rule = "code.payment_declined"},
        {.code = "ThrottlingException", .http_status = 400, .message = "Rate exceeded",
         .want_retryability = T, .want_category = RD_CAT_EXTERNAL_SERVICE,
         .want_rule = "code.rate_limited"},
        /* ... except a provider's catch-all server-fault type on a 4xx */
        {.code = "api_error", .http_status = 404, .message = "Not Found",
         .want_retryability = P, .want_category = RD_CAT_RESOURCE,
         .want_rule = "code.server_type_with_not_found"},
        {.code = "api_error", .http_status = 500, .message = "Internal server error",
         .want_retryability = T, .want_category = RD_CAT_EXTERNAL_SERVICE,
         .want_rule = "code.overloaded"},
        /* standard JSON-RPC codes outrank HTTP; the implementation-defined
         * server errors do not */
        {.code = "-32601", .http_status = 404, .message = "Method not found",
         .want_retryability = P, .want_category = RD_CAT_LOGIC,
         .want_rule = "jsonrpc.method_not_found"},
        {.code = "-32000", .http_status = 400, .message = "Bad Request: No valid session ID provided",
         .want_retryability = P, .want_category = RD_CAT_LOGIC,
         .want_rule = "jsonrpc.server_error_with_session_status"},
        {.code = "-32001", .http_status = 404, .message = "Session not found",
         .want_retryability = P, .want_category = RD_CAT_LOGIC,
         .want_rule = "jsonrpc.server_error_with_session_status"},
        {.code = "-32000", .message = "MCP error -32000: Connection closed",
         .want_retryability = T, .want_category = RD_CAT_TRANSIENT,
         .want_rule = "mcp.connection_closed"},
        /* the HTTP status a proxy sent outranks the gRPC code synthesized
         * from it; alone, UNIMPLEMENTED is permanent */
        {.grpc_code = 12, .http_status = 404, .message = "unexpected HTTP status code 404",
         .want_retryability = P, .want_category = RD_CAT_RESOURCE, .want_rule = "http.not_found"},
        {.grpc_code = 12, .message = "unknown service recovery.v2.RecoveryService",
         .want_retryability = P, .want_category = RD_CAT_LOGIC, .want_rule = "grpc.unimplemented"},
        /* HTTP statuses refined by their text */
        {.http_status = 429,
         .message = "You exceeded your current quota, please check your plan and billing details.",
         .want_retryability = P, .want_category = RD_CAT_EXTERNAL_SERVICE,
         .want_rule = "http.rate_limited_billing"},
        {.http_status = 429,
         .message = "429 RESOURCE_EXHAUSTED. You exceeded your current quota, please check your plan",
         .want_retryability = T, .want_category = RD_CAT_EXTERNAL_SERVICE,
         .want_rule = "http.rate_limited_per_minute_quota"},
        {.http_status = 402, .message = "Insufficient Balance", .want_retryability = P,
         .want_category = RD_CAT_EXTERNAL_SERVICE, .want_rule = "http.payment_required"},
        {.http_status = 400,
         .message = "An error occurred (Throttling) when calling the DescribeInstances operation",
         .want_retryability = T, .want_category = RD_CAT_EXTERNAL_SERVICE,
         .want_rule = "http.bad_request_throttled"},
        {.http_status = 400, .message = "registry.ollama.ai/library/gemma2:9b does not support tools",
         .want_retryability = P, .want_category = RD_CAT_LOGIC,
         .want_rule = "http.capability_missing"},
        {.http_status = 409, .message = "Thread thread_abc is locked by run run_xyz.",
         .want_retryability = T, .want_category = RD_CAT_TRANSIENT,
         .want_rule = "http.conflict_locked"},
        /* a specific exception type outranks the message ... */
        {.exception_type = "KeyError", .message = "'timeout'", .want_retryability = P,
         .want_category = RD_CAT_LOGIC, .want_rule = "exception.program_bug"},
        {.exception_type = "langgraph.errors.GraphRecursionError",
         .message = "Recursion limit of 25 reached without hitting a stop condition.",
         .want_retryability = P, .want_category = RD_CAT_RESOURCE,
         .want_rule = "exception.agent_limit"},
        /* ... a generic one does not: fetch throws TypeError for a lost
         * network, and the text says so */
        {.exception_type = "TypeError", .message = "fetch failed", .want_retryability = T,
         .want_category = RD_CAT_TRANSIENT, .want_rule = "text.network"},
        {.exception_type = "TypeError", .message = "Failed to fetch", .want_retryability = T,
         .want_category = RD_CAT_TRANSIENT, .want_rule = "text.network"},
        {.exception_type = "TypeError", .message = "Cannot read properties of undefined (reading 'map')",
         .want_retryability = P, .want_category = RD_CAT_LOGIC, .want_rule = "text.program_bug"},
        {.exception_type = "TypeError", .message = "quux", .want_retryability = P,
         .want_category = RD_CAT_INPUT_VALIDATION, .want_rule = "generic.value_or_type"},
        {.exception_type = "java.lang.IllegalStateException", .message = "zork",
         .want_retryability = P, .want_category = RD_CAT_LOGIC, .want_rule = "generic.program_state"},
        /* the broadest types say nothing: unknown, where learning applies */
        {.exception_type = "Exception", .message = "zork", .want_retryability = T,
         .want_category = RD_CAT_UNKNOWN, .want_rule = "unknown"},
        /* a status outranks an exception type, a gRPC code a generic one */
        {.http_status = 500, .exception_type = "NotFoundError", .message = "Internal Server Error",
         .want_retryability = T, .want_category = RD_CAT_EXTERNAL_SERVICE,
         .want_rule = "http.server_error"},
        {.grpc_code = 14, .exception_type = "ValueError", .message = "bad input",
         .want_retryability = T, .want_category = RD_CAT_TRANSIENT, .want_rule = "grpc.unavailable"},
        /* a standard JSON-RPC code outranks the status it came with */
        {.code = "-32603", .http_status = 400, .message = "Internal error",
         .want_retryability = T, .want_category = RD_CAT_EXTERNAL_SERVICE,
         .want_rule = "jsonrpc.internal_error"},
        /* a database code outranks the text */
        {.code = "1213", .message = "ERROR 1213 (40001): Deadlock found when trying to get lock",
         .want_retryability = T, .want_category = RD_CAT_TRANSIENT, .want_rule = "db.concurrency"},
        /* 400 and 409 refined by their text */
        {.http_status = 400,
         .message = "Your credit balance is too low to access the Anthropic API.",
         .want_retryability = P, .want_category = RD_CAT_EXTERNAL_SERVICE,
         .want_rule = "http.client_error_billing"},
        {.http_status = 400,
         .message = "Keys for idempotent requests can only be used with the same parameters "
                    "they were first used with.",
         .want_retryability = P, .want_category = RD_CAT_LOGIC,
         .want_rule = "http.bad_request_idempotency"},
        {.http_status = 422, .message = "{\"message\":\"Reference does not exist\"}",
         .want_retryability = P, .want_category = RD_CAT_RESOURCE,
         .want_rule = "http.client_error_missing"},
        {.http_status = 422, .message = "Validation Failed", .want_retryability = P,
         .want_category = RD_CAT_INPUT_VALIDATION, .want_rule = "http.bad_request"},
        {.http_status = 409, .message = "Git Repository is empty.", .want_retryability = P,
         .want_category = RD_CAT_RESOURCE, .want_rule = "http.conflict_empty"},
        {.http_status = 400,
         .message = "Error code: 400 - {'error': {'message': \"'tools' is not supported with "
                    "this model.\", 'type': 'invalid_request_error'}}",
         .want_retryability = P, .want_category = RD_CAT_LOGIC,
         .want_rule = "http.capability_missing"},
        /* a database code the server uses for unlike causes: the text decides */
        {.code = "57014", .message = "ERROR:  canceling statement due to user request",
         .want_retryability = P, .want_category = RD_CAT_LOGIC, .want_rule = "db.canceled_by_user"},
        {.code = "57014", .message = "ERROR:  canceling statement due to statement timeout",
         .want_retryability = T, .want_category = RD_CAT_TRANSIENT, .want_rule = "db.concurrency"},
        {.code = "XX000", .message = "ERROR:  tuple concurrently updated", .want_retryability = T,
         .want_category = RD_CAT_TRANSIENT, .want_rule = "db.internal_concurrent_update"},
        /* a rate-limit code on 413: one request over the whole budget; a
         * catch-all request type that names a missing capability */
        {.code = "rate_limit_exceeded", .http_status = 413,
         .message = "Request too large for model `llama-3.3-70b` on tokens per minute (TPM)",
         .want_retryability = P, .want_category = RD_CAT_INPUT_VALIDATION,
         .want_rule = "code.rate_limited_too_large"},
        {.code = "invalid_request_error", .http_status = 400,
         .message = "deepseek-reasoner does not support Function Calling", .want_retryability = P,
         .want_category = RD_CAT_LOGIC, .want_rule = "code.invalid_request_capability"},
        /* conventions of issue 34 */
        {.message = "x509: certificate signed by unknown authority", .want_retryability = P,
         .want_category = RD_CAT_PERMISSION, .want_rule = "text.certificate_invalid"},
        {.message = "FATAL:  sorry, too many clients already", .want_retryability = T,
         .want_category = RD_CAT_EXTERNAL_SERVICE, .want_rule = "text.server_connection_limit"},
        {.tool_id = "bash", .message = "Command exited with code 127", .want_retryability = P,
         .want_category = RD_CAT_INPUT_VALIDATION, .want_rule = "text.bash_command_not_found"},
    };
    check_cases(cfg, cases, LEN(cases));
}

/* The tier that decided, read from the rule id. */
static void test_rule_tiers(void **state)
{
    (void)state;
    assert_int_equal(rd_rule_tier("code.rate_limited"), RD_TIER_STRUCTURED);
    assert_int_equal(rd_rule_tier("http.not_found"), RD_TIER_STRUCTURED);
    assert_int_equal(rd_rule_tier("jsonrpc.invalid_params"), RD_TIER_STRUCTURED);
    assert_int_equal(rd_rule_tier("exception.timeout"), RD_TIER_EXCEPTION);
    assert_int_equal(rd_rule_tier("text.network"), RD_TIER_MESSAGE);
    assert_int_equal(rd_rule_tier("generic.value_or_type"), RD_TIER_GENERIC);
    assert_int_equal(rd_rule_tier("learned:1a2b3c"), RD_TIER_LEARNED);
    assert_int_equal(rd_rule_tier("words"), RD_TIER_WORDS);
    assert_int_equal(rd_rule_tier("unknown"), RD_TIER_DEFAULT);
    assert_int_equal(rd_rule_tier(""), RD_TIER_DEFAULT);
    assert_int_equal(rd_rule_tier(NULL), RD_TIER_DEFAULT);
    assert_string_equal(rd_tier_name(RD_TIER_GENERIC), "generic");
    assert_string_equal(rd_tier_name(RD_TIER_DEFAULT), "default");
}

/* The data tables of vendor, database and runtime codes (config/rules.yaml,
 * docs/CLASSIFICATION.md "Tables"): each row checked with a real message of
 * that code. */
static void test_shipped_vendor_tables(void **state)
{
    const rd_config *cfg = *state;
    static const shipped_case cases[] = {
        /* Kafka protocol errors (librdkafka names) */
        {.code = "NOT_LEADER_OR_FOLLOWER", .message = "Broker: Not leader for partition",
         .want_retryability = T, .want_category = RD_CAT_EXTERNAL_SERVICE,
         .want_rule = "db.server_not_ready"},
        {.code = "TOPIC_AUTHORIZATION_FAILED", .message = "Broker: Topic authorization failed",
         .want_retryability = P, .want_category = RD_CAT_PERMISSION,
         .want_rule = "code.invalid_credentials"},
        {.code = "MESSAGE_TOO_LARGE", .message = "Broker: Message size too large",
         .want_retryability = P, .want_category = RD_CAT_INPUT_VALIDATION,
         .want_rule = "code.invalid_request"},
        {.message = "KafkaError{code=LEADER_NOT_AVAILABLE,val=5,str=\"Broker: Leader not available\"}",
         .want_retryability = T, .want_category = RD_CAT_EXTERNAL_SERVICE,
         .want_rule = "text.broker_not_ready"},
        /* Elasticsearch error types */
        {.code = "es_rejected_execution_exception", .http_status = 429,
         .message = "rejected execution of coordinating operation", .want_retryability = T,
         .want_category = RD_CAT_EXTERNAL_SERVICE, .want_rule = "code.rate_limited"},
        {.code = "index_not_found_exception", .http_status = 404,
         .message = "no such index [logs-2024.05]", .want_retryability = P,
         .want_category = RD_CAT_RESOURCE, .want_rule = "code.not_found"},
        {.message = "BadRequestError(400, 'parsing_exception', 'unknown query [match_al]')",
         .want_retryability = P, .want_category = RD_CAT_INPUT_VALIDATION,
         .want_rule = "text.search_request_invalid"},
        /* Google API error reasons */
        {.code = "userRateLimitExceeded", .http_status = 403, .message = "User Rate Limit Exceeded",
         .want_retryability = T, .want_category = RD_CAT_EXTERNAL_SERVICE,
         .want_rule = "code.rate_limited"},
        {.code = "dailyLimitExceeded", .http_status = 403, .message = "Daily Limit Exceeded",
         .want_retryability = P, .want_category = RD_CAT_EXTERNAL_SERVICE,
         .want_rule = "code.quota_exhausted"},
        {.code = "SERVICE_DISABLED", .http_status = 403,
         .message = "Cloud Vision API has not been used in project 12345 before or it is disabled.",
         .want_retryability = P, .want_category = RD_CAT_PERMISSION,
         .want_rule = "code.invalid_credentials"},
        /* MongoDB server codes, by number and name */
        {.code = "10107", .message = "not primary", .want_retryability = T,
         .want_category = RD_CAT_EXTERNAL_SERVICE, .want_rule = "db.server_not_ready"},
        {.code = "112", .message = "WriteConflict error: this operation conflicted with another "
                                   "operation. Please retry your operation or multi-document "
                                   "transaction.",
         .want_retryability = T, .want_category = RD_CAT_TRANSIENT, .want_rule = "db.concurrency"},
        {.code = "121", .message = "Document failed validation", .want_retryability = P,
         .want_category = RD_CAT_INPUT_VALIDATION, .want_rule = "db.constraint_violation"},
        /* MySQL error numbers */
        {.code = "1045", .message = "Access denied for user 'app'@'10.0.0.3' (using password: YES)",
         .want_retryability = P, .want_category = RD_CAT_PERMISSION, .want_rule = "db.access_denied"},
        {.code = "1146", .message = "Table 'shop.orders' doesn't exist", .want_retryability = P,
         .want_category = RD_CAT_RESOURCE, .want_rule = "db.missing_object"},
        {.code = "2013", .message = "Lost connection to MySQL server during query",
         .want_retryability = T, .want_category = RD_CAT_TRANSIENT, .want_rule = "db.connection_lost"},
        /* SQL Server and Azure SQL error numbers (the transient fault list) */
        {.code = "40613",
         .message = "Database 'orders' on server 'acme' is not currently available. Please retry "
                    "the connection later.",
         .want_retryability = T, .want_category = RD_CAT_EXTERNAL_SERVICE,
         .want_rule = "db.server_not_ready"},
        {.code = "18456", .message = "Login failed for user 'app'.", .want_retryability = P,
         .want_category = RD_CAT_PERMISSION, .want_rule = "db.access_denied"},
        /* SQLSTATE classes */
        {.code = "22001", .message = "value too long for type character varying(20)",
         .want_retryability = P, .want_category = RD_CAT_INPUT_VALIDATION,
         .want_rule = "db.bad_statement"},
        {.code = "0A000", .message = "cannot refresh materialized view concurrently",
         .want_retryability = P, .want_category = RD_CAT_LOGIC, .want_rule = "db.session_state"},
        /* Prisma */
        {.code = "P2002", .message = "Unique constraint failed on the fields: (`email`)",
         .want_retryability = P, .want_category = RD_CAT_INPUT_VALIDATION,
         .want_rule = "db.constraint_violation"},
        /* exception types by language: specific ones decide */
        {.exception_type = "psycopg2.errors.SerializationFailure",
         .message = "could not serialize access due to concurrent update", .want_retryability = T,
         .want_category = RD_CAT_TRANSIENT, .want_rule = "exception.contention"},
        {.exception_type = "jwt.exceptions.ExpiredSignatureError", .message = "Signature has expired",
         .want_retryability = P, .want_category = RD_CAT_PERMISSION, .want_rule = "exception.auth"},
        {.exception_type = "System.NullReferenceException",
         .message = "Object reference not set to an instance of an object.",
         .want_retryability = P, .want_category = RD_CAT_LOGIC, .want_rule = "exception.program_bug"},
        {.exception_type = "sqlalchemy.exc.NoResultFound", .message = "No row was found when one was required",
         .want_retryability = P, .want_category = RD_CAT_RESOURCE, .want_rule = "exception.not_found"},
        {.exception_type = "aiohttp.client_exceptions.ServerDisconnectedError",
         .message = "Server disconnected", .want_retryability = T, .want_category = RD_CAT_TRANSIENT,
         .want_rule = "exception.connection"},
        {.exception_type = "lxml.etree.XMLSyntaxError",
         .message = "Start tag expected, '<' not found, line 1, column 1", .want_retryability = P,
         .want_category = RD_CAT_INPUT_VALIDATION, .want_rule = "exception.malformed_data"},
        /* MySQL's query killed (KILL QUERY): a cancellation */
        {.code = "1317", .message = "ERROR 1317 (70100): Query execution was interrupted",
         .want_retryability = P, .want_category = RD_CAT_LOGIC, .want_rule = "db.query_killed"},
        /* 421, a proxy's 502 for a certificate, Salesforce's record lock */
        {.http_status = 421, .message = "Misdirected Request", .want_retryability = P,
         .want_category = RD_CAT_LOGIC, .want_rule = "http.misdirected"},
        {.http_status = 502,
         .message = "upstream SSL certificate verify error: (20:unable to get local issuer "
                    "certificate) while SSL handshaking to upstream",
         .want_retryability = P, .want_category = RD_CAT_PERMISSION,
         .want_rule = "http.bad_gateway_certificate"},
        {.code = "UNABLE_TO_LOCK_ROW", .message = "unable to obtain exclusive access to this record",
         .want_retryability = T, .want_category = RD_CAT_TRANSIENT, .want_rule = "code.object_locked"},
        /* Heroku router codes */
        {.message = "at=error code=H10 desc=\"App crashed\" method=GET path=\"/\" status=503",
         .want_retryability = T, .want_category = RD_CAT_EXTERNAL_SERVICE,
         .want_rule = "text.heroku_router"},
    };
    check_cases(cfg, cases, LEN(cases));
}

/* Every answer says which tier decided it, with and without a compiled
 * matcher; an override leaves the base rule's tier. */
static void test_decided_by(void **state)
{
    const rd_config *cfg = *state;
    static const struct {
        shipped_case c;
        rd_tier want;
    } cases[] = {
        {{.code = "ThrottlingException", .http_status = 400, .message = "Rate exceeded"},
         RD_TIER_STRUCTURED},
        {{.http_status = 503, .message = "Service Unavailable"}, RD_TIER_STRUCTURED},
        {{.grpc_code = 14, .message = "connection refused"}, RD_TIER_STRUCTURED},
        {{.exception_type = "ModuleNotFoundError", .message = "No module named 'pandas'"},
         RD_TIER_EXCEPTION},
        {{.message = "read ECONNRESET"}, RD_TIER_MESSAGE},
        {{.exception_type = "TypeError", .message = "quux"}, RD_TIER_GENERIC},
        {{.message = "Query took 4290 ms on port 5001"}, RD_TIER_WORDS},
        /* words every kind of message holds decide nothing */
        {{.message = "the frobnicator is sulking"}, RD_TIER_DEFAULT},
        {{.exception_type = "Exception", .message = "zork"}, RD_TIER_DEFAULT},
    };
    for (size_t i = 0; i < LEN(cases); i++) {
        rd_classification got = classify_shipped(cfg, &cases[i].c);
        if (got.decided_by != cases[i].want)
            fprintf(stderr, "case %zu: rule %s decided by %s, want %s\n", i, got.rule_id,
                    rd_tier_name(got.decided_by), rd_tier_name(cases[i].want));
        assert_int_equal(got.decided_by, cases[i].want);
    }
    /* the same tiers from a ruleset evaluated rule by rule */
    rd_rule rules[] = {
        {.id = "code.x", .when = {.codes = (char *[]){"E1"}, .n_codes = 1},
         .retryability = RD_PERMANENT, .category = RD_CAT_LOGIC, .structured = true},
        {.id = "text.y", .when = {.patterns = (rd_pattern[]){{.text = "boom", .len = 4}},
                                  .n_patterns = 1},
         .retryability = RD_TRANSIENT, .category = RD_CAT_TRANSIENT},
    };
    rd_ruleset rs = {.rules = rules, .n_rules = LEN(rules)};
    rd_classification c;
    rd_tool_error coded = {.message = "boom", .message_len = 4, .code = "E1", .exception_type = ""};
    rd_classify(&rs, NULL, "t", &coded, &c);
    assert_int_equal(c.decided_by, RD_TIER_STRUCTURED);
    rd_tool_error text = {.message = "boom", .message_len = 4, .code = "", .exception_type = ""};
    rd_classify(&rs, NULL, "t", &text, &c);
    assert_int_equal(c.decided_by, RD_TIER_MESSAGE);
    rd_tool_error none = {.message = "meh", .message_len = 3, .code = "", .exception_type = ""};
    rd_classify(&rs, NULL, "t", &none, &c);
    assert_int_equal(c.decided_by, RD_TIER_DEFAULT);
    assert_string_equal(c.rule_id, "unknown");
    rd_classify(NULL, NULL, "t", &none, &c);
    assert_int_equal(c.decided_by, RD_TIER_DEFAULT);
}

static void test_shipped_generic_words_do_not_misfire(void **state)
{
    const rd_config *cfg = *state;
    const rd_error_source L = RD_SOURCE_LLM;
    const shipped_case cases[] = {
        {.message = "LOADING Redis is loading the dataset in memory", .want_retryability = T,
         .want_category = RD_CAT_EXTERNAL_SERVICE, .want_rule = "text.redis_not_ready"},
        {.message = "('Connection broken: IncompleteRead(0 bytes read, 512 more expected)', "
                    "IncompleteRead(0 bytes read, 512 more expected))",
         .want_retryability = T, .want_category = RD_CAT_TRANSIENT, .want_rule = "text.network"},
        {.source = L, .message = "Too many tokens, please wait before trying again.",
         .want_retryability = T, .want_category = RD_CAT_EXTERNAL_SERVICE},
        {.message = "The security token included in the request is invalid.",
         .want_retryability = P, .want_category = RD_CAT_PERMISSION,
         .want_rule = "text.aws_credentials"},
        {.message = "WRONGPASS invalid username-password pair or user is disabled.",
         .want_retryability = P, .want_category = RD_CAT_PERMISSION, .want_rule = "text.auth"},
        {.message = "column \"emial\" does not exist", .want_retryability = P,
         .want_category = RD_CAT_INPUT_VALIDATION, .want_rule = "text.sql_bad_statement"},
        {.message = "Message: stale element reference: stale element not found",
         .want_retryability = T, .want_category = RD_CAT_TRANSIENT,
         .want_rule = "text.browser_page_changed"},
        {.message = "Message: no such window: target window already closed",
         .want_retryability = P, .want_category = RD_CAT_LOGIC, .want_rule = "text.closed_handle"},
        {.tool_id = "bash",
         .message = "sudo: a terminal is required to read the password; either use the -S "
                    "option to read from standard input or configure an askpass helper",
         .want_retryability = P, .want_category = RD_CAT_PERMISSION,
         .want_rule = "text.permission"},
        /* errno names are tokens: "FileNotFoundException" is not ENOTFOUND */
        {.message = "java.io.FileNotFoundException: config.properties (No such file or directory)",
         .want_retryability = P, .want_category = RD_CAT_RESOURCE,
         .want_rule = "text.file_not_found"},
        /* the timeout wins over "canceling" */
        {.message = "canceling statement due to statement timeout", .want_retryability = T,
         .want_category = RD_CAT_TRANSIENT, .want_rule = "text.timeout"},
        {.message = "Post \"https://api.example.com/v1/events\": context canceled",
         .want_retryability = P, .want_category = RD_CAT_LOGIC, .want_rule = "text.canceled"},
        /* DNS failures are transient by convention */
        {.message = "dial tcp: lookup api.example.com on 127.0.0.53:53: no such host",
         .want_retryability = T, .want_category = RD_CAT_TRANSIENT, .want_rule = "text.dns"},
    };
    check_cases(cfg, cases, LEN(cases));
}

/* xorshift: a fixed, portable sequence */
static uint32_t next_random(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

/* Messages stitched from the shipped patterns, cased at random, joined by
 * token and non-token bytes, with random structured fields: the compiled
 * matcher and the rule-by-rule evaluation must pick the same rule. */
static void test_shipped_matcher_agrees_with_rule_by_rule(void **state)
{
    const rd_config *cfg = *state;
    const rd_ruleset *rules = &cfg->rules;
    assert_non_null(rules->matcher);
    rd_ruleset plain = *rules;
    plain.matcher = NULL;
    static const char *const tools[] = {"bash", "read_file", "web_fetch", "flight_search"};
    static const char *const codes[] = {"", "-32602", "ECONNRESET", "E1", "insufficient_quota",
                                        "-32000", "api_error", "card_declined", "53300"};
    static const char *const excs[] = {"", "ValueError", "requests.exceptions.ReadTimeout",
                                       "TypeError", "KeyError", "x.errors.GraphRecursionError"};
    static const char separators[] = " _x9.\0:\xC3";
    uint32_t seed = 12345;
    char msg[512];
    for (int round = 0; round < 20000; round++) {
        size_t len = 0;
        int parts = 1 + (int)(next_random(&seed) % 4);
        for (int k = 0; k < parts; k++) {
            const rd_rule *r = &rules->rules[next_random(&seed) % rules->n_rules];
            if (r->when.n_patterns == 0)
                continue;
            const rd_pattern *p = &r->when.patterns[next_random(&seed) % r->when.n_patterns];
            if (len + p->len + 2 > sizeof msg)
                break;
            msg[len++] = separators[next_random(&seed) % (sizeof separators - 1)];
            for (size_t i = 0; i < p->len; i++) {
                char c = p->text[i];
                msg[len++] = (next_random(&seed) & 1) && c >= 'a' && c <= 'z' ? (char)(c - 32) : c;
            }
            if (next_random(&seed) & 1)
                msg[len++] = separators[next_random(&seed) % (sizeof separators - 1)];
        }
        static const int32_t statuses[] = {0, 0, 400, 402, 403, 404, 409, 429, 503};
        static const int32_t grpc_codes[] = {0, 0, 8, 14};
        rd_tool_error e = {.message = msg, .message_len = len,
                           .http_status = statuses[next_random(&seed) % LEN(statuses)],
                           .grpc_code = grpc_codes[next_random(&seed) % LEN(grpc_codes)],
                           .code = codes[next_random(&seed) % LEN(codes)],
                           .exception_type = excs[next_random(&seed) % LEN(excs)],
                           .kind = (rd_error_kind)(next_random(&seed) % RD_KIND_COUNT),
                           .source = (rd_error_source)(next_random(&seed) % RD_SOURCE_COUNT)};
        const char *tool = tools[next_random(&seed) % LEN(tools)];
        rd_classification a, b;
        rd_classify(rules, NULL, tool, &e, &a);
        rd_classify(&plain, NULL, tool, &e, &b);
        if (strcmp(a.rule_id, b.rule_id) != 0)
            fail_msg("round %d: matcher %s, rule by rule %s, message \"%.*s\"", round, a.rule_id,
                     b.rule_id, (int)len, msg);
        assert_int_equal(a.retry_after_ms, b.retry_after_ms);
    }
}

static void test_shipped_64k_message_is_fast(void **state)
{
    const rd_config *cfg = *state;
    size_t len = 65536;
    char *big = malloc(len);
    assert_non_null(big);
    for (size_t i = 0; i < len; i++)
        big[i] = "timeout rate limit 503 not found invalid \0\xFF"[i % 44];
    rd_tool_error e = {.message = big, .message_len = len, .code = "", .exception_type = ""};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    rd_classification c;
    for (int i = 0; i < 20; i++)
        rd_classify(&cfg->rules, NULL, "t", &e, &c);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = ((double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6) / 20;
    assert_string_equal(c.rule_id, "text.timeout");
    /* linear: far below this even under sanitizers; a quadratic scan of
     * 64 KiB would take seconds */
    assert_true(ms < 200.0);
    free(big);
}

static void test_shipped_suggestions_never_empty(void **state)
{
    const rd_config *cfg = *state;
    for (int cat = RD_CAT_TRANSIENT; cat < RD_CAT_COUNT; cat++) {
        assert_non_null(cfg->rules.category_suggestion[cat]);
        assert_true(strlen(cfg->rules.category_suggestion[cat]) > 0);
    }
    assert_int_equal(cfg->rules.unknown_retryability, RD_TRANSIENT);
    shipped_case k = {.message = "Rate limit exceeded. Please try again in 1.8s"};
    rd_classification c = classify_shipped(cfg, &k);
    assert_true(strlen(c.suggestion) > 0);
    assert_int_equal(c.retry_after_ms, 1800);
}

int main(void)
{
    const struct CMUnitTest engine[] = {
        cmocka_unit_test(test_structured_rule_beats_earlier_message_rule),
        cmocka_unit_test(test_first_matching_rule_in_file_order_wins),
        cmocka_unit_test(test_number_patterns_match_whole_tokens_only),
        cmocka_unit_test(test_word_boundaries_at_both_ends),
        cmocka_unit_test(test_matching_is_case_insensitive),
        cmocka_unit_test(test_exception_type_exact_or_last_dotted_part),
        cmocka_unit_test(test_tool_condition_exact_or_prefix),
        cmocka_unit_test(test_code_and_source_conditions),
        cmocka_unit_test(test_unset_fields_never_match_a_condition),
        cmocka_unit_test(test_unknown_default_transient_or_configured),
        cmocka_unit_test(test_suggestion_defaults_to_category),
        cmocka_unit_test(test_override_replaces_only_fields_it_sets),
        cmocka_unit_test(test_override_applies_after_unknown_default),
        cmocka_unit_test(test_kind_given_wins_over_rule_kind),
        cmocka_unit_test(test_retry_after_given_extracted_capped),
        cmocka_unit_test(test_retry_hint_forms),
        cmocka_unit_test(test_retry_hint_absent_or_unparseable),
        cmocka_unit_test(test_retry_hint_respects_length),
        cmocka_unit_test(test_retry_hint_at_every_offset),
        cmocka_unit_test(test_executed_map_for_every_kind),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_llm_message_exact_text),
        cmocka_unit_test(test_llm_message_truncates_on_character_boundary),
        cmocka_unit_test(test_llm_message_replaces_nul_and_invalid_utf8),
        cmocka_unit_test(test_llm_message_matches_reference),
        cmocka_unit_test(test_hostile_messages),
        cmocka_unit_test(test_64k_messages),
        cmocka_unit_test(test_mixed_rules_refine_structured_signals),
        cmocka_unit_test(test_retry_hint_only_for_transient_answers),
        cmocka_unit_test_setup_teardown(test_matcher_overlapping_and_suffix_patterns,
                                        build_matcher_rules, free_matcher_rules),
        cmocka_unit_test_setup_teardown(test_matcher_boundaries, build_matcher_rules,
                                        free_matcher_rules),
        cmocka_unit_test_setup_teardown(test_matcher_bound_limits_visits, build_matcher_rules,
                                        free_matcher_rules),
        cmocka_unit_test_setup_teardown(test_matcher_two_walks_find_every_offset,
                                        build_matcher_rules, free_matcher_rules),
        cmocka_unit_test_setup_teardown(test_matcher_64k_is_linear, build_matcher_rules,
                                        free_matcher_rules),
        cmocka_unit_test(test_matcher_without_patterns),
    };
    const struct CMUnitTest shipped[] = {
        cmocka_unit_test(test_shipped_003_section_1),
        cmocka_unit_test(test_shipped_003_1_5_manifest_override),
        cmocka_unit_test(test_shipped_002_pattern_groups),
        cmocka_unit_test(test_shipped_002_per_tool_rules),
        cmocka_unit_test(test_shipped_004_llm_and_mcp_additions),
        cmocka_unit_test(test_shipped_structured_tables),
        cmocka_unit_test(test_shipped_mixed_rules),
        cmocka_unit_test(test_shipped_precedence),
        cmocka_unit_test(test_decided_by),
        cmocka_unit_test(test_shipped_vendor_tables),
        cmocka_unit_test(test_rule_tiers),
        cmocka_unit_test(test_shipped_generic_words_do_not_misfire),
        cmocka_unit_test(test_shipped_matcher_agrees_with_rule_by_rule),
        cmocka_unit_test(test_shipped_64k_message_is_fast),
        cmocka_unit_test(test_shipped_suggestions_never_empty),
    };
    int failed = cmocka_run_group_tests_name("classify engine", engine, NULL, NULL);
    failed += cmocka_run_group_tests_name("shipped rules", shipped, load_shipped, free_shipped);
    return failed ? 1 : 0;
}
