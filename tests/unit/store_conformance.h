/* The store conformance suite: the behaviour every rd_store backend owes
 * its callers, as cmocka tests parameterised by a factory.
 *
 * Use from a backend's test program (one program per backend, since the
 * tests are static functions defined here):
 *
 *     static rd_store_conformance memory = {.make = rd_store_memory_new};
 *     const struct CMUnitTest tests[] = { RD_STORE_CONFORMANCE_TESTS(&memory) };
 *
 * Every test makes its own store with the limits it needs and destroys it.
 * A backend whose data outlives the rd_store (Redis) must give each make()
 * a fresh namespace (key prefix) so tests do not see each other's keys.
 * Time is driven through now_ms; a backend with its own clock runs this
 * suite in a mode that honours the caller's time. */
#ifndef RD_TESTS_STORE_CONFORMANCE_H
#define RD_TESTS_STORE_CONFORMANCE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain/store.h"

typedef struct rd_store_conformance {
    /* Returns a new, empty store with these limits (NULL = test failure). */
    rd_store *(*make)(const rd_store_limits *limits);
} rd_store_conformance;

/* Generous limits; each test tightens the one it is about. */
static rd_store_limits conf_limits(void)
{
    return (rd_store_limits){
        .max_tools = 0,
        .tool_idle_ttl_ms = 60000,
        .turn_ttl_ms = 60000,
        .max_turns = 0,
        .max_events_per_turn = 1000,
        .outcome_ttl_ms = 60000,
        .max_outcomes = 0,
    };
}

static rd_store *conf_make(void **state, const rd_store_limits *limits)
{
    const rd_store_conformance *c = *state;
    rd_store *s = c->make(limits);
    assert_non_null(s);
    return s;
}

static const rd_breaker_policy conf_policy = {
    .failure_threshold = 3,
    .success_threshold = 1,
    .open_timeout_ms = 1000,
};

#define CONF_LEASE_MS 500

static rd_store_result conf_admit(rd_store *s, const char *tool, const rd_breaker_policy *p,
                                  int64_t now_ms)
{
    rd_store_result r;
    rd_status st = {0};
    memset(&r, 0xAB, sizeof r); /* the store must fill every field it reports */
    assert_int_equal(s->ops->admit(s, tool, p, now_ms, CONF_LEASE_MS, &r, &st), RD_OK);
    return r;
}

static rd_store_result conf_record(rd_store *s, const char *tool, const rd_breaker_policy *p,
                                   int64_t now_ms, rd_outcome outcome, uint64_t token)
{
    rd_store_result r;
    rd_status st = {0};
    assert_int_equal(s->ops->record(s, tool, p, now_ms, outcome, token, &r, &st), RD_OK);
    return r;
}

static rd_breaker conf_get(rd_store *s, const char *tool, int64_t now_ms, bool *found)
{
    rd_breaker b;
    rd_status st = {0};
    assert_int_equal(s->ops->get(s, tool, now_ms, &b, found, &st), RD_OK);
    return b;
}

static bool conf_claim(rd_store *s, const char *outcome_id, int64_t now_ms)
{
    bool duplicate = true;
    rd_status st = {0};
    assert_int_equal(s->ops->claim_outcome(s, outcome_id, now_ms, &duplicate, &st), RD_OK);
    return duplicate;
}

static bool conf_turn_exists(rd_store *s, const char *turn_id, int64_t now_ms)
{
    rd_trace_event *events = NULL;
    size_t n = 0;
    int64_t started = 0;
    rd_status st = {0};
    int rc = s->ops->turn_read(s, turn_id, now_ms, &events, &n, &started, &st);
    free(events);
    assert_true(rc == RD_OK || rc == RD_ERR_NOT_FOUND);
    return rc == RD_OK;
}

static rd_trace_event conf_event(rd_event_type type, const char *tool, int64_t at_ms)
{
    rd_trace_event e;
    memset(&e, 0, sizeof e);
    e.type = type;
    e.tool_id_len = (uint16_t)snprintf(e.tool_id, sizeof e.tool_id, "%s", tool);
    e.timestamp_ms = at_ms;
    return e;
}

static void conf_append(rd_store *s, const char *turn_id, rd_trace_event *events, size_t n,
                        int64_t now_ms, int64_t *started)
{
    rd_status st = {0};
    assert_int_equal(s->ops->turn_append(s, turn_id, events, n, now_ms, started, &st), RD_OK);
}

static int conf_count_visit(void *ctx, const char *tool_id, const rd_breaker *b)
{
    (*(size_t *)ctx)++;
    return 0;
}

static size_t conf_count_tools(rd_store *s, int64_t now_ms)
{
    size_t n = 0;
    rd_status st = {0};
    assert_int_equal(s->ops->list(s, now_ms, conf_count_visit, &n, &st), RD_OK);
    return n;
}

/* ---- breakers through the store ---- */

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

/* ---- outcome ids ---- */

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

/* ---- latency distributions ---- */

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

/* ---- turns ---- */

static void conf_turn_append_order_and_sequence(void **state)
{
    rd_store_limits lim = conf_limits();
    rd_store *s = conf_make(state, &lim);
    rd_trace_event first[3] = {
        conf_event(RD_EV_TOOL_ERROR, "flight_search", 100),
        conf_event(RD_EV_RETRY, "flight_search", 101),
        conf_event(RD_EV_TOOL_SUCCEEDED, "flight_search", 102),
    };
    int64_t started = -1;
    conf_append(s, "turn-1", first, 3, 100, &started);
    assert_int_equal(started, 100);
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(first[i].sequence, i + 1);

    rd_trace_event second[2] = {
        conf_event(RD_EV_CIRCUIT_OPENED, "hotel_search", 200),
        conf_event(RD_EV_SKIPPED, "compare_prices", 201),
    };
    /* An event of a call with a W3C trace context keeps its ids. */
    strcpy(second[0].trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
    strcpy(second[0].span_id, "00f067aa0ba902b7");
    conf_append(s, "turn-1", second, 2, 200, &started);
    assert_int_equal(started, 100);
    assert_int_equal(second[0].sequence, 4);
    assert_int_equal(second[1].sequence, 5);

    rd_trace_event other = conf_event(RD_EV_GAVE_UP, "x", 250);
    conf_append(s, "turn-2", &other, 1, 250, &started);
    assert_int_equal(other.sequence, 1); /* sequences are per turn */
    assert_int_equal(started, 250);

    rd_trace_event *events = NULL;
    size_t n = 0;
    rd_status st = {0};
    assert_int_equal(s->ops->turn_read(s, "turn-1", 300, &events, &n, &started, &st), RD_OK);
    assert_int_equal(n, 5);
    assert_int_equal(started, 100);
    const rd_event_type types[5] = {RD_EV_TOOL_ERROR, RD_EV_RETRY, RD_EV_TOOL_SUCCEEDED,
                                    RD_EV_CIRCUIT_OPENED, RD_EV_SKIPPED};
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(events[i].type, types[i]);
        assert_int_equal(events[i].sequence, i + 1);
        assert_int_equal(events[i].tool_id_len, strlen(events[i].tool_id));
        assert_int_equal(events[i].error_len, strlen(events[i].error));
        assert_int_equal(events[i].detail_len, strlen(events[i].detail));
    }
    assert_string_equal(events[4].tool_id, "compare_prices");
    assert_int_equal(events[3].timestamp_ms, 200);
    assert_string_equal(events[3].trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_string_equal(events[3].span_id, "00f067aa0ba902b7");
    assert_string_equal(events[4].trace_id, "");
    assert_string_equal(events[2].span_id, "");
    free(events);
    rd_store_destroy(s);
}

static void conf_turn_read_unknown(void **state)
{
    rd_store_limits lim = conf_limits();
    rd_store *s = conf_make(state, &lim);
    rd_trace_event sentinel;
    rd_trace_event *events = &sentinel; /* must be reset to NULL */
    size_t n = 99;
    int64_t started = 0;
    rd_status st = {0};
    assert_int_equal(s->ops->turn_read(s, "nope", 0, &events, &n, &started, &st),
                     RD_ERR_NOT_FOUND);
    assert_null(events);
    assert_int_equal(n, 0);
    assert_int_equal(st.code, RD_ERR_NOT_FOUND);
    assert_non_null(strstr(st.msg, "turn_id"));
    rd_store_destroy(s);
}

/* Events past max_events_per_turn are dropped (sequence 0), the rest kept. */
static void conf_turn_events_cap(void **state)
{
    rd_store_limits lim = conf_limits();
    lim.max_events_per_turn = 4;
    rd_store *s = conf_make(state, &lim);
    rd_trace_event batch[3];
    for (int i = 0; i < 3; i++)
        batch[i] = conf_event(RD_EV_RETRY, "t", i);
    conf_append(s, "turn", batch, 3, 0, NULL);
    for (int i = 0; i < 3; i++)
        batch[i] = conf_event(RD_EV_GAVE_UP, "t", 10 + i);
    conf_append(s, "turn", batch, 3, 10, NULL);
    assert_int_equal(batch[0].sequence, 4);
    assert_int_equal(batch[1].sequence, 0);
    assert_int_equal(batch[2].sequence, 0);

    rd_trace_event *events;
    size_t n;
    int64_t started;
    rd_status st = {0};
    assert_int_equal(s->ops->turn_read(s, "turn", 20, &events, &n, &started, &st), RD_OK);
    assert_int_equal(n, 4);
    assert_int_equal(events[3].type, RD_EV_GAVE_UP);
    assert_int_equal(events[3].timestamp_ms, 10);
    free(events);
    rd_store_destroy(s);
}

/* started_at is when the turn was first seen, whatever happens later. */
static void conf_turn_touch_keeps_started_at(void **state)
{
    rd_store_limits lim = conf_limits();
    rd_store *s = conf_make(state, &lim);
    int64_t started = 0;
    rd_status st = {0};
    assert_int_equal(s->ops->turn_touch(s, "turn", 100, &started, &st), RD_OK);
    assert_int_equal(started, 100);

    rd_trace_event sentinel;
    rd_trace_event *events = &sentinel;
    size_t n = 7;
    assert_int_equal(s->ops->turn_read(s, "turn", 150, &events, &n, &started, &st), RD_OK);
    assert_null(events); /* created with no events */
    assert_int_equal(n, 0);

    rd_trace_event e = conf_event(RD_EV_TOOL_ERROR, "t", 200);
    conf_append(s, "turn", &e, 1, 200, &started);
    assert_int_equal(started, 100);
    assert_int_equal(s->ops->turn_touch(s, "turn", 300, &started, &st), RD_OK);
    assert_int_equal(started, 100);
    assert_int_equal(s->ops->turn_read(s, "turn", 301, &events, &n, &started, &st), RD_OK);
    assert_int_equal(started, 100);
    assert_int_equal(n, 1);
    free(events);
    rd_store_destroy(s);
}

/* Untouched for turn_ttl_ms, a turn is gone; any touch keeps it alive. */
static void conf_turn_ttl(void **state)
{
    rd_store_limits lim = conf_limits();
    lim.turn_ttl_ms = 1000;
    rd_store *s = conf_make(state, &lim);
    int64_t started;
    rd_status st = {0};
    s->ops->turn_touch(s, "kept", 0, &started, &st);
    s->ops->turn_touch(s, "dropped", 0, &started, &st);
    s->ops->turn_touch(s, "kept", 900, &started, &st);
    assert_true(conf_turn_exists(s, "kept", 1800));
    assert_false(conf_turn_exists(s, "dropped", 1000));
    /* a later touch starts it over */
    s->ops->turn_touch(s, "dropped", 1200, &started, &st);
    assert_int_equal(started, 1200);
    rd_store_destroy(s);
}

/* At max_turns the least recently touched turn makes room. */
static void conf_max_turns_drops_least_recent(void **state)
{
    rd_store_limits lim = conf_limits();
    lim.max_turns = 2;
    rd_store *s = conf_make(state, &lim);
    int64_t started;
    rd_status st = {0};
    s->ops->turn_touch(s, "a", 1, &started, &st);
    s->ops->turn_touch(s, "b", 2, &started, &st);
    s->ops->turn_touch(s, "a", 3, &started, &st);
    assert_int_equal(s->ops->turn_touch(s, "c", 4, &started, &st), RD_OK);
    assert_true(conf_turn_exists(s, "a", 5));
    assert_false(conf_turn_exists(s, "b", 5));
    assert_true(conf_turn_exists(s, "c", 5));
    rd_store_destroy(s);
}

/* ---- capacity and eviction ---- */

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
    for (int i = 0; i < 10; i++) {                          /* streak in progress */
        snprintf(id, sizeof id, "streak_%d", i);
        conf_record(s, id, &conf_policy, 0, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    }
    conf_record(s, "still_open", &open_long, 0, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    conf_admit(s, "recent", &conf_policy, 190000);
    s->ops->turn_touch(s, "recent_turn", 190000, &started, &st);
    conf_claim(s, "recent_outcome", 190000);
    assert_int_equal(conf_count_tools(s, 190000), 1062);

    size_t dropped = s->ops->evict(s, 200000);
    assert_int_equal(dropped, 1000 + 50 + 1000 + 1000);
    assert_int_equal(conf_count_tools(s, 200000), 12); /* streaks, still_open, recent */
    assert_int_equal(s->ops->evict(s, 200000), 0);

    bool found;
    conf_get(s, "still_open", 200000, &found);
    assert_true(found);
    conf_get(s, "streak_3", 200000, &found);
    assert_true(found);
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

static rd_store_result conf_force(rd_store *s, const char *tool, rd_force_mode mode,
                                  int64_t now_ms, int64_t ttl_ms);

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

/* ---- operator holds (force) ---- */

static rd_store_result conf_force(rd_store *s, const char *tool, rd_force_mode mode,
                                  int64_t now_ms, int64_t ttl_ms)
{
    rd_store_result r;
    rd_status st = {0};
    assert_int_equal(s->ops->force(s, tool, mode, now_ms, ttl_ms, &r, &st), RD_OK);
    return r;
}

static void conf_force_open_refuses_until_released(void **state)
{
    rd_store_limits lim = conf_limits();
    rd_store *s = conf_make(state, &lim);
    rd_store_result r = conf_force(s, "held", RD_FORCE_OPEN, 100, 0);
    assert_int_equal(r.breaker.forced, RD_BREAKER_OPEN);
    assert_int_equal(r.breaker.forced_until_ms, 0);
    r = conf_admit(s, "held", &conf_policy, 1000000);
    assert_int_equal(r.admission, RD_ADMIT_NO);
    /* successes during the hold are not counted and change nothing */
    conf_record(s, "held", &conf_policy, 1000001, RD_OUTCOME_SUCCESS, 0);
    bool found;
    rd_breaker b = conf_get(s, "held", 1000002, &found);
    assert_true(found);
    assert_int_equal(rd_breaker_status_at(&b, 1000002), RD_BREAKER_OPEN);
    conf_force(s, "held", RD_FORCE_RELEASE, 1000003, 0);
    r = conf_admit(s, "held", &conf_policy, 1000004);
    assert_int_equal(r.admission, RD_ADMIT_YES);
    rd_store_destroy(s);
}

static void conf_force_closed_admits_and_ignores_failures(void **state)
{
    rd_store_limits lim = conf_limits();
    rd_store *s = conf_make(state, &lim);
    for (int i = 0; i < 3; i++)
        conf_record(s, "flaky", &conf_policy, 10 + i, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    assert_int_equal(conf_admit(s, "flaky", &conf_policy, 20).admission, RD_ADMIT_NO);
    conf_force(s, "flaky", RD_FORCE_CLOSED, 30, 0);
    assert_int_equal(conf_admit(s, "flaky", &conf_policy, 31).admission, RD_ADMIT_YES);
    for (int i = 0; i < 10; i++)
        conf_record(s, "flaky", &conf_policy, 40 + i, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    assert_int_equal(conf_admit(s, "flaky", &conf_policy, 60).admission, RD_ADMIT_YES);
    rd_store_destroy(s);
}

static void conf_force_ttl_expires(void **state)
{
    rd_store_limits lim = conf_limits();
    rd_store *s = conf_make(state, &lim);
    rd_store_result r = conf_force(s, "brief", RD_FORCE_OPEN, 1000, 500);
    assert_int_equal(r.breaker.forced_until_ms, 1500);
    assert_int_equal(conf_admit(s, "brief", &conf_policy, 1499).admission, RD_ADMIT_NO);
    assert_int_equal(conf_admit(s, "brief", &conf_policy, 1500).admission, RD_ADMIT_YES);
    rd_store_destroy(s);
}

static void conf_force_reset_starts_a_new_epoch(void **state)
{
    rd_store_limits lim = conf_limits();
    rd_store *s = conf_make(state, &lim);
    for (int i = 0; i < 3; i++)
        conf_record(s, "t", &conf_policy, 10 + i, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    rd_store_result probe = conf_admit(s, "t", &conf_policy, 2000);
    assert_int_equal(probe.admission, RD_ADMIT_PROBE);
    rd_store_result r = conf_force(s, "t", RD_FORCE_RESET, 2001, 0);
    assert_int_equal(r.breaker.stored, RD_BREAKER_CLOSED);
    assert_int_equal(r.breaker.generation, probe.breaker.generation + 1);
    assert_int_equal(r.breaker.consecutive_failures, 0);
    assert_int_equal(r.breaker.opens_total, 1);
    /* the old epoch's probe cannot speak any more */
    conf_record(s, "t", &conf_policy, 2002, RD_OUTCOME_TRANSIENT_FAILURE, probe.permit_token);
    bool found;
    rd_breaker b = conf_get(s, "t", 2003, &found);
    assert_int_equal(rd_breaker_status_at(&b, 2003), RD_BREAKER_CLOSED);
    assert_int_equal(b.consecutive_failures, 1);
    rd_store_destroy(s);
}

static void conf_force_rejects_bad_input(void **state)
{
    rd_store_limits lim = conf_limits();
    rd_store *s = conf_make(state, &lim);
    rd_store_result r;
    rd_status st = {0};
    assert_int_equal(s->ops->force(s, "t", (rd_force_mode)9, 1, 0, &r, &st), RD_ERR_INVALID);
    assert_non_null(strstr(st.msg, "mode"));
    assert_int_equal(s->ops->force(s, "t", RD_FORCE_OPEN, 1, -5, &r, &st), RD_ERR_INVALID);
    assert_non_null(strstr(st.msg, "ttl_ms"));
    assert_int_equal(s->ops->force(s, "", RD_FORCE_OPEN, 1, 0, &r, &st), RD_ERR_INVALID);
    rd_store_destroy(s);
}

static void conf_forced_breaker_is_not_evicted(void **state)
{
    rd_store_limits lim = conf_limits();
    lim.tool_idle_ttl_ms = 1000;
    rd_store *s = conf_make(state, &lim);
    conf_force(s, "kept", RD_FORCE_OPEN, 0, 0);
    s->ops->evict(s, 100000);
    bool found;
    rd_breaker b = conf_get(s, "kept", 100000, &found);
    assert_true(found);
    assert_int_equal(b.forced, RD_BREAKER_OPEN);
    rd_store_destroy(s);
}

/* ---- fleet features (docs/FLEET.md) ---- */

static rd_budget_result conf_budget(rd_store *s, const rd_retry_budget_policy *p, int64_t now,
                                    rd_budget_op op)
{
    rd_budget_result r;
    rd_status st = {0};
    assert_int_equal(s->ops->budget(s, "api", p, now, op, &r, &st), RD_OK);
    return r;
}

static void conf_budget_counts_and_slides(void **state)
{
    rd_store_limits l = conf_limits();
    rd_store *s = conf_make(state, &l);
    rd_retry_budget_policy p = {.enabled = true, .budget_percent = 25,
                                .min_retries_per_window = 1, .window_ms = 1000};
    assert_true(conf_budget(s, &p, 5000, RD_BUDGET_TAKE_RETRY).granted);
    assert_false(conf_budget(s, &p, 5001, RD_BUDGET_TAKE_RETRY).granted);
    rd_budget_result r;
    for (int i = 0; i < 8; i++)
        r = conf_budget(s, &p, 5100 + i, RD_BUDGET_COUNT_REQUEST);
    assert_int_equal(r.requests, 8);
    r = conf_budget(s, &p, 5200, RD_BUDGET_PEEK); /* 25 % of 8 = 2 > 1 */
    assert_true(r.granted);
    assert_int_equal(r.retries, 1);
    assert_true(conf_budget(s, &p, 5200, RD_BUDGET_TAKE_RETRY).granted);
    r = conf_budget(s, &p, 5200, RD_BUDGET_TAKE_RETRY);
    assert_false(r.granted);
    assert_int_equal(r.retries, 2);
    /* the first bucket (5000..5099) leaves at 6000: one retry less */
    r = conf_budget(s, &p, 6000, RD_BUDGET_PEEK);
    assert_int_equal(r.retries, 1);
    assert_int_equal(r.requests, 8);
    r = conf_budget(s, &p, 7000, RD_BUDGET_PEEK);
    assert_int_equal(r.requests, 0);
    rd_status st = {0};
    assert_int_equal(s->ops->budget(s, "api", &p, 0, (rd_budget_op)0, &r, &st), RD_ERR_INVALID);
    rd_store_destroy(s);
}

static rd_store_result conf_call(rd_store *s, const char *tool, const rd_breaker_policy *p,
                                 int64_t now, rd_outcome o, const char *executor,
                                 int64_t latency)
{
    rd_call_report c = {.outcome = o, .executor_id = executor, .latency_ms = latency};
    rd_store_result r;
    rd_status st = {0};
    assert_int_equal(s->ops->record_call(s, tool, p, now, &c, &r, &st), RD_OK);
    return r;
}

static void conf_failure_rate_window(void **state)
{
    rd_store_limits l = conf_limits();
    rd_store *s = conf_make(state, &l);
    rd_breaker_policy p = conf_policy;
    p.mode = RD_BREAKER_MODE_FAILURE_RATE;
    p.failure_rate_threshold = 60;
    p.minimum_calls = 5;
    p.window_ms = 10000;
    p.slow_call_ms = 100;
    p.slow_call_rate_threshold = 100;
    conf_call(s, "api", &p, 1000, RD_OUTCOME_TRANSIENT_FAILURE, "", 5);
    conf_call(s, "api", &p, 1001, RD_OUTCOME_TRANSIENT_FAILURE, "", 5);
    conf_call(s, "api", &p, 1002, RD_OUTCOME_SUCCESS, "", 150);
    rd_store_result r = conf_call(s, "api", &p, 1003, RD_OUTCOME_TRANSIENT_FAILURE, "", -1);
    assert_int_equal(r.transition, RD_TRANSITION_NONE); /* 4 calls < minimum 5 */
    assert_int_equal(r.evidence.calls, 4);
    assert_int_equal(r.evidence.failures, 3);
    assert_int_equal(r.evidence.slow, 1);
    rd_breaker b;
    rd_breaker_evidence ev;
    bool found;
    rd_status st = {0};
    assert_int_equal(s->ops->stats(s, "api", &p, 1004, &b, &ev, &found, &st), RD_OK);
    assert_true(found);
    assert_int_equal(ev.calls, 4);
    assert_int_equal(ev.failures, 3);
    r = conf_call(s, "api", &p, 1005, RD_OUTCOME_PERMANENT_FAILURE, "", 5);
    assert_int_equal(r.transition, RD_TRANSITION_OPENED); /* 3 of 5 = 60 % */
    /* a new period judges only its own calls */
    assert_int_equal(s->ops->stats(s, "api", &p, 1006, &b, &ev, &found, &st), RD_OK);
    assert_int_equal(ev.calls, 0);
    assert_int_equal(b.stored, RD_BREAKER_OPEN);
    assert_int_equal(s->ops->stats(s, "never", &p, 1006, &b, &ev, &found, &st), RD_OK);
    assert_false(found);
    rd_store_destroy(s);
}

static void conf_quorum_of_executors(void **state)
{
    rd_store_limits l = conf_limits();
    rd_store *s = conf_make(state, &l);
    rd_breaker_policy p = conf_policy; /* 3 in a row */
    p.quorum_min_executors = 3;
    p.quorum_window_ms = 5000;
    rd_store_result r;
    for (int i = 0; i < 6; i++)
        r = conf_call(s, "api", &p, 1000 + i, RD_OUTCOME_TRANSIENT_FAILURE,
                      i % 2 ? "exec-a" : "", -1);
    assert_int_equal(r.breaker.stored, RD_BREAKER_CLOSED);
    assert_true(r.evidence.held_by_quorum);
    assert_int_equal(r.evidence.failing_executors, 2);
    assert_int_equal(r.breaker.consecutive_failures, 6);
    /* exec-b, but after the first two left the window */
    r = conf_call(s, "api", &p, 7000, RD_OUTCOME_TRANSIENT_FAILURE, "exec-b", -1);
    assert_int_equal(r.evidence.failing_executors, 1);
    r = conf_call(s, "api", &p, 7001, RD_OUTCOME_TRANSIENT_FAILURE, "exec-c", -1);
    assert_int_equal(r.breaker.stored, RD_BREAKER_CLOSED);
    r = conf_call(s, "api", &p, 7002, RD_OUTCOME_TRANSIENT_FAILURE, "exec-a", -1);
    assert_int_equal(r.transition, RD_TRANSITION_OPENED);
    assert_int_equal(r.evidence.failing_executors, 3);
    rd_store_destroy(s);
}

static void conf_learning_links_and_records(void **state)
{
    rd_store_limits l = conf_limits();
    l.max_signatures = 100;
    l.signature_ttl_ms = 2000;
    rd_store *s = conf_make(state, &l);
    rd_status st = {0};
    rd_learn_stats out;
    const char *sig = "0123456789abcdef";
    assert_int_equal(s->ops->learn_link(s, "api", "turn-1", sig, RD_LEARN_KEEP, 1000, &st),
                     RD_OK);
    assert_int_equal(s->ops->learn_link(s, "api", "turn-1", "", RD_LEARN_SUCCEEDED, 1001, &st),
                     RD_OK);
    /* settled once: a second settle finds nothing pending */
    assert_int_equal(s->ops->learn_link(s, "api", "turn-1", "", RD_LEARN_FAILED, 1002, &st),
                     RD_OK);
    assert_int_equal(s->ops->learn_link(s, "api", "turn-2", sig, RD_LEARN_KEEP, 1003, &st),
                     RD_OK);
    assert_int_equal(s->ops->learn_link(s, "api", "turn-2", sig, RD_LEARN_FAILED, 1004, &st),
                     RD_OK);
    assert_int_equal(s->ops->learn_stats(s, "api", sig, 1005, &out, &st), RD_OK);
    assert_int_equal(out.successes, 1);
    assert_int_equal(out.failures, 1);
    assert_int_equal(s->ops->learn_stats(s, "other", sig, 1005, &out, &st), RD_OK);
    assert_int_equal(out.successes + out.failures, 0); /* per tool */
    assert_int_equal(s->ops->learn_stats(s, "api", sig, 3004, &out, &st), RD_OK);
    assert_int_equal(out.successes + out.failures, 0); /* expired */
    assert_int_equal(s->ops->learn_link(s, "api", "", sig, RD_LEARN_KEEP, 0, &st),
                     RD_ERR_INVALID);
    rd_store_destroy(s);
}

#include "store_conformance_probe.h"
#include "store_conformance_scope.h"
#include "store_conformance_quota.h"

#define RD_STORE_CONFORMANCE_TESTS(ctx)                                  \
    cmocka_unit_test_prestate(conf_budget_counts_and_slides, ctx),      \
    cmocka_unit_test_prestate(conf_failure_rate_window, ctx),           \
    cmocka_unit_test_prestate(conf_quorum_of_executors, ctx),           \
    cmocka_unit_test_prestate(conf_learning_links_and_records, ctx),    \
    cmocka_unit_test_prestate(conf_admit_record_transitions, ctx),       \
    cmocka_unit_test_prestate(conf_failed_probe_and_fresh_tokens, ctx),  \
    cmocka_unit_test_prestate(conf_permanent_errors_reset_streak, ctx),  \
    cmocka_unit_test_prestate(conf_half_open_probe_rules, ctx),          \
    cmocka_unit_test_prestate(conf_get_does_not_create, ctx),            \
    cmocka_unit_test_prestate(conf_list_sees_all, ctx),                  \
    cmocka_unit_test_prestate(conf_rejects_bad_ids, ctx),                \
    cmocka_unit_test_prestate(conf_claim_outcome_dedup, ctx),            \
    cmocka_unit_test_prestate(conf_outcome_ttl_expiry, ctx),             \
    cmocka_unit_test_prestate(conf_outcome_cap_drops_oldest, ctx),       \
    cmocka_unit_test_prestate(conf_latency_windows, ctx),                \
    cmocka_unit_test_prestate(conf_turn_append_order_and_sequence, ctx), \
    cmocka_unit_test_prestate(conf_turn_read_unknown, ctx),              \
    cmocka_unit_test_prestate(conf_turn_events_cap, ctx),                \
    cmocka_unit_test_prestate(conf_turn_touch_keeps_started_at, ctx),    \
    cmocka_unit_test_prestate(conf_turn_ttl, ctx),                       \
    cmocka_unit_test_prestate(conf_max_turns_drops_least_recent, ctx),   \
    cmocka_unit_test_prestate(conf_evict_keeps_memory_bounded, ctx),     \
    cmocka_unit_test_prestate(conf_max_tools_exhausted, ctx),           \
    cmocka_unit_test_prestate(conf_force_open_refuses_until_released, ctx), \
    cmocka_unit_test_prestate(conf_force_closed_admits_and_ignores_failures, ctx), \
    cmocka_unit_test_prestate(conf_force_ttl_expires, ctx),             \
    cmocka_unit_test_prestate(conf_force_reset_starts_a_new_epoch, ctx), \
    cmocka_unit_test_prestate(conf_force_release_keeps_the_probe, ctx), \
    cmocka_unit_test_prestate(conf_force_rejects_bad_input, ctx),       \
    cmocka_unit_test_prestate(conf_forced_breaker_is_not_evicted, ctx), \
    cmocka_unit_test_prestate(conf_scoped_keys_are_separate_breakers, ctx), \
    cmocka_unit_test_prestate(conf_quota_counts_members_used_lately, ctx)

#endif
