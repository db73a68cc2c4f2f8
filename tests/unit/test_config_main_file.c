/* The main configuration file (recovery.yaml): the shipped configuration
 * loads as documented, absent keys take the documented defaults, every key
 * is read, and the exact "FILE:LINE: KEY: problem" text of every kind of
 * error in it (unknown and duplicate keys, types, ranges, meaning, YAML).
 *
 * Each test but the shipped one writes its files into a fresh temporary
 * directory; the line numbers asserted below are those of the fixture
 * texts, one source line per YAML line. */
#define _GNU_SOURCE /* nftw */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "config_fixture.h"

#ifndef RD_SOURCE_DIR
#define RD_SOURCE_DIR "."
#endif

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

/* ---- defaults ---- */

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

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, make_dir, remove_dir)
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shipped_config_loads),
        T(test_absent_keys_take_documented_defaults),
        T(test_workers_zero_means_one_per_core),
        T(test_every_main_key_is_read),
        T(test_main_unknown_and_duplicate_keys),
        T(test_main_wrong_types),
        T(test_main_ranges),
        T(test_main_semantic_errors),
        T(test_main_yaml_problems),
        T(test_unreadable_main_file),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
