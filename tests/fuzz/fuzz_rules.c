/* libFuzzer target: the classification rules loader (config/rules_parse.c)
 * and the matcher it compiles (domain/matcher.c). Each input is written as
 * rules.yaml next to the shipped recovery.yaml (with an empty tools.d/, so
 * each load reads the rules and little else) and loaded with
 * rd_config_load. A ruleset that loads is then used: a few real errors are
 * classified with it, which runs the compiled matcher over patterns the
 * fuzzer wrote.
 *
 * Besides sanitizer reports: a refused file must come with a message, and
 * classification with a loaded ruleset must give an in-range result that
 * names its rule. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config/config.h"
#include "domain/classify.h"
#include "fuzz_support.h"

static char *main_path, *rules_path;

static void fail(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz rules: %s: %s\n", what, detail);
    abort();
}

static void setup(void)
{
    fuzz_quiet_logs();
    const char *dir = fuzz_scratch_dir();
    fuzz_copy_shipped(dir, "recovery.yaml");
    char *tools = fuzz_path(dir, "tools.d");
    if (mkdir(tools, 0700) != 0)
        fail("cannot create", tools);
    free(tools);
    main_path = fuzz_path(dir, "recovery.yaml");
    rules_path = fuzz_path(dir, "rules.yaml");
}

#define TEXT(s) .message = s, .message_len = sizeof s - 1

static const rd_tool_error samples[] = {
    {TEXT("Connection timeout after 30s"), .code = "", .exception_type = ""},
    {TEXT("429 Too Many Requests: try again in 1.8s"), .code = "", .exception_type = "",
     .http_status = 429},
    {TEXT(""), .code = "ECONNRESET", .exception_type = "", .kind = RD_KIND_TRANSPORT_ERROR},
    {TEXT("invalid argument: 'date' must be ISO-8601"), .code = "",
     .exception_type = "ValueError", .grpc_code = 3},
    /* words a word_weights section may weigh, for a marked rule */
    {TEXT("cannot use this key: access denied upstream"), .code = "", .exception_type = "",
     .http_status = 503},
    /* and words no rule reads, for the weights' own answer */
    {TEXT("key denied"), .code = "", .exception_type = "", .http_status = 0},
    /* a rule that gives way to the words */
    {TEXT("retry refused: key denied"), .code = "", .exception_type = "", .http_status = 0},
};

static void classify_samples(const rd_config *cfg)
{
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
        rd_classification c;
        rd_classify(&cfg->rules, NULL, "fuzz_tool", &samples[i], &c);
        if (c.retryability != RD_TRANSIENT && c.retryability != RD_PERMANENT)
            fail("retryability is neither transient nor permanent", samples[i].message);
        if ((int)c.category < 0 || (int)c.category >= RD_CAT_COUNT)
            fail("category out of range", samples[i].message);
        if (!c.rule_id || !c.suggestion)
            fail("rule_id or suggestion is NULL", samples[i].message);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!main_path)
        setup();
    fuzz_write_file(rules_path, data, size);
    char err[RD_CONFIG_ERR_MAX];
    err[0] = '\0';
    rd_config *cfg = rd_config_load(main_path, err, sizeof err);
    if (cfg)
        classify_samples(cfg);
    else if (!err[0])
        fail("refused without a message", "");
    rd_config_free(cfg);
    return 0;
}
