/* Tool manifests (tools.d): merged over the defaults key by key, found by
 * id, hidden and foreign entries skipped, and the exact
 * "FILE:LINE: KEY: problem" text of their errors, including those that
 * need every manifest: a duplicate id, a dependency cycle, a tool no
 * manifest or tools.external names.
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

#include <limits.h>
#include <stdio.h>

#include "config/config.h"
#include "config_fixture.h"

/* ---- merging and lookup ---- */

static void test_manifest_merges_over_defaults(void **state)
{
    (void)state;
    put("tools.d/api.yaml", "tool:\n"
                            "  id: api\n"
                            "  retry_policy: {max_attempts: 3}\n"
                            "  circuit_breaker: {timeout_ms: 1000}\n"
                            "  default: \"[]\"\n");
    put("tools.d/plain.yml", "tool: {id: plain}\n");
    rd_config *cfg = load_ok("defaults:\n"
                             "  timeout_ms: 9000\n"
                             "  retry_policy: {multiplier: 3, initial_delay_ms: 200}\n"
                             "  circuit_breaker: {failure_threshold: 7}\n" MAIN_MIN,
                             NULL);
    assert_int_equal(cfg->n_tools, 2);
    const rd_tool_config *api = rd_config_find_tool(cfg, "api");
    assert_non_null(api);
    assert_int_equal(api->retry.max_attempts, 3);       /* from the manifest */
    assert_true(api->retry.multiplier == 3.0);          /* from defaults: (integer accepted) */
    assert_int_equal(api->retry.initial_delay_ms, 200); /* from defaults: */
    assert_int_equal(api->retry.max_delay_ms, 800);     /* built-in default */
    assert_int_equal(api->timeout_ms, 9000);
    assert_int_equal(api->breaker.failure_threshold, 7);
    assert_int_equal(api->breaker.open_timeout_ms, 1000);
    assert_true(api->has_default);
    assert_string_equal(api->default_value, "[]");
    assert_int_equal(api->line, 2);
    assert_string_equal(api->file, in_dir((char[PATH_MAX]){0}, "tools.d/api.yaml"));
    const rd_tool_config *plain = rd_config_find_tool(cfg, "plain");
    assert_non_null(plain);
    assert_false(plain->has_default);
    assert_false(plain->optional);
    assert_int_equal(plain->retry.max_attempts, 5);
    rd_config_free(cfg);
}

static void test_find_tool(void **state)
{
    (void)state;
    put("tools.d/b.yaml", "tool: {id: b}\n");
    put("tools.d/a.yaml", "tool: {id: zeta}\n");
    put("tools.d/c.yaml", "tool: {id: alpha}\n");
    rd_config *cfg = load_ok(MAIN_MIN, NULL);
    assert_int_equal(cfg->n_tools, 3);
    assert_string_equal(cfg->tools[0].id, "alpha"); /* sorted by id, not by file */
    assert_string_equal(cfg->tools[2].id, "zeta");
    assert_string_equal(rd_config_find_tool(cfg, "zeta")->id, "zeta");
    assert_string_equal(rd_config_find_tool(cfg, "alpha")->id, "alpha");
    assert_null(rd_config_find_tool(cfg, "absent"));
    assert_null(rd_config_find_tool(cfg, "zet"));
    assert_null(rd_config_find_tool(NULL, "b"));
    assert_ptr_equal(rd_config_tool_or_defaults(cfg, "absent"), &cfg->defaults);
    assert_string_equal(rd_config_tool_or_defaults(cfg, "b")->id, "b");
    rd_config_free(cfg);
    rd_config_free(NULL);
}

static void test_hidden_and_foreign_entries_are_skipped(void **state)
{
    (void)state;
    put("tools.d/real.yaml", "tool: {id: real}\n");
    put("tools.d/.hidden.yaml", "not: [valid\n");
    put("tools.d/..data/real.yaml", "tool: {id: real}\n"); /* ConfigMap layout */
    put("tools.d/..2024_01_01_00_00_00.123/x.yaml", "broken: [\n");
    put("tools.d/README.md", "# not a manifest\n");
    rd_config *cfg = load_ok(MAIN_MIN, NULL);
    assert_int_equal(cfg->n_tools, 1);
    assert_string_equal(cfg->tools[0].id, "real");
    rd_config_free(cfg);
}

/* ---- errors in manifests ---- */

static void test_manifest_errors(void **state)
{
    (void)state;
    expect_tool_error("tool:\n  id: t\n  retry_policy:\n    foo: 1\n", 4,
                      "tool.retry_policy.foo", "unknown key");
    expect_tool_error("tool:\n  id: t\n  circuit_breaker: {timeout_ms: 0}\n", 3,
                      "tool.circuit_breaker.timeout_ms", "out of range");
    expect_tool_error("tool:\n  id: t\n  alternatives: {a: b}\n", 3, "tool.alternatives",
                      "expected a list, got a mapping");
    expect_tool_error("tool:\n  id: t\n  alternatives: [u, t]\n", 3, "tool.alternatives[1]",
                      "a tool cannot name itself");
    expect_tool_error("tool:\n  id: t\n  depends_on: [u, u]\n", 3, "tool.depends_on[1]",
                      "listed twice");
    expect_tool_error("tool:\n  timeout_ms: 5\n", 1, "tool.id", "missing (required)");
    expect_tool_error("tool:\n  id: \"a b\"\n", 2, "tool.id", "is not a tool id");
    expect_tool_error("tool:\n  id: t\n  optional: no\n", 3, "tool.optional", "yes/no");
    expect_tool_error("tool:\n  id: t\n  default: {a: 1}\n", 3, "tool.default",
                      "expected text, got a mapping");
    expect_tool_error("name: t\n", 1, "name", "unknown key");
    expect_tool_error("tool:\n  id: t\n  timeout: 5\n", 3, "tool.timeout",
                      "did you mean \"timeout_ms\"?");
    expect_tool_error("tool:\n  id: t\n  circuit_breaker:\n    quorum: {min_executors: 33}\n", 4,
                      "tool.circuit_breaker.quorum.min_executors", "out of range (1..32)");
    expect_tool_error("tool:\n  id: t\n  alternatives_ranking: best\n", 3,
                      "tool.alternatives_ranking", "unknown alternatives_ranking \"best\" "
                      "(live | manifest)");
    /* The manifest raises the initial delay above the inherited cap. */
    expect_tool_error("tool:\n  id: t\n  retry_policy:\n    initial_delay_ms: 1000\n", 4,
                      "tool.retry_policy.initial_delay_ms",
                      "max_delay_ms (800) must be >= initial_delay_ms (1000)");
}

static void test_manifest_override_errors(void **state)
{
    (void)state;
    expect_tool_error("tool:\n"
                      "  id: t\n"
                      "  classification:\n"
                      "    overrides:\n"
                      "      - when: {http_status: [503]}\n",
                      5, "tool.classification.overrides[0]",
                      "needs retryability, category or suggestion");
    expect_tool_error("tool:\n"
                      "  id: t\n"
                      "  classification:\n"
                      "    overrides:\n"
                      "      - when: {http_status: [503]}\n"
                      "        retryability: permanent\n"
                      "      - when: {http_status: [\"5xy\"]}\n"
                      "        retryability: permanent\n",
                      7, "tool.classification.overrides[1].when.http_status[0]", "expected");
    expect_tool_error("tool:\n"
                      "  id: t\n"
                      "  classification:\n"
                      "    overrides:\n"
                      "      - retryability: permanent\n",
                      5, "tool.classification.overrides[0].when", "missing");
    expect_tool_error("tool:\n"
                      "  id: t\n"
                      "  classification:\n"
                      "    rules: []\n",
                      4, "tool.classification.rules", "unknown key");
}

static void test_duplicate_tool_id_names_both_files(void **state)
{
    (void)state;
    put("tools.d/a.yaml", "# first\ntool:\n  id: same\n");
    put("tools.d/b.yaml", "tool:\n  id: same\n");
    char err[RD_CONFIG_ERR_MAX] = "";
    assert_null(load_files(MAIN_MIN, RULES_MIN, err));
    char also[PATH_MAX + 64];
    snprintf(also, sizeof also, "duplicate tool id \"same\" (also defined at %s/tools.d/a.yaml:3)",
             g_dir);
    assert_error(err, "tools.d/b.yaml", 2, "tool.id", also);
}

static void test_dependency_cycle_is_rejected(void **state)
{
    (void)state;
    put("tools.d/a.yaml", "tool:\n  id: a\n  depends_on: [b, outside]\n");
    put("tools.d/b.yaml", "tool:\n  id: b\n  depends_on: [c]\n");
    put("tools.d/c.yaml", "tool:\n  id: c\n\n  depends_on: [a]\n");
    put("tools.d/d.yaml", "tool:\n  id: d\n  depends_on: [a]\n"); /* behind the cycle */
    char err[RD_CONFIG_ERR_MAX] = "";
    assert_null(load_files(MAIN_MIN, RULES_MIN, err));
    assert_error(err, "tools.d/a.yaml", 3, "tool.depends_on", "dependency cycle: a -> b -> c -> a");

    /* The same graph without the back edge loads, once "outside" is known
     * to exist without a manifest. */
    put("tools.d/c.yaml", "tool:\n  id: c\n");
    rd_config *cfg = load_ok(MAIN_MIN "tools:\n  external: [outside]\n", NULL);
    assert_int_equal(cfg->n_tools, 4);
    rd_config_free(cfg);
}

static void test_unknown_tool_references_are_rejected(void **state)
{
    (void)state;
    put("tools.d/a.yaml", "tool:\n  id: a\n  alternatives: [a_backup]\n");
    put("tools.d/b.yaml", "tool:\n  id: b\n\n  depends_on: [a, mcp_weather]\n");
    char err[RD_CONFIG_ERR_MAX] = "";
    assert_null(load_files(MAIN_MIN, RULES_MIN, err));
    assert_error(err, "tools.d/a.yaml", 3, "tool.alternatives[0]",
                 "unknown tool \"a_backup\": no manifest in the tools directory and not in "
                 "tools.external");
    put("tools.d/a_backup.yaml", "tool:\n  id: a_backup\n");
    assert_null(load_files(MAIN_MIN, RULES_MIN, err));
    assert_error(err, "tools.d/b.yaml", 4, "tool.depends_on[1]",
                 "unknown tool \"mcp_weather\": no manifest in the tools directory and not in "
                 "tools.external");
    /* A "prefix*" entry of tools.external covers a family of tools. */
    rd_config *cfg = load_ok(MAIN_MIN "tools:\n  external: [\"mcp_*\"]\n", NULL);
    assert_int_equal(cfg->n_tools, 3);
    rd_config_free(cfg);
    assert_null(load_files(MAIN_MIN "tools:\n  external: [\"bad id\"]\n", RULES_MIN, err));
    assert_error(err, "recovery.yaml", 4, "tools.external[0]",
                 "\"bad id\" is not a tool id or \"prefix*\"");
}

static void test_manifest_yaml_error_names_the_manifest(void **state)
{
    (void)state;
    expect_tool_error("tool:\n  id: t\n  depends_on: [a\n", 4, "(yaml)",
                      "did not find expected ',' or ']'");
    expect_tool_error("", 1, "(file)", "empty file");
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, make_dir, remove_dir)
    const struct CMUnitTest tests[] = {
        T(test_manifest_merges_over_defaults),
        T(test_find_tool),
        T(test_hidden_and_foreign_entries_are_skipped),
        T(test_manifest_errors),
        T(test_manifest_override_errors),
        T(test_duplicate_tool_id_names_both_files),
        T(test_dependency_cycle_is_rejected),
        T(test_unknown_tool_references_are_rejected),
        T(test_manifest_yaml_error_names_the_manifest),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
