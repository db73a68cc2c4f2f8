/* libFuzzer target: the message classifier (domain/classify.c with the
 * compiled matcher of domain/matcher.c) over the shipped rules and tool
 * manifests.
 *
 * Input layout: 6 header bytes, then the text.
 *   [0] kind   [1] source   [2..3] http_status   [4] grpc_code
 *   [5] tool: one of the shipped manifests, or none
 * The text is classified three ways: as the message (handed over with its
 * exact length and no terminating NUL, as the contract allows: "message may
 * contain any bytes"), as `code`, and as `exception_type`. The retry-hint
 * reader and the text for the model get the same bytes.
 *
 * Besides sanitizer reports, a result outside the enums, a NULL rule_id or
 * suggestion, a negative retry hint or one above the documented one-hour
 * cap is a bug, and so is a compiled matcher that picks another rule than
 * the rules tried one by one in file order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "domain/classify.h"
#include "fuzz_support.h"

#define HEADER 6
#define HOUR_MS (3600LL * 1000)

static rd_config *cfg;

static void fail(const char *what)
{
    fprintf(stderr, "fuzz classify: %s\n", what);
    abort();
}

static void load_shipped(void)
{
    fuzz_quiet_logs();
    char err[RD_CONFIG_ERR_MAX];
    cfg = rd_config_load(RD_SOURCE_DIR "/config/recovery.yaml", err, sizeof err);
    if (!cfg) {
        fprintf(stderr, "%s\n", err);
        fail("the shipped config does not load");
    }
}

static void check_ranges(const rd_classification *c)
{
    if (c->retryability != RD_TRANSIENT && c->retryability != RD_PERMANENT)
        fail("retryability is neither transient nor permanent");
    if ((int)c->category < 0 || (int)c->category >= RD_CAT_COUNT)
        fail("category out of range");
    if ((int)c->kind < 0 || (int)c->kind >= RD_KIND_COUNT)
        fail("kind out of range");
    if (!c->rule_id || !c->suggestion)
        fail("rule_id or suggestion is NULL");
    if (c->retry_after_ms < 0)
        fail("negative retry_after_ms");
}

/* Classifies err and checks the result against the uncompiled ruleset. */
static void classify_checked(const rd_tool_config *tool, const char *tool_id,
                             const rd_tool_error *err)
{
    rd_classification compiled, plain;
    rd_classify(&cfg->rules, tool, tool_id, err, &compiled);
    check_ranges(&compiled);
    rd_ruleset one_by_one = cfg->rules;
    one_by_one.matcher = NULL;
    rd_classify(&one_by_one, tool, tool_id, err, &plain);
    if (strcmp(compiled.rule_id, plain.rule_id) != 0) {
        fprintf(stderr, "compiled: %s, one by one: %s\n", compiled.rule_id, plain.rule_id);
        fail("the compiled matcher picked another rule");
    }
}

/* A NUL-terminated copy of at most `cap` bytes (the API's field limit). */
static char *cstr(const uint8_t *data, size_t size, size_t cap)
{
    size_t n = size < cap ? size : cap;
    char *s = malloc(n + 1);
    if (!s)
        fail("out of memory");
    memcpy(s, data, n);
    s[n] = '\0';
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!cfg)
        load_shipped();
    if (size < HEADER)
        return 0;
    rd_tool_error base = {
        .message = "",
        .code = "",
        .exception_type = "",
        .kind = (rd_error_kind)(data[0] % RD_KIND_COUNT),
        .source = (rd_error_source)(data[1] % RD_SOURCE_COUNT),
        .http_status = (int32_t)((data[2] << 8 | data[3]) % 700), /* includes invalid */
        .grpc_code = data[4] % 17,
    };
    size_t pick = data[5] % (cfg->n_tools + 1);
    const rd_tool_config *tool = pick < cfg->n_tools ? &cfg->tools[pick] : NULL;
    const char *tool_id = tool ? tool->id : "fuzz_tool";
    const uint8_t *text = data + HEADER;
    size_t text_len = size - HEADER;

    /* The message: the exact bytes, no terminator after them. */
    uint8_t *message = malloc(text_len ? text_len : 1);
    if (!message)
        fail("out of memory");
    memcpy(message, text, text_len);
    rd_tool_error err = base;
    err.message = (const char *)message;
    err.message_len = text_len;
    classify_checked(tool, tool_id, &err);

    int64_t hint = rd_retry_hint_from_text((const char *)message, text_len);
    if (hint < 0 || hint > HOUR_MS)
        fail("retry hint outside [0, 1 hour]");

    char llm[1024];
    size_t n = rd_llm_message(llm, sizeof llm, tool_id, "ToolError", (const char *)message,
                              text_len);
    if (n >= sizeof llm || llm[n] != '\0')
        fail("the text for the model is not terminated within its buffer");
    free(message);

    /* The same text as the structured string fields. */
    char *field = cstr(text, text_len, RD_SHORT_FIELD_MAX);
    err = base;
    err.code = field;
    classify_checked(tool, tool_id, &err);
    err = base;
    err.exception_type = field;
    classify_checked(tool, tool_id, &err);
    free(field);
    return 0;
}
