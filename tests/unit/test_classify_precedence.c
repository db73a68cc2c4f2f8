/* Which signal decides when an error carries several (docs/CLASSIFICATION.md,
 * "Precedence of structured fields"): the shipped mixed rules that refine a
 * status or code by its text, the order of codes, statuses, exception types
 * and the generic pass, and the tier every answer names as the one that
 * decided it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "config/config.h"
#include "domain/classify.h"
#include "classify_fixture.h"
#include "classify_shipped.h"

#define T RD_TRANSIENT
#define P RD_PERMANENT

/* A status, code or kind whose meaning the text decides: the mixed rule
 * before the structured rule it refines. */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shipped_mixed_rules),
        cmocka_unit_test(test_shipped_precedence),
        cmocka_unit_test(test_decided_by),
        cmocka_unit_test(test_rule_tiers),
    };
    return cmocka_run_group_tests_name("precedence", tests, load_shipped, free_shipped);
}
