/* Part of the store conformance suite (store_conformance.h, which
 * includes it): the breaker rules as the store applies and reports them
 * (transitions, probe tokens and epochs, permanent errors), reading a
 * breaker without creating one, listing every tool, and the ids a store
 * refuses. The half-open probe in detail is store_conformance_probe.h. */
#ifndef RD_TESTS_STORE_CONFORMANCE_BREAKERS_H
#define RD_TESTS_STORE_CONFORMANCE_BREAKERS_H

#include "store_conformance_fixture.h"

/* CLOSED -> OPEN -> HALF_OPEN (one probe) -> CLOSED, as the store reports it. */
static void conf_admit_record_transitions(void **state)
{
    rd_store_limits lim = conf_limits();
    rd_store *s = conf_make(state, &lim);

    rd_store_result r = conf_admit(s, "search", &conf_policy, 0);
    assert_int_equal(r.admission, RD_ADMIT_YES);
    assert_int_equal(r.transition, RD_TRANSITION_NONE);
    assert_int_equal(r.permit_token, 0);
    assert_int_equal(r.breaker.stored, RD_BREAKER_CLOSED);

    for (int i = 1; i <= 2; i++) {
        r = conf_record(s, "search", &conf_policy, 10 * i, RD_OUTCOME_TRANSIENT_FAILURE, 0);
        assert_int_equal(r.transition, RD_TRANSITION_NONE);
        assert_int_equal(r.breaker.consecutive_failures, i);
    }
    r = conf_record(s, "search", &conf_policy, 30, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    assert_int_equal(r.transition, RD_TRANSITION_OPENED);
    assert_int_equal(r.breaker.stored, RD_BREAKER_OPEN);
    assert_int_equal(r.breaker.opened_at_ms, 30);
    assert_int_equal(r.breaker.open_until_ms, 1030);
    assert_int_equal(r.breaker.opens_total, 1);

    r = conf_admit(s, "search", &conf_policy, 1029);
    assert_int_equal(r.admission, RD_ADMIT_NO);
    assert_int_equal(r.permit_token, 0);

    r = conf_admit(s, "search", &conf_policy, 1030);
    assert_int_equal(r.admission, RD_ADMIT_PROBE);
    assert_int_equal(r.transition, RD_TRANSITION_PROBE_GRANTED);
    assert_true(r.permit_token != 0);
    assert_int_equal(r.breaker.probe_token, r.permit_token);
    uint64_t permit = r.permit_token;

    r = conf_admit(s, "search", &conf_policy, 1031);
    assert_int_equal(r.admission, RD_ADMIT_NO);
    assert_int_equal(r.permit_token, 0);

    bool found;
    rd_breaker b = conf_get(s, "search", 1031, &found);
    assert_true(found);
    assert_int_equal(rd_breaker_status_at(&b, 1031), RD_BREAKER_HALF_OPEN);
    assert_true(rd_breaker_probe_live(&b, 1031));

    r = conf_record(s, "search", &conf_policy, 1040, RD_OUTCOME_SUCCESS, permit);
    assert_int_equal(r.transition, RD_TRANSITION_CLOSED);
    assert_int_equal(r.breaker.stored, RD_BREAKER_CLOSED);
    assert_int_equal(r.breaker.consecutive_failures, 0);
    assert_int_equal(conf_admit(s, "search", &conf_policy, 1041).admission, RD_ADMIT_YES);

    b = conf_get(s, "search", 1042, &found);
    assert_int_equal(b.stored, RD_BREAKER_CLOSED);
    assert_int_equal(b.opens_total, 1);
    rd_store_destroy(s);
}

/* A failed probe re-opens with a new epoch; the next probe gets a new token
 * and the old token is stale. */
static void conf_failed_probe_and_fresh_tokens(void **state)
{
    rd_store_limits lim = conf_limits();
    rd_store *s = conf_make(state, &lim);
    for (int i = 0; i < 3; i++)
        conf_record(s, "db", &conf_policy, 0, RD_OUTCOME_TRANSIENT_FAILURE, 0);

    uint64_t first = conf_admit(s, "db", &conf_policy, 1000).permit_token;
    assert_true(first != 0);
    rd_store_result r = conf_record(s, "db", &conf_policy, 1100,
                                    RD_OUTCOME_TRANSIENT_FAILURE, first);
    assert_int_equal(r.transition, RD_TRANSITION_REOPENED);
    assert_int_equal(r.breaker.open_until_ms, 2100);
    assert_int_equal(r.breaker.generation, 2);

    r = conf_admit(s, "db", &conf_policy, 2100);
    assert_int_equal(r.admission, RD_ADMIT_PROBE);
    assert_true(r.permit_token != 0 && r.permit_token != first);

    r = conf_record(s, "db", &conf_policy, 2110, RD_OUTCOME_SUCCESS, first);
    assert_int_equal(r.transition, RD_TRANSITION_NONE); /* stale token */
    assert_int_equal(r.breaker.stored, RD_BREAKER_OPEN);

    /* the lease ends unanswered: a new probe, with yet another token */
    uint64_t second = r.breaker.probe_token;
    r = conf_admit(s, "db", &conf_policy, 2100 + CONF_LEASE_MS);
    assert_int_equal(r.admission, RD_ADMIT_PROBE);
    assert_true(r.permit_token != 0 && r.permit_token != second);
    rd_store_destroy(s);
}

/* 003 3.4 and 7.2 through the store. */
static void conf_permanent_errors_reset_streak(void **state)
{
    rd_store_limits lim = conf_limits();
    rd_store *s = conf_make(state, &lim);
    conf_record(s, "api", &conf_policy, 1, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    conf_record(s, "api", &conf_policy, 2, RD_OUTCOME_PERMANENT_FAILURE, 0);
    rd_store_result r = conf_record(s, "api", &conf_policy, 3, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    assert_int_equal(r.breaker.consecutive_failures, 1);
    for (int i = 0; i < 5; i++)
        r = conf_record(s, "api", &conf_policy, 4, RD_OUTCOME_PERMANENT_FAILURE, 0);
    assert_int_equal(r.breaker.stored, RD_BREAKER_CLOSED);
    assert_int_equal(r.breaker.consecutive_failures, 0);
    rd_store_destroy(s);
}

static void conf_get_does_not_create(void **state)
{
    rd_store_limits lim = conf_limits();
    rd_store *s = conf_make(state, &lim);
    bool found = true;
    rd_breaker b = conf_get(s, "never_seen", 500, &found);
    assert_false(found);
    assert_int_equal(b.stored, RD_BREAKER_CLOSED);
    assert_int_equal(b.consecutive_failures, 0);
    assert_int_equal(b.probe_token, 0);
    assert_int_equal(conf_count_tools(s, 500), 0);
    conf_get(s, "never_seen", 600, &found);
    assert_false(found);

    conf_admit(s, "seen", &conf_policy, 700);
    conf_get(s, "seen", 700, &found);
    assert_true(found);
    assert_int_equal(conf_count_tools(s, 700), 1);
    rd_store_destroy(s);
}

typedef struct conf_seen {
    char names[200][16];
    size_t n;
    size_t open;
} conf_seen;

static int conf_collect_visit(void *ctx, const char *tool_id, const rd_breaker *b)
{
    conf_seen *seen = ctx;
    assert_true(seen->n < 200);
    snprintf(seen->names[seen->n++], sizeof seen->names[0], "%s", tool_id);
    seen->open += b->stored == RD_BREAKER_OPEN;
    return 0;
}

static int conf_stop_visit(void *ctx, const char *tool_id, const rd_breaker *b)
{
    (*(size_t *)ctx)++;
    return 1;
}

/* list() visits every tool once with its breaker; a visitor can stop it. */
static void conf_list_sees_all(void **state)
{
    rd_store_limits lim = conf_limits();
    rd_store *s = conf_make(state, &lim);
    rd_breaker_policy open_at_once = conf_policy;
    open_at_once.failure_threshold = 1;
    for (int i = 0; i < 150; i++) {
        char tool[16];
        snprintf(tool, sizeof tool, "tool_%03d", i);
        conf_record(s, tool, &open_at_once, i,
                    i % 3 == 0 ? RD_OUTCOME_TRANSIENT_FAILURE : RD_OUTCOME_SUCCESS, 0);
    }
    conf_seen *seen = calloc(1, sizeof *seen);
    rd_status st = {0};
    assert_int_equal(s->ops->list(s, 200, conf_collect_visit, seen, &st), RD_OK);
    assert_int_equal(seen->n, 150);
    assert_int_equal(seen->open, 50);
    for (int i = 0; i < 150; i++) {
        char tool[16];
        snprintf(tool, sizeof tool, "tool_%03d", i);
        size_t hits = 0;
        for (size_t k = 0; k < seen->n; k++)
            hits += strcmp(seen->names[k], tool) == 0;
        assert_int_equal(hits, 1);
    }
    free(seen);

    size_t visited = 0;
    assert_int_equal(s->ops->list(s, 200, conf_stop_visit, &visited, &st), RD_OK);
    assert_int_equal(visited, 1);
    rd_store_destroy(s);
}

static void conf_rejects_bad_ids(void **state)
{
    rd_store_limits lim = conf_limits();
    rd_store *s = conf_make(state, &lim);
    rd_store_result r;
    rd_status st = {0};
    assert_int_equal(s->ops->admit(s, "", &conf_policy, 0, 100, &r, &st), RD_ERR_INVALID);
    assert_non_null(strstr(st.msg, "tool_id"));

    char longest[RD_ID_MAX + 2];
    memset(longest, 'x', RD_ID_MAX);
    longest[RD_ID_MAX] = '\0';
    assert_int_equal(s->ops->admit(s, longest, &conf_policy, 0, 100, &r, &st), RD_OK);
    longest[RD_ID_MAX] = 'x';
    longest[RD_ID_MAX + 1] = '\0';
    assert_int_equal(s->ops->record(s, longest, &conf_policy, 0, RD_OUTCOME_SUCCESS, 0, &r, &st),
                     RD_ERR_INVALID);
    assert_non_null(strstr(st.msg, "tool_id"));

    bool dup;
    assert_int_equal(s->ops->claim_outcome(s, "", 0, &dup, &st), RD_ERR_INVALID);
    assert_non_null(strstr(st.msg, "outcome_id"));
    int64_t started;
    assert_int_equal(s->ops->turn_touch(s, longest, 0, &started, &st), RD_ERR_INVALID);
    assert_non_null(strstr(st.msg, "turn_id"));
    rd_store_destroy(s);
}

#endif
