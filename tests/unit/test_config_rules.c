/* The rules file (classification.rules_file): the conditions and results
 * of a rule as the classifier gets them (ranges, names, codes, message
 * patterns and their word-boundary markers), an empty list, and the exact
 * "FILE:LINE: KEY: problem" text of every kind of error in it.
 *
 * Each test writes its files into a fresh temporary directory; the line
 * numbers asserted below are those of the fixture texts, one source line
 * per YAML line. */
#define _GNU_SOURCE /* nftw */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config_fixture.h"

/* ---- what a rule holds ---- */

static void test_rule_conditions_are_parsed(void **state)
{
    (void)state;
    rd_config *cfg = load_ok(MAIN_MIN, "unknown: {retryability: permanent}\n" RULES_HEAD
                             "  - id: net.all\n"
                             "    when:\n"
                             "      http_status: [429, \"5xx\", \"500-504\", \"503\"]\n"
                             "      grpc_code: [14, unavailable, DEADLINE_EXCEEDED]\n"
                             "      code: [-32602, \"-32602\", ECONNRESET]\n"
                             "      exception_type: [requests.exceptions.ConnectTimeout]\n"
                             "      kind: [timeout, transport_error]\n"
                             "      source: [llm, mcp]\n"
                             "      tool: [bash, \"web_*\"]\n"
                             "    result: {retryability: transient, category: transient,"
                             " kind: timeout, suggestion: wait}\n"
                             "  - id: text\n"
                             "    when:\n"
                             "      message: [\"\\\\bETIMEDOUT\\\\b\", '\\bfoo', \"429\","
                             " \"Rate Limit\", \"\\bbar\\b\", 'x\\b']\n"
                             "    result: {retryability: permanent, category: logic}\n");
    const rd_ruleset *rs = &cfg->rules;
    assert_int_equal(rs->unknown_retryability, RD_PERMANENT);
    assert_int_equal(rs->n_rules, 2);
    const rd_rule *r = &rs->rules[0];
    assert_string_equal(r->id, "net.all");
    assert_int_equal(r->line, 11);
    assert_true(r->structured);
    const rd_match *m = &r->when;
    assert_int_equal(m->n_http_status, 4);
    assert_int_equal(m->http_status[0].lo, 429);
    assert_int_equal(m->http_status[0].hi, 429);
    assert_int_equal(m->http_status[1].lo, 500);
    assert_int_equal(m->http_status[1].hi, 599);
    assert_int_equal(m->http_status[2].lo, 500);
    assert_int_equal(m->http_status[2].hi, 504);
    assert_int_equal(m->http_status[3].lo, 503);
    assert_int_equal(m->n_grpc_code, 3);
    assert_int_equal(m->grpc_code[0].lo, 14);
    assert_int_equal(m->grpc_code[1].lo, 14);
    assert_int_equal(m->grpc_code[2].lo, 4);
    assert_int_equal(m->n_codes, 3);
    assert_string_equal(m->codes[0], "-32602");
    assert_string_equal(m->codes[1], "-32602");
    assert_string_equal(m->codes[2], "ECONNRESET");
    assert_string_equal(m->exception_types[0], "requests.exceptions.ConnectTimeout");
    assert_int_equal(m->kinds[1], RD_KIND_TRANSPORT_ERROR);
    assert_int_equal(m->sources[0], RD_SOURCE_LLM);
    assert_int_equal(m->sources[1], RD_SOURCE_MCP);
    assert_string_equal(m->tools[1], "web_*");
    assert_int_equal(r->kind, RD_KIND_TIMEOUT);
    assert_string_equal(r->suggestion, "wait");
    assert_null(rs->rules[1].suggestion);
    assert_string_equal(rs->category_suggestion[RD_CAT_LOGIC], "l");
    assert_non_null(rs->category_suggestion[RD_CAT_UNSPECIFIED]);

    const rd_rule *t = &rs->rules[1];
    assert_false(t->structured);
    assert_int_equal(t->when.n_patterns, 6);
    const rd_pattern *p = t->when.patterns;
    /* "\\b" (double-quoted) and '\b' (single-quoted) are both the marker. */
    assert_string_equal(p[0].text, "etimedout");
    assert_int_equal(p[0].len, 9);
    assert_true(p[0].boundary_start && p[0].boundary_end);
    assert_string_equal(p[1].text, "foo");
    assert_true(p[1].boundary_start);
    assert_false(p[1].boundary_end);
    /* All digits: boundaries at both ends without asking. */
    assert_string_equal(p[2].text, "429");
    assert_true(p[2].boundary_start && p[2].boundary_end);
    assert_string_equal(p[3].text, "rate limit");
    assert_false(p[3].boundary_start || p[3].boundary_end);
    /* A double-quoted "\b" decodes to a backspace byte: read as the marker. */
    assert_string_equal(p[4].text, "bar");
    assert_true(p[4].boundary_start && p[4].boundary_end);
    assert_string_equal(p[5].text, "x");
    assert_false(p[5].boundary_start);
    assert_true(p[5].boundary_end);
    rd_config_free(cfg);
}

static void test_an_empty_rules_list_is_allowed(void **state)
{
    (void)state;
    rd_config *cfg = load_ok(MAIN_MIN, SUGGESTIONS);
    assert_int_equal(cfg->rules.n_rules, 0);
    assert_string_equal(cfg->rules.category_suggestion[RD_CAT_UNKNOWN], "u");
    rd_config_free(cfg);
}

/* ---- errors in the rules file ---- */

#define RULE_AT_10(when_and_result) RULES_HEAD "  - id: r\n" when_and_result

static void test_rules_enum_errors(void **state)
{
    (void)state;
    expect_rules_error(RULE_AT_10("    when: {kind: [timeout]}\n"
                                  "    result: {retryability: transient, category: network}\n"),
                       12, "rules[0].result.category",
                       "unknown category \"network\" (expected one of: transient,");
    expect_rules_error(RULE_AT_10("    when: {kind: [timeout]}\n"
                                  "    result: {retryability: maybe, category: logic}\n"),
                       12, "rules[0].result.retryability", "unknown retryability \"maybe\"");
    expect_rules_error(RULE_AT_10("    when:\n"
                                  "      kind: [timeout, timout]\n"
                                  "    result: {retryability: transient, category: logic}\n"),
                       12, "rules[0].when.kind[1]", "unknown kind \"timout\"");
    expect_rules_error(RULE_AT_10("    when: {source: [web]}\n"
                                  "    result: {retryability: transient, category: logic}\n"),
                       11, "rules[0].when.source[0]", "unknown source \"web\"");
    expect_rules_error(RULE_AT_10("    when: {grpc_code: [UNAVAILBLE]}\n"
                                  "    result: {retryability: transient, category: logic}\n"),
                       11, "rules[0].when.grpc_code[0]", "unknown gRPC code \"UNAVAILBLE\"");
    expect_rules_error(RULE_AT_10("    when: {grpc_code: [17]}\n"
                                  "    result: {retryability: transient, category: logic}\n"),
                       11, "rules[0].when.grpc_code[0]", "17 is out of range (1..16)");
    expect_rules_error("unknown: {retryability: sometimes}\n" SUGGESTIONS, 1,
                       "unknown.retryability", "unknown retryability");
    /* generic.* rules are read after the message pass: no patterns there */
    expect_rules_error(RULES_HEAD "  - id: generic.x\n"
                                  "    when: {exception_type: [TypeError], message: [boom]}\n"
                                  "    result: {retryability: permanent, category: logic}\n",
                       11, "rules[0].when", "a generic.* rule takes no message patterns");
}

static void test_rules_http_status_ranges(void **state)
{
    (void)state;
    static const char *const bad[] = {"600", "\"6xx\"", "\"504-500\"", "99", "\"5x\"",
                                      "\"abc\"", "\"-5\"", "{a: 1}"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char text[1024];
        snprintf(text, sizeof text,
                 RULE_AT_10("    when:\n"
                            "      http_status: [429, %s]\n"
                            "    result: {retryability: transient, category: logic}\n"),
                 bad[i]);
        expect_rules_error(text, 12, "rules[0].when.http_status[1]", "expected");
    }
}

static void test_rules_patterns(void **state)
{
    (void)state;
    expect_rules_error(RULE_AT_10("    when: {message: [ok, \"\"]}\n"
                                  "    result: {retryability: transient, category: logic}\n"),
                       11, "rules[0].when.message[1]", "empty pattern");
    expect_rules_error(RULE_AT_10("    when: {message: [\"\\\\b\"]}\n"
                                  "    result: {retryability: transient, category: logic}\n"),
                       11, "rules[0].when.message[0]", "empty pattern");
    expect_rules_error(RULE_AT_10("    when: {message: ['\\b\\b']}\n"
                                  "    result: {retryability: transient, category: logic}\n"),
                       11, "rules[0].when.message[0]", "empty pattern");
    char text[1024], long_pattern[258];
    memset(long_pattern, 'a', 257);
    long_pattern[257] = '\0';
    snprintf(text, sizeof text,
             RULE_AT_10("    when: {message: [%s]}\n"
                        "    result: {retryability: transient, category: logic}\n"),
             long_pattern);
    expect_rules_error(text, 11, "rules[0].when.message[0]", "longer than 256 bytes");
    /* Exactly 256 bytes between the markers is fine. */
    long_pattern[256] = '\0';
    snprintf(text, sizeof text,
             RULE_AT_10("    when: {message: ['\\b%s\\b']}\n"
                        "    result: {retryability: transient, category: logic}\n"),
             long_pattern);
    rd_config *cfg = load_ok(MAIN_MIN, text);
    assert_int_equal(cfg->rules.rules[0].when.patterns[0].len, 256);
    rd_config_free(cfg);
}

static void test_rules_structure_errors(void **state)
{
    (void)state;
    expect_rules_error(RULES_MIN "  - id: http.rate_limited\n"
                                 "    when: {http_status: [503]}\n"
                                 "    result: {retryability: transient, category: logic}\n",
                       13, "rules[1].id",
                       "duplicate rule id \"http.rate_limited\" (first at line 10)");
    expect_rules_error(RULE_AT_10("    when: {status: [500]}\n"
                                  "    result: {retryability: transient, category: logic}\n"),
                       11, "rules[0].when.status", "unknown key");
    expect_rules_error(RULE_AT_10("    when: {http_status: []}\n"
                                  "    result: {retryability: transient, category: logic}\n"),
                       11, "rules[0].when.http_status", "empty list");
    expect_rules_error(RULE_AT_10("    when: {http_status: 500}\n"
                                  "    result: {retryability: transient, category: logic}\n"),
                       11, "rules[0].when.http_status", "expected a list, got a scalar");
    expect_rules_error(RULE_AT_10("    when: {}\n"
                                  "    result: {retryability: transient, category: logic}\n"),
                       11, "rules[0].when", "at least one condition is required");
    expect_rules_error(RULE_AT_10("    when: {kind: [timeout]}\n"
                                  "    result: {category: logic}\n"),
                       12, "rules[0].result.retryability", "missing (required)");
    expect_rules_error(RULE_AT_10("    result: {retryability: transient, category: logic}\n"),
                       10, "rules[0].when", "missing");
    expect_rules_error(RULES_HEAD "  - when: {kind: [timeout]}\n", 10, "rules[0].id", "missing");
    expect_rules_error(RULES_HEAD "  - id: Bad Id\n", 10, "rules[0].id", "is not a rule id");
    expect_rules_error(RULE_AT_10("    when: {tool: [\"bad tool\"]}\n"
                                  "    result: {retryability: transient, category: logic}\n"),
                       11, "rules[0].when.tool[0]", "is not a tool id");
    expect_rules_error("suggestions:\n  transient: t\n", 1, "suggestions.input_validation",
                       "missing (all 7 categories need a suggestion)");
    expect_rules_error("rules: []\n", 1, "suggestions", "missing");
    expect_rules_error(SUGGESTIONS "rules: {a: 1}\n", 9, "rules", "expected a list, got a mapping");
}

static void test_rules_count_is_capped(void **state)
{
    (void)state;
    static const char rule[] =
        "  - {id: r%05d, when: {kind: [timeout]}, result: {retryability: transient,"
        " category: logic}}\n";
    size_t cap = sizeof RULES_HEAD + 4097 * sizeof rule;
    char *text = malloc(cap);
    assert_non_null(text);
    size_t used = (size_t)snprintf(text, cap, "%s", RULES_HEAD);
    for (int i = 0; i < 4096; i++)
        used += (size_t)snprintf(text + used, cap - used, rule, i);
    rd_config *cfg = load_ok(MAIN_MIN, text); /* 4096 rules: the limit itself */
    assert_int_equal(cfg->rules.n_rules, 4096);
    rd_config_free(cfg);
    snprintf(text + used, cap - used, rule, 4096);
    expect_rules_error(text, 10, "rules", "more than 4096 rules");
    free(text);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, make_dir, remove_dir)
    const struct CMUnitTest tests[] = {
        T(test_rule_conditions_are_parsed),
        T(test_an_empty_rules_list_is_allowed),
        T(test_rules_enum_errors),
        T(test_rules_http_status_ranges),
        T(test_rules_patterns),
        T(test_rules_structure_errors),
        T(test_rules_count_is_capped),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
