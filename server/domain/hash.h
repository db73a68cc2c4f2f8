/* The hash of a text for the process's own tables (the memory store's
 * shards and buckets, the per-tool metrics, the Redis store's local cache
 * and batches). Never stored or sent: it may change between releases, and
 * nothing outside the process may depend on its values. (The signature ids
 * of domain/signature.c are shared between replicas and keep their own,
 * fixed hash.)
 *
 * A tool id is hashed on every call, so the text is read eight bytes at a
 * step rather than one; each word is mixed in with a multiply and a shift,
 * and the result goes through MurmurHash3's 64-bit finaliser, so that its
 * high bits (a shard) and low bits (a bucket) both depend on every byte. */
#ifndef RD_DOMAIN_HASH_H
#define RD_DOMAIN_HASH_H

#include <stdint.h>
#include <string.h>

static inline uint64_t rd_hash_mix_word(uint64_t h, uint64_t word)
{
    h = (h ^ word) * 0x9E3779B97F4A7C15ULL;
    return h ^ (h >> 29);
}

/* MurmurHash3's 64-bit finaliser: every output bit depends on every input
 * bit. */
static inline uint64_t rd_hash_finish(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    return h ^ (h >> 33);
}

/* The last word of s[0..n) read eight bytes at a time: its last eight
 * bytes (overlapping the word before) when n >= 8, else its n bytes
 * zero-padded. */
static inline uint64_t rd_hash_last_word(const unsigned char *s, size_t n)
{
    uint64_t word = 0;
    if (n >= 8) {
        memcpy(&word, s + n - 8, sizeof word);
    } else {
        for (size_t k = 0; k < n; k++)
            word |= (uint64_t)s[k] << (8 * k);
    }
    return word;
}

static inline uint64_t rd_hash_word_as_is(uint64_t word) { return word; }

/* The hash of s[0..n), each eight-byte word passed through map first (a
 * table that finds names regardless of case folds them here). seed: any
 * value; a random one per table keeps the placement of keys unpredictable
 * from outside. map is a constant where this is inlined. */
static inline uint64_t rd_hash_bytes(const char *s, size_t n, uint64_t seed,
                                     uint64_t (*map)(uint64_t))
{
    const unsigned char *p = (const unsigned char *)s;
    uint64_t h = seed ^ ((uint64_t)n * 0xC2B2AE3D27D4EB4FULL);
    uint64_t word;
    size_t i = 0;
    for (; n - i >= 8; i += 8) {
        memcpy(&word, p + i, sizeof word);
        h = rd_hash_mix_word(h, map(word));
    }
    if (i < n)
        h = rd_hash_mix_word(h, map(rd_hash_last_word(p, n)));
    return rd_hash_finish(h);
}

/* s: NUL-terminated. */
static inline uint64_t rd_hash_text(const char *s, uint64_t seed)
{
    return rd_hash_bytes(s, strlen(s), seed, rd_hash_word_as_is);
}

#endif
