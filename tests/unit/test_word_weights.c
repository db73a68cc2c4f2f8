/* Word weights (domain/word_weights.h): the category a marked rule's
 * words name, the answer for a message no rule decided, the rules file's
 * `word_weights:` section and its errors, and both in rd_classify. That
 * the shipped section is the corpus's is checked by
 * scripts/word-weights.py --check (config.word_weights_current). */
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
#include "domain/word_weights.h"
#include "domain/classify.h"
#include "domain/words.h"
#include "config_fixture.h"

/* Transient answers: transient or external_service; permanent ones:
 * input_validation, permission or resource. The log-odds of permanent
 * start at -0.5. */
static rd_word_weights *small_model(void)
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
    const rd_permanent_odds odds = {.intercept = -0.5, .min_probability = 0.6};
    rd_word_weights *m = rd_word_weights_new(0.6, &odds, sides, &why);
    assert_non_null(m);
    static const struct {
        const char *word;
        double w[6]; /* permanent's log-odds, transient side, permanent side */
    } words[] = {
        {"upstream", {-2.0, -1.0, 2.0, 0.0, 0.0, 0.0}},
        {"denied", {2.5, 0.0, 0.0, -1.0, 3.0, 0.0}},
        {"quota", {0.0, 0.0, 0.0, 0.0, 0.0, 1.0}},
        {"exceeded", {1.0, 0.0, 0.0, -0.5, 0.0, 1.0}},
        {"odd", {0.8, 0.0, 0.0, 0.0, 0.0, 0.0}},
        {"later", {-2.0, 0.0, 0.0, 0.0, 0.0, 0.0}},
    };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        assert_int_equal(rd_word_weights_add(m, words[i].word, strlen(words[i].word),
                                             words[i].w, 6, &why),
                         0);
    assert_int_equal(rd_word_weights_size(m), 6);
    return m;
}

static bool decide(const rd_word_weights *m, const char *msg, rd_retryability r,
                   rd_category *c, double *p)
{
    return rd_word_weights_decide(m, msg, strlen(msg), r, c, p);
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
    rd_word_weights *m = small_model();
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
    assert_false(rd_word_weights_decide(NULL, "denied", 6, RD_PERMANENT, &c, NULL));
    rd_word_weights_free(m);
}

static bool answer(const rd_word_weights *m, const char *msg, rd_retryability *r,
                   rd_category *c, double *permanent)
{
    return rd_word_weights_answer(m, msg, strlen(msg), r, c, permanent);
}

static double logistic(double x) { return 1.0 / (1.0 + exp(-x)); }

static void test_weights_answer_a_message_no_rule_decided(void **state)
{
    (void)state;
    rd_word_weights *m = small_model();
    rd_retryability r = RD_RETRYABILITY_UNSPECIFIED;
    rd_category c = RD_CAT_UNSPECIFIED;
    double p = 0;
    /* log-odds -0.5 + 2.5: permanent, and permission among its categories */
    assert_true(answer(m, "Access DENIED by policy", &r, &c, &p));
    assert_int_equal(r, RD_PERMANENT);
    assert_int_equal(c, RD_CAT_PERMISSION);
    assert_true(fabs(p - logistic(2.0)) < 1e-6);
    /* -0.5 - 2: transient, external_service */
    assert_true(answer(m, "upstream connect error", &r, &c, &p));
    assert_int_equal(r, RD_TRANSIENT);
    assert_int_equal(c, RD_CAT_EXTERNAL_SERVICE);
    assert_true(fabs(p - logistic(-2.5)) < 1e-6);
    /* -0.5 + 0.8: permanent is likelier (0.57) but under 0.6: no answer,
     * the unknown default stands */
    r = RD_RETRYABILITY_UNSPECIFIED;
    c = RD_CAT_UNSPECIFIED;
    assert_false(answer(m, "an odd thing", &r, &c, &p));
    assert_int_equal(r, RD_RETRYABILITY_UNSPECIFIED);
    assert_int_equal(c, RD_CAT_UNSPECIFIED);
    /* -0.5 + 1: 0.62, permanent; quota and exceeded name resource */
    assert_true(answer(m, "quota exceeded", &r, &c, &p));
    assert_int_equal(r, RD_PERMANENT);
    assert_int_equal(c, RD_CAT_RESOURCE);
    /* -0.5 - 2: transient, and its words name no transient category */
    assert_true(answer(m, "try later", &r, &c, &p));
    assert_int_equal(r, RD_TRANSIENT);
    assert_int_equal(c, RD_CAT_UNKNOWN);
    /* no known word: nothing said, the caller's default stands */
    r = RD_RETRYABILITY_UNSPECIFIED;
    assert_false(answer(m, "frobnicated twice", &r, &c, NULL));
    assert_false(answer(m, "", &r, &c, NULL));
    assert_int_equal(r, RD_RETRYABILITY_UNSPECIFIED);
    assert_false(rd_word_weights_answer(NULL, "denied", 6, &r, &c, NULL));
    /* a large sum does not overflow the logistic function */
    char many[8192] = "";
    for (int i = 0; i < 600; i++) {
        char w[16];
        snprintf(w, sizeof w, "w%d ", i);
        strcat(many, w);
    }
    const char *why = NULL;
    const rd_category_side sides[2] = {
        {.n = 1, .categories = {RD_CAT_TRANSIENT}},
        {.n = 1, .categories = {RD_CAT_LOGIC}},
    };
    const rd_permanent_odds odds = {.intercept = 0, .min_probability = 0.6};
    for (double sign = -1; sign <= 1; sign += 2) {
        rd_word_weights *big = rd_word_weights_new(0.6, &odds, sides, &why);
        assert_non_null(big);
        const double w[3] = {sign * 1e6, 0, 0};
        char word[16];
        for (int i = 0; i < 600; i++) {
            snprintf(word, sizeof word, "w%d", i);
            assert_int_equal(rd_word_weights_add(big, word, strlen(word), w, 3, &why), 0);
        }
        assert_true(answer(big, many, &r, &c, &p));
        assert_true(p == (sign > 0 ? 1.0 : 0.0));
        assert_int_equal(r, sign > 0 ? RD_PERMANENT : RD_TRANSIENT);
        rd_word_weights_free(big);
    }
    rd_word_weights_free(m);
}

static void test_a_repeated_word_weighs_once(void **state)
{
    (void)state;
    rd_word_weights *m = small_model();
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
    rd_word_weights_free(m);
}

static void test_model_refuses_what_no_weights_can_be(void **state)
{
    (void)state;
    const char *why = NULL;
    rd_category_side sides[2] = {
        {.n = 1, .categories = {RD_CAT_TRANSIENT}, .intercept = {0}},
        {.n = 1, .categories = {RD_CAT_LOGIC}, .intercept = {0}},
    };
    rd_permanent_odds odds = {.intercept = 0, .min_probability = 0.6};
    assert_null(rd_word_weights_new(0.0, &odds, sides, &why));
    assert_non_null(strstr(why, "least probability"));
    odds.min_probability = 0.5;
    assert_null(rd_word_weights_new(0.6, &odds, sides, &why));
    assert_non_null(strstr(why, "above 0.5"));
    odds = (rd_permanent_odds){.intercept = NAN, .min_probability = 0.6};
    assert_null(rd_word_weights_new(0.6, &odds, sides, &why));
    assert_non_null(strstr(why, "finite"));
    odds.intercept = 0;
    sides[1].categories[0] = RD_CAT_UNKNOWN;
    assert_null(rd_word_weights_new(0.6, &odds, sides, &why));
    assert_non_null(strstr(why, "six an answer can name"));
    sides[1] = (rd_category_side){.n = 2, .categories = {RD_CAT_LOGIC, RD_CAT_LOGIC}};
    assert_null(rd_word_weights_new(0.6, &odds, sides, &why));
    assert_non_null(strstr(why, "listed twice"));
    sides[1] = (rd_category_side){.n = 1, .categories = {RD_CAT_LOGIC}, .intercept = {NAN}};
    assert_null(rd_word_weights_new(0.6, &odds, sides, &why));
    assert_non_null(strstr(why, "finite"));
    sides[1].intercept[0] = 0;
    rd_word_weights *m = rd_word_weights_new(0.6, &odds, sides, &why);
    assert_non_null(m);
    const double ok[3] = {1, 1, 1}, bad[3] = {1, 1, INFINITY};
    assert_int_equal(rd_word_weights_add(m, "Denied", 6, ok, 3, &why), -1);
    assert_non_null(strstr(why, "not a word"));
    assert_int_equal(rd_word_weights_add(m, "x", 1, ok, 3, &why), -1);
    assert_int_equal(rd_word_weights_add(m, "denied", 6, ok, 2, &why), -1);
    assert_non_null(strstr(why, "one weight for permanent"));
    assert_int_equal(rd_word_weights_add(m, "denied", 6, bad, 3, &why), -1);
    assert_non_null(strstr(why, "finite"));
    assert_int_equal(rd_word_weights_add(m, "denied", 6, ok, 3, &why), 0);
    assert_int_equal(rd_word_weights_add(m, "denied", 6, ok, 3, &why), -1);
    assert_non_null(strstr(why, "twice"));
    /* the table grows past its first size and keeps every word */
    char word[16];
    for (int i = 0; i < 3000; i++) {
        snprintf(word, sizeof word, "w%d", i);
        assert_int_equal(rd_word_weights_add(m, word, strlen(word), ok, 3, &why), 0);
    }
    assert_int_equal(rd_word_weights_size(m), 3001);
    rd_category c;
    assert_true(rd_word_weights_decide(m, "w2999 happened", 14, RD_PERMANENT, &c, NULL));
    assert_int_equal(c, RD_CAT_LOGIC);
    rd_word_weights_free(m);
}

/* ---- the rules file ---- */

/* Lines 1 to 12; the word_weights section starts at line 13. No rule
 * reads the message alone. */
#define RULES_TEXT                                                                            \
    SUGGESTIONS_LINE                                               /* 1 */                    \
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
    "word_weights:\n"                                              /* 13 */                   \
    "  min_probability: 0.6\n"                                     /* 14 */                   \
    "  retryability:\n"                                            /* 15 */                   \
    "    min_probability: 0.6\n"                                     /* 16 */                   \
    "    intercept: [-0.5]\n"                                      /* 17 */                   \
    "  transient:\n"                                               /* 18 */                   \
    "    categories: [transient, external_service]\n"              /* 19 */                   \
    "    intercept: [0, 0]\n"                                      /* 20 */                   \
    "  permanent:\n"                                               /* 21 */                   \
    "    categories: [input_validation, permission, resource]\n"   /* 22 */                   \
    "    intercept: [0.5, 0, 0]\n"                                 /* 23 */                   \
    "  weights:\n"                                                 /* 24 */

/* Up to the transient side, for the errors of the sides. */
#define HEAD_TO_SIDES                                                                         \
    "word_weights:\n  min_probability: 0.6\n"                                                 \
    "  retryability:\n    min_probability: 0.6\n    intercept: [0]\n"

static rd_config *load_rules(const char *rules_text, char *err)
{
    return load_files(MAIN_MIN, rules_text, err);
}

/* RULES_TEXT followed by section must be refused at line with key. */
static void expect_error(const char *section, int line, const char *key, const char *problem)
{
    char text[4096];
    snprintf(text, sizeof text, "%s%s", RULES_TEXT, section);
    expect_rules_error(text, line, key, problem);
}

static void classify(const rd_config *cfg, const char *msg, int status, rd_classification *c)
{
    rd_tool_error e = {.message = msg, .message_len = strlen(msg), .http_status = status};
    rd_classify(&cfg->rules, NULL, "t", &e, c);
}

/* The answer's rule, tier, retryability, category and suggestion. */
static void assert_answer(const rd_classification *c, const char *rule, rd_tier tier,
                          rd_retryability retryability, rd_category category,
                          const char *suggestion)
{
    assert_string_equal(c->rule_id, rule);
    assert_int_equal(c->decided_by, tier);
    assert_int_equal(c->retryability, retryability);
    assert_int_equal(c->category, category);
    assert_string_equal(c->suggestion, suggestion);
}

static void test_a_marked_rule_takes_the_category_the_words_name(void **state)
{
    (void)state;
    char err[RD_CONFIG_ERR_MAX] = "";
    rd_config *cfg = load_rules(RULES_TEXT SECTION_HEAD
                                "    denied: [2.5, 0, 0, -1, 3, 0]\n"
                                "    later: [-2, 0.2, 0, 0, 0, 0]\n"
                                "    upstream: [-2, -1, 2, 0, 0, 0]\n",
                                err);
    if (!cfg)
        fail_msg("%s", err);
    assert_int_equal(rd_word_weights_size(cfg->rules.word_weights), 3);
    rd_classification c;
    /* marked: a 400 whose words name permission is a permission error,
     * with that category's suggestion, not the rule's own */
    classify(cfg, "access denied for this key", 400, &c);
    assert_answer(&c, "http.bad_request", RD_TIER_STRUCTURED, RD_PERMANENT, RD_CAT_PERMISSION,
                  "p");
    /* marked, words saying nothing clear: the rule's category and text */
    classify(cfg, "bad payload", 400, &c);
    assert_int_equal(c.category, RD_CAT_INPUT_VALIDATION);
    assert_string_equal(c.suggestion, "fix the request");
    /* not marked: the words are not read */
    classify(cfg, "upstream timed out", 503, &c);
    assert_int_equal(c.category, RD_CAT_EXTERNAL_SERVICE);
    classify(cfg, "access denied", 503, &c);
    assert_int_equal(c.category, RD_CAT_EXTERNAL_SERVICE);
    /* no rule: the words tier's answer is the weights' */
    classify(cfg, "access denied for this key", 0, &c);
    assert_answer(&c, "words", RD_TIER_WORDS, RD_PERMANENT, RD_CAT_PERMISSION, "p");
    classify(cfg, "upstream reset the stream", 0, &c);
    assert_string_equal(c.rule_id, "words");
    assert_int_equal(c.retryability, RD_TRANSIENT);
    assert_int_equal(c.category, RD_CAT_EXTERNAL_SERVICE);
    /* no rule, the words sure of transient but not of its category
     * (transient 0.55 against external_service): the likeliest, not
     * unknown, since the words decided */
    classify(cfg, "try later", 0, &c);
    assert_answer(&c, "words", RD_TIER_WORDS, RD_TRANSIENT, RD_CAT_TRANSIENT, "t");
    /* no rule and no known word: the unknown default */
    classify(cfg, "frobnicated twice", 0, &c);
    assert_answer(&c, "unknown", RD_TIER_DEFAULT, RD_TRANSIENT, RD_CAT_UNKNOWN, "u");
    rd_config_free(cfg);
    /* a rules file without the section: marked rules keep their category */
    cfg = load_rules(RULES_TEXT, err);
    if (!cfg)
        fail_msg("%s", err);
    assert_null(cfg->rules.word_weights);
    classify(cfg, "access denied for this key", 400, &c);
    assert_int_equal(c.category, RD_CAT_INPUT_VALIDATION);
    classify(cfg, "access denied for this key", 0, &c);
    assert_string_equal(c.rule_id, "unknown");
    rd_config_free(cfg);
}

/* A rule whose word carries its retryability less surely gives way to
 * the words when they make the other retryability likely and name its
 * category; an unmarked rule never does. */
static void test_a_marked_rule_gives_way_to_the_other_retryability(void **state)
{
    (void)state;
    char err[RD_CONFIG_ERR_MAX] = "";
    rd_config *cfg = load_rules(
        SUGGESTIONS_LINE
        "rules:\n"
        "  - id: text.weak_retry\n"
        "    when: {message: [retry]}\n"
        "    result: {retryability: transient, category: transient,\n"
        "             retryability_from_words: true, suggestion: try again}\n"
        "  - id: text.again\n"
        "    when: {message: [again]}\n"
        "    result: {retryability: transient, category: transient}\n" SECTION_HEAD
        "    denied: [2.5, 0, 0, -1, 3, 0]\n"
        "    upstream: [-2, -1, 2, 0, 0, 0]\n"
        "    vague: [2, 0, 0, 0, 0, 0]\n",
        err);
    if (!cfg)
        fail_msg("%s", err);
    rd_classification c;
    /* the words make permanent likely and name permission: theirs, with
     * that category's suggestion; the rule still names itself */
    classify(cfg, "retry refused: access denied", 0, &c);
    assert_answer(&c, "text.weak_retry", RD_TIER_MESSAGE, RD_PERMANENT, RD_CAT_PERMISSION, "p");
    /* the words agree with the rule: the rule's answer and text */
    classify(cfg, "retry later: upstream busy", 0, &c);
    assert_answer(&c, "text.weak_retry", RD_TIER_MESSAGE, RD_TRANSIENT, RD_CAT_TRANSIENT,
                  "try again");
    /* permanent is likely but no category is named: the rule stands */
    classify(cfg, "retry vague", 0, &c);
    assert_int_equal(c.retryability, RD_TRANSIENT);
    assert_string_equal(c.suggestion, "try again");
    /* no known word: the rule stands */
    classify(cfg, "retry soon", 0, &c);
    assert_int_equal(c.retryability, RD_TRANSIENT);
    /* not marked: the words are not read */
    classify(cfg, "again: access denied", 0, &c);
    assert_string_equal(c.rule_id, "text.again");
    assert_int_equal(c.retryability, RD_TRANSIENT);
    assert_int_equal(c.category, RD_CAT_TRANSIENT);
    rd_config_free(cfg);
    /* the key must be a boolean */
    cfg = load_rules(SUGGESTIONS_LINE "rules:\n"
                     "  - id: text.weak_retry\n"
                     "    when: {message: [retry]}\n"
                     "    result: {retryability: transient, category: transient,\n"
                     "             retryability_from_words: maybe}\n",
                     err);
    assert_null(cfg);
    if (!strstr(err, "rules[0].result.retryability_from_words"))
        fail_msg("got \"%s\"", err);
}

/* What a section needs after its transient side. */
#define REST "  permanent:\n    categories: [logic]\n    intercept: [0]\n  weights: {}\n"

static void test_section_errors_name_line_and_key(void **state)
{
    (void)state;
    expect_error("word_weights: [1]\n", 13, "word_weights", "expected a mapping");
    expect_error("word_weights:\n  min_probability: 0.6\n", 13, "word_weights",
                 "retryability is required");
    expect_error(SECTION_HEAD "    denied: [0, 0, -1, 3, 0]\n", 25, "word_weights.weights.denied",
                 "expected a list of 6 (the weight for permanent, the transient");
    expect_error(SECTION_HEAD "    denied: [1, 0, 0, -1, 3, x]\n", 25,
                 "word_weights.weights.denied[5]", "");
    expect_error(SECTION_HEAD "    Denied: [1, 0, 0, -1, 3, 0]\n", 25,
                 "word_weights.weights.Denied", "not a word");
    expect_error(SECTION_HEAD "    denied: [1, 0, 0, -1, 3, 0]\n    denied: [0, 0, 0, 0, 0, 0]\n",
                 26, "word_weights.weights.denied", "weighed twice");
    expect_error(SECTION_HEAD "    denied: [1, 0, 0, -1, 3, 0]\n  extra: 1\n", 26,
                 "word_weights.extra", "unknown key");
    expect_error(HEAD_TO_SIDES "  transient:\n"
                 "    categories: [transient, unknown]\n    intercept: [0, 0]\n" REST,
                 19, "word_weights.transient.categories[1]", "not one the words name");
    expect_error(HEAD_TO_SIDES "  transient:\n"
                 "    categories: [transient, transient]\n    intercept: [0, 0]\n" REST,
                 19, "word_weights.transient.categories[1]", "listed twice");
    expect_error(HEAD_TO_SIDES "  transient:\n"
                 "    categories: [transient, sideways]\n    intercept: [0, 0]\n" REST,
                 19, "word_weights.transient.categories[1]", "");
    expect_error(HEAD_TO_SIDES "  transient:\n"
                 "    categories: [transient]\n    intercept: [0, 0]\n" REST,
                 20, "word_weights.transient.intercept",
                 "expected a list of 1 (one per category)");
    expect_error("word_weights:\n  min_probability: 1.5\n"
                 "  retryability:\n    min_probability: 0.6\n    intercept: [0]\n"
                 "  transient:\n    categories: [transient]\n    intercept: [0]\n" REST,
                 14, "word_weights.min_probability", "");
    /* the retryability model's own keys */
    expect_error("word_weights:\n  min_probability: 0.6\n  retryability: 0.5\n"
                 "  transient:\n    categories: [transient]\n    intercept: [0]\n" REST,
                 15, "word_weights.retryability", "expected a mapping");
    expect_error("word_weights:\n  min_probability: 0.6\n  retryability:\n"
                 "    intercept: [0]\n"
                 "  transient:\n    categories: [transient]\n    intercept: [0]\n" REST,
                 16, "word_weights.retryability", "min_probability is required");
    expect_error("word_weights:\n  min_probability: 0.6\n  retryability:\n"
                 "    min_probability: 0.5\n    intercept: [0]\n"
                 "  transient:\n    categories: [transient]\n    intercept: [0]\n" REST,
                 16, "word_weights.retryability.min_probability", "must be above 0.5");
    expect_error("word_weights:\n  min_probability: 0.6\n  retryability:\n"
                 "    min_probability: 1.2\n    intercept: [0]\n"
                 "  transient:\n    categories: [transient]\n    intercept: [0]\n" REST,
                 16, "word_weights.retryability.min_probability", "");
    expect_error("word_weights:\n  min_probability: 0.6\n  retryability:\n"
                 "    min_probability: 0.6\n    intercept: [0, 1]\n"
                 "  transient:\n    categories: [transient]\n    intercept: [0]\n" REST,
                 17, "word_weights.retryability.intercept",
                 "expected a list of 1 (the log-odds of permanent)");
    expect_error("word_weights:\n  min_probability: 0.6\n  retryability:\n"
                 "    min_probability: 0.6\n    intercept: [0]\n    extra: 1\n"
                 "  transient:\n    categories: [transient]\n    intercept: [0]\n" REST,
                 18, "word_weights.retryability.extra", "unknown key");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hashed_words_are_the_tokenizers),
        cmocka_unit_test(test_words_choose_among_the_retryability_categories),
        cmocka_unit_test(test_weights_answer_a_message_no_rule_decided),
        cmocka_unit_test(test_a_repeated_word_weighs_once),
        cmocka_unit_test(test_model_refuses_what_no_weights_can_be),
        cmocka_unit_test_setup_teardown(test_a_marked_rule_takes_the_category_the_words_name,
                                        make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_a_marked_rule_gives_way_to_the_other_retryability,
                                        make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(test_section_errors_name_line_and_key, make_dir,
                                        remove_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
