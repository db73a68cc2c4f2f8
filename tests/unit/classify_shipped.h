/* The shipped rules (config/recovery.yaml) under test: one error, the
 * answer users rely on, and a check that names every case that fails.
 * Shared by the test files that classify with the shipped rules. */
#ifndef RD_TEST_CLASSIFY_SHIPPED_H
#define RD_TEST_CLASSIFY_SHIPPED_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "config/config.h"
#include "domain/classify.h"

#ifndef RD_SOURCE_DIR
#define RD_SOURCE_DIR "."
#endif

typedef struct shipped_case {
    const char *tool_id;
    const char *message;
    int32_t http_status;
    int32_t grpc_code;
    const char *code;
    const char *exception_type;
    rd_error_kind kind;
    rd_error_source source;
    rd_retryability want_retryability;
    rd_category want_category;
    const char *want_rule; /* NULL: any rule */
} shipped_case;

static inline int load_shipped(void **state)
{
    char err[RD_CONFIG_ERR_MAX] = "";
    rd_config *cfg = rd_config_load(RD_SOURCE_DIR "/config/recovery.yaml", err, sizeof err);
    if (!cfg) {
        fprintf(stderr, "shipped config does not load: %s\n", err);
        return -1;
    }
    *state = cfg;
    return 0;
}

static inline int free_shipped(void **state)
{
    rd_config_free(*state);
    return 0;
}

static inline rd_classification classify_shipped(const rd_config *cfg, const shipped_case *k)
{
    rd_tool_error e = {.message = k->message ? k->message : "",
                       .message_len = k->message ? strlen(k->message) : 0,
                       .http_status = k->http_status, .grpc_code = k->grpc_code,
                       .code = k->code ? k->code : "",
                       .exception_type = k->exception_type ? k->exception_type : "",
                       .kind = k->kind, .source = k->source};
    const char *tool_id = k->tool_id ? k->tool_id : "flight_search";
    rd_classification c;
    rd_classify(&cfg->rules, rd_config_find_tool(cfg, tool_id), tool_id, &e, &c);
    return c;
}

static inline void check_cases(const rd_config *cfg, const shipped_case *cases, size_t n)
{
    int failures = 0;
    for (size_t i = 0; i < n; i++) {
        const shipped_case *k = &cases[i];
        rd_classification c = classify_shipped(cfg, k);
        /* decided_by comes from the compiled matcher's table: it must be
         * the tier the deciding rule's id names */
        bool ok = c.retryability == k->want_retryability && c.category == k->want_category
               && (!k->want_rule || strcmp(c.rule_id, k->want_rule) == 0)
               && c.decided_by == rd_rule_tier(c.rule_id);
        if (!ok) {
            failures++;
            fprintf(stderr,
                    "MISS [%s] msg=\"%s\" http=%d grpc=%d code=%s exc=%s kind=%s: got %s/%s "
                    "(%s), want %s/%s (%s)\n",
                    k->tool_id ? k->tool_id : "flight_search", k->message ? k->message : "",
                    k->http_status, k->grpc_code, k->code ? k->code : "",
                    k->exception_type ? k->exception_type : "", rd_kind_name(k->kind),
                    rd_retryability_name(c.retryability), rd_category_name(c.category),
                    c.rule_id, rd_retryability_name(k->want_retryability),
                    rd_category_name(k->want_category), k->want_rule ? k->want_rule : "*");
        }
    }
    assert_int_equal(failures, 0);
}

#endif
