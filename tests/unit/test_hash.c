/* The in-process text hash (domain/hash.h): what the memory store's shards
 * and buckets and the metrics' per-tool table rely on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "domain/hash.h"

#define SPREAD_KEYS 100000
#define SPREAD_BINS 256

/* The hash reads only the text: the same bytes at another address, with
 * other bytes after the NUL, hash the same. */
static void same_text_same_hash(void **state)
{
    (void)state;
    char a[64] = "search_web";
    char b[64];
    memset(b, 0x5A, sizeof b);
    memcpy(b + 3, "search_web", sizeof "search_web");
    assert_true(rd_hash_text(a, 7) == rd_hash_text(b + 3, 7));
    assert_true(rd_hash_text("", 7) == rd_hash_text("", 7));
}

/* Every byte counts, at every position of texts up to 40 bytes long
 * (the eight-byte words, the overlapping last word and the short tail). */
static void every_byte_changes_the_hash(void **state)
{
    (void)state;
    char text[41];
    for (size_t len = 1; len <= 40; len++) {
        for (size_t i = 0; i < len; i++)
            text[i] = (char)('a' + i % 26);
        text[len] = '\0';
        uint64_t base = rd_hash_text(text, 0);
        for (size_t i = 0; i < len; i++) {
            char saved = text[i];
            text[i] = (char)(saved ^ 0x01);
            assert_true(rd_hash_text(text, 0) != base);
            text[i] = saved;
        }
    }
}

/* A text and its own prefix, or a repetition of it, differ. */
static void length_counts(void **state)
{
    (void)state;
    assert_true(rd_hash_text("abcdefgh", 0) != rd_hash_text("abcdefghabcdefgh", 0));
    assert_true(rd_hash_text("tool", 0) != rd_hash_text("tool_", 0));
    assert_true(rd_hash_text("", 0) != rd_hash_text("a", 0));
}

static void seed_changes_placement(void **state)
{
    (void)state;
    assert_true(rd_hash_text("search_web", 1) != rd_hash_text("search_web", 2));
}

/* Ids that differ only in a counter (how fleets name their tools) spread
 * evenly over the low bits (buckets) and the high bits (shards). */
static void similar_ids_spread_evenly(void **state)
{
    (void)state;
    static unsigned low[SPREAD_BINS], high[SPREAD_BINS];
    memset(low, 0, sizeof low);
    memset(high, 0, sizeof high);
    char id[32];
    for (int i = 0; i < SPREAD_KEYS; i++) {
        snprintf(id, sizeof id, "mem-%d", i);
        uint64_t h = rd_hash_text(id, 0x1234);
        low[h & (SPREAD_BINS - 1)]++;
        high[h >> 56]++;
    }
    unsigned mean = SPREAD_KEYS / SPREAD_BINS; /* 390 */
    for (int b = 0; b < SPREAD_BINS; b++) {
        assert_in_range(low[b], mean * 8 / 10, mean * 12 / 10);
        assert_in_range(high[b], mean * 8 / 10, mean * 12 / 10);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(same_text_same_hash),
        cmocka_unit_test(every_byte_changes_the_hash),
        cmocka_unit_test(length_counts),
        cmocka_unit_test(seed_changes_placement),
        cmocka_unit_test(similar_ids_spread_evenly),
    };
    return cmocka_run_group_tests_name("hash", tests, NULL, NULL);
}
