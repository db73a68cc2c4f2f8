/* Fixture texts for the configuration loader's tests (test_config_main_file.c,
 * test_config_rules.c, test_config_manifests.c, test_config_ops.c): a
 * minimal main file and rules file, with the YAML line of each fixture
 * line; a load from the test's temporary directory that must succeed; and
 * loads that must fail with exactly "FILE:LINE: KEY: problem" in the main
 * file, the rules file or a manifest. Include after cmocka.h, with
 * _GNU_SOURCE defined (temp_dir.h's nftw). */
#ifndef RD_TEST_CONFIG_FIXTURE_H
#define RD_TEST_CONFIG_FIXTURE_H

#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config.h"

#include "temp_dir.h"

#define MAIN_MIN                                                                              \
    "classification:\n"          /* 1 */                                                      \
    "  rules_file: rules.yaml\n" /* 2 */

#define SUGGESTIONS                                                                           \
    "suggestions:\n"             /* 1 */                                                      \
    "  transient: t\n"           /* 2 */                                                      \
    "  input_validation: iv\n"   /* 3 */                                                      \
    "  external_service: es\n"   /* 4 */                                                      \
    "  permission: p\n"          /* 5 */                                                      \
    "  logic: l\n"               /* 6 */                                                      \
    "  resource: r\n"            /* 7 */                                                      \
    "  unknown: u\n"             /* 8 */

/* The same on one line, for files that count their lines from it. */
#define SUGGESTIONS_LINE                                                                      \
    "suggestions: {transient: t, input_validation: i, external_service: e, permission: p, "   \
    "logic: l, resource: r, unknown: u}\n"

/* The rules list starts at line 10. */
#define RULES_HEAD SUGGESTIONS "rules:\n" /* 9 */

#define RULES_MIN                                                                             \
    RULES_HEAD                                                                                \
    "  - id: http.rate_limited\n"                                    /* 10 */                 \
    "    when: {http_status: [429]}\n"                               /* 11 */                 \
    "    result: {retryability: transient, category: external_service}\n" /* 12 */

static inline rd_config *load_files(const char *main_text, const char *rules_text, char *err)
{
    char path[PATH_MAX];
    put("recovery.yaml", main_text);
    if (rules_text)
        put("rules.yaml", rules_text);
    return rd_config_load(in_dir(path, "recovery.yaml"), err, RD_CONFIG_ERR_MAX);
}

static inline rd_config *load_ok(const char *main_text, const char *rules_text)
{
    char err[RD_CONFIG_ERR_MAX] = "";
    rd_config *cfg = load_files(main_text, rules_text ? rules_text : RULES_MIN, err);
    if (!cfg)
        fail_msg("unexpected load error: %s", err);
    return cfg;
}

/* err must be exactly "<dir>/<file>:<line>: <key>: " followed by text that
 * contains `problem`. */
static inline void assert_error(const char *err, const char *file, int line, const char *key,
                                const char *problem)
{
    char prefix[PATH_MAX + 256];
    snprintf(prefix, sizeof prefix, "%s/%s:%d: %s: ", g_dir, file, line, key);
    size_t n = strlen(prefix);
    if (strncmp(err, prefix, n) != 0 || !strstr(err + n, problem))
        fail_msg("got  \"%s\"\nwant \"%s...%s...\"", err, prefix, problem);
}

static inline void expect_main_error(const char *main_text, int line, const char *key,
                                     const char *problem)
{
    char err[RD_CONFIG_ERR_MAX] = "";
    rd_config *cfg = load_files(main_text, RULES_MIN, err);
    assert_null(cfg);
    assert_error(err, "recovery.yaml", line, key, problem);
}

static inline void expect_rules_error(const char *rules_text, int line, const char *key,
                                      const char *problem)
{
    char err[RD_CONFIG_ERR_MAX] = "";
    rd_config *cfg = load_files(MAIN_MIN, rules_text, err);
    assert_null(cfg);
    assert_error(err, "rules.yaml", line, key, problem);
}

static inline void expect_tool_error(const char *tool_text, int line, const char *key,
                                     const char *problem)
{
    char err[RD_CONFIG_ERR_MAX] = "";
    put("tools.d/t.yaml", tool_text);
    rd_config *cfg = load_files(MAIN_MIN, RULES_MIN, err);
    assert_null(cfg);
    assert_error(err, "tools.d/t.yaml", line, key, problem);
}

#endif
