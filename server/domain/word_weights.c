/* Word weights (domain/word_weights.h): the table of word hashes, their
 * weights, and the answers. */
#include "domain/word_weights.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "domain/words.h"

#define SIDE_MAX RD_WORD_WEIGHTS_PER_SIDE

/* A word's weights: per side, one per category (a side's unused columns
 * weigh 0, so a side's sums are added in one fixed width), and its weight
 * in the log-odds of permanent. */
typedef struct word_row {
    float sides[2][SIDE_MAX];
    float permanent;
} word_row;

/* Open addressing over a power-of-two array of hashes, linear probing,
 * kept at most half full; a slot's weights sit in a parallel array,
 * read only when the hash is there. A hash of 0 marks an empty slot, so
 * a word hashing to 0 is stored as 1 (and looked up the same way). */
struct rd_word_weights {
    rd_category_side sides[2];
    rd_permanent_odds odds;
    double min_probability;
    uint64_t *hashes;
    word_row *rows;
    size_t n_words, n_slots;
};

static uint64_t slot_key(uint64_t h) { return h ? h : 1; }

rd_word_weights *rd_word_weights_new(double min_probability, const rd_permanent_odds *odds,
                                     const rd_category_side sides[2], const char **why)
{
    if (!(min_probability > 0) || !(min_probability <= 1.0)) {
        *why = "the least probability must be above 0 and at most 1";
        return NULL;
    }
    if (!(odds->min_probability > 0.5) || !(odds->min_probability <= 1.0)) {
        *why = "the retryability's least probability must be above 0.5 and at most 1";
        return NULL;
    }
    if (!isfinite(odds->intercept)) {
        *why = "an intercept is not a finite number";
        return NULL;
    }
    for (int side = 0; side < 2; side++) {
        const rd_category_side *c = &sides[side];
        if (c->n < 1 || c->n > SIDE_MAX) {
            *why = "each retryability needs one to six categories";
            return NULL;
        }
        for (size_t k = 0; k < c->n; k++) {
            if (c->categories[k] <= RD_CAT_UNSPECIFIED || c->categories[k] >= RD_CAT_UNKNOWN) {
                *why = "a category is not one of the six an answer can name";
                return NULL;
            }
            for (size_t j = 0; j < k; j++)
                if (c->categories[j] == c->categories[k]) {
                    *why = "a category is listed twice";
                    return NULL;
                }
            if (!isfinite(c->intercept[k])) {
                *why = "an intercept is not a finite number";
                return NULL;
            }
        }
    }
    rd_word_weights *m = calloc(1, sizeof *m);
    if (!m) {
        *why = "out of memory";
        return NULL;
    }
    memcpy(m->sides, sides, sizeof m->sides);
    m->odds = *odds;
    m->min_probability = min_probability;
    return m;
}

void rd_word_weights_free(rd_word_weights *m)
{
    if (!m)
        return;
    free(m->hashes);
    free(m->rows);
    free(m);
}

size_t rd_word_weights_size(const rd_word_weights *m) { return m ? m->n_words : 0; }

/* The slot holding key, or the empty slot where it would go. */
static size_t probe(const rd_word_weights *m, uint64_t key)
{
    size_t mask = m->n_slots - 1, at = (size_t)key & mask;
    while (m->hashes[at] && m->hashes[at] != key)
        at = (at + 1) & mask;
    return at;
}

/* Doubles the slots when one more word would fill more than half. */
static bool grow(rd_word_weights *m)
{
    if (2 * (m->n_words + 1) <= m->n_slots)
        return true;
    size_t n = m->n_slots ? 2 * m->n_slots : 1024;
    rd_word_weights bigger = {.n_slots = n, .hashes = calloc(n, sizeof *m->hashes),
                              .rows = calloc(n, sizeof *m->rows)};
    if (!bigger.hashes || !bigger.rows) {
        free(bigger.hashes);
        free(bigger.rows);
        return false;
    }
    for (size_t i = 0; i < m->n_slots; i++)
        if (m->hashes[i]) {
            size_t at = probe(&bigger, m->hashes[i]);
            bigger.hashes[at] = m->hashes[i];
            bigger.rows[at] = m->rows[i];
        }
    free(m->hashes);
    free(m->rows);
    m->hashes = bigger.hashes;
    m->rows = bigger.rows;
    m->n_slots = n;
    return true;
}

int rd_word_weights_add(rd_word_weights *m, const char *word, size_t len,
                          const double *weights, size_t n, const char **why)
{
    if (!rd_is_word(word, len)) {
        *why = "not a word: 2 to 48 lower-case ASCII letters and digits, a letter first";
        return -1;
    }
    if (n != 1 + m->sides[0].n + m->sides[1].n) {
        *why = "not one weight for permanent and one for each category of the two "
               "retryabilities";
        return -1;
    }
    for (size_t k = 0; k < n; k++)
        if (!isfinite(weights[k]) || fabs(weights[k]) > 1e6) {
            *why = "a weight is not a finite number of at most 1e6";
            return -1;
        }
    uint64_t key = slot_key(rd_word_hash(word, len));
    if (m->n_slots && m->hashes[probe(m, key)]) {
        /* two words of one hash would be one word here; 64 bits make that
         * a collision no shipped section has */
        *why = "the word is weighed twice (or shares its 64-bit hash with another)";
        return -1;
    }
    if (!grow(m)) {
        *why = "out of memory";
        return -1;
    }
    size_t at = probe(m, key);
    m->hashes[at] = key;
    m->rows[at].permanent = (float)weights[0];
    for (size_t k = 0; k < m->sides[0].n; k++)
        m->rows[at].sides[0][k] = (float)weights[1 + k];
    for (size_t k = 0; k < m->sides[1].n; k++)
        m->rows[at].sides[1][k] = (float)weights[1 + m->sides[0].n + k];
    m->n_words++;
    return 0;
}

#define WORDS_READ 64 /* a message's words read at a time */
#define BOTH_SIDES 2     /* sum_words: both sides and the log-odds */

typedef struct word_sums {
    float sides[2][SIDE_MAX];
    float permanent;
} word_sums;

/* Adds the weights of the distinct known words of msg into *sums: one
 * side's (side 0 or 1), or with BOTH_SIDES both and the log-odds of
 * permanent. Returns how many known words it added. */
static size_t sum_words(const rd_word_weights *m, const char *msg, size_t len, int side,
                        word_sums *sums)
{
    /* each known word once: the weights are of which words a message
     * holds, not how often; a word's slot is looked for among those seen
     * only when its bit of `maybe_seen` is set */
    size_t seen[RD_WORD_DISTINCT_MAX], n_seen = 0, at = 0;
    uint64_t maybe_seen = 0;
    rd_word_at words[WORDS_READ];
    while (at < len && n_seen < RD_WORD_DISTINCT_MAX) {
        size_t n = rd_words_hashed(msg + at, len - at, words, WORDS_READ);
        for (size_t k = 0; k < n && n_seen < RD_WORD_DISTINCT_MAX; k++) {
            size_t slot = probe(m, slot_key(words[k].hash));
            if (!m->hashes[slot])
                continue;
            uint64_t bit = 1ULL << (slot & 63);
            if (maybe_seen & bit) {
                size_t j = 0;
                while (j < n_seen && seen[j] != slot)
                    j++;
                if (j < n_seen)
                    continue;
            }
            maybe_seen |= bit;
            seen[n_seen++] = slot;
            const word_row *row = &m->rows[slot];
            if (side == BOTH_SIDES) {
                sums->permanent += row->permanent;
                for (size_t col = 0; col < SIDE_MAX; col++) {
                    sums->sides[0][col] += row->sides[0][col];
                    sums->sides[1][col] += row->sides[1][col];
                }
            } else {
                for (size_t col = 0; col < SIDE_MAX; col++)
                    sums->sides[side][col] += row->sides[side][col];
            }
        }
        if (n < WORDS_READ)
            break; /* the rest of the message was read */
        at += words[n - 1].start + words[n - 1].len;
    }
    return n_seen;
}

/* The likeliest of a side's categories from its words' sums, when it is
 * at least min_probability likely. */
static bool likeliest_category(const rd_word_weights *m, int side, const word_sums *sums,
                               double min_probability, rd_category *category,
                               double *probability)
{
    const rd_category_side *c = &m->sides[side];
    double score[SIDE_MAX];
    for (size_t col = 0; col < c->n; col++)
        score[col] = c->intercept[col] + sums->sides[side][col];
    size_t best = 0;
    for (size_t col = 1; col < c->n; col++)
        if (score[col] > score[best])
            best = col;
    /* the softmax, each exp taken against the largest score so none
     * overflows */
    double sum = 0;
    for (size_t col = 0; col < c->n; col++)
        sum += exp(score[col] - score[best]);
    double p = 1.0 / sum;
    if (p < min_probability)
        return false;
    *category = c->categories[best];
    if (probability)
        *probability = p;
    return true;
}

bool rd_word_weights_decide(const rd_word_weights *m, const char *msg, size_t len,
                            rd_retryability retryability, rd_category *category,
                            double *probability)
{
    if (!m || !msg || !m->n_words ||
        (retryability != RD_TRANSIENT && retryability != RD_PERMANENT))
        return false;
    int side = retryability == RD_TRANSIENT ? 0 : 1;
    word_sums sums = {0};
    /* the intercepts alone say nothing of this message */
    return sum_words(m, msg, len, side, &sums) > 0 &&
           likeliest_category(m, side, &sums, m->min_probability, category, probability);
}

/* rd_word_weights_answer's work; the category is unknown when none of
 * the retryability's is category_min likely. */
static bool answer_with(const rd_word_weights *m, const char *msg, size_t len,
                        double category_min, rd_retryability *retryability,
                        rd_category *category, double *permanent)
{
    if (!m || !msg || !m->n_words)
        return false;
    word_sums sums = {0};
    if (sum_words(m, msg, len, BOTH_SIDES, &sums) == 0)
        return false;
    /* the logistic function, written so that exp never overflows */
    double odds = m->odds.intercept + sums.permanent;
    double p = odds >= 0 ? 1.0 / (1.0 + exp(-odds)) : exp(odds) / (1.0 + exp(odds));
    rd_retryability r;
    if (p >= m->odds.min_probability)
        r = RD_PERMANENT;
    else if (1.0 - p >= m->odds.min_probability)
        r = RD_TRANSIENT;
    else
        return false;
    *retryability = r;
    if (!likeliest_category(m, r == RD_TRANSIENT ? 0 : 1, &sums, category_min, category, NULL))
        *category = RD_CAT_UNKNOWN;
    if (permanent)
        *permanent = p;
    return true;
}

bool rd_word_weights_answer(const rd_word_weights *m, const char *msg, size_t len,
                            rd_retryability *retryability, rd_category *category,
                            double *permanent)
{
    return answer_with(m, msg, len, m ? m->min_probability : 1.0, retryability, category,
                       permanent);
}

bool rd_word_weights_answer_named(const rd_word_weights *m, const char *msg, size_t len,
                                  rd_retryability *retryability, rd_category *category)
{
    return answer_with(m, msg, len, 0.0, retryability, category, NULL);
}
