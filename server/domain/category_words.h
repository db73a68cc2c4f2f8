/* Categories from words: for an answer whose retryability is decided (a
 * rule marked `category_from_words`, the words tier's own answer), the
 * category its message's words name, when they name one clearly.
 *
 * For each retryability, a multinomial logistic regression over which
 * words a message holds, fitted on the labelled messages of that
 * retryability (the tuning split of tests/corpus; the rules file's
 * `category_words:` section, written by scripts/category-words.py): a
 * category's score is its intercept plus the weights of the distinct
 * known words the message holds, the scores' softmax its probability.
 * Words are rd_words_each's (domain/words.h). A word is known by its
 * 64-bit hash alone, so an unknown word costs one probe of a table of
 * hashes and only a known one reads its weights (docs/CLASSIFICATION.md,
 * "Categories from words").
 *
 * Ownership: the model owns its table; built once by the config loader,
 * then only read, by any number of threads. Plain C: no I/O. */
#ifndef RD_DOMAIN_CATEGORY_WORDS_H
#define RD_DOMAIN_CATEGORY_WORDS_H

#include <stdbool.h>
#include <stddef.h>

#include "domain/types.h"

#define RD_CATEGORY_WORDS_PER_SIDE 6 /* the categories an answer can name */

/* One retryability's side: its n categories (distinct, none UNSPECIFIED
 * or UNKNOWN) and their intercepts (finite). */
typedef struct rd_category_side {
    size_t n;
    rd_category categories[RD_CATEGORY_WORDS_PER_SIDE];
    double intercept[RD_CATEGORY_WORDS_PER_SIDE];
} rd_category_side;

typedef struct rd_category_words rd_category_words;

/* sides[0] for transient answers, sides[1] for permanent ones, each with
 * at least one category; min_probability in (0, 1]. NULL with *why. */
rd_category_words *rd_category_words_new(double min_probability,
                                         const rd_category_side sides[2], const char **why);

/* Adds a word (lower-case, as rd_words_each gives it) with n weights
 * (the two sides' categories together, the transient side's first),
 * each finite and at most 1e6 in size. 0, or -1 with *why. */
int rd_category_words_add(rd_category_words *m, const char *word, size_t len,
                          const double *weights, size_t n, const char **why);

void rd_category_words_free(rd_category_words *m); /* NULL is fine */

size_t rd_category_words_size(const rd_category_words *m);

/* The words' category for an answer of this retryability: true with
 * *category (and *probability when not NULL) when the message holds known
 * words and the likeliest of that retryability's categories is at least
 * min_probability likely; false otherwise. Safe on any bytes; no
 * allocation. */
bool rd_category_words_decide(const rd_category_words *m, const char *msg, size_t len,
                              rd_retryability retryability, rd_category *category,
                              double *probability);

#endif
