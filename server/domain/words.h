/* The words tier: what an error no rule decides is weighed by the words of
 * its message against counts taken from labelled real messages (the
 * tuning split of tests/corpus), a naive Bayes model over which words a
 * message holds, with both labels of a pair taken as equally likely before
 * the words are read. It answers only when the words make one
 * retryability at least min_probability likely (0.9 shipped: nine times as
 * likely as the other); otherwise the unknown default stands
 * (docs/CLASSIFICATION.md, "The words tier").
 *
 * A word is a run of ASCII letters and digits that starts with a letter,
 * lower-cased, 2 to RD_WORD_MAX bytes; anything else separates words, so
 * "ECONNRESET: socket_hang-up" holds "econnreset", "socket", "hang", "up".
 * The counts are made with this same tokenizer (tests/unit/test_words.c
 * checks the shipped counts against the corpus), so it lives here once.
 *
 * Ownership: the model owns its words and counts; built once by the config
 * loader, then only read, by any number of threads. Plain C: no I/O. */
#ifndef RD_DOMAIN_WORDS_H
#define RD_DOMAIN_WORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "domain/types.h"

#define RD_WORDS_RULE_ID "words" /* the rule_id of its answers */
#define RD_WORD_MAX 48           /* longer runs are no word */
#define RD_WORD_DISTINCT_MAX 256 /* a message's distinct known words weighed */

/* The columns of every count, in this order: the two retryabilities, then
 * the six categories. */
enum {
    RD_WORD_COL_TRANSIENT,
    RD_WORD_COL_PERMANENT,
    RD_WORD_COL_CATEGORY, /* + (rd_category - RD_CAT_TRANSIENT) */
    RD_WORD_COLUMNS = RD_WORD_COL_CATEGORY + 6
};

/* Calls fn for each word of msg[0..len) in order, repeats included;
 * returns how many. fn may be NULL (counting only). */
typedef void (*rd_word_fn)(const char *word, size_t len, void *ctx);
size_t rd_words_each(const char *msg, size_t len, rd_word_fn fn, void *ctx);

/* A word of a message as rd_words_each finds it: where it starts, its
 * length, and rd_word_hash of it lower-cased. */
typedef struct rd_word_at {
    uint64_t hash;
    uint32_t start, len;
} rd_word_at;

/* Whether w[0..len) is exactly one word as rd_words_each gives it. */
bool rd_is_word(const char *w, size_t len);

/* The 64-bit hash of a word as rd_words_each gives it (lower-case). */
uint64_t rd_word_hash(const char *word, size_t len);

/* The words of msg[0..len) in order, repeats included, at most max of
 * them into out, hashed as they are read (no copies); how many. */
size_t rd_words_hashed(const char *msg, size_t len, rd_word_at *out, size_t max);

typedef struct rd_word_model rd_word_model;

/* messages[col]: how many labelled messages have that label (each message
 * one retryability and one category, so both halves sum to the same
 * total, which must be positive); smoothing > 0 is added to every count;
 * min_probability in (0.5, 1]. NULL when a value is out of range or
 * memory runs out. */
rd_word_model *rd_word_model_new(const uint32_t messages[RD_WORD_COLUMNS], double smoothing,
                                 double min_probability);

/* Adds a word (lower-case, as rd_words_each gives it) with how many of
 * the labelled messages of each column hold it (never more than that
 * column's messages). 0, or -1 when the word is not one rd_words_each
 * gives, is there already, a count is out of range or memory runs out;
 * *why then says which. */
int rd_word_model_add(rd_word_model *m, const char *word, size_t len,
                      const uint32_t counts[RD_WORD_COLUMNS], const char **why);

void rd_word_model_free(rd_word_model *m); /* NULL is fine */

size_t rd_word_model_size(const rd_word_model *m);
/* The messages of each column, as given to rd_word_model_new. */
const uint32_t *rd_word_model_messages(const rd_word_model *m);
/* The word's counts, NULL when it has none. */
const uint32_t *rd_word_model_counts(const rd_word_model *m, const char *word, size_t len);

/* The words' answer for msg: true with *retryability and *category when
 * the message holds known words and they give one retryability at least
 * the model's min_probability (*probability, when not NULL, receives it);
 * false otherwise. Safe on any bytes; no allocation. */
bool rd_words_decide(const rd_word_model *m, const char *msg, size_t len,
                     rd_retryability *retryability, rd_category *category, double *probability);

#endif
