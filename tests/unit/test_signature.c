/* Learning from outcomes: signature normalisation, the verdict thresholds,
 * the memory store's records (LRU cap, expiry) and Decide / Classify /
 * RecordOutcome using them, with an injected clock. */
#include "fleet_fixture.h"

#include "domain/signature.h"

static void expect_normal(const char *in, const char *want)
{
    char out[RD_SIGNATURE_MAX + 1];
    rd_signature_normalise(in, strlen(in), out, sizeof out);
    assert_string_equal(out, want);
}

static void normalisation_examples(void **state)
{
    expect_normal("Connection to 10.0.0.12:5432 refused after 3 attempts",
                  "connection to <ip> refused after <n> attempts");
    expect_normal("Upstream db-7.internal.example.com:6379 timed out",
                  "upstream <host> timed out");
    expect_normal("localhost:8080 unreachable", "<host> unreachable");
    expect_normal("request 550e8400-e29b-41d4-a716-446655440000 failed",
                  "request <uuid> failed");
    expect_normal("object 0xdeadBEEF and commit 3f9a2c1d7e not found",
                  "object <hex> and commit <hex> not found");
    expect_normal("cannot open '/var/lib/app/data.db' (errno 13)",
                  "cannot open <str> (errno <n>)");
    expect_normal("cannot open /var/lib/app/data.db.", "cannot open <path>.");
    expect_normal("GET https://api.example.com/v1/users?id=42 returned 503",
                  "get <url> returned <n>");
    expect_normal("  Rate   limited:\tretry in 1.5 s  ", "rate limited: retry in <n> s");
    expect_normal("user \"alice\" can't write", "user <str> can't write");
    expect_normal("", "");
}

static void same_shape_same_signature_per_tool(void **state)
{
    rd_signature a, b, c;
    const char *m1 = "worker 12 crashed at 10:41:07";
    const char *m2 = "Worker 907 crashed at 23:02:55";
    rd_signature_of("api", m1, strlen(m1), &a);
    rd_signature_of("api", m2, strlen(m2), &b);
    rd_signature_of("other", m1, strlen(m1), &c);
    assert_string_equal(a.text, "api|worker <n> crashed at <n>:<n>:<n>");
    assert_string_equal(a.id, b.id);
    assert_string_not_equal(a.id, c.id);
    assert_int_equal(strlen(a.id), RD_SIGNATURE_ID_LEN);
}

static void verdict_thresholds(void **state)
{
    rd_learning_policy p = {.enabled = true, .min_samples = 20};
    assert_int_equal(rd_learned_retryability(&p, 19, 0), RD_RETRYABILITY_UNSPECIFIED);
    assert_int_equal(rd_learned_retryability(&p, 10, 10), RD_TRANSIENT);  /* 0.5 */
    assert_int_equal(rd_learned_retryability(&p, 2, 18), RD_PERMANENT);   /* 0.1 */
    assert_int_equal(rd_learned_retryability(&p, 3, 17), RD_RETRYABILITY_UNSPECIFIED);
    assert_int_equal(rd_learned_retryability(&p, 0, 0), RD_RETRYABILITY_UNSPECIFIED);
}

/* ---- the memory store ---- */

static rd_learn_stats stats(rd_store *s, const char *sig, int64_t now)
{
    rd_learn_stats out;
    rd_status st = {0};
    assert_int_equal(s->ops->learn_stats(s, "api", sig, now, &out, &st), RD_OK);
    return out;
}

static void link(rd_store *s, const char *l, const char *sig, rd_learn_settle settle,
                 int64_t now)
{
    rd_status st = {0};
    assert_int_equal(s->ops->learn_link(s, "api", l, sig, settle, now, &st), RD_OK);
}

static void store_settles_each_link_once_and_expires(void **state)
{
    rd_store_limits limits = {.turn_ttl_ms = 60000, .max_signatures = 10,
                              .signature_ttl_ms = 1000};
    rd_store *s = rd_store_memory_new(&limits);
    link(s, "turn-1", "00000000000000aa", RD_LEARN_KEEP, 0);
    link(s, "turn-1", "", RD_LEARN_SUCCEEDED, 10);
    link(s, "turn-1", "", RD_LEARN_SUCCEEDED, 20); /* nothing pending any more */
    assert_int_equal(stats(s, "00000000000000aa", 30).successes, 1);
    link(s, "turn-2", "00000000000000aa", RD_LEARN_KEEP, 40);
    link(s, "turn-2", "00000000000000bb", RD_LEARN_FAILED, 50); /* debit aa, now bb */
    rd_learn_stats a = stats(s, "00000000000000aa", 60);
    assert_int_equal(a.successes, 1);
    assert_int_equal(a.failures, 1);
    assert_int_equal(stats(s, "00000000000000aa", 1049).failures, 1);
    assert_int_equal(stats(s, "00000000000000aa", 1050).failures, 0); /* ttl passed */
    rd_status st = {0};
    rd_learn_stats out;
    assert_int_equal(s->ops->learn_link(s, "api", "", "x", RD_LEARN_KEEP, 0, &st),
                     RD_ERR_INVALID);
    assert_int_equal(s->ops->learn_stats(s, "api", "", 0, &out, &st), RD_ERR_INVALID);
    rd_store_destroy(s);
}

static void store_keeps_at_most_max_signatures(void **state)
{
    rd_store_limits limits = {.turn_ttl_ms = 60000, .max_signatures = 2,
                              .signature_ttl_ms = 100000};
    rd_store *s = rd_store_memory_new(&limits);
    const char *sigs[] = {"000000000000000a", "000000000000000b", "000000000000000c"};
    for (int i = 0; i < 3; i++) {
        link(s, "t", sigs[i], RD_LEARN_KEEP, i * 10);
        link(s, "t", "", RD_LEARN_SUCCEEDED, i * 10 + 1);
    }
    assert_int_equal(stats(s, sigs[0], 100).successes, 0); /* least recently used: gone */
    assert_int_equal(stats(s, sigs[1], 100).successes, 1);
    assert_int_equal(stats(s, sigs[2], 100).successes, 1);
    rd_store_destroy(s);
}

/* ---- through the engine ---- */

static void enable_learning(fleet *f)
{
    f->config.learning = (rd_learning_policy){
        .enabled = true, .min_samples = 4, .max_signatures = 100, .ttl_ms = 60000};
}

/* An error no rule of the fixture knows, different numbers each time. */
static rd_tool_error odd_error(char *buf, size_t cap, int i)
{
    snprintf(buf, cap, "zorglub engine stalled at step %d of %d", i, 100 + i);
    return fleet_error(buf);
}

static rd_classify_result classify(fleet *f, const rd_tool_error *e)
{
    rd_classify_result r;
    rd_arena_reset(&f->arena);
    assert_int_equal(rd_engine_classify(&f->engine, "api", e, &f->ctx, &r, &f->st), RD_OK);
    return r;
}

static void retries_that_succeed_teach_transient(void **state)
{
    fleet *f = *state;
    enable_learning(f);
    char buf[128];
    for (int i = 0; i < 4; i++) {
        char turn[32];
        snprintf(turn, sizeof turn, "turn-%d", i);
        rd_tool_error e = odd_error(buf, sizeof buf, i);
        rd_decide_input in = fleet_input("api", &e, 1);
        in.turn_id = turn;
        rd_decision d = fleet_decide(f, &in);
        assert_int_equal(d.action, RD_ACTION_RETRY);
        assert_string_equal(d.classification.classification.rule_id,
                            "unknown");
        rd_outcome_input ok = fleet_outcome("api", true, 2);
        ok.turn_id = turn;
        fleet_record(f, &ok);
    }
    rd_tool_error e = odd_error(buf, sizeof buf, 99);
    rd_classify_result r = classify(f, &e);
    assert_int_equal(r.classification.retryability, RD_TRANSIENT);
    assert_memory_equal(r.classification.rule_id, "learned:", 8);
    assert_int_equal(r.classification.decided_by, RD_TIER_LEARNED);
    assert_int_equal(strlen(r.classification.rule_id), 8 + RD_SIGNATURE_ID_LEN);
    assert_non_null(strstr(r.classification.suggestion, "4 earlier retries"));
    /* evidence expires: back to the rules' verdict */
    f->ctx.now_ms += 60000;
    r = classify(f, &e);
    assert_string_equal(r.classification.rule_id, "unknown");
    assert_int_equal(r.classification.decided_by, RD_TIER_DEFAULT);
}

static void retries_that_keep_failing_teach_permanent(void **state)
{
    fleet *f = *state;
    enable_learning(f);
    f->config.defaults.breaker.failure_threshold = 1000;
    char buf[128];
    /* one turn retrying 5 times: attempts 2..5 each debit the retry before */
    rd_decision d;
    for (uint32_t attempt = 1; attempt <= 5; attempt++) {
        rd_tool_error e = odd_error(buf, sizeof buf, (int)attempt);
        rd_decide_input in = fleet_input("api", &e, attempt);
        in.turn_id = "stubborn";
        d = fleet_decide(f, &in);
    }
    assert_int_equal(d.action, RD_ACTION_GIVE_UP); /* max attempts */
    rd_tool_error e = odd_error(buf, sizeof buf, 7);
    rd_decide_input in = fleet_input("api", &e, 1);
    in.turn_id = "next";
    d = fleet_decide(f, &in);
    assert_int_equal(d.classification.classification.retryability, RD_PERMANENT);
    assert_memory_equal(d.classification.classification.rule_id, "learned:", 8);
    assert_int_equal(d.action, RD_ACTION_ESCALATE);
}

static void learning_off_leaves_unknown_errors_alone(void **state)
{
    fleet *f = *state;
    char buf[128];
    for (int i = 0; i < 10; i++) {
        rd_tool_error e = odd_error(buf, sizeof buf, i);
        rd_decide_input in = fleet_input("api", &e, 1);
        in.turn_id = "t";
        fleet_decide(f, &in);
        rd_outcome_input ok = fleet_outcome("api", true, 2);
        ok.turn_id = "t";
        fleet_record(f, &ok);
    }
    rd_tool_error e = odd_error(buf, sizeof buf, 1);
    assert_string_equal(classify(f, &e).classification.rule_id, "unknown");
}

int main(void)
{
    const struct CMUnitTest pure[] = {
        cmocka_unit_test(normalisation_examples),
        cmocka_unit_test(same_shape_same_signature_per_tool),
        cmocka_unit_test(verdict_thresholds),
        cmocka_unit_test(store_settles_each_link_once_and_expires),
        cmocka_unit_test(store_keeps_at_most_max_signatures),
    };
    const struct CMUnitTest engine[] = {
        cmocka_unit_test_setup_teardown(retries_that_succeed_teach_transient, fleet_setup,
                                        fleet_teardown),
        cmocka_unit_test_setup_teardown(retries_that_keep_failing_teach_permanent,
                                        fleet_setup, fleet_teardown),
        cmocka_unit_test_setup_teardown(learning_off_leaves_unknown_errors_alone, fleet_setup,
                                        fleet_teardown),
    };
    int failed = cmocka_run_group_tests_name("signature", pure, NULL, NULL);
    return failed + cmocka_run_group_tests_name("signature_decide", engine, fleet_group_setup,
                                                fleet_group_teardown);
}
