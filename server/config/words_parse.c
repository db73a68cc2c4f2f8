/* The rules file's `words:` section (domain/words.h): the counts the
 * words tier weighs an unknown error's message by. The shipped section is
 * written by scripts/word-counts.sh from the corpus; every value is
 * checked here, each error with its line. */
#include "config/words_parse.h"

#include <stdio.h>
#include <string.h>

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
