/* Word weights: what a message's words say of an error when its rule
 * leaves a question open or no rule decided it.
 *
 * - A rule marked `category_from_words` decides the retryability; the
 *   words name the category when they name one clearly
 *   (rd_word_weights_decide).
 * - A message no rule and no words-tier count decided takes the
 *   retryability its words make at least min_probability likely, and the
 *   likeliest of that retryability's categories
 *   (rd_word_weights_answer_named); when they make neither retryability
 *   that likely, the unknown default stands.
 * - A rule marked `retryability_from_words` gives way to that answer
 *   when it is the other retryability with a category named.
 *
 * Three logistic regressions over which words a message holds, fitted on
 * the tuning split of tests/corpus (the rules file's `word_weights:`
 * section, written by scripts/word-weights.py): one binary, for the
 * log-odds that the error is permanent, and one multinomial per
 * retryability over the categories that retryability takes. A score is
 * an intercept plus the weights of the distinct known words the message
 * holds; the softmax of the scores gives the probabilities. Words are
 * rd_words_each's (domain/words.h). A word is known by its 64-bit hash
 * alone, so an unknown word costs one probe of a table of hashes and only
 * a known one reads its weights (docs/CLASSIFICATION.md, "Word weights").
 *
 * Ownership: the model owns its table; built once by the config loader,
 * then only read, by any number of threads. Plain C: no I/O. */
#ifndef RD_DOMAIN_WORD_WEIGHTS_H
#define RD_DOMAIN_WORD_WEIGHTS_H

#include <stdbool.h>
#include <stddef.h>

#include "domain/types.h"

#define RD_WORD_WEIGHTS_PER_SIDE 6 /* the categories an answer can name */

/* One retryability's side: its n categories (distinct, none UNSPECIFIED
 * or UNKNOWN) and their intercepts (finite). */
typedef struct rd_category_side {
    size_t n;
    rd_category categories[RD_WORD_WEIGHTS_PER_SIDE];
    double intercept[RD_WORD_WEIGHTS_PER_SIDE];
} rd_category_side;

/* The binary model: the log-odds that an error is permanent before any
 * word is weighed (finite), and the least probability of the likelier
 * retryability for the words to answer, in (0.5, 1]: words that make
 * neither that likely (those every kind of message holds) leave the
 * unknown default. */
typedef struct rd_permanent_odds {
    double intercept;
    double min_probability;
} rd_permanent_odds;

typedef struct rd_word_weights rd_word_weights;

/* sides[0] for transient answers, sides[1] for permanent ones, each with
 * at least one category; min_probability (a category's) in (0, 1]. NULL
 * with *why. */
rd_word_weights *rd_word_weights_new(double min_probability, const rd_permanent_odds *odds,
                                     const rd_category_side sides[2], const char **why);

/* Adds a word (lower-case, as rd_words_each gives it) with n weights:
 * its weight in the log-odds of permanent, then the two sides'
 * categories' (the transient side's first), each finite and at most 1e6
 * in size. 0, or -1 with *why. */
int rd_word_weights_add(rd_word_weights *m, const char *word, size_t len,
                          const double *weights, size_t n, const char **why);

void rd_word_weights_free(rd_word_weights *m); /* NULL is fine */

size_t rd_word_weights_size(const rd_word_weights *m);

/* The words' category for an answer of this retryability: true with
 * *category (and *probability when not NULL) when the message holds known
 * words and the likeliest of that retryability's categories is at least
 * min_probability likely; false otherwise. Safe on any bytes; no
 * allocation. */
bool rd_word_weights_decide(const rd_word_weights *m, const char *msg, size_t len,
                              rd_retryability retryability, rd_category *category,
                              double *probability);

/* The answer for a message no rule decided: true when the message holds
 * known words that make one retryability at least the odds'
 * min_probability likely, with *retryability, *category (the one the
 * words name for it, as rd_word_weights_decide; RD_CAT_UNKNOWN when they
 * name none) and *permanent (the probability of permanent) when not
 * NULL. False otherwise, *retryability and *category untouched. Safe on
 * any bytes; no allocation. */
bool rd_word_weights_answer(const rd_word_weights *m, const char *msg, size_t len,
                            rd_retryability *retryability, rd_category *category,
                            double *permanent);

/* As rd_word_weights_answer, but when none of the retryability's
 * categories is min_probability likely, *category is the likeliest all
 * the same: the words tier's answer, whose retryability the words
 * decided, where `unknown` would never be right. */
bool rd_word_weights_answer_named(const rd_word_weights *m, const char *msg, size_t len,
                                  rd_retryability *retryability, rd_category *category);

#endif
