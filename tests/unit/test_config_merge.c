/* Drop-in configuration fragments (config/config_merge.h): which files are
 * read and in what order, how mappings, scalars, lists and nulls merge, a
 * directory given as the configuration, and errors naming the fragment's
 * own file and line.
 *
 * Each test writes its files into a fresh temporary directory; the line
 * numbers asserted are those of the fixture texts, one source line per
 * YAML line. */
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
#include "config/config_merge.h"

#include "temp_dir.h"

/* ---- fixtures ---- */

#define RULES                                                                                 \
    "suggestions:\n"                                                                          \
    "  transient: t\n"                                                                        \
    "  input_validation: iv\n"                                                                \
    "  external_service: es\n"                                                                \
    "  permission: p\n"                                                                       \
    "  logic: l\n"                                                                            \
    "  resource: r\n"                                                                         \
    "  unknown: u\n"                                                                          \
    "rules:\n"                                                                                \
    "  - id: http.rate_limited\n"                                                             \
    "    when: {http_status: [429]}\n"                                                        \
    "    result: {retryability: transient, category: external_service}\n"

#define MAIN                                                                                  \
    "server:\n"                         /* 1 */                                               \
    "  listen: 127.0.0.1:7000\n"        /* 2 */                                               \
    "  workers: 2\n"                    /* 3 */                                               \
    "store:\n"                          /* 4 */                                               \
    "  max_turns: 100\n"                /* 5 */                                               \
    "  max_events_per_turn: 50\n"       /* 6 */                                               \
    "  redis:\n"                        /* 7 */                                               \
    "    sentinels: [a:1, b:2, c:3]\n"  /* 8 */                                               \
    "    master_name: m\n"              /* 9 */                                               \
    "classification:\n"                 /* 10 */                                              \
    "  rules_file: rules.yaml\n"        /* 11 */

static rd_config *load(const char *rel, char *err)
{
    char path[PATH_MAX];
    put("rules.yaml", RULES);
    return rd_config_load(in_dir(path, rel), err, RD_CONFIG_ERR_MAX);
}

static rd_config *load_ok(const char *rel)
{
    char err[RD_CONFIG_ERR_MAX] = "";
    rd_config *cfg = load(rel, err);
    if (!cfg)
        fail_msg("unexpected load error: %s", err);
    return cfg;
}

/* err must start with "<dir>/<file>:<line>: <key>: " and contain `problem`. */
static void expect_error(const char *rel, const char *file, int line, const char *key,
                         const char *problem)
{
    char err[RD_CONFIG_ERR_MAX] = "";
    rd_config *cfg = load(rel, err);
    if (cfg) {
        rd_config_free(cfg);
        fail_msg("loaded, but expected an error at %s:%d", file, line);
    }
    char prefix[PATH_MAX + 256];
    snprintf(prefix, sizeof prefix, "%s/%s:%d: %s: ", g_dir, file, line, key);
    size_t n = strlen(prefix);
    if (strncmp(err, prefix, n) != 0 || !strstr(err + n, problem))
        fail_msg("got  \"%s\"\nwant \"%s...%s...\"", err, prefix, problem);
}

/* ---- which files, in which order ---- */

static void test_no_dropin_directory_changes_nothing(void **state)
{
    (void)state;
    put("recovery.yaml", MAIN);
    rd_config *cfg = load_ok("recovery.yaml");
    assert_int_equal(cfg->server.workers, 2);
    assert_int_equal(cfg->store.max_turns, 100);
    rd_config_free(cfg);
}

static void test_fragments_apply_in_byte_order_of_names(void **state)
{
    (void)state;
    put("recovery.yaml", MAIN);
    /* Written in the reverse order of their names; "B" sorts before "a". */
    put("recovery.d/b-second.yaml", "server:\n  workers: 7\n");
    put("recovery.d/a-first.yaml", "server:\n  workers: 5\nstore:\n  max_turns: 300\n");
    put("recovery.d/B-zero.yaml", "server:\n  workers: 3\nstore:\n  max_turns: 200\n");
    rd_config *cfg = load_ok("recovery.yaml");
    assert_int_equal(cfg->server.workers, 7);
    assert_int_equal(cfg->store.max_turns, 300);
    rd_config_free(cfg);
}

static void test_only_visible_yaml_files_are_fragments(void **state)
{
    (void)state;
    put("recovery.yaml", MAIN);
    put("recovery.d/10-a.yml", "server:\n  workers: 4\n");
    put("recovery.d/20-b.yaml~", "server:\n  workers: 60\n");
    put("recovery.d/.30-hidden.yaml", "server:\n  workers: 61\n");
    put("recovery.d/README", "not yaml: [\n");
    put("recovery.d/sub.yaml/x.yaml", "server:\n  workers: 62\n"); /* a directory */
    rd_config *cfg = load_ok("recovery.yaml");
    assert_int_equal(cfg->server.workers, 4);
    rd_config_free(cfg);
}

static void test_directory_names_its_recovery_yaml(void **state)
{
    (void)state;
    put("conf/recovery.yaml", MAIN);
    put("conf/rules.yaml", RULES);
    put("conf/recovery.d/10-k8s.yaml", "store:\n  max_turns: 400\n");
    rd_config *cfg = load_ok("conf/");
    assert_int_equal(cfg->store.max_turns, 400);
    /* Reloads read the same files: the path kept is the main file's. */
    char want[PATH_MAX];
    snprintf(want, sizeof want, "%s/conf/recovery.yaml", g_dir);
    assert_string_equal(cfg->path, want);
    rd_config_free(cfg);
}

static void test_dropin_directory_of_a_main_file(void **state)
{
    (void)state;
    char *d = rd_config_dropin_dir("/etc/recoveryd/recovery.yaml");
    assert_string_equal(d, "/etc/recoveryd/recovery.d");
    free(d);
    d = rd_config_dropin_dir("conf/main.yml");
    assert_string_equal(d, "conf/main.d");
    free(d);
    d = rd_config_dropin_dir("a.yaml.dir/main");
    assert_string_equal(d, "a.yaml.dir/main.d");
    free(d);
}

/* ---- how values merge ---- */

static void test_maps_merge_at_every_depth(void **state)
{
    (void)state;
    put("recovery.yaml", MAIN);
    put("recovery.d/10.yaml", "store:\n  redis:\n    master_name: other\n");
    rd_config *cfg = load_ok("recovery.yaml");
    assert_int_equal(cfg->store.max_turns, 100);          /* sibling kept */
    assert_int_equal(cfg->store.max_events_per_turn, 50); /* sibling kept */
    assert_string_equal(cfg->store.redis.master_name, "other");
    assert_int_equal(cfg->store.redis.n_sentinels, 3); /* nested sibling kept */
    assert_string_equal(cfg->server.listen, "127.0.0.1:7000");
    rd_config_free(cfg);
}

static void test_lists_replace_whole(void **state)
{
    (void)state;
    put("recovery.yaml", MAIN);
    put("recovery.d/10.yaml", "store:\n  redis:\n    sentinels: [z:9]\n");
    rd_config *cfg = load_ok("recovery.yaml");
    assert_int_equal(cfg->store.redis.n_sentinels, 1);
    assert_string_equal(cfg->store.redis.sentinels[0], "z:9");
    rd_config_free(cfg);
}

static void test_null_removes_a_key(void **state)
{
    (void)state;
    put("recovery.yaml", MAIN);
    /* Sentinels and an address exclude each other: a fragment switching to
     * an address must be able to drop the sentinels. */
    put("recovery.d/10.yaml", "store:\n"
                              "  max_turns: ~\n"
                              "  redis:\n"
                              "    sentinels:\n"
                              "    master_name: null\n"
                              "    address: r:6379\n"
                              "  not_there: ~\n");
    rd_config *cfg = load_ok("recovery.yaml");
    assert_int_equal(cfg->store.redis.n_sentinels, 0);
    assert_null(cfg->store.redis.master_name);
    assert_string_equal(cfg->store.redis.address, "r:6379");
    assert_int_equal(cfg->store.max_turns, 10000); /* the built-in default again */
    rd_config_free(cfg);
}

static void test_new_sections_are_added(void **state)
{
    (void)state;
    put("recovery.yaml", MAIN);
    put("recovery.d/10.yaml", "turn:\n  timeout_ms: 1234\n");
    rd_config *cfg = load_ok("recovery.yaml");
    assert_int_equal(cfg->turn_timeout_ms, 1234);
    rd_config_free(cfg);
}

/* ---- errors name the fragment ---- */

static void test_value_error_names_the_fragment_line(void **state)
{
    (void)state;
    put("recovery.yaml", MAIN);
    put("recovery.d/10-ok.yaml", "store:\n  max_turns: 5\n");
    put("recovery.d/20-bad.yaml", "# a comment\nserver:\n  workers: 99\n");
    expect_error("recovery.yaml", "recovery.d/20-bad.yaml", 3, "server.workers", "out of range");
}

static void test_unknown_key_names_the_fragment_line(void **state)
{
    (void)state;
    put("recovery.yaml", MAIN);
    put("recovery.d/10.yaml", "store:\n  max_turn: 5\n");
    expect_error("recovery.yaml", "recovery.d/10.yaml", 2, "store.max_turn", "unknown key");
}

static void test_main_file_errors_keep_their_line(void **state)
{
    (void)state;
    put("recovery.yaml", "server:\n  workers: 70\nclassification:\n  rules_file: rules.yaml\n");
    put("recovery.d/10.yaml", "store:\n  max_turns: 5\n");
    expect_error("recovery.yaml", "recovery.yaml", 2, "server.workers", "out of range");
}

static void test_duplicate_key_in_a_fragment(void **state)
{
    (void)state;
    put("recovery.yaml", MAIN);
    put("recovery.d/10.yaml", "store:\n  max_turns: 5\n  max_turns: 6\n");
    expect_error("recovery.yaml", "recovery.d/10.yaml", 3, "store.max_turns",
                 "duplicate key (first at line 2)");
}

static void test_fragment_must_be_a_mapping(void **state)
{
    (void)state;
    put("recovery.yaml", MAIN);
    put("recovery.d/10.yaml", "- server\n");
    expect_error("recovery.yaml", "recovery.d/10.yaml", 1, "(file)", "expected a mapping");
}

static void test_fragment_yaml_syntax_error(void **state)
{
    (void)state;
    put("recovery.yaml", MAIN);
    put("recovery.d/10.yaml", "store:\n  max_turns: [5\n");
    char err[RD_CONFIG_ERR_MAX] = "";
    rd_config *cfg = load("recovery.yaml", err);
    assert_null(cfg);
    char prefix[PATH_MAX];
    snprintf(prefix, sizeof prefix, "%s/recovery.d/10.yaml:", g_dir);
    if (strncmp(err, prefix, strlen(prefix)) != 0)
        fail_msg("got \"%s\", want it to start with \"%s\"", err, prefix);
}

static void test_empty_fragment_is_an_error(void **state)
{
    (void)state;
    put("recovery.yaml", MAIN);
    put("recovery.d/10.yaml", "# nothing yet\n");
    expect_error("recovery.yaml", "recovery.d/10.yaml", 1, "(file)", "empty file");
}

static void test_unreadable_dropin_directory(void **state)
{
    (void)state;
    put("recovery.yaml", MAIN);
    put("recovery.d", "a file where the directory should be\n");
    char err[RD_CONFIG_ERR_MAX] = "";
    rd_config *cfg = load("recovery.yaml", err);
    assert_null(cfg);
    assert_non_null(strstr(err, "recovery.d"));
    assert_non_null(strstr(err, "Not a directory"));
}

static void test_too_many_fragments(void **state)
{
    (void)state;
    put("recovery.yaml", MAIN);
    for (int i = 0; i <= RD_MERGE_MAX_FRAGMENTS; i++) {
        char name[64];
        snprintf(name, sizeof name, "recovery.d/%03d.yaml", i);
        put(name, "store:\n  max_turns: 5\n");
    }
    char err[RD_CONFIG_ERR_MAX] = "";
    rd_config *cfg = load("recovery.yaml", err);
    assert_null(cfg);
    assert_non_null(strstr(err, "more than 200 fragments"));
}

/* The last fragment's line numbers are still decoded correctly. */
static void test_many_fragments_blame_the_right_one(void **state)
{
    (void)state;
    put("recovery.yaml", MAIN);
    for (int i = 0; i < RD_MERGE_MAX_FRAGMENTS - 1; i++) {
        char name[64];
        snprintf(name, sizeof name, "recovery.d/%03d.yaml", i);
        put(name, "store:\n  max_turns: 5\n");
    }
    put("recovery.d/999.yaml", "\n\n\n\nstore:\n  max_turns: 0\n");
    expect_error("recovery.yaml", "recovery.d/999.yaml", 6, "store.max_turns", "out of range");
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, make_dir, remove_dir)
    const struct CMUnitTest tests[] = {
        T(test_no_dropin_directory_changes_nothing),
        T(test_fragments_apply_in_byte_order_of_names),
        T(test_only_visible_yaml_files_are_fragments),
        T(test_directory_names_its_recovery_yaml),
        cmocka_unit_test(test_dropin_directory_of_a_main_file),
        T(test_maps_merge_at_every_depth),
        T(test_lists_replace_whole),
        T(test_null_removes_a_key),
        T(test_new_sections_are_added),
        T(test_value_error_names_the_fragment_line),
        T(test_unknown_key_names_the_fragment_line),
        T(test_main_file_errors_keep_their_line),
        T(test_duplicate_key_in_a_fragment),
        T(test_fragment_must_be_a_mapping),
        T(test_fragment_yaml_syntax_error),
        T(test_empty_fragment_is_an_error),
        T(test_unreadable_dropin_directory),
        T(test_too_many_fragments),
        T(test_many_fragments_blame_the_right_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
