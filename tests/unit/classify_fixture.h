/* What the classifier's unit tests (test_classify_*.c) share besides the
 * shipped rules (classify_shipped.h): LEN; a ruleset built by hand, so the
 * engine's semantics are checked independently of the YAML loader, with a
 * structured rule listed after a message rule and a suggestion per
 * category; errors made from text; and a check that text is well-formed
 * UTF-8, for what rd_llm_message writes. */
#ifndef RD_TEST_CLASSIFY_FIXTURE_H
#define RD_TEST_CLASSIFY_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "domain/classify.h"

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

static inline rd_tool_error text_error(const char *message)
{
    return (rd_tool_error){.message = message, .message_len = strlen(message), .code = "",
                           .exception_type = ""};
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

static inline rd_ruleset make_ruleset(rd_retryability unknown)
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

static inline rd_classification classify(const rd_ruleset *rs, const rd_tool_config *tool,
                                         const char *tool_id, const rd_tool_error *err)
{
    rd_classification c;
    memset(&c, 0xA5, sizeof c); /* every field must be written */
    rd_classify(rs, tool, tool_id, err, &c);
    return c;
}

/* True if s[0..n) is well-formed UTF-8 by lead and continuation bytes. */
static inline bool valid_utf8(const char *s, size_t n)
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

#endif
