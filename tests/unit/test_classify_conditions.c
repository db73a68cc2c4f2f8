/* Which rule of a hand-built ruleset decides an error
 * (server/domain/classify.c): structured rules before message rules, then
 * file order; message patterns as whole tokens or substrings, case folded;
 * exception types, tools, codes and sources; fields left unset; mixed rules
 * that refine a structured signal by the text; and texts with NULs,
 * ill-formed UTF-8, a length that cuts them, or 64 KiB. Hand-built, so the
 * engine's semantics are checked independently of the YAML loader. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "domain/classify.h"
#include "domain/err.h"
#include "domain/matcher.h"
#include "classify_fixture.h"

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

/* ---- hostile text ---- */

static rd_tool_error bytes_error(const char *bytes, size_t len)
{
    return (rd_tool_error){.message = bytes, .message_len = len, .code = "", .exception_type = ""};
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_structured_rule_beats_earlier_message_rule),
        cmocka_unit_test(test_first_matching_rule_in_file_order_wins),
        cmocka_unit_test(test_number_patterns_match_whole_tokens_only),
        cmocka_unit_test(test_word_boundaries_at_both_ends),
        cmocka_unit_test(test_matching_is_case_insensitive),
        cmocka_unit_test(test_exception_type_exact_or_last_dotted_part),
        cmocka_unit_test(test_tool_condition_exact_or_prefix),
        cmocka_unit_test(test_code_and_source_conditions),
        cmocka_unit_test(test_unset_fields_never_match_a_condition),
        cmocka_unit_test(test_mixed_rules_refine_structured_signals),
        cmocka_unit_test(test_hostile_messages),
        cmocka_unit_test(test_64k_messages),
    };
    return cmocka_run_group_tests_name("classify conditions", tests, NULL, NULL);
}
