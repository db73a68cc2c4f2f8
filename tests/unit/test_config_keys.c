/* The key tables (config/config_keys.h) on a table of every row type:
 * defaults, parsing with file:line errors, checks, release, the Markdown
 * the docs are made of; and the consistency of the loader's own tables. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "config/config_keys.h"
#include "config/config_tables.h"
#include "domain/err.h"

typedef struct toy_inner {
    int64_t a;
} toy_inner;

typedef struct toy {
    int64_t count;
    uint32_t small;
    size_t size;
    int64_t idle_ms;
    double ratio;
    bool flag;
    char *name;
    char *opt;
    int color;
    toy_inner inner;
    char *token;
    size_t n_items;
} toy;

static int check_no_space(const rd_yctx *c, int line, const char *path, const void *field)
{
    const char *text = *(char *const *)field;
    return strchr(text, ' ') ? rd_yerr(c, line, path, "no spaces, got \"%s\"", text) : RD_OK;
}

static int parse_items(const rd_yctx *c, const rd_ynode *map, const rd_ynode *v,
                       const char *path, void *base)
{
    (void)map;
    int rc = rd_yexpect(c, v, path, RD_YSEQ);
    if (rc == RD_OK)
        ((toy *)base)->n_items = v->n;
    return rc;
}

static const rd_key INNER_KEYS[] = {
    {.name = "a", .type = RD_KEY_INT, RD_FIELD(toy_inner, a), .lo = 1, .hi = 10, .def = 5,
     .required = true, .doc = "a required number"},
};
static const rd_key_table INNER = RD_KEY_TABLE("toy.inner", NULL, INNER_KEYS, NULL);

static const char *const COLORS[] = {"red", "green", "blue", NULL};
static const int COLOR_VALUES[] = {10, 20, 30};

static int check_toy(const rd_yctx *c, const rd_ynode *map, const char *path, void *base)
{
    const toy *t = base;
    char p[RD_YPATH_MAX];
    if (t->opt && !t->flag)
        return rd_yerr(c, rd_ymap_key_line(map, "opt"), rd_ypath(p, path, "opt"),
                       "needs flag: true");
    return RD_OK;
}

static const rd_key TOY_KEYS[] = {
    RD_K_INT(toy, "count", count, 0, 100, 7, "how many"),
    RD_K_INT(toy, "small", small, 1, 1000, 10, "a uint32_t"),
    RD_K_INT(toy, "size", size, 1, 1LL << 40, 4096, "a size_t"),
    RD_K_OFF(toy, "idle_ms", idle_ms, 1000, 60000, 0, "off or a time"),
    RD_K_DOUBLE(toy, "ratio", ratio, 0.0, 1.0, 0.5, "a share"),
    RD_K_BOOL(toy, "flag", flag, true, "on | off, with a pipe"),
    {.name = "name", .type = RD_KEY_TEXT, RD_FIELD(toy, name), .hi = 16, .sdef = "abc",
     .check = check_no_space, .doc = "a name"},
    {.name = "opt", .type = RD_KEY_OPT_TEXT, RD_FIELD(toy, opt), .hi = 8, .doc = "optional"},
    RD_K_ENUM(toy, "color", color, COLORS, COLOR_VALUES, 1, "a colour"),
    RD_K_SECTION(toy, "inner", inner, &INNER, "nested"),
    RD_K_SECRET(toy, "token", token, "a secret"),
    {.name = "items", .type = RD_KEY_CUSTOM, .offset = RD_KEY_NO_FIELD, .parse = parse_items,
     .type_doc = "list", .range_doc = "anything", .doc = "read by a function"},
};
static const rd_key_table TOY = RD_KEY_TABLE("toy", "A table of every row type.", TOY_KEYS,
                                             check_toy);
static const rd_key ROOT_KEYS[] = {
    RD_K_SECTION_HERE("toy", &TOY, "the toy section"),
};
static const rd_key_table ROOT = RD_KEY_TABLE("(file)", NULL, ROOT_KEYS, NULL);

/* ---- fixtures ---- */

static char g_file[PATH_MAX];
static char g_err[RD_CONFIG_ERR_MAX];

static int make_file(void **state)
{
    (void)state;
    snprintf(g_file, sizeof g_file, "/tmp/rd_keys_XXXXXX");
    int fd = mkstemp(g_file);
    if (fd < 0)
        return -1;
    close(fd);
    return 0;
}

static int remove_file(void **state)
{
    (void)state;
    unlink(g_file);
    return 0;
}

/* Parses `text` over a toy holding the defaults; the toy is released
 * unless `keep` receives it. */
static int parse_text(const char *text, toy *keep)
{
    FILE *f = fopen(g_file, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    rd_yctx c = {.file = g_file, .err = g_err, .err_cap = sizeof g_err};
    g_err[0] = '\0';
    toy t = {0};
    assert_int_equal(rd_keys_defaults(&ROOT, &t), RD_OK);
    rd_ynode *root;
    int rc = rd_yaml_load(&c, &root);
    if (rc == RD_OK) {
        rc = rd_keys_parse(&c, root, 1, "", &ROOT, &t);
        rd_yaml_free(root);
    }
    if (keep)
        *keep = t;
    else
        rd_keys_free(&ROOT, &t);
    return rc;
}

static void expect_error(const char *text, int line, const char *key, const char *problem)
{
    assert_int_equal(parse_text(text, NULL), RD_ERR_CONFIG);
    char prefix[PATH_MAX + 128];
    snprintf(prefix, sizeof prefix, "%s:%d: %s: ", g_file, line, key);
    if (strncmp(g_err, prefix, strlen(prefix)) != 0 || !strstr(g_err, problem))
        fail_msg("got  \"%s\"\nwant \"%s...%s...\"", g_err, prefix, problem);
}

/* ---- tests ---- */

static void test_defaults_are_applied(void **state)
{
    (void)state;
    toy t = {0};
    assert_int_equal(rd_keys_defaults(&ROOT, &t), RD_OK);
    assert_int_equal(t.count, 7);
    assert_int_equal(t.small, 10);
    assert_int_equal(t.size, 4096);
    assert_int_equal(t.idle_ms, 0);
    assert_true(t.ratio == 0.5);
    assert_true(t.flag);
    assert_string_equal(t.name, "abc");
    assert_null(t.opt);
    assert_int_equal(t.color, 20); /* the value of the default name, not its index */
    assert_int_equal(t.inner.a, 5);
    assert_null(t.token);
    rd_keys_free(&ROOT, &t);
    assert_null(t.name);
}

static void test_values_are_read_and_absent_keys_kept(void **state)
{
    (void)state;
    setenv("RD_TEST_KEYS_TOKEN", " tok\n", 1);
    toy t;
    assert_int_equal(parse_text("toy:\n"
                                "  count: 100\n"
                                "  small: 1000\n"
                                "  size: 1099511627776\n"
                                "  idle_ms: 1000\n"
                                "  ratio: 0.25\n"
                                "  name: xyz\n"
                                "  opt: o\n"
                                "  color: blue\n"
                                "  inner: {a: 10}\n"
                                "  token_env: RD_TEST_KEYS_TOKEN\n"
                                "  items: [1, 2, 3]\n",
                                &t),
                     RD_OK);
    unsetenv("RD_TEST_KEYS_TOKEN");
    assert_int_equal(t.count, 100);
    assert_int_equal(t.small, 1000);
    assert_int_equal(t.size, 1ULL << 40);
    assert_int_equal(t.idle_ms, 1000);
    assert_true(t.ratio == 0.25);
    assert_true(t.flag); /* absent: the default stays */
    assert_string_equal(t.name, "xyz");
    assert_string_equal(t.opt, "o");
    assert_int_equal(t.color, 30);
    assert_int_equal(t.inner.a, 10);
    assert_string_equal(t.token, "tok");
    assert_int_equal(t.n_items, 3);
    rd_keys_free(&ROOT, &t);
    assert_null(t.token);
    assert_null(t.opt);
    /* "" unsets an optional text; 0 turns an off-or-range key off */
    assert_int_equal(parse_text("toy: {opt: \"\", idle_ms: 0, name: q}\n", &t), RD_OK);
    assert_null(t.opt);
    assert_int_equal(t.idle_ms, 0);
    rd_keys_free(&ROOT, &t);
}

static void test_unknown_keys_name_the_known_ones(void **state)
{
    (void)state;
    expect_error("toy:\n  count: 1\n  colour: red\n", 3, "toy.colour",
                 "unknown key (expected one of: count, small, size, idle_ms, ratio, flag, "
                 "name, opt, color, inner, token_file, token_env, items); did you mean "
                 "\"color\"?");
    expect_error("toy:\n  inner: {a: 1, b: 2}\n", 2, "toy.inner.b",
                 "unknown key (expected one of: a)");
    /* nothing near enough: no guess */
    assert_int_equal(parse_text("toy: {zzzzzzzz: 1}\n", NULL), RD_ERR_CONFIG);
    assert_null(strstr(g_err, "did you mean"));
    expect_error("toyy: {}\n", 1, "toyy", "did you mean \"toy\"?");
    expect_error("toy:\n  count: 1\n  count: 2\n", 3, "toy.count",
                 "duplicate key (first at line 2)");
}

static void test_out_of_range_values_name_file_line_and_key(void **state)
{
    (void)state;
    expect_error("toy:\n  count: 101\n", 2, "toy.count", "101 is out of range (0..100)");
    expect_error("toy:\n  count: -1\n", 2, "toy.count", "-1 is out of range (0..100)");
    expect_error("toy:\n  small: 0\n", 2, "toy.small", "0 is out of range (1..1000)");
    expect_error("toy:\n  size: 1099511627777\n", 2, "toy.size", "out of range");
    expect_error("toy:\n  idle_ms: 999\n", 2, "toy.idle_ms", "must be 0 (off) or 1000..60000");
    expect_error("toy:\n  idle_ms: 60001\n", 2, "toy.idle_ms", "out of range (0..60000)");
    expect_error("toy:\n  ratio: 1.5\n", 2, "toy.ratio", "1.5 is out of range (0..1)");
    expect_error("toy:\n  name: abcdefghijklmnopq\n", 2, "toy.name", "longer than 16 bytes");
    expect_error("toy:\n  inner:\n    a: 11\n", 3, "toy.inner.a", "out of range (1..10)");
    expect_error("toy:\n  color: purple\n", 2, "toy.color",
                 "unknown color \"purple\" (red | green | blue)");
}

static void test_wrong_types_are_refused(void **state)
{
    (void)state;
    expect_error("toy:\n  count: many\n", 2, "toy.count", "expected an integer, got \"many\"");
    expect_error("toy:\n  count: \"5\"\n", 2, "toy.count", "got the quoted text \"5\"");
    expect_error("toy:\n  flag: yes\n", 2, "toy.flag", "expected true or false");
    expect_error("toy:\n  name: [a]\n", 2, "toy.name", "expected text, got a list");
    expect_error("toy:\n  inner: 3\n", 2, "toy.inner", "expected a mapping, got a scalar");
    expect_error("toy:\n  items: {a: 1}\n", 2, "toy.items", "expected a list, got a mapping");
    expect_error("toy: [1]\n", 1, "toy", "expected a mapping, got a list");
    expect_error("- 1\n", 1, "(file)", "expected a mapping, got a list");
}

static void test_required_keys_and_checks(void **state)
{
    (void)state;
    expect_error("toy:\n  inner: {}\n", 2, "toy.inner.a", "missing (required)");
    expect_error("toy:\n  name: \"a b\"\n", 2, "toy.name", "no spaces, got \"a b\"");
    expect_error("toy:\n  flag: false\n  opt: x\n", 3, "toy.opt", "needs flag: true");
    assert_int_equal(parse_text("toy:\n  token_env: RD_TEST_KEYS_SURELY_UNSET\n", NULL),
                     RD_ERR_CONFIG);
    assert_non_null(strstr(g_err, "toy.token_env: environment variable"));
}

static char *render(const rd_key_table *t)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    rd_keys_markdown(out, &t, 1, "###");
    fclose(out);
    return text;
}

static void expect_in(const char *text, const char *needle)
{
    if (!strstr(text, needle))
        fail_msg("\"%s\" missing from:\n%s", needle, text);
}

static void test_markdown_has_a_row_per_key(void **state)
{
    (void)state;
    char *md = render(&ROOT);
    expect_in(md, "### `toy`\n\nA table of every row type.\n\n"
                  "| Key | Type | Range | Default | What it does |\n"
                  "|-----|------|-------|---------|--------------|\n"
                  "| `count` | integer | 0..100 | 7 | how many |\n");
    expect_in(md, "| `idle_ms` | integer | 0 (off) or 1000..60000 | 0 (off) | off or a time |\n");
    expect_in(md, "| `ratio` | number | 0..1 | 0.5 | a share |\n");
    expect_in(md, "| `flag` | bool | true, false | true | on \\| off, with a pipe |\n");
    expect_in(md, "| `name` | text | 1..16 bytes | `\"abc\"` | a name |\n");
    expect_in(md, "| `opt` | text | 1..8 bytes, or \"\" (unset) | unset | optional |\n");
    expect_in(md, "| `color` | choice | `red` \\| `green` \\| `blue` | `green` | a colour |\n");
    expect_in(md, "| `inner` | section | mapping: `toy.inner` | — | nested |\n");
    expect_in(md, "| `token_file`, `token_env` | secret |");
    expect_in(md, "| `items` | list | anything | — | read by a function |\n");
    expect_in(md, "### `toy.inner`\n\n| Key |");
    expect_in(md, "| `a` | integer | 1..10 | required | a required number |\n");
    /* the section table follows its parent's */
    assert_true(strstr(md, "### `toy.inner`") > strstr(md, "### `toy`\n"));
    free(md);
}

static void test_the_loaders_tables_are_well_formed(void **state)
{
    (void)state;
    char err[256] = "";
    if (rd_keys_self_check(&rd_keys_main, err, sizeof err) != RD_OK)
        fail_msg("%s", err);
    if (rd_keys_self_check(&rd_keys_manifest, err, sizeof err) != RD_OK)
        fail_msg("%s", err);
    assert_int_equal(rd_keys_self_check(&ROOT, err, sizeof err), RD_OK);
    /* and the check does find a broken row */
    static const rd_key BAD_KEYS[] = {RD_K_INT(toy, "count", count, 1, 10, 0, "default out")};
    static const rd_key_table BAD = RD_KEY_TABLE("bad", NULL, BAD_KEYS, NULL);
    assert_int_equal(rd_keys_self_check(&BAD, err, sizeof err), RD_ERR_INTERNAL);
    assert_string_equal(err, "bad.count: the default is out of range");
    static const rd_key NARROW_KEYS[] = {RD_K_INT(toy, "small", small, 0, 1LL << 40, 0, "wide")};
    static const rd_key_table NARROW = RD_KEY_TABLE("narrow", NULL, NARROW_KEYS, NULL);
    assert_int_equal(rd_keys_self_check(&NARROW, err, sizeof err), RD_ERR_INTERNAL);
    assert_string_equal(err, "narrow.small: the range does not fit the field");
}

static void test_docs_show_every_main_and_manifest_key(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    rd_config_keys_markdown(out);
    fclose(out);
    static const char *const sections[] = {
        "server", "server.tls", "store", "store.redis", "defaults", "defaults.retry_policy",
        "defaults.circuit_breaker", "defaults.circuit_breaker.quorum", "defaults.retry_budget",
        "turn", "tools", "classification", "metrics", "log", "reload", "learning", "tool",
        "tool.classification"};
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
        char heading[96];
        snprintf(heading, sizeof heading, "### `%s`", sections[i]);
        expect_in(text, heading);
    }
    expect_in(text, "| `workers` | integer | 0..64 | 2 |");
    expect_in(text, "| `password_file`, `password_env` | secret |");
    expect_in(text, "| `rules_file` | text | 1..4096 bytes | required |");
    /* the policies are one table for defaults and manifests, shown once */
    const char *first = strstr(text, "| `initial_delay_ms` |");
    assert_non_null(first);
    assert_null(strstr(first + 1, "| `initial_delay_ms` |"));
    free(text);
}

/* ---- keys that need a restart ---- */

typedef struct boot {
    int64_t workers;
    int64_t level;
    char *listen;
    toy_inner inner;
} boot;

static const rd_key BOOT_INNER_KEYS[] = {
    RD_K_INT(toy_inner, "a", a, 0, 10, 1, "under a restart table"),
};
static const rd_key_table BOOT_INNER =
    RD_KEY_TABLE_RESTART("boot.inner", NULL, BOOT_INNER_KEYS, NULL);
static const rd_key BOOT_KEYS[] = {
    RD_K_INT(boot, "workers", workers, 0, 64, 2, "threads", RD_RESTART),
    RD_K_INT(boot, "level", level, 0, 3, 1, "reloadable"),
    RD_K_TEXT(boot, "listen", listen, 64, "x:1", "where", RD_RESTART),
    RD_K_SECTION(boot, "inner", inner, &BOOT_INNER, "all restart"),
};
static const rd_key_table BOOT = RD_KEY_TABLE("boot", NULL, BOOT_KEYS, NULL);

typedef struct changes {
    char keys[8][64];
    size_t n;
} changes;

static void collect(const char *key, void *ctx)
{
    changes *c = ctx;
    if (c->n < 8)
        snprintf(c->keys[c->n++], sizeof c->keys[0], "%s", key);
}

static void test_restart_changes_come_from_the_rows(void **state)
{
    (void)state;
    char a_listen[] = "x:1", b_listen[] = "x:1";
    boot a = {.workers = 2, .level = 1, .listen = a_listen, .inner = {.a = 1}};
    boot b = a;
    b.listen = b_listen; /* equal text in another buffer is no change */
    changes c = {.n = 0};
    rd_keys_restart_changes(&BOOT, &a, &b, "boot", collect, &c);
    assert_int_equal(c.n, 0);

    char other[] = "y:2";
    b.workers = 4;
    b.level = 3; /* reloadable: never reported */
    b.listen = other;
    b.inner.a = 7; /* its table needs a restart */
    rd_keys_restart_changes(&BOOT, &a, &b, "boot", collect, &c);
    assert_int_equal(c.n, 3);
    assert_string_equal(c.keys[0], "boot.workers");
    assert_string_equal(c.keys[1], "boot.listen");
    assert_string_equal(c.keys[2], "boot.inner.a");

    /* The docs say which keys need a restart, from the same rows. */
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    static const rd_key FILE_KEYS[] = {RD_K_SECTION_HERE("boot", &BOOT, "the section")};
    static const rd_key_table FILE_TABLE = RD_KEY_TABLE("(file)", NULL, FILE_KEYS, NULL);
    const rd_key_table *files[] = {&FILE_TABLE};
    rd_keys_markdown(out, files, 1, "###");
    fclose(out);
    assert_non_null(strstr(text, "| threads (restart) |"));
    assert_non_null(strstr(text, "| reloadable |"));
    assert_non_null(strstr(text, "A change of any key here needs a restart."));
    free(text);
}

static int parse_nothing(const rd_yctx *c, const rd_ynode *map, const rd_ynode *v,
                         const char *path, void *base)
{
    return RD_OK;
}

static void test_a_restart_row_must_tell_a_change(void **state)
{
    (void)state;
    static const rd_key ROWS[] = {
        {.name = "list", .type = RD_KEY_CUSTOM, .offset = RD_KEY_NO_FIELD,
         .parse = parse_nothing, .doc = "a custom row without differs"},
    };
    static const rd_key_table T = RD_KEY_TABLE_RESTART("t", NULL, ROWS, NULL);
    char err[256] = "";
    assert_int_equal(rd_keys_self_check(&T, err, sizeof err), RD_ERR_INTERNAL);
    assert_non_null(strstr(err, "t.list: needs a restart but cannot tell a change"));
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, make_file, remove_file)
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_are_applied),
        T(test_values_are_read_and_absent_keys_kept),
        T(test_unknown_keys_name_the_known_ones),
        T(test_out_of_range_values_name_file_line_and_key),
        T(test_wrong_types_are_refused),
        T(test_required_keys_and_checks),
        cmocka_unit_test(test_markdown_has_a_row_per_key),
        cmocka_unit_test(test_the_loaders_tables_are_well_formed),
        cmocka_unit_test(test_docs_show_every_main_and_manifest_key),
        cmocka_unit_test(test_restart_changes_come_from_the_rows),
        cmocka_unit_test(test_a_restart_row_must_tell_a_change),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
