/* Part of the store conformance suite (store_conformance.h, which
 * includes it): each tool's latency distribution over its last windows,
 * from which the engine takes the percentiles its timeouts use. */
#ifndef RD_TESTS_STORE_CONFORMANCE_LATENCY_H
#define RD_TESTS_STORE_CONFORMANCE_LATENCY_H

#include "store_conformance_fixture.h"

static rd_latency_hist conf_latency(rd_store *s, const char *tool, int64_t now_ms,
                                    int64_t sample_ms)
{
    rd_latency_hist h;
    memset(&h, 0xff, sizeof h); /* every count must be written */
    rd_status st = {0};
    assert_int_equal(s->ops->latency(s, tool, 1000, now_ms, sample_ms, &h, &st), RD_OK);
    return h;
}

static void conf_latency_windows(void **state)
{
    rd_store_limits lim = conf_limits();
    rd_store *s = conf_make(state, &lim);
    rd_latency_hist h = conf_latency(s, "slow_api", 10500, -1);
    assert_int_equal(rd_latency_total(&h), 0);
    assert_int_equal(rd_latency_percentile(&h, 0.9), -1);

    conf_latency(s, "slow_api", 10100, 5);
    conf_latency(s, "slow_api", 10200, 5);
    h = conf_latency(s, "slow_api", 10300, 300);
    assert_int_equal(rd_latency_total(&h), 3);
    assert_int_equal(h.counts[rd_latency_bucket(5)], 2);
    assert_int_equal(rd_latency_percentile(&h, 0.5), 5);
    assert_int_equal(rd_latency_percentile(&h, 0.9), 320); /* 300 ms is in (250, 320] */
    h = conf_latency(s, "other_api", 10300, -1);
    assert_int_equal(rd_latency_total(&h), 0); /* per tool */

    /* The next window still sees the previous one; the one after drops it. */
    h = conf_latency(s, "slow_api", 11900, -1);
    assert_int_equal(rd_latency_total(&h), 3);
    h = conf_latency(s, "slow_api", 11950, 40000);
    assert_int_equal(rd_latency_total(&h), 4);
    assert_int_equal(rd_latency_percentile(&h, 1.0), 40000);
    h = conf_latency(s, "slow_api", 12100, -1);
    assert_int_equal(rd_latency_total(&h), 1);
    h = conf_latency(s, "slow_api", 15000, -1);
    assert_int_equal(rd_latency_total(&h), 0);
    h = conf_latency(s, "slow_api", 15000, 3000000); /* past the last bound */
    assert_int_equal(rd_latency_percentile(&h, 0.5), RD_LATENCY_OVER_MS);

    rd_status st = {0};
    assert_int_equal(s->ops->latency(s, "slow_api", 0, 15000, 5, &h, &st), RD_ERR_INVALID);
    assert_int_equal(s->ops->latency(s, "", 1000, 15000, 5, &h, &st), RD_ERR_INVALID);
    rd_store_destroy(s);
}

#endif
