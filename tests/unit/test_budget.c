/* Retry budgets (domain/budget.c, domain/window.c, the memory store's budget
 * operation and Decide's use of it), with an injected clock. */
#include "fleet_fixture.h"

#include "domain/budget.h"
#include "domain/window.h"

/* ---- the window ---- */

static void window_slides_bucket_by_bucket(void **state)
{
    rd_window w;
    rd_window_clear(&w);
    const int64_t W = 1000; /* buckets of 100 ms */
    uint32_t one[RD_WINDOW_FIELDS] = {1, 0, 2};
    uint64_t sum[RD_WINDOW_FIELDS];
    rd_window_add(&w, W, 5000, one);
    rd_window_add(&w, W, 5050, one);
    rd_window_add(&w, W, 5420, one);
    rd_window_sum(&w, W, 5420, sum);
    assert_int_equal(sum[0], 3);
    assert_int_equal(sum[2], 6);
    /* 5999 is still in the bucket of 5900: buckets 50..59 are counted */
    rd_window_sum(&w, W, 5999, sum);
    assert_int_equal(sum[0], 3);
    /* at 6000 bucket 50 (5000..5099) slides out; 54 stays */
    rd_window_sum(&w, W, 6000, sum);
    assert_int_equal(sum[0], 1);
    rd_window_sum(&w, W, 6400, sum);
    assert_int_equal(sum[0], 0);
    /* a slot reused by a newer bucket starts from zero */
    rd_window_add(&w, W, 7000, one);
    rd_window_sum(&w, W, 7000, sum);
    assert_int_equal(sum[0], 1);
}

static void window_tiny_span_still_counts(void **state)
{
    rd_window w;
    rd_window_clear(&w);
    uint32_t one[RD_WINDOW_FIELDS] = {1, 1, 1};
    uint64_t sum[RD_WINDOW_FIELDS];
    assert_int_equal(rd_window_width_ms(5), 1);
    rd_window_add(&w, 5, 100, one);
    rd_window_sum(&w, 5, 100, sum);
    assert_int_equal(sum[1], 1);
    rd_window_sum(&w, 5, 110, sum);
    assert_int_equal(sum[1], 0);
}

/* ---- arithmetic ---- */

static void allowance_is_the_larger_of_minimum_and_share(void **state)
{
    rd_retry_budget_policy p = {.enabled = true, .budget_percent = 20,
                                .min_retries_per_window = 10, .window_ms = 10000};
    assert_int_equal(rd_budget_allowance(&p, 0), 10);
    assert_int_equal(rd_budget_allowance(&p, 50), 10);
    assert_int_equal(rd_budget_allowance(&p, 100), 20);
    assert_int_equal(rd_budget_allowance(&p, 104), 20); /* 20.8 rounds down */
    assert_true(rd_budget_allows(&p, 100, 19));
    assert_false(rd_budget_allows(&p, 100, 20));
    p.min_retries_per_window = 0;
    assert_false(rd_budget_allows(&p, 4, 0)); /* 0.8 of a retry is none */
    assert_true(rd_budget_allows(&p, 5, 0));
}

static void throttle_probability_follows_the_sre_formula(void **state)
{
    assert_true(rd_throttle_probability(100, 100, 2.0) == 0.0);
    assert_true(rd_throttle_probability(0, 0, 2.0) == 0.0);
    double p = rd_throttle_probability(100, 10, 2.0); /* (100 - 20) / 101 */
    assert_true(p > 0.792 && p < 0.793);
}

/* ---- the store's budget operation ---- */

static rd_budget_result budget(rd_store *s, const rd_retry_budget_policy *p, int64_t now,
                               rd_budget_op op)
{
    rd_budget_result r;
    rd_status st = {0};
    assert_int_equal(s->ops->budget(s, "api", p, now, op, &r, &st), RD_OK);
    return r;
}

static void store_budget_counts_atomically_and_slides(void **state)
{
    rd_store_limits limits = {.tool_idle_ttl_ms = 60000, .turn_ttl_ms = 60000};
    rd_store *s = rd_store_memory_new(&limits);
    rd_retry_budget_policy p = {.enabled = true, .budget_percent = 50,
                                .min_retries_per_window = 1, .window_ms = 1000};
    assert_true(budget(s, &p, 0, RD_BUDGET_TAKE_RETRY).granted); /* the minimum */
    rd_budget_result r = budget(s, &p, 10, RD_BUDGET_TAKE_RETRY);
    assert_false(r.granted);
    assert_int_equal(r.retries, 1);
    for (int i = 0; i < 4; i++)
        r = budget(s, &p, 20, RD_BUDGET_COUNT_REQUEST);
    assert_int_equal(r.requests, 4);
    assert_true(budget(s, &p, 30, RD_BUDGET_PEEK).granted); /* 50 % of 4 = 2 > 1 */
    assert_int_equal(budget(s, &p, 30, RD_BUDGET_PEEK).retries, 1); /* peeking counts nothing */
    assert_true(budget(s, &p, 30, RD_BUDGET_TAKE_RETRY).granted);
    assert_false(budget(s, &p, 30, RD_BUDGET_TAKE_RETRY).granted);
    /* a window later everything has slid out */
    r = budget(s, &p, 1100, RD_BUDGET_PEEK);
    assert_int_equal(r.requests, 0);
    assert_int_equal(r.retries, 0);
    assert_true(r.granted);
    rd_status st = {0};
    assert_int_equal(s->ops->budget(s, "api", &p, 0, (rd_budget_op)9, &r, &st), RD_ERR_INVALID);
    assert_int_equal(s->ops->budget(s, "", &p, 0, RD_BUDGET_PEEK, &r, &st), RD_ERR_INVALID);
    rd_store_destroy(s);
}

/* ---- Decide with a budget ---- */

static void enable_budget(fleet *f, double percent, uint32_t min)
{
    f->config.defaults.retry_budget = (rd_retry_budget_policy){
        .enabled = true, .budget_percent = percent, .min_retries_per_window = min,
        .window_ms = 10000};
    f->config.defaults.breaker.failure_threshold = 1000; /* the budget, not the breaker */
}

static void exhausted_budget_gives_up_with_reason_and_event(void **state)
{
    fleet *f = *state;
    enable_budget(f, 20, 2);
    rd_tool_error e = fleet_error("Connection reset by peer");
    rd_decide_input in = fleet_input("api", &e, 1);
    assert_int_equal(fleet_decide(f, &in).action, RD_ACTION_RETRY);
    assert_int_equal(fleet_decide(f, &in).action, RD_ACTION_RETRY);
    rd_decision d = fleet_decide(f, &in);
    assert_int_equal(d.action, RD_ACTION_GIVE_UP);
    assert_string_equal(d.reason,
                        "retry budget exhausted (2 retries / 3 requests in the last 10000 ms)");
    bool gave_up = false;
    for (size_t i = 0; i < d.n_trace; i++)
        gave_up |= d.trace[i].type == RD_EV_GAVE_UP &&
                   strstr(d.trace[i].detail, "retry budget exhausted") != NULL;
    assert_true(gave_up);
    /* a window later the budget is back */
    f->ctx.now_ms += 10000;
    assert_int_equal(fleet_decide(f, &in).action, RD_ACTION_RETRY);
}

static void admissions_grow_the_budget(void **state)
{
    fleet *f = *state;
    enable_budget(f, 20, 2);
    rd_decide_input check = fleet_input("api", NULL, 0);
    for (int i = 0; i < 20; i++)
        assert_int_equal(fleet_decide(f, &check).action, RD_ACTION_PROCEED);
    rd_tool_error e = fleet_error("Connection reset by peer");
    rd_decide_input in = fleet_input("api", &e, 1);
    int retries = 0;
    while (fleet_decide(f, &in).action == RD_ACTION_RETRY)
        retries++;
    /* 20 admissions + n failed attempts: retries < 0.2 * (20 + n) gives 5 */
    assert_int_equal(retries, 5);
}

static void replayed_outcome_does_not_spend_the_budget(void **state)
{
    fleet *f = *state;
    enable_budget(f, 0, 1);
    rd_tool_error e = fleet_error("Connection reset by peer");
    rd_decide_input in = fleet_input("api", &e, 1);
    in.outcome_id = "o-1";
    assert_int_equal(fleet_decide(f, &in).action, RD_ACTION_RETRY);
    rd_decision replay = fleet_decide(f, &in);
    assert_true(replay.duplicate);
    assert_int_equal(replay.action, RD_ACTION_GIVE_UP); /* the one retry is spent... */
    in.outcome_id = "o-2";
    assert_int_equal(fleet_decide(f, &in).action, RD_ACTION_GIVE_UP); /* ...only once */
}

static void disabled_budget_changes_nothing(void **state)
{
    fleet *f = *state;
    f->config.defaults.breaker.failure_threshold = 1000;
    rd_tool_error e = fleet_error("Connection reset by peer");
    rd_decide_input in = fleet_input("api", &e, 1);
    for (int i = 0; i < 100; i++)
        assert_int_equal(fleet_decide(f, &in).action, RD_ACTION_RETRY);
}

int main(void)
{
    const struct CMUnitTest pure[] = {
        cmocka_unit_test(window_slides_bucket_by_bucket),
        cmocka_unit_test(window_tiny_span_still_counts),
        cmocka_unit_test(allowance_is_the_larger_of_minimum_and_share),
        cmocka_unit_test(throttle_probability_follows_the_sre_formula),
        cmocka_unit_test(store_budget_counts_atomically_and_slides),
    };
    const struct CMUnitTest engine[] = {
        cmocka_unit_test_setup_teardown(exhausted_budget_gives_up_with_reason_and_event,
                                        fleet_setup, fleet_teardown),
        cmocka_unit_test_setup_teardown(admissions_grow_the_budget, fleet_setup,
                                        fleet_teardown),
        cmocka_unit_test_setup_teardown(replayed_outcome_does_not_spend_the_budget,
                                        fleet_setup, fleet_teardown),
        cmocka_unit_test_setup_teardown(disabled_budget_changes_nothing, fleet_setup,
                                        fleet_teardown),
    };
    int failed = cmocka_run_group_tests_name("budget", pure, NULL, NULL);
    return failed + cmocka_run_group_tests_name("budget_decide", engine, fleet_group_setup,
                                                fleet_group_teardown);
}
