/* Categories from words (domain/category_words.h): the model's answer,
 * the rules file's `category_words:` section and its errors, and a rule
 * marked `category_from_words` in rd_classify. That the shipped section
 * is the corpus's is checked by scripts/category-words.py --check
 * (config.category_words_current). */
#define _GNU_SOURCE
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "config/config.h"
#include "domain/category_words.h"
#include "domain/classify.h"
#include "domain/words.h"
#include "temp_dir.h"

/* Transient answers: transient or external_service; permanent ones:
 * input_validation, permission or resource. */
static rd_category_words *small_model(void)
{
    const rd_category_side sides[2] = {
        {.n = 2,
         .categories = {RD_CAT_TRANSIENT, RD_CAT_EXTERNAL_SERVICE},
         .intercept = {0.0, 0.0}},
        {.n = 3,
         .categories = {RD_CAT_INPUT_VALIDATION, RD_CAT_PERMISSION, RD_CAT_RESOURCE},
         .intercept = {0.5, 0.0, 0.0}},
    };
    const char *why = NULL;
    rd_category_words *m = rd_category_words_new(0.6, sides, &why);
    assert_non_null(m);
    static const struct {
        const char *word;
        double w[5]; /* transient side, then permanent side */
    } words[] = {
        {"upstream", {-1.0, 2.0, 0.0, 0.0, 0.0}},
        {"denied", {0.0, 0.0, -1.0, 3.0, 0.0}},
        {"quota", {0.0, 0.0, 0.0, 0.0, 1.0}},
        {"exceeded", {0.0, 0.0, -0.5, 0.0, 1.0}},
    };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        assert_int_equal(rd_category_words_add(m, words[i].word, strlen(words[i].word),
                                               words[i].w, 5, &why),
                         0);
    assert_int_equal(rd_category_words_size(m), 4);
    return m;
}

static bool decide(const rd_category_words *m, const char *msg, rd_retryability r,
                   rd_category *c, double *p)
{
    return rd_category_words_decide(m, msg, strlen(msg), r, c, p);
}

/* ---- the hashed words are rd_words_each's ---- */

typedef struct each_words {
    uint64_t hash[64];
    char text[64][RD_WORD_MAX + 1];
    size_t n;
} each_words;

static void note_word(const char *w, size_t len, void *ctx)
{
    each_words *e = ctx;
    if (e->n < 64) {
        e->hash[e->n] = rd_word_hash(w, len);
        memcpy(e->text[e->n], w, len);
        e->text[e->n][len] = '\0';
        e->n++;
    }
}

static void test_hashed_words_are_the_tokenizers(void **state)
{
    (void)state;
    char long_run[RD_WORD_MAX + 2];
    memset(long_run, 'q', sizeof long_run - 1);
    long_run[sizeof long_run - 1] = '\0';
    char longest[RD_WORD_MAX + 1];
    memset(longest, 'Z', RD_WORD_MAX);
    longest[RD_WORD_MAX] = '\0';
    const char *msgs[] = {"ECONNRESET: socket_hang-up", "HTTP 503 from api-v2, retry in 5s",
                          "caf\xc3\xa9 na\xefve 9lives x y", "Error Error error",
                          "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 short", long_run, longest, ""};
    for (size_t m = 0; m < sizeof msgs / sizeof msgs[0]; m++) {
        each_words want = {.n = 0};
        rd_words_each(msgs[m], strlen(msgs[m]), note_word, &want);
        rd_word_at got[64];
        size_t n = rd_words_hashed(msgs[m], strlen(msgs[m]), got, 64);
        assert_int_equal(n, want.n);
        for (size_t k = 0; k < n; k++) {
            assert_true(got[k].hash == want.hash[k]);
            assert_int_equal(got[k].len, strlen(want.text[k]));
            assert_true(strncasecmp(msgs[m] + got[k].start, want.text[k], got[k].len) == 0);
        }
    }
    /* at most max, in order */
    rd_word_at two[2];
    assert_int_equal(rd_words_hashed("one two three", 13, two, 2), 2);
    assert_int_equal(two[1].start, 4);
}

static void test_words_choose_among_the_retryability_categories(void **state)
{
    (void)state;
    rd_category_words *m = small_model();
    rd_category c = RD_CAT_UNSPECIFIED;
    double p = 0;
    /* permanent: scores 0.5 - 1, 0 + 3, 0 = -0.5, 3, 0 */
    assert_true(decide(m, "Access DENIED by policy", RD_PERMANENT, &c, &p));
    assert_int_equal(c, RD_CAT_PERMISSION);
    double want = exp(3.0) / (exp(-0.5) + exp(3.0) + exp(0.0));
    assert_true(fabs(p - want) < 1e-6);
    /* transient: the same message's known words weigh nothing there, and
     * two categories at 0 are each 0.5 likely: below 0.6 */
    assert_false(decide(m, "Access DENIED by policy", RD_TRANSIENT, &c, NULL));
    /* "upstream" names external_service for a transient answer only */
    assert_true(decide(m, "upstream connect error", RD_TRANSIENT, &c, NULL));
    assert_int_equal(c, RD_CAT_EXTERNAL_SERVICE);
    /* quota + exceeded: 0.5 - 0.5, 0, 2 */
    assert_true(decide(m, "Quota exceeded for project", RD_PERMANENT, &c, &p));
    assert_int_equal(c, RD_CAT_RESOURCE);
    /* no known word: the intercepts alone say nothing */
    assert_false(decide(m, "frobnicated twice", RD_PERMANENT, &c, NULL));
    assert_false(decide(m, "", RD_PERMANENT, &c, NULL));
    /* only transient and permanent answers are refined */
    assert_false(decide(m, "Access denied", RD_RETRYABILITY_UNSPECIFIED, &c, NULL));
    assert_false(rd_category_words_decide(NULL, "denied", 6, RD_PERMANENT, &c, NULL));
    rd_category_words_free(m);
}

static void test_a_repeated_word_weighs_once(void **state)
{
    (void)state;
    rd_category_words *m = small_model();
    rd_category c;
    double once = 0, many = 0;
    assert_true(decide(m, "quota exceeded", RD_PERMANENT, &c, &once));
    assert_true(decide(m, "QUOTA quota Quota exceeded exceeded", RD_PERMANENT, &c, &many));
    assert_true(fabs(once - many) < 1e-12);
    /* words past the first read of 64 count too */
    char long_msg[2048] = "";
    for (int i = 0; i < 80; i++)
        strcat(long_msg, "zz ");
    strcat(long_msg, "denied");
    assert_true(decide(m, long_msg, RD_PERMANENT, &c, NULL));
    assert_int_equal(c, RD_CAT_PERMISSION);
    rd_category_words_free(m);
}

static void test_model_refuses_what_no_weights_can_be(void **state)
{
    (void)state;
    const char *why = NULL;
    rd_category_side sides[2] = {
        {.n = 1, .categories = {RD_CAT_TRANSIENT}, .intercept = {0}},
        {.n = 1, .categories = {RD_CAT_LOGIC}, .intercept = {0}},
    };
    assert_null(rd_category_words_new(0.0, sides, &why));
    assert_non_null(strstr(why, "least probability"));
    sides[1].categories[0] = RD_CAT_UNKNOWN;
    assert_null(rd_category_words_new(0.6, sides, &why));
    assert_non_null(strstr(why, "six an answer can name"));
    sides[1] = (rd_category_side){.n = 2, .categories = {RD_CAT_LOGIC, RD_CAT_LOGIC}};
    assert_null(rd_category_words_new(0.6, sides, &why));
    assert_non_null(strstr(why, "listed twice"));
    sides[1] = (rd_category_side){.n = 1, .categories = {RD_CAT_LOGIC}, .intercept = {NAN}};
    assert_null(rd_category_words_new(0.6, sides, &why));
    assert_non_null(strstr(why, "finite"));
    sides[1].intercept[0] = 0;
    rd_category_words *m = rd_category_words_new(0.6, sides, &why);
    assert_non_null(m);
    const double ok[2] = {1, 1}, bad[2] = {1, INFINITY};
    assert_int_equal(rd_category_words_add(m, "Denied", 6, ok, 2, &why), -1);
    assert_non_null(strstr(why, "not a word"));
    assert_int_equal(rd_category_words_add(m, "x", 1, ok, 2, &why), -1);
    assert_int_equal(rd_category_words_add(m, "denied", 6, ok, 1, &why), -1);
    assert_non_null(strstr(why, "one weight for each"));
    assert_int_equal(rd_category_words_add(m, "denied", 6, bad, 2, &why), -1);
    assert_non_null(strstr(why, "finite"));
    assert_int_equal(rd_category_words_add(m, "denied", 6, ok, 2, &why), 0);
    assert_int_equal(rd_category_words_add(m, "denied", 6, ok, 2, &why), -1);
    assert_non_null(strstr(why, "twice"));
    /* the table grows past its first size and keeps every word */
    char word[16];
    for (int i = 0; i < 3000; i++) {
        snprintf(word, sizeof word, "w%d", i);
        assert_int_equal(rd_category_words_add(m, word, strlen(word), ok, 2, &why), 0);
    }
    assert_int_equal(rd_category_words_size(m), 3001);
    rd_category c;
    assert_true(rd_category_words_decide(m, "w2999 happened", 14, RD_PERMANENT, &c, NULL));
    assert_int_equal(c, RD_CAT_LOGIC);
    rd_category_words_free(m);
}

/* ---- the rules file ---- */

#define MAIN_TEXT "classification:\n  rules_file: rules.yaml\n"

/* Lines 1 to 12; the category_words section starts at line 13. */
#define RULES_TEXT                                                                            \
    "suggestions: {transient: t, input_validation: i, external_service: e, permission: p, "   \
    "logic: l, resource: r, unknown: u}\n"                         /* 1 */                    \
    "rules:\n"                                                     /* 2 */                    \
    "  - id: http.bad_request\n"                                   /* 3 */                    \
    "    when: {http_status: [400]}\n"                             /* 4 */                    \
    "    result: {retryability: permanent, category: input_validation,\n" /* 5 */             \
    "             category_from_words: true, suggestion: fix the request}\n" /* 6 */          \
    "  - id: http.forbidden\n"                                     /* 7 */                    \
    "    when: {http_status: [403]}\n"                             /* 8 */                    \
    "    result: {retryability: permanent, category: permission}\n" /* 9 */                  \
    "  - id: http.unavailable\n"                                   /* 10 */                   \
    "    when: {http_status: [503]}\n"                             /* 11 */                   \
    "    result: {retryability: transient, category: external_service}\n" /* 12 */

#define SECTION_HEAD                                                                          \
    "category_words:\n"                                            /* 13 */                   \
    "  min_probability: 0.6\n"                                     /* 14 */                   \
    "  transient:\n"                                               /* 15 */                   \
    "    categories: [transient, external_service]\n"              /* 16 */                   \
    "    intercept: [0, 0]\n"                                      /* 17 */                   \
    "  permanent:\n"                                               /* 18 */                   \
    "    categories: [input_validation, permission, resource]\n"   /* 19 */                   \
    "    intercept: [0.5, 0, 0]\n"                                 /* 20 */                   \
    "  weights:\n"                                                 /* 21 */

static rd_config *load_rules(const char *rules_text, char *err)
{
    char path[PATH_MAX];
    put("recovery.yaml", MAIN_TEXT);
    put("rules.yaml", rules_text);
    return rd_config_load(in_dir(path, "recovery.yaml"), err, RD_CONFIG_ERR_MAX);
}

static void expect_error(const char *section, int line, const char *key, const char *problem)
{
    char err[RD_CONFIG_ERR_MAX] = "", prefix[PATH_MAX + 256];
    char text[4096];
    snprintf(text, sizeof text, "%s%s", RULES_TEXT, section);
    rd_config *cfg = load_rules(text, err);
    assert_null(cfg);
    snprintf(prefix, sizeof prefix, "%s/rules.yaml:%d: %s: ", g_dir, line, key);
    if (strncmp(err, prefix, strlen(prefix)) != 0 || !strstr(err, problem))
        fail_msg("got  \"%s\"\nwant \"%s...%s...\"", err, prefix, problem);
}

static void classify(const rd_config *cfg, const char *msg, int status, rd_classification *c)
{
    rd_tool_error e = {.message = msg, .message_len = strlen(msg), .http_status = status};
    rd_classify(&cfg->rules, NULL, "t", &e, c);
}

static void test_a_marked_rule_takes_the_category_the_words_name(void **state)
{
    (void)state;
    char err[RD_CONFIG_ERR_MAX] = "";
    rd_config *cfg = load_rules(RULES_TEXT SECTION_HEAD
                                "    denied: [0, 0, -1, 3, 0]\n"
                                "    upstream: [-1, 2, 0, 0, 0]\n",
                                err);
    if (!cfg)
        fail_msg("%s", err);
    assert_int_equal(rd_category_words_size(cfg->rules.category_words), 2);
    rd_classification c;
    /* marked: a 400 whose words name permission is a permission error,
     * with that category's suggestion, not the rule's own */
    classify(cfg, "access denied for this key", 400, &c);
    assert_string_equal(c.rule_id, "http.bad_request");
    assert_int_equal(c.decided_by, RD_TIER_STRUCTURED);
    assert_int_equal(c.retryability, RD_PERMANENT);
    assert_int_equal(c.category, RD_CAT_PERMISSION);
    assert_string_equal(c.suggestion, "p");
    /* marked, words saying nothing clear: the rule's category and text */
    classify(cfg, "bad payload", 400, &c);
    assert_int_equal(c.category, RD_CAT_INPUT_VALIDATION);
    assert_string_equal(c.suggestion, "fix the request");
    /* not marked: the words are not read */
    classify(cfg, "upstream timed out", 503, &c);
    assert_int_equal(c.category, RD_CAT_EXTERNAL_SERVICE);
    classify(cfg, "access denied", 503, &c);
    assert_int_equal(c.category, RD_CAT_EXTERNAL_SERVICE);
    rd_config_free(cfg);
    /* a rules file without the section: marked rules keep their category */
    cfg = load_rules(RULES_TEXT, err);
    if (!cfg)
        fail_msg("%s", err);
    assert_null(cfg->rules.category_words);
    classify(cfg, "access denied for this key", 400, &c);
    assert_int_equal(c.category, RD_CAT_INPUT_VALIDATION);
    rd_config_free(cfg);
}

/* What a section needs after its transient side. */
#define REST "  permanent:\n    categories: [logic]\n    intercept: [0]\n  weights: {}\n"

static void test_section_errors_name_line_and_key(void **state)
{
    (void)state;
    expect_error("category_words: [1]\n", 13, "category_words", "expected a mapping");
    expect_error("category_words:\n  min_probability: 0.6\n", 13, "category_words",
                 "transient is required");
    expect_error(SECTION_HEAD "    denied: [0, 0, -1, 3]\n", 22, "category_words.weights.denied",
                 "expected a list of 5");
    expect_error(SECTION_HEAD "    denied: [0, 0, -1, 3, x]\n", 22,
                 "category_words.weights.denied[4]", "");
    expect_error(SECTION_HEAD "    Denied: [0, 0, -1, 3, 0]\n", 22,
                 "category_words.weights.Denied", "not a word");
    expect_error(SECTION_HEAD "    denied: [0, 0, -1, 3, 0]\n    denied: [0, 0, 0, 0, 0]\n", 23,
                 "category_words.weights.denied", "weighed twice");
    expect_error(SECTION_HEAD "    denied: [0, 0, -1, 3, 0]\n  extra: 1\n", 23,
                 "category_words.extra", "unknown key");
    expect_error("category_words:\n  min_probability: 0.6\n  transient:\n"
                 "    categories: [transient, unknown]\n    intercept: [0, 0]\n" REST,
                 16, "category_words.transient.categories[1]", "not one the words name");
    expect_error("category_words:\n  min_probability: 0.6\n  transient:\n"
                 "    categories: [transient, transient]\n    intercept: [0, 0]\n" REST,
                 16, "category_words.transient.categories[1]", "listed twice");
    expect_error("category_words:\n  min_probability: 0.6\n  transient:\n"
                 "    categories: [transient, sideways]\n    intercept: [0, 0]\n" REST,
                 16, "category_words.transient.categories[1]", "");
    expect_error("category_words:\n  min_probability: 0.6\n  transient:\n"
                 "    categories: [transient]\n    intercept: [0, 0]\n" REST,
                 17, "category_words.transient.intercept",
                 "expected a list of 1 (one per category)");
    expect_error("category_words:\n  min_probability: 1.5\n  transient:\n"
                 "    categories: [transient]\n    intercept: [0]\n" REST, 14,
                 "category_words.min_probability", "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hashed_words_are_the_tokenizers),
        cmocka_unit_test(test_words_choose_among_the_retryability_categories),
        cmocka_unit_test(test_a_repeated_word_weighs_once),
        cmocka_unit_test(test_model_refuses_what_no_weights_can_be),
        cmocka_unit_test_setup_teardown(test_a_marked_rule_takes_the_category_the_words_name,
                                        make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_section_errors_name_line_and_key, make_dir,
                                        remove_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
