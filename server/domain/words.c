/* The words tier (domain/words.h): the tokenizer, the model's table and
 * its naive Bayes answer. */
#include "domain/words.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static inline bool is_letter(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static inline bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

size_t rd_words_each(const char *msg, size_t len, rd_word_fn fn, void *ctx)
{
    const unsigned char *s = (const unsigned char *)msg;
    char word[RD_WORD_MAX];
    size_t n = 0, i = 0;
    while (i < len) {
        if (!is_letter(s[i])) {
            i++;
            continue;
        }
        size_t start = i;
        while (i < len && (is_letter(s[i]) || is_digit(s[i])))
            i++;
        size_t w = i - start;
        if (w < 2 || w > RD_WORD_MAX)
            continue;
        for (size_t k = 0; k < w; k++) {
            unsigned char c = s[start + k];
            word[k] = (char)(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
        }
        n++;
        if (fn)
            fn(word, w, ctx);
    }
    return n;
}

/* ---- the table ----
 *
 * Open addressing over a power-of-two array of slots, linear probing;
 * a slot holds an index into the entries plus one (0: empty). Each entry
 * keeps its counts, for tests and the checks of the loader, and the log
 * of each column's smoothed share, which is all a decision reads. */

typedef struct word_entry {
    char *word;
    size_t len;
    uint64_t hash;
    uint32_t counts[RD_WORD_COLUMNS];
    double log_share[RD_WORD_COLUMNS];
} word_entry;

struct rd_word_model {
    uint32_t messages[RD_WORD_COLUMNS];
    double smoothing, min_probability;
    word_entry *entries;
    size_t n_entries, cap_entries;
    uint32_t *slots;
    size_t n_slots; /* a power of two, at least twice n_entries */
};

/* A word's hash: its bytes packed eight at a time into 64-bit chunks,
 * each chunk mixed into the state by one multiplication, then the length
 * and a final mix (splitmix64's). Cheaper than a multiplication per byte;
 * the packing of a word's bytes (never 0) is one-to-one. */
#define HASH_SEED 0x9e3779b97f4a7c15ULL
#define HASH_MUL 0xbf58476d1ce4e5b9ULL

static inline uint64_t hash_chunk(uint64_t h, uint64_t chunk) { return (h ^ chunk) * HASH_MUL; }

static inline uint64_t hash_end(uint64_t h, uint64_t chunk, size_t len)
{
    h = hash_chunk(h, chunk) ^ (uint64_t)len;
    h ^= h >> 31;
    h *= 0x94d049bb133111ebULL;
    return h ^ (h >> 29);
}

uint64_t rd_word_hash(const char *w, size_t len)
{
    uint64_t h = HASH_SEED, chunk = 0;
    for (size_t i = 0; i < len; i++) {
        chunk = chunk << 8 | (unsigned char)w[i];
        if ((i & 7) == 7) {
            h = hash_chunk(h, chunk);
            chunk = 0;
        }
    }
    return hash_end(h, chunk, len);
}

/* Each byte folded to lower case when it may be in a word, 0 when it
 * separates words: the rule of is_letter and is_digit, as a table built
 * by the compiler (one load a byte where the words are read). */
#define FOLD(c)                                                                                \
    ((c) >= 'A' && (c) <= 'Z' ? (c) | 0x20                                                     \
     : ((c) >= 'a' && (c) <= 'z') || ((c) >= '0' && (c) <= '9') ? (c)                         \
                                                                  : 0)
#define FOLD4(c) FOLD(c), FOLD((c) + 1), FOLD((c) + 2), FOLD((c) + 3)
#define FOLD16(c) FOLD4(c), FOLD4((c) + 4), FOLD4((c) + 8), FOLD4((c) + 12)
#define FOLD64(c) FOLD16(c), FOLD16((c) + 16), FOLD16((c) + 32), FOLD16((c) + 48)
static const unsigned char FOLDED[256] = {FOLD64(0), FOLD64(64), FOLD64(128), FOLD64(192)};

static inline unsigned char fold_byte(unsigned char c) { return FOLDED[c]; }

size_t rd_words_hashed(const char *msg, size_t len, rd_word_at *out, size_t max)
{
    const unsigned char *s = (const unsigned char *)msg;
    size_t n = 0, i = 0;
    while (i < len && n < max) {
        unsigned char c = fold_byte(s[i]);
        if (c < 'a') { /* a separator, or a digit, which starts no word */
            i++;
            continue;
        }
        size_t start = i;
        uint64_t h = HASH_SEED, chunk = 0;
        unsigned packed = 0;
        do {
            chunk = chunk << 8 | c;
            if (++packed == 8) {
                h = hash_chunk(h, chunk);
                chunk = 0;
                packed = 0;
            }
            c = ++i < len ? fold_byte(s[i]) : 0;
        } while (c);
        size_t w = i - start;
        if (w >= 2 && w <= RD_WORD_MAX)
            out[n++] = (rd_word_at){.hash = hash_end(h, chunk, w), .start = (uint32_t)start,
                                    .len = (uint32_t)w};
    }
    return n;
}

rd_word_model *rd_word_model_new(const uint32_t messages[RD_WORD_COLUMNS], double smoothing,
                                 double min_probability)
{
    uint64_t retry_total = (uint64_t)messages[RD_WORD_COL_TRANSIENT] +
                           messages[RD_WORD_COL_PERMANENT];
    uint64_t category_total = 0;
    for (int col = RD_WORD_COL_CATEGORY; col < RD_WORD_COLUMNS; col++)
        category_total += messages[col];
    if (retry_total == 0 || retry_total != category_total || !(smoothing > 0) ||
        !isfinite(smoothing) || !(min_probability > 0.5) || !(min_probability <= 1.0))
        return NULL;
    rd_word_model *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    memcpy(m->messages, messages, sizeof m->messages);
    m->smoothing = smoothing;
    m->min_probability = min_probability;
    return m;
}

void rd_word_model_free(rd_word_model *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n_entries; i++)
        free(m->entries[i].word);
    free(m->entries);
    free(m->slots);
    free(m);
}

size_t rd_word_model_size(const rd_word_model *m) { return m ? m->n_entries : 0; }

const uint32_t *rd_word_model_messages(const rd_word_model *m) { return m->messages; }

/* The entry of the word at w[0..len), compared folded (a word of the
 * table folds to itself), or NULL. */
static const word_entry *find(const rd_word_model *m, const unsigned char *w, size_t len,
                              uint64_t h)
{
    if (!m->n_slots)
        return NULL;
    size_t mask = m->n_slots - 1;
    for (size_t at = (size_t)h & mask;; at = (at + 1) & mask) {
        uint32_t slot = m->slots[at];
        if (!slot)
            return NULL;
        const word_entry *e = &m->entries[slot - 1];
        if (e->hash == h && e->len == len) {
            size_t i = 0;
            while (i < len && (unsigned char)e->word[i] == fold_byte(w[i]))
                i++;
            if (i == len)
                return e;
        }
    }
}

const uint32_t *rd_word_model_counts(const rd_word_model *m, const char *word, size_t len)
{
    const word_entry *e =
        m ? find(m, (const unsigned char *)word, len, rd_word_hash(word, len)) : NULL;
    return e ? e->counts : NULL;
}

static void place(rd_word_model *m, size_t index)
{
    size_t mask = m->n_slots - 1;
    size_t at = (size_t)m->entries[index].hash & mask;
    while (m->slots[at])
        at = (at + 1) & mask;
    m->slots[at] = (uint32_t)(index + 1);
}

/* Keeps the slots at most half full. */
static bool grow_slots(rd_word_model *m)
{
    if (2 * (m->n_entries + 1) <= m->n_slots)
        return true;
    size_t n = m->n_slots ? 2 * m->n_slots : 1024;
    uint32_t *slots = calloc(n, sizeof *slots);
    if (!slots)
        return false;
    free(m->slots);
    m->slots = slots;
    m->n_slots = n;
    for (size_t i = 0; i < m->n_entries; i++)
        place(m, i);
    return true;
}

bool rd_is_word(const char *w, size_t len)
{
    if (len < 2 || len > RD_WORD_MAX || !(w[0] >= 'a' && w[0] <= 'z'))
        return false;
    for (size_t i = 1; i < len; i++)
        if (!((w[i] >= 'a' && w[i] <= 'z') || is_digit((unsigned char)w[i])))
            return false;
    return true;
}

int rd_word_model_add(rd_word_model *m, const char *word, size_t len,
                      const uint32_t counts[RD_WORD_COLUMNS], const char **why)
{
    if (!rd_is_word(word, len)) {
        *why = "not a word: 2 to 48 lower-case ASCII letters and digits, a letter first";
        return -1;
    }
    for (int col = 0; col < RD_WORD_COLUMNS; col++)
        if (counts[col] > m->messages[col]) {
            *why = "a count is larger than the messages of its column";
            return -1;
        }
    uint64_t h = rd_word_hash(word, len);
    if (find(m, (const unsigned char *)word, len, h)) {
        *why = "the word is counted twice";
        return -1;
    }
    *why = "out of memory";
    if (m->n_entries >= UINT32_MAX - 1 || !grow_slots(m))
        return -1;
    if (m->n_entries == m->cap_entries) {
        size_t cap = m->cap_entries ? 2 * m->cap_entries : 1024;
        word_entry *e = realloc(m->entries, cap * sizeof *e);
        if (!e)
            return -1;
        m->entries = e;
        m->cap_entries = cap;
    }
    word_entry *e = &m->entries[m->n_entries];
    e->word = malloc(len + 1);
    if (!e->word)
        return -1;
    memcpy(e->word, word, len);
    e->word[len] = '\0';
    e->len = len;
    e->hash = h;
    memcpy(e->counts, counts, sizeof e->counts);
    for (int col = 0; col < RD_WORD_COLUMNS; col++)
        e->log_share[col] = log(((double)counts[col] + m->smoothing) /
                                ((double)m->messages[col] + 2 * m->smoothing));
    place(m, m->n_entries++);
    return 0;
}

/* ---- the answer ---- */

bool rd_words_decide(const rd_word_model *m, const char *msg, size_t len,
                     rd_retryability *retryability, rd_category *category, double *probability)
{
    if (!m || !msg || !m->n_entries)
        return false;
    const unsigned char *s = (const unsigned char *)msg;
    const word_entry *seen[RD_WORD_DISTINCT_MAX];
    size_t n_seen = 0, at = 0;
    rd_word_at words[64];
    while (at < len && n_seen < RD_WORD_DISTINCT_MAX) {
        size_t n = rd_words_hashed(msg + at, len - at, words, 64);
        for (size_t k = 0; k < n && n_seen < RD_WORD_DISTINCT_MAX; k++) {
            const word_entry *e = find(m, s + at + words[k].start, words[k].len, words[k].hash);
            if (!e)
                continue;
            /* once each: the counts say how many messages hold a word, not
             * how often */
            size_t j = 0;
            while (j < n_seen && seen[j] != e)
                j++;
            if (j == n_seen)
                seen[n_seen++] = e;
        }
        if (n < 64)
            break; /* the rest of the message was read */
        at += words[n - 1].start + words[n - 1].len;
    }
    if (n_seen == 0)
        return false;
    /* No prior: how often each label occurs among the labelled messages
     * is not how often it occurs in any one deployment's errors, so only
     * the words weigh (each label equally likely before them). */
    double score[RD_WORD_COLUMNS] = {0};
    for (size_t k = 0; k < n_seen; k++)
        for (int col = 0; col < RD_WORD_COLUMNS; col++)
            score[col] += seen[k]->log_share[col];
    /* P(transient | words) from the two scores, without overflow */
    double p_transient =
        1.0 / (1.0 + exp(score[RD_WORD_COL_PERMANENT] - score[RD_WORD_COL_TRANSIENT]));
    double p = p_transient >= 0.5 ? p_transient : 1.0 - p_transient;
    if (p < m->min_probability)
        return false;
    int best = RD_WORD_COL_CATEGORY;
    for (int col = RD_WORD_COL_CATEGORY + 1; col < RD_WORD_COLUMNS; col++)
        if (score[col] > score[best])
            best = col;
    *retryability = p_transient >= 0.5 ? RD_TRANSIENT : RD_PERMANENT;
    *category = (rd_category)(RD_CAT_TRANSIENT + (best - RD_WORD_COL_CATEGORY));
    if (probability)
        *probability = p;
    return true;
}
