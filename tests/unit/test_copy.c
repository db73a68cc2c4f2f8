/* rd_copy (core/copy.h): the inline copy of short texts that details,
 * reasons and answers are built from. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/copy.h"

#define MAX_LEN 160
#define GUARD 0xA5

/* Every length across each branch's edges (0, 1-3, 4-7, 8-15, 16-32,
 * 33-64, 65-128, and memcpy's beyond), at every alignment of source and destination: the bytes are
 * memcpy's, and nothing before or after the copy is touched. */
static void test_copies_every_length_and_alignment(void **state)
{
    (void)state;
    unsigned char src[MAX_LEN + 16], dst[MAX_LEN + 32], want[MAX_LEN + 32];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (unsigned char)(i * 7 + 1);
    for (size_t n = 0; n <= MAX_LEN; n++)
        for (size_t from = 0; from < 8; from++)
            for (size_t to = 0; to < 8; to++) {
                memset(dst, GUARD, sizeof dst);
                memset(want, GUARD, sizeof want);
                memcpy(want + 8 + to, src + from, n);
                rd_copy(dst + 8 + to, src + from, n);
                assert_memory_equal(dst, want, sizeof dst);
            }
}

/* A length of zero reads and writes nothing, even through NULL. */
static void test_zero_length_touches_nothing(void **state)
{
    (void)state;
    unsigned char dst[4] = {1, 2, 3, 4};
    rd_copy(dst, NULL, 0);
    rd_copy(dst + 1, "x", 0);
    assert_memory_equal(dst, ((unsigned char[]){1, 2, 3, 4}), 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copies_every_length_and_alignment),
        cmocka_unit_test(test_zero_length_touches_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
