/* The shipped rules (config/recovery.yaml -> rules.yaml, tools.d) on what
 * users of the service rely on: the scenarios of 003 section 1 (with the
 * custom_api manifest of 1.5), one message per pattern group of 002 and
 * its per-tool rules, the 004 additions for LLM and MCP errors, generic
 * words that must not misfire, and a suggestion for every answer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "config/config.h"
#include "domain/classify.h"
#include "classify_fixture.h"
#include "classify_shipped.h"

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

/* The misfires of generic words, each fixed by ordering or boundaries. */
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
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shipped_003_section_1),
        cmocka_unit_test(test_shipped_003_1_5_manifest_override),
        cmocka_unit_test(test_shipped_002_pattern_groups),
        cmocka_unit_test(test_shipped_002_per_tool_rules),
        cmocka_unit_test(test_shipped_004_llm_and_mcp_additions),
        cmocka_unit_test(test_shipped_generic_words_do_not_misfire),
        cmocka_unit_test(test_shipped_suggestions_never_empty),
    };
    return cmocka_run_group_tests_name("shipped rules", tests, load_shipped, free_shipped);
}
