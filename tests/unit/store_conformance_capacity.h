/* Part of the store conformance suite (store_conformance.h, which
 * includes it): the bounds on what a store keeps: eviction of what no
 * longer carries information, and max_tools. */
#ifndef RD_TESTS_STORE_CONFORMANCE_CAPACITY_H
#define RD_TESTS_STORE_CONFORMANCE_CAPACITY_H

#include "store_conformance_fixture.h"

/* Many entries, the clock moves past every TTL, evict: only what still
 * carries information stays. */
static void conf_evict_keeps_memory_bounded(void **state)
{
    rd_store_limits lim = conf_limits(); /* every TTL 60 s */
    rd_store *s = conf_make(state, &lim);
    rd_breaker_policy open_at_once = conf_policy;
    open_at_once.failure_threshold = 1;
    rd_breaker_policy open_long = open_at_once;
    open_long.open_timeout_ms = 190000;
    char id[32];
    rd_status st = {0};
    int64_t started;

    for (int i = 0; i < 1000; i++) {
        snprintf(id, sizeof id, "idle_%d", i);
        conf_admit(s, id, &conf_policy, i);                 /* pristine */
        snprintf(id, sizeof id, "turn_%d", i);
        rd_trace_event e = conf_event(RD_EV_RETRY, "x", i);
        conf_append(s, id, &e, 1, i, &started);
        snprintf(id, sizeof id, "outcome_%d", i);
        conf_claim(s, id, i);
    }
    for (int i = 0; i < 50; i++) {                          /* open, ended long ago */
        snprintf(id, sizeof id, "was_open_%d", i);
        conf_record(s, id, &open_at_once, 0, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    }
    for (int i = 0; i < 10; i++) {                          /* streak, idle since */
        snprintf(id, sizeof id, "streak_%d", i);
        conf_record(s, id, &conf_policy, 0, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    }
    conf_record(s, "still_open", &open_long, 0, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    conf_admit(s, "recent", &conf_policy, 190000);
    s->ops->turn_touch(s, "recent_turn", 190000, &started, &st);
    conf_claim(s, "recent_outcome", 190000);
    assert_int_equal(conf_count_tools(s, 190000), 1062);

    size_t dropped = s->ops->evict(s, 200000);
    assert_int_equal(dropped, 1000 + 50 + 10 + 1000 + 1000);
    assert_int_equal(conf_count_tools(s, 200000), 2); /* still_open, recent */
    assert_int_equal(s->ops->evict(s, 200000), 0);

    bool found;
    conf_get(s, "still_open", 200000, &found);
    assert_true(found);
    conf_get(s, "streak_3", 200000, &found); /* an idle streak says nothing now */
    assert_false(found);
    conf_get(s, "was_open_7", 200000, &found);
    assert_false(found);
    conf_get(s, "idle_7", 200000, &found);
    assert_false(found);
    assert_false(conf_turn_exists(s, "turn_7", 200000));
    assert_true(conf_turn_exists(s, "recent_turn", 200000));
    assert_false(conf_claim(s, "outcome_7", 200000));
    assert_true(conf_claim(s, "recent_outcome", 200000));

    /* a forgotten tool starts over CLOSED */
    assert_int_equal(conf_admit(s, "was_open_7", &open_at_once, 200001).admission,
                     RD_ADMIT_YES);
    rd_store_destroy(s);
}

/* At max_tools, the least recently used CLOSED breaker makes room (a
 * failure streak is lost); OPEN and operator-held ones are kept, and a new
 * tool is refused only when nothing else is left. */
static void conf_max_tools_exhausted(void **state)
{
    rd_store_limits lim = conf_limits();
    lim.max_tools = 3;
    rd_store *s = conf_make(state, &lim);
    conf_record(s, "a", &conf_policy, 0, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    conf_record(s, "b", &conf_policy, 1, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    conf_record(s, "c", &conf_policy, 2, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    conf_record(s, "a", &conf_policy, 3, RD_OUTCOME_TRANSIENT_FAILURE, 0); /* b is LRU now */

    uint64_t displaced = rd_store_displaced_total();
    rd_store_result r = conf_admit(s, "d", &conf_policy, 4);
    assert_int_equal(r.admission, RD_ADMIT_YES);
    assert_int_equal(rd_store_displaced_total(), displaced + 1);
    bool found;
    conf_get(s, "b", 4, &found);
    assert_false(found);
    rd_breaker b = conf_get(s, "a", 4, &found);
    assert_true(found);
    assert_int_equal(b.consecutive_failures, 2);
    assert_int_equal(conf_count_tools(s, 4), 3);

    /* OPEN (a: third failure) and held (c, d) breakers are never displaced. */
    conf_record(s, "a", &conf_policy, 5, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    conf_force(s, "c", RD_FORCE_CLOSED, 5, 0);
    conf_force(s, "d", RD_FORCE_OPEN, 5, 0);
    rd_status st = {0};
    assert_int_equal(s->ops->admit(s, "e", &conf_policy, 6, 100, &r, &st), RD_ERR_EXHAUSTED);
    assert_int_equal(st.code, RD_ERR_EXHAUSTED);
    assert_non_null(strstr(st.msg, "tool_id"));
    assert_non_null(strstr(st.msg, "(3)"));
    assert_int_equal(s->ops->record(s, "e", &conf_policy, 6, RD_OUTCOME_TRANSIENT_FAILURE, 0,
                                    &r, &st),
                     RD_ERR_EXHAUSTED);
    conf_get(s, "e", 6, &found);
    assert_false(found);
    b = conf_get(s, "a", 6, &found);
    assert_true(found);
    assert_int_equal(rd_breaker_status_at(&b, 6), RD_BREAKER_OPEN);
    rd_store_destroy(s);
}

#endif
