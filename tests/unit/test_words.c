/* The words tier (domain/words.h): its tokenizer, its answer, the
 * rules file's `words:` section and its errors, the tier in rd_classify,
 * and that the shipped counts are those of the corpus's tuning split.
 *
 * RD_WORD_COUNTS_WRITE=FILE writes the section the corpus gives into FILE
 * (scripts/word-counts.sh puts it into config/rules.yaml). */
#define _GNU_SOURCE
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "config/config.h"
#include "domain/classify.h"
#include "domain/words.h"
#include "corpus_files.h"
#include "corpus_reader.h"
#include "config_fixture.h"

/* How the shipped section is made: words held by at least this many
 * tuning messages, whose presence goes with the retryability or with the
 * category at the 5 % level of a chi-square test (one and five degrees
 * of freedom): words that every kind of message holds ("the", "is") are
 * left out, so a message of such words alone gets the unknown default.
 * The smoothing and the least probability the section states. */
#define MIN_MESSAGES_PER_WORD 2
#define CHI2_RETRYABILITY_5PCT 3.841
#define CHI2_CATEGORY_5PCT 11.070
#define SHIPPED_SMOOTHING 0.5
#define SHIPPED_MIN_PROBABILITY 0.9

/* ---- the tokenizer ---- */

typedef struct collected {
    char text[512];
    size_t n;
} collected;

static void collect(const char *w, size_t len, void *ctx)
{
    collected *c = ctx;
    size_t used = strlen(c->text);
    snprintf(c->text + used, sizeof c->text - used, "%s%.*s", used ? " " : "", (int)len, w);
    c->n++;
}

static void expect_words(const char *msg, const char *want)
{
    collected c = {.text = ""};
    size_t n = rd_words_each(msg, strlen(msg), collect, &c);
    assert_int_equal(n, c.n);
    assert_string_equal(c.text, want);
}

static void test_words_are_lower_case_letter_led_runs(void **state)
{
    (void)state;
    expect_words("ECONNRESET: socket_hang-up", "econnreset socket hang up");
    expect_words("HTTP 503 from api-v2, retry in 5s", "http from api v2 retry in");
    expect_words("x = 1; a b", "");                         /* one letter is no word */
    expect_words("caf\xc3\xa9 na\xefve", "caf na ve");       /* other bytes separate */
    expect_words("Error Error error", "error error error"); /* repeats kept */
    char long_run[64];
    memset(long_run, 'a', RD_WORD_MAX + 1);
    long_run[RD_WORD_MAX + 1] = '\0';
    expect_words(long_run, "");
    long_run[RD_WORD_MAX] = '\0';
    collected c = {.text = ""};
    assert_int_equal(rd_words_each(long_run, strlen(long_run), collect, &c), 1);
    assert_int_equal(rd_words_each("ab\0cd", 5, NULL, NULL), 2); /* NUL separates */
}

/* ---- the model ---- */

/* 10 messages: 4 transient (category transient), 6 permanent (4
 * input_validation, 2 permission). */
static rd_word_model *small_model(void)
{
    const uint32_t messages[RD_WORD_COLUMNS] = {4, 6, 4, 4, 0, 2, 0, 0};
    rd_word_model *m = rd_word_model_new(messages, 0.5, 0.7);
    assert_non_null(m);
    static const struct {
        const char *word;
        uint32_t counts[RD_WORD_COLUMNS];
    } words[] = {
        {"timeout", {4, 0, 4, 0, 0, 0, 0, 0}},
        {"invalid", {0, 4, 0, 4, 0, 0, 0, 0}},
        {"denied", {0, 2, 0, 0, 0, 2, 0, 0}},
        {"error", {2, 3, 2, 2, 0, 1, 0, 0}},
    };
    const char *why = NULL;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        assert_int_equal(rd_word_model_add(m, words[i].word, strlen(words[i].word),
                                           words[i].counts, &why),
                         0);
    return m;
}

static void test_model_answers_from_known_words_only(void **state)
{
    (void)state;
    rd_word_model *m = small_model();
    assert_int_equal(rd_word_model_size(m), 4);
    assert_int_equal(rd_word_model_counts(m, "invalid", 7)[RD_WORD_COL_PERMANENT], 4);
    assert_null(rd_word_model_counts(m, "valid", 5));
    rd_retryability r = RD_RETRYABILITY_UNSPECIFIED;
    rd_category c = RD_CAT_UNSPECIFIED;
    double p = 0;
    const char *msg = "Invalid value for field 'x'";
    assert_true(rd_words_decide(m, msg, strlen(msg), &r, &c, &p));
    assert_int_equal(r, RD_PERMANENT);
    assert_int_equal(c, RD_CAT_INPUT_VALIDATION);
    assert_true(p >= 0.7 && p < 1.0);
    /* case folds, and a word ends at any byte that is no letter or digit */
    double q = 0;
    msg = "\xffINVALID_value";
    assert_true(rd_words_decide(m, msg, strlen(msg), &r, &c, &q));
    assert_true(q == p);
    msg = "invalidity"; /* a longer word is another word */
    assert_false(rd_words_decide(m, msg, strlen(msg), &r, &c, NULL));
    msg = "Read TIMEOUT after 30s";
    assert_true(rd_words_decide(m, msg, strlen(msg), &r, &c, NULL));
    assert_int_equal(r, RD_TRANSIENT);
    assert_int_equal(c, RD_CAT_TRANSIENT);
    msg = "access denied";
    assert_true(rd_words_decide(m, msg, strlen(msg), &r, &c, NULL));
    assert_int_equal(c, RD_CAT_PERMISSION);
    /* no known word, or only words that say little: no answer */
    msg = "zzz qqq";
    assert_false(rd_words_decide(m, msg, strlen(msg), &r, &c, NULL));
    msg = "error";
    assert_false(rd_words_decide(m, msg, strlen(msg), &r, &c, NULL));
    assert_false(rd_words_decide(m, "", 0, &r, &c, NULL));
    assert_false(rd_words_decide(m, NULL, 5, &r, &c, NULL));
    assert_false(rd_words_decide(NULL, "timeout", 7, &r, &c, NULL));
    rd_word_model_free(m);
}

/* A word counts once however often the message repeats it: the counts
 * say how many messages hold a word. */
static void test_a_repeated_word_weighs_once(void **state)
{
    (void)state;
    rd_word_model *m = small_model();
    rd_retryability r;
    rd_category c;
    double once = 0, many = 0;
    const char *a = "error denied", *b = "error error error denied denied";
    assert_true(rd_words_decide(m, a, strlen(a), &r, &c, &once));
    assert_true(rd_words_decide(m, b, strlen(b), &r, &c, &many));
    assert_true(once == many);
    rd_word_model_free(m);
}

static void test_model_refuses_what_no_count_can_be(void **state)
{
    (void)state;
    const uint32_t messages[RD_WORD_COLUMNS] = {4, 6, 4, 4, 0, 2, 0, 0};
    const uint32_t unequal[RD_WORD_COLUMNS] = {4, 6, 4, 4, 0, 1, 0, 0};
    const uint32_t none[RD_WORD_COLUMNS] = {0};
    assert_null(rd_word_model_new(unequal, 0.5, 0.7));
    assert_null(rd_word_model_new(none, 0.5, 0.7));
    assert_null(rd_word_model_new(messages, 0, 0.7));
    assert_null(rd_word_model_new(messages, 0.5, 0.5));
    assert_null(rd_word_model_new(messages, 0.5, 1.5));
    rd_word_model *m = rd_word_model_new(messages, 0.5, 0.7);
    assert_non_null(m);
    const uint32_t ok[RD_WORD_COLUMNS] = {1, 0, 1, 0, 0, 0, 0, 0};
    const uint32_t too_many[RD_WORD_COLUMNS] = {5, 0, 4, 0, 0, 0, 0, 0};
    const char *why = NULL;
    assert_int_equal(rd_word_model_add(m, "Upper", 5, ok, &why), -1);
    assert_int_equal(rd_word_model_add(m, "9lives", 6, ok, &why), -1);
    assert_int_equal(rd_word_model_add(m, "a", 1, ok, &why), -1);
    assert_int_equal(rd_word_model_add(m, "two words", 9, ok, &why), -1);
    assert_int_equal(rd_word_model_add(m, "busy", 4, too_many, &why), -1);
    assert_non_null(strstr(why, "larger than"));
    assert_int_equal(rd_word_model_add(m, "busy", 4, ok, &why), 0);
    assert_int_equal(rd_word_model_add(m, "busy", 4, ok, &why), -1);
    assert_non_null(strstr(why, "twice"));
    rd_word_model_free(m);
    rd_word_model_free(NULL);
}

/* ---- the rules file's section ---- */


/* Lines 1 to 5; the words section starts at line 6. */
#define RULES_TEXT                                                                            \
    SUGGESTIONS_LINE                                                    /* 1 */                    \
    "rules:\n"                                                     /* 2 */                    \
    "  - id: http.rate_limited\n"                                  /* 3 */                    \
    "    when: {http_status: [429]}\n"                             /* 4 */                    \
    "    result: {retryability: transient, category: external_service}\n" /* 5 */

#define WORDS_HEAD                                                                            \
    "words:\n"                                                     /* 6 */                    \
    "  min_probability: 0.7\n"                                     /* 7 */                    \
    "  smoothing: 0.5\n"                                           /* 8 */                    \
    "  messages: [4, 6, 4, 4, 0, 2, 0, 0]\n"                       /* 9 */                    \
    "  counts:\n"                                                  /* 10 */

static rd_config *load_rules(const char *rules_text, char *err)
{
    return load_files(MAIN_MIN, rules_text, err);
}

/* RULES_TEXT followed by words_text must be refused at line with key. */
static void expect_error(const char *words_text, int line, const char *key, const char *problem)
{
    char text[2048];
    snprintf(text, sizeof text, "%s%s", RULES_TEXT, words_text);
    expect_rules_error(text, line, key, problem);
}

static void test_section_loads_and_decides_unknown_errors(void **state)
{
    (void)state;
    char err[RD_CONFIG_ERR_MAX] = "";
    rd_config *cfg = load_rules(RULES_TEXT
                                "words:\n"
                                "  min_probability: 0.7\n"
                                "  smoothing: 0.5\n"
                                "  messages: [4, 6, 4, 4, 0, 2, 0, 0]\n"
                                "  counts:\n"
                                "    invalid: [0, 4, 0, 4, 0, 0, 0, 0]\n"
                                "    \"no\": [0, 1, 0, 1, 0, 0, 0, 0]\n",
                                err);
    if (!cfg)
        fail_msg("%s", err);
    assert_int_equal(rd_word_model_size(cfg->rules.words), 2);
    assert_non_null(rd_word_model_counts(cfg->rules.words, "no", 2));
    rd_tool_error e = {.message = "invalid payload", .message_len = 15};
    rd_classification c;
    rd_classify(&cfg->rules, NULL, "t", &e, &c);
    assert_int_equal(c.decided_by, RD_TIER_WORDS);
    assert_string_equal(c.rule_id, RD_WORDS_RULE_ID);
    assert_int_equal(c.retryability, RD_PERMANENT);
    assert_int_equal(c.category, RD_CAT_INPUT_VALIDATION);
    /* a rule still outranks the words */
    e = (rd_tool_error){.message = "invalid payload", .message_len = 15, .http_status = 429};
    rd_classify(&cfg->rules, NULL, "t", &e, &c);
    assert_string_equal(c.rule_id, "http.rate_limited");
    /* no known word: the unknown default */
    e = (rd_tool_error){.message = "frobnicated", .message_len = 11};
    rd_classify(&cfg->rules, NULL, "t", &e, &c);
    assert_int_equal(c.decided_by, RD_TIER_DEFAULT);
    assert_int_equal(c.retryability, RD_TRANSIENT);
    assert_int_equal(c.category, RD_CAT_UNKNOWN);
    rd_config_free(cfg);
}

static void test_section_errors_name_line_and_key(void **state)
{
    (void)state;
    expect_error("words: [1, 2]\n", 6, "words", "expected a mapping");
    expect_error("words:\n  min_probability: 0.7\n", 6, "words", "smoothing is required");
    expect_error(WORDS_HEAD "    invalid: [0, 4, 0, 4, 0, 0, 0, 0]\n  extra: 1\n", 12,
                 "words.extra", "unknown key");
    expect_error("words:\n  min_probability: 0.5\n  smoothing: 0.5\n"
                 "  messages: [4, 6, 4, 4, 0, 2, 0, 0]\n  counts: {}\n",
                 7, "words.min_probability", "above 0.5");
    expect_error("words:\n  min_probability: 0.7\n  smoothing: -1\n"
                 "  messages: [4, 6, 4, 4, 0, 2, 0, 0]\n  counts: {}\n",
                 8, "words.smoothing", "");
    expect_error("words:\n  min_probability: 0.7\n  smoothing: 0.5\n"
                 "  messages: [4, 6, 4, 4, 0, 1, 0, 0]\n  counts: {}\n",
                 9, "words.messages", "must be equal");
    expect_error("words:\n  min_probability: 0.7\n  smoothing: 0.5\n"
                 "  messages: [4, 6, 4]\n  counts: {}\n",
                 9, "words.messages", "expected 8 counts");
    expect_error(WORDS_HEAD "    invalid: [0, 4, 0, 4, 0, 0, 0]\n", 11, "words.counts.invalid",
                 "expected 8 counts");
    expect_error(WORDS_HEAD "    invalid: [0, 9, 0, 4, 0, 0, 0, 0]\n", 11,
                 "words.counts.invalid", "larger than the messages");
    expect_error(WORDS_HEAD "    invalid: [0, -1, 0, 4, 0, 0, 0, 0]\n", 11,
                 "words.counts.invalid[1]", "");
    expect_error(WORDS_HEAD "    Invalid: [0, 4, 0, 4, 0, 0, 0, 0]\n", 11,
                 "words.counts.Invalid", "not a word");
    expect_error(WORDS_HEAD "    in valid: [0, 4, 0, 4, 0, 0, 0, 0]\n", 11,
                 "words.counts.in valid", "not a word");
}

static void test_no_rule_may_take_a_tier_name(void **state)
{
    (void)state;
    char err[RD_CONFIG_ERR_MAX] = "", prefix[PATH_MAX + 64];
    for (int i = 0; i < 3; i++) {
        const char *ids[] = {"words", "unknown", "unspecified"};
        char text[256];
        snprintf(text, sizeof text,
                 SUGGESTIONS_LINE "rules:\n  - id: %s\n    when: {http_status: [429]}\n"
                 "    result: {retryability: transient, category: transient}\n",
                 ids[i]);
        assert_null(load_rules(text, err));
        snprintf(prefix, sizeof prefix, "%s/rules.yaml:3: rules[0].id: ", g_dir);
        if (strncmp(err, prefix, strlen(prefix)) != 0 || !strstr(err, "reserved"))
            fail_msg("%s", err);
    }
}

/* ---- the shipped counts are the corpus's ---- */

typedef struct word_count {
    char word[RD_WORD_MAX + 1];
    uint32_t counts[RD_WORD_COLUMNS];
} word_count;

typedef struct counter {
    word_count *words; /* one per distinct word of one message, then merged */
    size_t n, cap;
    size_t message_start;
} counter;

static void add_word(const char *w, size_t len, void *ctx)
{
    counter *k = ctx;
    for (size_t i = k->message_start; i < k->n; i++)
        if (strlen(k->words[i].word) == len && memcmp(k->words[i].word, w, len) == 0)
            return; /* once per message */
    if (k->n == k->cap) {
        k->cap = k->cap ? 2 * k->cap : 4096;
        k->words = realloc(k->words, k->cap * sizeof *k->words);
        assert_non_null(k->words);
    }
    word_count *e = &k->words[k->n++];
    memset(e, 0, sizeof *e);
    memcpy(e->word, w, len);
}

static int by_word(const void *a, const void *b)
{
    return strcmp(((const word_count *)a)->word, ((const word_count *)b)->word);
}

/* Pearson's chi-square of the 2 x n table "holds the word or not" by the
 * labels of columns [first, first + n). */
static double chi2(const uint32_t *holding, const uint32_t *messages, int first, int n)
{
    double total = 0, with = 0;
    for (int col = first; col < first + n; col++) {
        total += messages[col];
        with += holding[col];
    }
    if (with == 0 || with == total)
        return 0;
    double sum = 0;
    for (int col = first; col < first + n; col++) {
        double expect_with = messages[col] * with / total;
        double expect_without = messages[col] - expect_with;
        double without = (double)messages[col] - holding[col];
        if (expect_with > 0)
            sum += (holding[col] - expect_with) * (holding[col] - expect_with) / expect_with;
        if (expect_without > 0)
            sum += (without - expect_without) * (without - expect_without) / expect_without;
    }
    return sum;
}

/* Counts of the words the section keeps from the tuning split, merged and
 * sorted, and the messages of each column. */
static size_t corpus_counts(word_count **out, uint32_t messages[RD_WORD_COLUMNS])
{
    counter k = {0};
    memset(messages, 0, RD_WORD_COLUMNS * sizeof messages[0]);
    for (int f = 0; f < N_CORPORA; f++) {
        rd_corpus corpus;
        char cerr[RD_CORPUS_ERR_MAX];
        if (rd_corpus_load(CORPUS_PATHS[f], &corpus, cerr, sizeof cerr) != RD_CORPUS_OK)
            fail_msg("%s", cerr);
        for (size_t i = 0; i < corpus.n_entries; i++) {
            const rd_corpus_entry *e = &corpus.entries[i];
            if (e->holdout)
                continue;
            int r = e->expect_retryability == RD_TRANSIENT ? RD_WORD_COL_TRANSIENT
                                                            : RD_WORD_COL_PERMANENT;
            int c = RD_WORD_COL_CATEGORY + (int)(e->expect_category - RD_CAT_TRANSIENT);
            assert_true(c >= RD_WORD_COL_CATEGORY && c < RD_WORD_COLUMNS);
            messages[r]++;
            messages[c]++;
            k.message_start = k.n;
            rd_words_each(e->message, e->message_len, add_word, &k);
            for (size_t w = k.message_start; w < k.n; w++)
                k.words[w].counts[r] = k.words[w].counts[c] = 1;
        }
        rd_corpus_free(&corpus);
    }
    qsort(k.words, k.n, sizeof *k.words, by_word);
    size_t n = 0;
    for (size_t i = 0; i < k.n; i++) {
        if (n && strcmp(k.words[n - 1].word, k.words[i].word) == 0) {
            for (int col = 0; col < RD_WORD_COLUMNS; col++)
                k.words[n - 1].counts[col] += k.words[i].counts[col];
        } else {
            k.words[n++] = k.words[i];
        }
    }
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (k.words[i].counts[RD_WORD_COL_TRANSIENT] + k.words[i].counts[RD_WORD_COL_PERMANENT] >=
                MIN_MESSAGES_PER_WORD &&
            (chi2(k.words[i].counts, messages, RD_WORD_COL_TRANSIENT, 2) >=
                 CHI2_RETRYABILITY_5PCT ||
             chi2(k.words[i].counts, messages, RD_WORD_COL_CATEGORY, 6) >= CHI2_CATEGORY_5PCT))
            k.words[kept++] = k.words[i];
    *out = k.words;
    return kept;
}

static void write_columns(FILE *f, const uint32_t *v)
{
    fputc('[', f);
    for (int col = 0; col < RD_WORD_COLUMNS; col++)
        fprintf(f, "%s%u", col ? ", " : "", v[col]);
    fputs("]\n", f);
}

/* YAML 1.1 reads these plain words as booleans or null. */
static bool needs_quotes(const char *w)
{
    static const char *const special[] = {"yes", "no", "on", "off", "true", "false", "null"};
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
        if (strcmp(w, special[i]) == 0)
            return true;
    return false;
}

static void write_section(const char *path, const word_count *words, size_t n,
                          const uint32_t messages[RD_WORD_COLUMNS])
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f,
            "# ---- words: written by scripts/word-counts.sh from the tuning split of\n"
            "# tests/corpus; edit the corpus, not this section ----\n"
            "# The words tier (docs/CLASSIFICATION.md, \"The words tier\") weighs the\n"
            "# message of an error no rule decides by these counts. Columns: the\n"
            "# retryabilities transient and permanent, then the categories transient,\n"
            "# input_validation, external_service, permission, logic, resource.\n"
            "# `messages`: the labelled messages of each column; a word's list: how many\n"
            "# of them hold the word. Kept: the words at least %d messages hold whose\n"
            "# presence goes with the retryability or the category (chi-square, 5 %%).\n"
            "words:\n"
            "  min_probability: %.2f\n"
            "  smoothing: %.2f\n"
            "  messages: ",
            MIN_MESSAGES_PER_WORD, SHIPPED_MIN_PROBABILITY, SHIPPED_SMOOTHING);
    write_columns(f, messages);
    fputs("  counts:\n", f);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, needs_quotes(words[i].word) ? "    \"%s\": " : "    %s: ", words[i].word);
        write_columns(f, words[i].counts);
    }
    assert_int_equal(fclose(f), 0);
}

static void test_shipped_counts_are_the_corpus_tuning_split(void **state)
{
    (void)state;
    word_count *words = NULL;
    uint32_t messages[RD_WORD_COLUMNS];
    size_t n = corpus_counts(&words, messages);
    const char *out = getenv("RD_WORD_COUNTS_WRITE");
    if (out && *out)
        write_section(out, words, n, messages);
    char err[RD_CONFIG_ERR_MAX] = "";
    rd_config *cfg = rd_config_load(RD_SOURCE_DIR "/config/recovery.yaml", err, sizeof err);
    if (!cfg)
        fail_msg("%s", err);
    const rd_word_model *m = cfg->rules.words;
    assert_non_null(m);
    size_t differ = 0;
    for (size_t i = 0; i < n; i++) {
        const uint32_t *have = rd_word_model_counts(m, words[i].word, strlen(words[i].word));
        if (!have || memcmp(have, words[i].counts, sizeof words[i].counts) != 0)
            differ++;
    }
    if (differ || rd_word_model_size(m) != n)
        fail_msg("config/rules.yaml's words section is not the corpus's (%zu of %zu words "
                 "differ, %zu shipped): run scripts/word-counts.sh BUILD_DIR",
                 differ, n, rd_word_model_size(m));
    if (memcmp(rd_word_model_messages(m), messages, sizeof messages) != 0)
        fail_msg("config/rules.yaml's words.messages is not the corpus's: run "
                 "scripts/word-counts.sh BUILD_DIR");
    rd_config_free(cfg);
    free(words);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_words_are_lower_case_letter_led_runs),
        cmocka_unit_test(test_model_answers_from_known_words_only),
        cmocka_unit_test(test_a_repeated_word_weighs_once),
        cmocka_unit_test(test_model_refuses_what_no_count_can_be),
        cmocka_unit_test_setup_teardown(test_section_loads_and_decides_unknown_errors, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(test_section_errors_name_line_and_key, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(test_no_rule_may_take_a_tier_name, make_dir, remove_dir),
        cmocka_unit_test(test_shipped_counts_are_the_corpus_tuning_split),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
