/* The configuration loader: the shipped files, defaults, manifest merging,
 * and the exact "FILE:LINE: KEY: problem" text of every kind of error.
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

#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config.h"

#ifndef RD_SOURCE_DIR
#define RD_SOURCE_DIR "."
#endif

#include "temp_dir.h"

/* ---- fixtures ---- */

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

/* The rules list starts at line 10. */
#define RULES_HEAD SUGGESTIONS "rules:\n" /* 9 */

#define RULES_MIN                                                                             \
    RULES_HEAD                                                                                \
    "  - id: http.rate_limited\n"                                    /* 10 */                 \
    "    when: {http_status: [429]}\n"                               /* 11 */                 \
    "    result: {retryability: transient, category: external_service}\n" /* 12 */

static rd_config *load_files(const char *main_text, const char *rules_text, char *err)
{
    char path[PATH_MAX];
    put("recovery.yaml", main_text);
    if (rules_text)
        put("rules.yaml", rules_text);
    return rd_config_load(in_dir(path, "recovery.yaml"), err, RD_CONFIG_ERR_MAX);
}

static rd_config *load_ok(const char *main_text, const char *rules_text)
{
    char err[RD_CONFIG_ERR_MAX] = "";
    rd_config *cfg = load_files(main_text, rules_text ? rules_text : RULES_MIN, err);
    if (!cfg)
        fail_msg("unexpected load error: %s", err);
    return cfg;
}

/* err must be exactly "<dir>/<file>:<line>: <key>: " followed by text that
 * contains `problem`. */
static void assert_error(const char *err, const char *file, int line, const char *key,
                         const char *problem)
{
    char prefix[PATH_MAX + 256];
    snprintf(prefix, sizeof prefix, "%s/%s:%d: %s: ", g_dir, file, line, key);
    size_t n = strlen(prefix);
    if (strncmp(err, prefix, n) != 0 || !strstr(err + n, problem))
        fail_msg("got  \"%s\"\nwant \"%s...%s...\"", err, prefix, problem);
}

static void expect_main_error(const char *main_text, int line, const char *key,
                              const char *problem)
{
    char err[RD_CONFIG_ERR_MAX] = "";
    rd_config *cfg = load_files(main_text, RULES_MIN, err);
    assert_null(cfg);
    assert_error(err, "recovery.yaml", line, key, problem);
}

static void expect_rules_error(const char *rules_text, int line, const char *key,
                               const char *problem)
{
    char err[RD_CONFIG_ERR_MAX] = "";
    rd_config *cfg = load_files(MAIN_MIN, rules_text, err);
    assert_null(cfg);
    assert_error(err, "rules.yaml", line, key, problem);
}

static void expect_tool_error(const char *tool_text, int line, const char *key,
                              const char *problem)
{
    char err[RD_CONFIG_ERR_MAX] = "";
    put("tools.d/t.yaml", tool_text);
    rd_config *cfg = load_files(MAIN_MIN, RULES_MIN, err);
    assert_null(cfg);
    assert_error(err, "tools.d/t.yaml", line, key, problem);
}

/* ---- the shipped configuration ---- */

static void assert_doc_defaults(const rd_config *cfg)
{
    assert_string_equal(cfg->server.listen, "0.0.0.0:50051");
    assert_int_equal(cfg->server.shutdown_grace_ms, 5000);
    assert_int_equal(cfg->server.max_receive_bytes, 1048576);
    assert_int_equal(cfg->store.backend, RD_STORE_MEMORY);
    assert_int_equal(cfg->store.max_tools, 100000);
    assert_int_equal(cfg->store.tool_idle_ttl_ms, 3600000);
    assert_int_equal(cfg->store.turn_ttl_ms, 900000);
    assert_int_equal(cfg->store.max_turns, 10000);
    assert_int_equal(cfg->store.max_events_per_turn, 200);
    assert_int_equal(cfg->store.outcome_ttl_ms, 600000);
    assert_int_equal(cfg->store.max_outcomes, 1000000);
    assert_int_equal(cfg->store.evict_interval_ms, 10000);
    const rd_tool_config *d = &cfg->defaults;
    assert_string_equal(d->id, "*");
    assert_null(d->file);
    assert_int_equal(d->timeout_ms, 30000);
    assert_int_equal(d->retry.initial_delay_ms, 100);
    assert_int_equal(d->retry.max_delay_ms, 800);
    assert_true(d->retry.multiplier == 2.0);
    assert_true(d->retry.jitter_percent == 10.0);
    assert_int_equal(d->retry.max_attempts, 5);
    assert_int_equal(d->retry.max_total_time_ms, 2000);
    assert_int_equal(d->breaker.failure_threshold, 5);
    assert_int_equal(d->breaker.success_threshold, 1);
    assert_int_equal(d->breaker.open_timeout_ms, 30000);
    assert_int_equal(cfg->turn_timeout_ms, 300000);
    assert_false(cfg->reject_unknown_tools);
}

static void assert_ruleset_sound(const rd_ruleset *rs)
{
    assert_true(rs->n_rules > 0);
    for (int c = 1; c < RD_CAT_COUNT; c++)
        assert_non_null(rs->category_suggestion[c]);
    for (size_t i = 0; i < rs->n_rules; i++) {
        const rd_rule *r = &rs->rules[i];
        assert_int_equal(r->structured, r->when.n_patterns == 0);
        assert_true(r->retryability == RD_TRANSIENT || r->retryability == RD_PERMANENT);
        assert_true(r->category > RD_CAT_UNSPECIFIED && r->category < RD_CAT_COUNT);
        assert_non_null(r->file);
        assert_true(r->line > 0);
    }
}

static void assert_custom_api(const rd_tool_config *t)
{
    assert_non_null(t);
    /* 003 2.5: the three overridden keys, the rest from defaults. */
    assert_int_equal(t->retry.initial_delay_ms, 50);
    assert_int_equal(t->retry.max_delay_ms, 2000);
    assert_int_equal(t->retry.max_attempts, 3);
    assert_true(t->retry.multiplier == 2.0);
    assert_int_equal(t->retry.max_total_time_ms, 2000);
    /* 003 1.5: 503 is permanent, by status and by message. */
    assert_int_equal(t->n_overrides, 2);
    const rd_override *by_status = &t->overrides[0], *by_text = &t->overrides[1];
    assert_int_equal(by_status->when.n_http_status, 1);
    assert_int_equal(by_status->when.http_status[0].lo, 503);
    assert_int_equal(by_status->when.http_status[0].hi, 503);
    assert_int_equal(by_status->retryability, RD_PERMANENT);
    assert_int_equal(by_text->retryability, RD_PERMANENT);
    assert_int_equal(by_text->when.n_patterns, 2);
    assert_string_equal(by_text->when.patterns[0].text, "503");
    assert_true(by_text->when.patterns[0].boundary_start);
    assert_true(by_text->when.patterns[0].boundary_end);
    assert_string_equal(by_text->when.patterns[1].text, "service unavailable");
    assert_false(by_text->when.patterns[1].boundary_start);
}

static void test_shipped_config_loads(void **state)
{
    (void)state;
    char err[RD_CONFIG_ERR_MAX] = "";
    rd_config *cfg = rd_config_load(RD_SOURCE_DIR "/config/recovery.yaml", err, sizeof err);
    if (!cfg)
        fail_msg("shipped config: %s", err);
    assert_doc_defaults(cfg);
    assert_int_equal(cfg->server.workers, 2);
    assert_ruleset_sound(&cfg->rules);
    for (size_t i = 1; i < cfg->n_tools; i++)
        assert_true(strcmp(cfg->tools[i - 1].id, cfg->tools[i].id) < 0);
    assert_custom_api(rd_config_find_tool(cfg, "custom_api"));
    const rd_tool_config *flight = rd_config_find_tool(cfg, "flight_search");
    assert_non_null(flight);
    assert_int_equal(flight->n_alternatives, 1);
    assert_string_equal(flight->alternatives[0], "flight_search_backup");
    assert_non_null(rd_config_find_tool(cfg, "flight_search_backup"));
    const rd_tool_config *compare = rd_config_find_tool(cfg, "compare_prices");
    assert_non_null(compare);
    assert_true(compare->optional);
    assert_int_equal(compare->n_depends_on, 1);
    assert_string_equal(compare->depends_on[0], "flight_search");
    const rd_tool_config *itinerary = rd_config_find_tool(cfg, "create_itinerary");
    assert_non_null(itinerary);
    assert_false(itinerary->optional);
    assert_int_equal(itinerary->n_depends_on, 2);
    assert_non_null(rd_config_find_tool(cfg, "hotel_search"));
    assert_non_null(rd_config_find_tool(cfg, "activity_search"));
    rd_config_free(cfg);
}

/* ---- defaults and merging ---- */

static void test_absent_keys_take_documented_defaults(void **state)
{
    (void)state;
    rd_config *cfg = load_ok(MAIN_MIN, NULL);
    assert_doc_defaults(cfg);
    assert_int_equal(cfg->server.workers, 2);
    assert_int_equal(cfg->n_tools, 0); /* no tools.d: no manifests, not an error */
    assert_int_equal(cfg->rules.n_rules, 1);
    assert_int_equal(cfg->rules.unknown_retryability, RD_TRANSIENT);
    assert_string_equal(cfg->path, in_dir((char[PATH_MAX]){0}, "recovery.yaml"));
    rd_config_free(cfg);
}

static void test_workers_zero_means_one_per_core(void **state)
{
    (void)state;
    rd_config *cfg = load_ok("server:\n  workers: 0\n" MAIN_MIN, NULL);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    assert_int_equal(cfg->server.workers, cores > 64 ? 64 : cores < 1 ? 1 : cores);
    rd_config_free(cfg);
}

static void test_every_main_key_is_read(void **state)
{
    (void)state;
    rd_config *cfg = load_ok("server: {listen: \"127.0.0.1:6000\", workers: 3,"
                             " shutdown_grace_ms: 0, max_receive_bytes: 2048}\n"
                             "store: {max_tools: 7, tool_idle_ttl_ms: 1000, turn_ttl_ms: 2000,"
                             " max_turns: 8, max_events_per_turn: 9, outcome_ttl_ms: 3000,"
                             " max_outcomes: 10, evict_interval_ms: 100}\n"
                             "turn: {timeout_ms: 1234}\n"
                             "tools: {reject_unknown: true}\n" MAIN_MIN,
                             NULL);
    assert_string_equal(cfg->server.listen, "127.0.0.1:6000");
    assert_int_equal(cfg->server.workers, 3);
    assert_int_equal(cfg->server.shutdown_grace_ms, 0);
    assert_int_equal(cfg->server.max_receive_bytes, 2048);
    assert_int_equal(cfg->store.max_tools, 7);
    assert_int_equal(cfg->store.tool_idle_ttl_ms, 1000);
    assert_int_equal(cfg->store.turn_ttl_ms, 2000);
    assert_int_equal(cfg->store.max_turns, 8);
    assert_int_equal(cfg->store.max_events_per_turn, 9);
    assert_int_equal(cfg->store.outcome_ttl_ms, 3000);
    assert_int_equal(cfg->store.max_outcomes, 10);
    assert_int_equal(cfg->store.evict_interval_ms, 100);
    assert_int_equal(cfg->turn_timeout_ms, 1234);
    assert_true(cfg->reject_unknown_tools);
    rd_config_free(cfg);
}

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

/* ---- rules ---- */

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

/* ---- errors in the main file ---- */

static void test_main_unknown_and_duplicate_keys(void **state)
{
    (void)state;
    expect_main_error("server:\n  listen: \"a:1\"\n  wokers: 3\n" MAIN_MIN, 3, "server.wokers",
                      "unknown key (expected one of: listen, workers,");
    expect_main_error("srever: {}\n" MAIN_MIN, 1, "srever",
                      "unknown key (expected one of: server, store, defaults, turn, tools, "
                      "classification, metrics, log, reload, learning, tracing); did you mean \"server\"?");
    expect_main_error("server:\n  wokers: 3\n" MAIN_MIN, 2, "server.wokers",
                      "did you mean \"workers\"?");
    expect_main_error("store:\n  redis:\n    pasword_env: X\n" MAIN_MIN, 3,
                      "store.redis.pasword_env", "did you mean \"password_env\"?");
    expect_main_error("server:\n  workers: 1\n  workers: 2\n" MAIN_MIN, 3, "server.workers",
                      "duplicate key (first at line 2)");
    expect_main_error(MAIN_MIN "classification: {}\n", 3, "classification",
                      "duplicate key (first at line 1)");
}

static void test_main_wrong_types(void **state)
{
    (void)state;
    expect_main_error("server:\n  workers: two\n" MAIN_MIN, 2, "server.workers",
                      "expected an integer, got \"two\"");
    expect_main_error("server:\n  workers: \"2\"\n" MAIN_MIN, 2, "server.workers",
                      "expected an integer, got the quoted text \"2\"");
    expect_main_error("server:\n  workers: 2.5\n" MAIN_MIN, 2, "server.workers",
                      "expected an integer");
    expect_main_error("server:\n  workers:\n" MAIN_MIN, 2, "server.workers",
                      "expected an integer, got no value");
    expect_main_error("server: [1, 2]\n" MAIN_MIN, 1, "server", "expected a mapping, got a list");
    expect_main_error("server:\n  listen: {a: 1}\n" MAIN_MIN, 2, "server.listen",
                      "expected text, got a mapping");
    expect_main_error("server:\n  listen: nocolon\n" MAIN_MIN, 2, "server.listen",
                      "expected host:port");
    expect_main_error("tools:\n  reject_unknown: yes\n" MAIN_MIN, 2, "tools.reject_unknown",
                      "expected true or false, got \"yes\" (yes/no/on/off are not accepted)");
    expect_main_error("- a\n- b\n", 1, "(file)", "expected a mapping, got a list");
}

static void test_main_ranges(void **state)
{
    (void)state;
    expect_main_error("server:\n  workers: 65\n" MAIN_MIN, 2, "server.workers",
                      "65 is out of range (0..64)");
    expect_main_error("store:\n  max_tools: 99999999999999999999999\n" MAIN_MIN, 2,
                      "store.max_tools", "out of range (1..10000000)");
    expect_main_error("store:\n  evict_interval_ms: -1\n" MAIN_MIN, 2, "store.evict_interval_ms",
                      "-1 is out of range (100..3600000)");
    expect_main_error("defaults:\n  retry_policy:\n    multiplier: 0.5\n" MAIN_MIN, 3,
                      "defaults.retry_policy.multiplier", "0.5 is out of range (1..10)");
    expect_main_error("defaults:\n  retry_policy:\n    multiplier: .nan\n" MAIN_MIN, 3,
                      "defaults.retry_policy.multiplier", "expected a number, got \".nan\"");
    expect_main_error("defaults:\n  retry_policy:\n    multiplier: .inf\n" MAIN_MIN, 3,
                      "defaults.retry_policy.multiplier", "expected a number");
    expect_main_error("defaults:\n  retry_policy:\n    multiplier: 1e999\n" MAIN_MIN, 3,
                      "defaults.retry_policy.multiplier", "out of range");
    expect_main_error("defaults:\n  retry_policy:\n    jitter_percent: 101\n" MAIN_MIN, 3,
                      "defaults.retry_policy.jitter_percent", "out of range (0..100)");
    expect_main_error("defaults:\n  retry_policy:\n    max_attempts: 0\n" MAIN_MIN, 3,
                      "defaults.retry_policy.max_attempts", "out of range (1..100)");
    expect_main_error("defaults:\n  circuit_breaker:\n    timeout_ms: 0\n" MAIN_MIN, 3,
                      "defaults.circuit_breaker.timeout_ms", "out of range (1..86400000)");
    expect_main_error("turn:\n  timeout_ms: 86400001\n" MAIN_MIN, 2, "turn.timeout_ms",
                      "out of range");
}

static void test_main_semantic_errors(void **state)
{
    (void)state;
    expect_main_error("defaults:\n"
                      "  retry_policy:\n"
                      "    initial_delay_ms: 500\n"
                      "    max_delay_ms: 100\n" MAIN_MIN,
                      4, "defaults.retry_policy.max_delay_ms",
                      "max_delay_ms (100) must be >= initial_delay_ms (500)");
    expect_main_error("defaults:\n  retry_policy: {strategy: linear}\n" MAIN_MIN, 2,
                      "defaults.retry_policy.strategy", "unknown strategy \"linear\"");
    expect_main_error("store:\n  backend: etcd\n" MAIN_MIN, 2, "store.backend",
                      "unknown backend \"etcd\"");
    expect_main_error("server: {}\n", 1, "classification.rules_file", "missing (required)");
    expect_main_error("server: {}\nclassification: {}\n", 2, "classification.rules_file",
                      "missing (required)");
    expect_main_error("classification:\n  rules_file: nope.yaml\n", 2,
                      "classification.rules_file", "cannot open");
    expect_main_error("tools:\n  directory: missing.d\n" MAIN_MIN, 2, "tools.directory",
                      "cannot open directory");
}

static void test_main_yaml_problems(void **state)
{
    (void)state;
    expect_main_error("server:\n  listen: [a\nstore: {}\n", 3, "(yaml)",
                      "did not find expected ',' or ']'");
    expect_main_error("", 1, "(file)", "empty file");
    expect_main_error("# only a comment\n", 1, "(file)", "empty file");
    expect_main_error("defaults:\n  retry_policy: &rp {max_attempts: 3}\n" MAIN_MIN, 2,
                      "(yaml)", "anchors (&rp) are not supported");
    expect_main_error("turn: *t\n" MAIN_MIN, 1, "(yaml)", "aliases (*t) are not supported");
    expect_main_error("turn: !!map {}\n" MAIN_MIN, 1, "(yaml)", "tags");
    expect_main_error(MAIN_MIN "---\nturn: {}\n", 3, "(yaml)", "only one document");
    char deep[256] = "server: ";
    for (int i = 0; i < 40; i++)
        strcat(deep, "[");
    strcat(deep, "\n");
    expect_main_error(deep, 1, "(yaml)", "nested deeper than 32 levels");
}

static void test_unreadable_main_file(void **state)
{
    (void)state;
    char err[RD_CONFIG_ERR_MAX] = "";
    char path[PATH_MAX];
    assert_null(rd_config_load(in_dir(path, "absent.yaml"), err, sizeof err));
    assert_error(err, "absent.yaml", 0, "(file)", "cannot open: No such file or directory");
    /* A NULL error buffer is allowed: the caller only wants yes or no. */
    assert_null(rd_config_load(path, NULL, 0));
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

/* ---- operational keys (issue 6) and store.redis (issue 5) ---- */

static void test_ops_defaults(void **state)
{
    (void)state;
    rd_config *cfg = load_ok(MAIN_MIN, NULL);
    assert_int_equal(cfg->server.drain_delay_ms, 0);
    assert_int_equal(cfg->server.max_connection_age_ms, 0);
    assert_int_equal(cfg->server.max_concurrent_streams, 100);
    assert_int_equal(cfg->server.memory_limit_bytes, 128u << 20);
    assert_int_equal(cfg->server.handshake_timeout_ms, 10000);
    assert_int_equal(cfg->server.max_connection_idle_ms, 0);
    assert_false(cfg->server.accept_compressed);
    assert_int_equal(cfg->server.max_unsent_answer_bytes, 16u << 20);
    assert_true(cfg->server.reflection);
    assert_int_equal(cfg->server.max_watch_streams, 256);
    assert_false(cfg->server.allow_unauthenticated);
    assert_null(cfg->server.tls.cert_file);
    assert_null(cfg->server.auth_token);
    assert_null(cfg->server.admin_token);
    assert_string_equal(cfg->metrics.listen, "127.0.0.1:9464");
    assert_int_equal(cfg->metrics.max_tools, 1000);
    assert_int_equal(cfg->metrics.max_connections, 128);
    assert_int_equal(cfg->metrics.max_connections_per_ip, 8);
    assert_int_equal(cfg->metrics.threads, 2);
    assert_int_equal(cfg->metrics.connection_timeout_ms, 5000);
    assert_int_equal(cfg->metrics.breaker_refresh_ms, 0);
    assert_null(cfg->metrics.token);
    assert_int_equal(cfg->log_level, RD_CONFIG_LOG_INFO);
    assert_true(cfg->reload_watch);
    assert_string_equal(cfg->store.redis.address, "127.0.0.1:6379");
    assert_string_equal(cfg->store.redis.key_prefix, "recoveryd:");
    assert_int_equal(cfg->store.redis.command_timeout_ms, 50);
    assert_int_equal(cfg->store.redis.closed_cache_ms, 250);
    assert_int_equal(cfg->store.redis.outcome_batch_ms, 5);
    assert_int_equal(cfg->store.redis.read_cache_ms, 100);
    assert_non_null(strstr(cfg->tools_dir, "tools.d"));
    rd_config_free(cfg);
}

static void test_ops_keys_are_read(void **state)
{
    (void)state;
    char path[PATH_MAX];
    put("certs/s.crt", "cert");
    put("certs/s.key", "key");
    put("certs/ca.pem", "ca");
    put("secret/token", "  s3cret-token \n second line ignored\n");
    setenv("RD_TEST_ADMIN_TOKEN", " adm1n\n", 1); /* a Secret's trailing newline */
    rd_config *cfg = load_ok("server:\n"
                             "  drain_delay_ms: 250\n"
                             "  max_connection_age_ms: 60000\n"
                             "  max_connection_age_grace_ms: 5000\n"
                             "  keepalive_time_ms: 20000\n"
                             "  keepalive_timeout_ms: 5000\n"
                             "  max_concurrent_streams: 20\n"
                             "  memory_limit_bytes: 33554432\n"
                             "  handshake_timeout_ms: 2000\n"
                             "  max_connection_idle_ms: 0\n"
                             "  accept_compressed: true\n"
                             "  max_unsent_answer_bytes: 2097152\n"
                             "  reflection: false\n"
                             "  max_watch_streams: 3\n"
                             "  allow_unauthenticated: true\n"
                             "  tls:\n"
                             "    cert_file: certs/s.crt\n"
                             "    key_file: certs/s.key\n"
                             "    client_ca_file: certs/ca.pem\n"
                             "  auth: {token_file: secret/token}\n"
                             "  admin: {token_env: RD_TEST_ADMIN_TOKEN}\n"
                             "metrics: {listen: \"\", max_tools: 5, max_connections: 9,\n"
                             "  max_connections_per_ip: 3, threads: 4, connection_timeout_ms: 2500,\n"
                             "  auth: {token_file: secret/token}}\n"
                             "log: {level: debug}\n"
                             "reload: {watch: false}\n"
                             "store:\n"
                             "  backend: redis\n"
                             "  redis:\n"
                             "    address: \"unix:/run/redis.sock\"\n"
                             "    db: 3\n"
                             "    key_prefix: \"tenant-a:\"\n"
                             "    sentinels: [\"10.0.0.1:26379\", \"10.0.0.2:26379\"]\n"
                             "    master_name: mymaster\n" MAIN_MIN,
                             NULL);
    assert_int_equal(cfg->server.drain_delay_ms, 250);
    assert_int_equal(cfg->server.max_connection_age_ms, 60000);
    assert_int_equal(cfg->server.max_connection_age_grace_ms, 5000);
    assert_int_equal(cfg->server.keepalive_time_ms, 20000);
    assert_int_equal(cfg->server.keepalive_timeout_ms, 5000);
    assert_int_equal(cfg->server.max_concurrent_streams, 20);
    assert_int_equal(cfg->server.memory_limit_bytes, 33554432);
    assert_int_equal(cfg->server.handshake_timeout_ms, 2000);
    assert_int_equal(cfg->server.max_connection_idle_ms, 0);
    assert_true(cfg->server.accept_compressed);
    assert_int_equal(cfg->server.max_unsent_answer_bytes, 2097152);
    assert_false(cfg->server.reflection);
    assert_int_equal(cfg->server.max_watch_streams, 3);
    assert_true(cfg->server.allow_unauthenticated);
    assert_string_equal(cfg->server.tls.cert_file, in_dir(path, "certs/s.crt"));
    assert_string_equal(cfg->server.tls.client_ca_file, in_dir(path, "certs/ca.pem"));
    assert_string_equal(cfg->server.auth_token, "s3cret-token");
    assert_string_equal(cfg->server.admin_token, "adm1n");
    assert_null(cfg->metrics.listen);
    assert_int_equal(cfg->metrics.max_tools, 5);
    assert_int_equal(cfg->metrics.max_connections, 9);
    assert_int_equal(cfg->metrics.max_connections_per_ip, 3);
    assert_int_equal(cfg->metrics.threads, 4);
    assert_int_equal(cfg->metrics.connection_timeout_ms, 2500);
    assert_string_equal(cfg->metrics.token, "s3cret-token");
    assert_int_equal(cfg->log_level, RD_CONFIG_LOG_DEBUG);
    assert_false(cfg->reload_watch);
    assert_int_equal(cfg->store.backend, RD_STORE_REDIS);
    assert_string_equal(cfg->store.redis.address, "unix:/run/redis.sock");
    assert_int_equal(cfg->store.redis.db, 3);
    assert_int_equal(cfg->store.redis.n_sentinels, 2);
    assert_string_equal(cfg->store.redis.sentinels[1], "10.0.0.2:26379");
    assert_string_equal(cfg->store.redis.master_name, "mymaster");
    rd_config_free(cfg);
    unsetenv("RD_TEST_ADMIN_TOKEN");
}

static void test_listen_addresses_that_are_local(void **state)
{
    (void)state;
    const char *local[] = {"127.0.0.1:50051", "127.3.4.5:1", "localhost:50051", "[::1]:50051",
                           "unix:/run/recoveryd.sock"};
    const char *other[] = {"0.0.0.0:50051", ":50051", "[::]:50051", "10.0.0.5:50051",
                           "recoveryd.svc:50051", "128.0.0.1:1", "127.0.0.1.evil:1"};
    for (size_t i = 0; i < sizeof local / sizeof *local; i++)
        assert_true(rd_config_listen_is_local(local[i]));
    for (size_t i = 0; i < sizeof other / sizeof *other; i++)
        assert_false(rd_config_listen_is_local(other[i]));
}

static void test_ops_key_errors(void **state)
{
    (void)state;
    expect_main_error("server:\n  drain_delay_ms: 600001\n" MAIN_MIN, 2, "server.drain_delay_ms",
                      "out of range (0..600000)");
    expect_main_error("server:\n  max_connection_age_ms: 10\n" MAIN_MIN, 2,
                      "server.max_connection_age_ms", "must be 0 (off) or 1000..86400000");
    expect_main_error("server:\n  max_concurrent_streams: 0\n" MAIN_MIN, 2,
                      "server.max_concurrent_streams", "out of range (1..100000)");
    expect_main_error("server:\n  memory_limit_bytes: 1000\n" MAIN_MIN, 2,
                      "server.memory_limit_bytes", "out of range");
    expect_main_error("server:\n  handshake_timeout_ms: 0\n" MAIN_MIN, 2,
                      "server.handshake_timeout_ms", "out of range (100..600000)");
    expect_main_error("server:\n  max_connection_idle_ms: 5\n" MAIN_MIN, 2,
                      "server.max_connection_idle_ms", "must be 0 (off) or 1000..86400000");
    expect_main_error("server:\n  accept_compressed: maybe\n" MAIN_MIN, 2,
                      "server.accept_compressed", "");
    expect_main_error("server:\n  max_watch_streams: 0\n" MAIN_MIN, 2,
                      "server.max_watch_streams", "out of range (1..100000)");
    expect_main_error("server:\n  max_unsent_answer_bytes: 10\n" MAIN_MIN, 2,
                      "server.max_unsent_answer_bytes", "out of range");
    expect_main_error("server:\n  tls: {cert_file: nope.crt, key_file: nope.key}\n" MAIN_MIN, 2,
                      "server.tls.cert_file", "cannot read");
    put("only.crt", "x");
    expect_main_error("server:\n  tls:\n    cert_file: only.crt\n" MAIN_MIN, 3, "server.tls",
                      "cert_file and key_file go together");
    expect_main_error("server:\n  auth: {token_env: RD_TEST_SURELY_UNSET_VAR}\n" MAIN_MIN, 2,
                      "server.auth.token_env", "RD_TEST_SURELY_UNSET_VAR is not set");
    setenv("RD_TEST_BLANK_TOKEN", " \n", 1);
    expect_main_error("server:\n  auth: {token_env: RD_TEST_BLANK_TOKEN}\n" MAIN_MIN, 2,
                      "server.auth.token_env", "holds no usable secret");
    unsetenv("RD_TEST_BLANK_TOKEN");
    put("empty.token", "\n");
    expect_main_error("server:\n  admin:\n    token_file: empty.token\n" MAIN_MIN, 3,
                      "server.admin.token_file", "no usable secret");
    put("t.token", "abc");
    setenv("RD_TEST_TOKEN_BOTH", "x", 1);
    expect_main_error("server:\n  auth:\n    token_file: t.token\n    token_env: RD_TEST_TOKEN_BOTH\n"
                      MAIN_MIN, 4, "server.auth.token_env", "not both");
    unsetenv("RD_TEST_TOKEN_BOTH");
    expect_main_error("server:\n  auth: {token: abc}\n" MAIN_MIN, 2, "server.auth.token",
                      "unknown key");
    expect_main_error("metrics:\n  listen: nocolon\n" MAIN_MIN, 2, "metrics.listen",
                      "expected host:port");
    expect_main_error("metrics:\n  breaker_refresh_ms: 10\n" MAIN_MIN, 2,
                      "metrics.breaker_refresh_ms", "must be 0 (off) or 1000..600000");
    expect_main_error("metrics:\n  threads: 0\n" MAIN_MIN, 2, "metrics.threads",
                      "out of range (1..16)");
    expect_main_error("metrics:\n  max_connections_per_ip: 0\n" MAIN_MIN, 2,
                      "metrics.max_connections_per_ip", "out of range");
    expect_main_error("metrics:\n  connection_timeout_ms: 10\n" MAIN_MIN, 2,
                      "metrics.connection_timeout_ms", "out of range (1000..600000)");
    expect_main_error("metrics:\n  auth: {token_env: RD_TEST_SURELY_UNSET_VAR}\n" MAIN_MIN, 2,
                      "metrics.auth.token_env", "RD_TEST_SURELY_UNSET_VAR is not set");
    expect_main_error("metrics:\n  max_tools: 0\n" MAIN_MIN, 2, "metrics.max_tools",
                      "out of range (1..100000)");
    expect_main_error("log:\n  level: verbose\n" MAIN_MIN, 2, "log.level", "unknown level");
    expect_main_error("reload:\n  watch: maybe\n" MAIN_MIN, 2, "reload.watch",
                      "expected true or false");
    expect_main_error("store:\n  redis:\n    db: 16\n" MAIN_MIN, 3, "store.redis.db",
                      "out of range (0..15)");
    expect_main_error("store:\n  redis:\n    key_prefix: \"a b\"\n" MAIN_MIN, 3,
                      "store.redis.key_prefix", "is not 1..64 bytes");
    expect_main_error("store:\n  redis:\n    address: \"host\"\n" MAIN_MIN, 3,
                      "store.redis.address", "expected host:port or unix:/path");
    expect_main_error("store:\n  redis:\n    address: \"host:0\"\n" MAIN_MIN, 3,
                      "store.redis.address", "expected host:port or unix:/path");
    expect_main_error("store:\n  redis:\n    address: \"host:65536\"\n" MAIN_MIN, 3,
                      "store.redis.address", "expected host:port or unix:/path");
    expect_main_error("store:\n  redis:\n    address: \"unix:relative\"\n" MAIN_MIN, 3,
                      "store.redis.address", "expected host:port or unix:/path");
    /* the store connects with whatever passes here: a host it has no room for fails now */
    char long_host[512];
    snprintf(long_host, sizeof long_host, "store:\n  redis:\n    address: \"%0256d:6379\"\n%s",
             0, MAIN_MIN);
    expect_main_error(long_host, 3, "store.redis.address", "expected host:port or unix:/path");
    expect_main_error("store:\n  redis:\n    sentinels: [\"unix:/s\"]\n    master_name: m\n"
                      MAIN_MIN, 3, "store.redis.sentinels[0]", "expected host:port");
    expect_main_error("store:\n  redis:\n    sentinels: [\"a:1\"]\n" MAIN_MIN, 3,
                      "store.redis.master_name", "required with sentinels");
    expect_main_error("store:\n  redis:\n    command_timeout_ms: 0\n" MAIN_MIN, 3,
                      "store.redis.command_timeout_ms", "out of range (1..10000)");
    expect_main_error("store:\n  redis:\n    closed_cache_ms: -1\n" MAIN_MIN, 3,
                      "store.redis.closed_cache_ms", "out of range (0..10000)");
    expect_main_error("store:\n  redis:\n    outcome_batch_ms: 5000\n" MAIN_MIN, 3,
                      "store.redis.outcome_batch_ms", "out of range (0..1000)");
    expect_main_error("store:\n  redis:\n    read_cache_ms: 10001\n" MAIN_MIN, 3,
                      "store.redis.read_cache_ms", "out of range (0..10000)");
    expect_main_error("store:\n  redis:\n    cluster: [\"a\"]\n" MAIN_MIN, 3,
                      "store.redis.cluster[0]", "expected host:port");
    expect_main_error("store:\n  redis:\n    cluster: [\"a:1\"]\n    sentinels: [\"b:2\"]\n"
                      "    master_name: m\n" MAIN_MIN, 3,
                      "store.redis.cluster", "not with sentinels");
    expect_main_error("store:\n  redis:\n    db: 2\n    cluster: [\"a:1\"]\n" MAIN_MIN, 3,
                      "store.redis.db", "must be 0 with cluster");
    expect_main_error("store:\n  redis:\n    cluster_refresh_ms: 10\n" MAIN_MIN, 3,
                      "store.redis.cluster_refresh_ms", "out of range (100..600000)");
}

static void test_secret_never_in_error_messages(void **state)
{
    (void)state;
    char err[RD_CONFIG_ERR_MAX] = "";
    put("tok", "topsecretvalue");
    setenv("RD_TEST_TOKEN_SECRET", "othersecret", 1);
    rd_config *cfg = load_files("server:\n  auth:\n    token_file: tok\n"
                                "    token_env: RD_TEST_TOKEN_SECRET\n" MAIN_MIN,
                                RULES_MIN, err);
    assert_null(cfg);
    assert_null(strstr(err, "topsecretvalue"));
    assert_null(strstr(err, "othersecret"));
    unsetenv("RD_TEST_TOKEN_SECRET");
}

static void test_redis_backend_is_accepted(void **state)
{
    (void)state;
    rd_config *cfg = load_ok("store:\n  backend: redis\n" MAIN_MIN, NULL);
    assert_int_equal(cfg->store.backend, RD_STORE_REDIS);
    rd_config_free(cfg);
}

static void test_redis_cluster_seeds_are_read(void **state)
{
    (void)state;
    rd_config *cfg = load_ok("store:\n  backend: redis\n  redis:\n"
                             "    cluster: [\"10.0.0.1:6379\", \"redis-1.redis:6379\"]\n"
                             "    cluster_refresh_ms: 2500\n" MAIN_MIN,
                             NULL);
    assert_int_equal(cfg->store.redis.n_cluster, 2);
    assert_string_equal(cfg->store.redis.cluster[1], "redis-1.redis:6379");
    assert_int_equal(cfg->store.redis.cluster_refresh_ms, 2500);
    rd_config_free(cfg);
    cfg = load_ok("store:\n  backend: redis\n" MAIN_MIN, NULL);
    assert_int_equal(cfg->store.redis.n_cluster, 0);
    assert_int_equal(cfg->store.redis.cluster_refresh_ms, 1000);
    rd_config_free(cfg);
}


int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, make_dir, remove_dir)
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shipped_config_loads),
        T(test_ops_defaults),
        T(test_ops_keys_are_read),
        T(test_ops_key_errors),
        cmocka_unit_test(test_listen_addresses_that_are_local),
        T(test_secret_never_in_error_messages),
        T(test_redis_backend_is_accepted),
        T(test_redis_cluster_seeds_are_read),
        T(test_absent_keys_take_documented_defaults),
        T(test_workers_zero_means_one_per_core),
        T(test_every_main_key_is_read),
        T(test_manifest_merges_over_defaults),
        T(test_find_tool),
        T(test_hidden_and_foreign_entries_are_skipped),
        T(test_rule_conditions_are_parsed),
        T(test_an_empty_rules_list_is_allowed),
        T(test_main_unknown_and_duplicate_keys),
        T(test_main_wrong_types),
        T(test_main_ranges),
        T(test_main_semantic_errors),
        T(test_main_yaml_problems),
        T(test_unreadable_main_file),
        T(test_rules_enum_errors),
        T(test_rules_http_status_ranges),
        T(test_rules_patterns),
        T(test_rules_structure_errors),
        T(test_rules_count_is_capped),
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
