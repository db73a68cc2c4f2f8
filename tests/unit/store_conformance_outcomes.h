/* Part of the store conformance suite (store_conformance.h, which
 * includes it): outcome ids, which let an outcome reported twice count
 * once: claimed once, remembered for outcome_ttl_ms, at most
 * max_outcomes of them. */
#ifndef RD_TESTS_STORE_CONFORMANCE_OUTCOMES_H
#define RD_TESTS_STORE_CONFORMANCE_OUTCOMES_H

#include "store_conformance_fixture.h"

static void conf_claim_outcome_dedup(void **state)
{
    rd_store_limits lim = conf_limits();
    rd_store *s = conf_make(state, &lim);
    assert_false(conf_claim(s, "out-1", 0));
    assert_true(conf_claim(s, "out-1", 1));
    assert_true(conf_claim(s, "out-1", 2));
    assert_false(conf_claim(s, "out-2", 3));
    assert_true(conf_claim(s, "out-2", 4));
    rd_store_destroy(s);
}

/* Remembered for outcome_ttl_ms from the first claim, then forgotten. */
static void conf_outcome_ttl_expiry(void **state)
{
    rd_store_limits lim = conf_limits();
    lim.outcome_ttl_ms = 1000;
    rd_store *s = conf_make(state, &lim);
    assert_false(conf_claim(s, "out", 0));
    assert_true(conf_claim(s, "out", 999)); /* a duplicate does not extend it */
    assert_false(conf_claim(s, "out", 1000));
    assert_true(conf_claim(s, "out", 1500));

    assert_false(conf_claim(s, "other", 1600));
    assert_int_equal(s->ops->evict(s, 2599), 1); /* "out" only */
    assert_true(conf_claim(s, "other", 2599));
    rd_store_destroy(s);
}

/* At max_outcomes the oldest id is forgotten first. */
static void conf_outcome_cap_drops_oldest(void **state)
{
    rd_store_limits lim = conf_limits();
    lim.max_outcomes = 3;
    rd_store *s = conf_make(state, &lim);
    assert_false(conf_claim(s, "a", 1));
    assert_false(conf_claim(s, "b", 2));
    assert_false(conf_claim(s, "c", 3));
    assert_false(conf_claim(s, "d", 4)); /* forgets a */
    assert_true(conf_claim(s, "b", 5));
    assert_true(conf_claim(s, "c", 5));
    assert_true(conf_claim(s, "d", 5));
    assert_false(conf_claim(s, "a", 6)); /* forgotten; now forgets b */
    assert_false(conf_claim(s, "b", 7));
    rd_store_destroy(s);
}

#endif
