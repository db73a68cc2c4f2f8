/* Redis's clock between readings (store/redis_clock.h): the window a
 * reading gives a later round trip holds the server's true time whenever
 * in their round trips TIME and the commands ran, with the server's clock
 * drifting from the local one as fast as NTP lets it; the window is no
 * wider than the two round trips and that drift; a reading answers only
 * for its own connection, and for a second. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "store/redis_clock.h"

/* The server's clock in µs at local monotonic time t: an offset, running
 * faster or slower than the local clock by ppm. */
static int64_t server_at(int64_t t, int64_t offset, int64_t ppm)
{
    return offset + t + t * ppm / 1000000;
}

static void test_window_holds_the_true_time(void **state)
{
    (void)state;
    static const int conn;
    const int64_t offsets[] = {1700000000000000, 1700000000123457};
    const int64_t rates[] = {-500, 0, 500};
    for (size_t o = 0; o < 2; o++)
        for (size_t r = 0; r < 3; r++)
            for (int64_t time_at = 0; time_at <= 300; time_at += 150)      /* TIME ran at */
                for (int64_t later = 0; later < 1000000; later += 99991) { /* the trip's */
                    for (int64_t ran_at = 0; ran_at <= 400; ran_at += 200) {
                        /* TIME sent at 10 µs, answered at 310; the trip sent at
                         * 10 + later, answered 400 µs after */
                        rd_clock_reading c = {.conn = &conn,
                                              .server_us = server_at(10 + time_at, offsets[o],
                                                                     rates[r]),
                                              .sent_us = 10,
                                              .answered_us = 310};
                        int64_t sent = 310 + later, answered = sent + 400;
                        assert_true(rd_clock_reading_fresh(&c, &conn, sent));
                        int64_t lo, hi;
                        rd_clock_window(&c, sent, answered, &lo, &hi);
                        int64_t truth = server_at(sent + ran_at, offsets[o], rates[r]) / 1000;
                        assert_true(lo <= truth);
                        assert_true(truth <= hi);
                        /* both round trips, the drift allowed, a ms each end */
                        assert_true(hi - lo <= (300 + 400 + 2 * (answered - 10) / 1000) / 1000 + 3);
                    }
                }
}

static void test_reading_answers_for_its_connection_for_a_second(void **state)
{
    (void)state;
    static const int conn, other;
    rd_clock_reading none = {0};
    assert_false(rd_clock_reading_fresh(&none, NULL, 0));
    assert_false(rd_clock_reading_fresh(&none, &conn, 0));
    rd_clock_reading c = {.conn = &conn, .server_us = 5000000, .sent_us = 1000, .answered_us = 1200};
    assert_true(rd_clock_reading_fresh(&c, &conn, 1200));
    assert_true(rd_clock_reading_fresh(&c, &conn, 1200 + RD_CLOCK_READING_MAX_US - 1));
    assert_false(rd_clock_reading_fresh(&c, &conn, 1200 + RD_CLOCK_READING_MAX_US));
    assert_false(rd_clock_reading_fresh(&c, &other, 1300));
    assert_false(rd_clock_reading_fresh(&c, &conn, 1100)); /* before the reading came */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_window_holds_the_true_time),
        cmocka_unit_test(test_reading_answers_for_its_connection_for_a_second),
    };
    return cmocka_run_group_tests_name("redis_clock", tests, NULL, NULL);
}
