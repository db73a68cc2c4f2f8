/* Latency-aware retries: the bucket model (domain/latency.h) and the
 * engine's use of it (engine/latency.c) over the in-memory store.
 * Configuration: tests/unit/fixtures/decide/ (hotel_search has the
 * alternative hotel_search_backup); a test switches `latency` on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/config.h"
#include "domain/latency.h"
#include "engine/decide.h"

#define FIXTURE RD_SOURCE_DIR "/tests/unit/fixtures/decide/recovery.yaml"
#include "engine_fixture.h"

static const rd_latency_policy ON = {.enabled = true, .window_ms = 60000, .min_samples = 5};

static void set_latency(rd_config *cfg, const char *tool_id, rd_latency_policy p)
{
    rd_tool_config *t = (rd_tool_config *)rd_config_find_tool(cfg, tool_id);
    assert_non_null(t);
    t->latency = p;
}

/* The manifests are shared with g_config: each test starts with the
 * setting off everywhere. */
static int latency_setup(void **state)
{
    for (size_t i = 0; i < g_config->n_tools; i++)
        g_config->tools[i].latency.enabled = false;
    return setup(state);
}

static void succeed_in(fixture *f, const char *tool_id, int64_t latency_ms, int times)
{
    for (int i = 0; i < times; i++) {
        rd_outcome_input in = {.tool_id = tool_id, .success = true, .latency_ms = latency_ms,
                               .attempt = 1, .turn_id = "", .outcome_id = "",
                               .permit_id = "", .executor_id = ""};
        rd_outcome_result r;
        if (rd_engine_record_outcome(&f->engine, &in, &f->ctx, &r, &f->st) != RD_OK)
            fail_msg("record: %s", f->st.msg);
    }
}

static rd_decision fail_with(fixture *f, const char *tool_id, int64_t remaining_ms)
{
    rd_tool_error err = {.message = "Connection reset by peer", .code = "",
                         .exception_type = "", .kind = RD_KIND_TRANSPORT_ERROR};
    err.message_len = strlen(err.message);
    rd_decide_input in = {.tool_id = tool_id, .error = &err, .attempt = 1, .turn_id = "",
                          .has_turn_remaining = true, .turn_remaining_ms = remaining_ms,
                          .executor_id = "", .outcome_id = "", .permit_id = ""};
    rd_decision d;
    if (rd_engine_decide(&f->engine, &in, &f->ctx, &d, &f->st) != RD_OK)
        fail_msg("decide: %s", f->st.msg);
    return d;
}

static void test_buckets_and_percentiles(void **state)
{
    (void)state;
    assert_int_equal(rd_latency_bucket(-5), 0);
    assert_int_equal(rd_latency_bucket(0), 0);
    assert_int_equal(rd_latency_bucket(1), 0);
    assert_int_equal(rd_latency_bucket(2), 1);
    for (size_t i = 0; i + 1 < RD_LATENCY_BUCKETS; i++) {
        int64_t bound = rd_latency_bucket_bound(i);
        assert_int_equal(rd_latency_bucket(bound), i);
        assert_int_equal(rd_latency_bucket(bound + 1), i + 1);
        if (i > 0) /* each bound at most ~25 % above the one before (or 2x at the small end) */
            assert_true(bound > rd_latency_bucket_bound(i - 1));
    }
    assert_int_equal(rd_latency_bucket(INT64_MAX), RD_LATENCY_BUCKETS - 1);
    rd_latency_hist h = {0};
    assert_int_equal(rd_latency_percentile(&h, 0.5), -1);
    for (int v = 1; v <= 100; v++)
        h.counts[rd_latency_bucket(v * 10)]++; /* 10 .. 1000 ms */
    assert_int_equal(rd_latency_total(&h), 100);
    assert_int_equal(rd_latency_percentile(&h, 0.5), 500);  /* 500 ms exactly a bound */
    assert_int_equal(rd_latency_percentile(&h, 0.9), 1000); /* 900 ms is in (800, 1000] */
    assert_int_equal(rd_latency_percentile(&h, 0.01), 10);
    assert_int_equal(rd_latency_percentile(&h, 1.0), 1000);
}

/* A retry whose delay plus the tool's p90 passes the turn: PARTIAL. */
static void test_slow_tool_answers_partial(void **state)
{
    fixture *f = *state;
    f->config.defaults.latency = ON; /* slow_api has no manifest */
    succeed_in(f, "slow_api", 3000, 10);
    rd_decision d = fail_with(f, "slow_api", 2000);
    assert_int_equal(d.action, RD_ACTION_PARTIAL);
    /* 3000 ms is in (2500, 3200]; the delay is 100 ms +- 10 % jitter. */
    assert_memory_equal(d.reason, "retry cannot finish before the turn deadline (", 46);
    assert_non_null(strstr(d.reason, " ms delay + 3200 ms p90 latency > 2000 ms left)"));
    /* With time enough the retry stands. */
    d = fail_with(f, "slow_api", 5000);
    assert_int_equal(d.action, RD_ACTION_RETRY);
}

static void test_too_few_samples_or_off_keeps_the_retry(void **state)
{
    fixture *f = *state;
    f->config.defaults.latency = ON;
    succeed_in(f, "new_api", 3000, 4); /* min_samples 5 */
    assert_int_equal(fail_with(f, "new_api", 2000).action, RD_ACTION_RETRY);
    succeed_in(f, "new_api", 3000, 1);
    assert_int_equal(fail_with(f, "new_api", 2000).action, RD_ACTION_PARTIAL);
    f->config.defaults.latency.enabled = false;
    assert_int_equal(fail_with(f, "new_api", 2000).action, RD_ACTION_RETRY);
}

static void test_alternative_whose_p90_fits(void **state)
{
    fixture *f = *state;
    set_latency(g_config, "hotel_search", ON);
    set_latency(g_config, "hotel_search_backup", ON);
    succeed_in(f, "hotel_search", 3000, 10);
    succeed_in(f, "hotel_search_backup", 120, 10);
    rd_decision d = fail_with(f, "hotel_search", 2000);
    assert_int_equal(d.action, RD_ACTION_USE_ALTERNATIVE);
    assert_string_equal(d.alternative_tool_id, "hotel_search_backup");
    assert_non_null(strstr(d.reason, "3200 ms p90 latency > 2000 ms left): using alternative"));

    /* An alternative as slow as the turn is short: PARTIAL. */
    succeed_in(f, "hotel_search_backup", 2400, 40);
    d = fail_with(f, "hotel_search", 2000);
    assert_int_equal(d.action, RD_ACTION_PARTIAL);
}

static rd_decision admit_now(fixture *f, const char *tool_id)
{
    rd_decide_input in = {.tool_id = tool_id, .turn_id = "", .executor_id = "",
                          .outcome_id = "", .permit_id = ""};
    rd_decision d;
    if (rd_engine_decide(&f->engine, &in, &f->ctx, &d, &f->st) != RD_OK)
        fail_msg("decide: %s", f->st.msg);
    return d;
}

static void test_timeout_follows_p99(void **state)
{
    fixture *f = *state;
    f->config.defaults.latency = ON;
    succeed_in(f, "timed_api", 900, 10); /* p99: 1000 (bucket (800, 1000]) */
    assert_int_equal(admit_now(f, "timed_api").timeout_ms, 30000); /* factor 0: off */
    f->config.defaults.latency.timeout_factor = 1.5;
    f->config.defaults.latency.timeout_min_ms = 100;
    assert_int_equal(admit_now(f, "timed_api").timeout_ms, 1500);
    assert_int_equal(fail_with(f, "timed_api", 100000).timeout_ms, 1500); /* RETRY too */
    f->config.defaults.latency.timeout_min_ms = 2000; /* never below the minimum */
    assert_int_equal(admit_now(f, "timed_api").timeout_ms, 2000);
    f->config.defaults.latency.timeout_factor = 100; /* never above the tool's timeout */
    assert_int_equal(admit_now(f, "timed_api").timeout_ms, 30000);
    succeed_in(f, "rare_api", 900, 4); /* below min_samples: the manifest's */
    assert_int_equal(admit_now(f, "rare_api").timeout_ms, 30000);
}

static void test_breaker_views_show_percentiles(void **state)
{
    fixture *f = *state;
    f->config.defaults.latency = ON;
    for (int v = 1; v <= 100; v++)
        succeed_in(f, "viewed_api", v * 10, 1);
    const char *ids[] = {"viewed_api", "quiet_api"};
    rd_breaker_view *views;
    size_t n;
    assert_int_equal(rd_engine_breakers(&f->engine, ids, 2, &f->ctx, &views, &n, &f->st), RD_OK);
    assert_int_equal(n, 2);
    assert_int_equal(views[0].latency_samples, 100);
    assert_int_equal(views[0].latency_p50_ms, 500);
    assert_int_equal(views[0].latency_p90_ms, 1000);
    assert_int_equal(views[0].latency_p99_ms, 1000);
    assert_int_equal(views[1].latency_samples, 0);
    assert_int_equal(views[1].latency_p90_ms, 0);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, latency_setup, teardown)
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buckets_and_percentiles),
        T(test_slow_tool_answers_partial),
        T(test_too_few_samples_or_off_keeps_the_retry),
        T(test_alternative_whose_p90_fits),
        T(test_breaker_views_show_percentiles),
        T(test_timeout_follows_p99),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
