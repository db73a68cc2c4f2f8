/* Part of the store conformance suite (store_conformance.h, which
 * includes it): a turn's trace of events: order and sequence numbers,
 * the events cap, started_at, the turn TTL and the max_turns cap. */
#ifndef RD_TESTS_STORE_CONFORMANCE_TURNS_H
#define RD_TESTS_STORE_CONFORMANCE_TURNS_H

#include "store_conformance_fixture.h"

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

#endif
