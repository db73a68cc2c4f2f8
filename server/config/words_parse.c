/* The rules file's `words:` section (domain/words.h): the counts the
 * words tier weighs an unknown error's message by; and its
 * `word_weights:` section, the weights by which the words choose a
 * retryability and a category. The shipped sections are written by scripts/word-counts.sh
 * and scripts/word-weights.py from the corpus; every value is checked
 * here, each error with its line. */
#include "config/words_parse.h"

#include <stdio.h>
#include <string.h>

#include "config/rules_parse.h"
#include "domain/err.h"

#define WORDS_MAX 200000 /* words one section may count */

/* A list of RD_WORD_COLUMNS counts, each 0..UINT32_MAX. */
static int parse_columns(const rd_yctx *c, const rd_ynode *node, const char *path,
                         uint32_t out[RD_WORD_COLUMNS])
{
    int rc = rd_yexpect(c, node, path, RD_YSEQ);
    if (rc != RD_OK)
        return rc;
    if (node->n != RD_WORD_COLUMNS)
        return rd_yerr(c, node->line, path,
                       "expected %d counts (transient, permanent, then the six categories), "
                       "got %zu",
                       RD_WORD_COLUMNS, node->n);
    for (size_t i = 0; i < node->n; i++) {
        char p[RD_YPATH_MAX];
        int64_t v;
        rc = rd_yscalar_int(c, node->items[i], rd_ypath_index(p, path, i), 0, UINT32_MAX, &v);
        if (rc != RD_OK)
            return rc;
        out[i] = (uint32_t)v;
    }
    return RD_OK;
}

static int parse_counts(const rd_yctx *c, const rd_ynode *counts, rd_word_model *m)
{
    int rc = rd_yexpect(c, counts, "words.counts", RD_YMAP);
    if (rc != RD_OK)
        return rc;
    if (counts->n > WORDS_MAX)
        return rd_yerr(c, counts->line, "words.counts", "more than %d words", WORDS_MAX);
    for (size_t i = 0; i < counts->n; i++) {
        const rd_ynode *key = counts->keys[i];
        char p[RD_YPATH_MAX];
        rd_ypath(p, "words.counts", key->text);
        uint32_t col[RD_WORD_COLUMNS];
        rc = parse_columns(c, counts->items[i], p, col);
        if (rc != RD_OK)
            return rc;
        const char *why = NULL;
        if (rd_word_model_add(m, key->text, key->len, col, &why) != 0)
            return rd_yerr(c, key->line, p, "%s", why);
    }
    return RD_OK;
}

/* A list of n numbers of at most 1e6 in size. */
static int parse_numbers(const rd_yctx *c, const rd_ynode *node, const char *path, size_t n,
                         const char *what, double *out)
{
    int rc = rd_yexpect(c, node, path, RD_YSEQ);
    if (rc != RD_OK)
        return rc;
    if (node->n != n)
        return rd_yerr(c, node->line, path, "expected a list of %zu (%s), got %zu", n, what,
                       node->n);
    for (size_t i = 0; i < node->n; i++) {
        char p[RD_YPATH_MAX];
        rc = rd_yscalar_double(c, node->items[i], rd_ypath_index(p, path, i), -1e6, 1e6,
                               &out[i]);
        if (rc != RD_OK)
            return rc;
    }
    return RD_OK;
}

/* One retryability's side: {categories: [names], intercept: [numbers]}. */
static int parse_side(const rd_yctx *c, const rd_ynode *map, const char *key,
                      rd_category_side *side)
{
    static const char *const keys[] = {"categories", "intercept", NULL};
    char path[RD_YPATH_MAX], p[RD_YPATH_MAX];
    rd_ypath(path, "word_weights", key);
    const rd_ynode *node = rd_ymap_get(map, key);
    if (!node)
        return rd_yerr(c, map->key_line, path, "is required");
    int rc = rd_yexpect(c, node, path, RD_YMAP);
    if (rc == RD_OK)
        rc = rd_ymap_check(c, node, path, keys);
    if (rc != RD_OK)
        return rc;
    const rd_ynode *list = rd_ymap_get(node, "categories");
    rd_ypath(p, path, "categories");
    if (!list)
        return rd_yerr(c, node->line, p, "is required");
    rc = rd_yexpect(c, list, p, RD_YSEQ);
    if (rc != RD_OK)
        return rc;
    if (list->n < 1 || list->n > RD_WORD_WEIGHTS_PER_SIDE)
        return rd_yerr(c, list->line, p, "needs one to %d categories, got %zu",
                       RD_WORD_WEIGHTS_PER_SIDE, list->n);
    side->n = list->n;
    for (size_t i = 0; i < list->n; i++) {
        char pi[RD_YPATH_MAX];
        rc = rd_parse_category(c, list->items[i], rd_ypath_index(pi, p, i),
                               &side->categories[i]);
        if (rc != RD_OK)
            return rc;
        if (side->categories[i] == RD_CAT_UNKNOWN)
            return rd_yerr(c, list->items[i]->line, pi,
                           "unknown is the default's category, not one the words name");
        for (size_t j = 0; j < i; j++)
            if (side->categories[j] == side->categories[i])
                return rd_yerr(c, list->items[i]->line, pi, "'%s' is listed twice",
                               list->items[i]->text);
    }
    rd_ypath(p, path, "intercept");
    const rd_ynode *intercept = rd_ymap_get(node, "intercept");
    if (!intercept)
        return rd_yerr(c, node->line, p, "is required");
    return parse_numbers(c, intercept, p, side->n, "one per category", side->intercept);
}

/* {min_probability: above 0.5, intercept: [log-odds]}. */
static int parse_odds(const rd_yctx *c, const rd_ynode *map, rd_permanent_odds *odds)
{
    static const char *const keys[] = {"min_probability", "intercept", NULL};
    const char *path = "word_weights.retryability";
    const rd_ynode *node = rd_ymap_get(map, "retryability");
    int rc = rd_yexpect(c, node, path, RD_YMAP);
    if (rc == RD_OK)
        rc = rd_ymap_check(c, node, path, keys);
    if (rc != RD_OK)
        return rc;
    for (const char *const *k = keys; *k; k++)
        if (!rd_ymap_get(node, *k))
            return rd_yerr(c, node->line, path, "%s is required", *k);
    rc = rd_yscalar_double(c, rd_ymap_get(node, "min_probability"),
                           "word_weights.retryability.min_probability", 0.5, 1.0,
                           &odds->min_probability);
    if (rc == RD_OK && odds->min_probability <= 0.5)
        rc = rd_yerr(c, rd_ymap_key_line(node, "min_probability"),
                     "word_weights.retryability.min_probability",
                     "must be above 0.5 (one retryability more likely than the other)");
    if (rc != RD_OK)
        return rc;
    return parse_numbers(c, rd_ymap_get(node, "intercept"), "word_weights.retryability.intercept",
                         1, "the log-odds of permanent", &odds->intercept);
}

int rd_word_weights_parse(const rd_yctx *c, const rd_ynode *root, rd_word_weights **out)
{
    *out = NULL;
    const rd_ynode *map = rd_ymap_get(root, "word_weights");
    if (!map)
        return RD_OK;
    static const char *const keys[] = {"min_probability", "retryability", "transient",
                                       "permanent", "weights", NULL};
    int rc = rd_yexpect(c, map, "word_weights", RD_YMAP);
    if (rc == RD_OK)
        rc = rd_ymap_check(c, map, "word_weights", keys);
    if (rc != RD_OK)
        return rc;
    for (const char *const *k = keys; *k; k++)
        if (!rd_ymap_get(map, *k))
            return rd_yerr(c, map->key_line, "word_weights", "%s is required", *k);
    double min_probability;
    rd_permanent_odds odds;
    rd_category_side sides[2];
    rc = rd_yscalar_double(c, rd_ymap_get(map, "min_probability"),
                           "word_weights.min_probability", 0.0, 1.0, &min_probability);
    if (rc == RD_OK)
        rc = parse_odds(c, map, &odds);
    if (rc == RD_OK)
        rc = parse_side(c, map, "transient", &sides[0]);
    if (rc == RD_OK)
        rc = parse_side(c, map, "permanent", &sides[1]);
    if (rc != RD_OK)
        return rc;
    const rd_ynode *weights = rd_ymap_get(map, "weights");
    rc = rd_yexpect(c, weights, "word_weights.weights", RD_YMAP);
    if (rc != RD_OK)
        return rc;
    if (weights->n > WORDS_MAX)
        return rd_yerr(c, weights->line, "word_weights.weights", "more than %d words",
                       WORDS_MAX);
    const char *why = NULL;
    rd_word_weights *m = rd_word_weights_new(min_probability, &odds, sides, &why);
    if (!m)
        return rd_yerr(c, map->key_line, "word_weights", "%s", why);
    size_t n = 1 + sides[0].n + sides[1].n;
    for (size_t i = 0; i < weights->n; i++) {
        const rd_ynode *key = weights->keys[i];
        char p[RD_YPATH_MAX];
        rd_ypath(p, "word_weights.weights", key->text);
        double w[1 + 2 * RD_WORD_WEIGHTS_PER_SIDE];
        rc = parse_numbers(c, weights->items[i], p, n,
                           "the weight for permanent, the transient categories', then the "
                           "permanent ones'",
                           w);
        if (rc == RD_OK && rd_word_weights_add(m, key->text, key->len, w, n, &why) != 0)
            rc = rd_yerr(c, key->line, p, "%s", why);
        if (rc != RD_OK) {
            rd_word_weights_free(m);
            return rc;
        }
    }
    *out = m;
    return RD_OK;
}

int rd_words_parse(const rd_yctx *c, const rd_ynode *root, rd_word_model **out)
{
    static const char *const keys[] = {"min_probability", "smoothing", "messages", "counts",
                                       NULL};
    *out = NULL;
    const rd_ynode *map = rd_ymap_get(root, "words");
    if (!map)
        return RD_OK;
    int rc = rd_yexpect(c, map, "words", RD_YMAP);
    if (rc == RD_OK)
        rc = rd_ymap_check(c, map, "words", keys);
    if (rc != RD_OK)
        return rc;
    for (const char *const *k = keys; *k; k++)
        if (!rd_ymap_get(map, *k))
            return rd_yerr(c, map->key_line, "words", "%s is required", *k);
    double min_probability, smoothing;
    uint32_t messages[RD_WORD_COLUMNS];
    rc = rd_yscalar_double(c, rd_ymap_get(map, "min_probability"), "words.min_probability",
                           0.5, 1.0, &min_probability);
    if (rc == RD_OK)
        rc = rd_yscalar_double(c, rd_ymap_get(map, "smoothing"), "words.smoothing", 1e-6, 1e6,
                               &smoothing);
    if (rc == RD_OK)
        rc = parse_columns(c, rd_ymap_get(map, "messages"), "words.messages", messages);
    if (rc != RD_OK)
        return rc;
    if (min_probability <= 0.5)
        return rd_yerr(c, rd_ymap_key_line(map, "min_probability"), "words.min_probability",
                       "must be above 0.5 (one retryability more likely than the other)");
    uint64_t retry = (uint64_t)messages[RD_WORD_COL_TRANSIENT] + messages[RD_WORD_COL_PERMANENT],
             category = 0;
    for (int col = RD_WORD_COL_CATEGORY; col < RD_WORD_COLUMNS; col++)
        category += messages[col];
    if (retry == 0 || retry != category)
        return rd_yerr(c, rd_ymap_key_line(map, "messages"), "words.messages",
                       "the two retryabilities count %llu messages and the six categories "
                       "%llu; each message has one of each, so they must be equal and above 0",
                       (unsigned long long)retry, (unsigned long long)category);
    rd_word_model *m = rd_word_model_new(messages, smoothing, min_probability);
    if (!m)
        return rd_yerr(c, map->key_line, "words", "out of memory");
    rc = parse_counts(c, rd_ymap_get(map, "counts"), m);
    if (rc != RD_OK) {
        rd_word_model_free(m);
        return rc;
    }
    *out = m;
    return RD_OK;
}
