/* The frame of the store conformance suite (store_conformance.h): what a
 * backend's test program gives it (a factory of stores), the limits and
 * policy its cases start from, and the helpers they drive a store with,
 * each failing the test on a status other than the one expected. The
 * Redis store's own tests drive stores with them too, without the suite.
 * Static inline: a program may use only some of them. */
#ifndef RD_TESTS_STORE_CONFORMANCE_FIXTURE_H
#define RD_TESTS_STORE_CONFORMANCE_FIXTURE_H

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
static inline rd_store_limits conf_limits(void)
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

static inline rd_store *conf_make(void **state, const rd_store_limits *limits)
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

static inline rd_store_result conf_admit(rd_store *s, const char *tool,
                                         const rd_breaker_policy *p, int64_t now_ms)
{
    rd_store_result r;
    rd_status st = {0};
    memset(&r, 0xAB, sizeof r); /* the store must fill every field it reports */
    assert_int_equal(s->ops->admit(s, tool, p, now_ms, CONF_LEASE_MS, &r, &st), RD_OK);
    return r;
}

static inline rd_store_result conf_record(rd_store *s, const char *tool,
                                          const rd_breaker_policy *p, int64_t now_ms,
                                          rd_outcome outcome, uint64_t token)
{
    rd_store_result r;
    rd_status st = {0};
    assert_int_equal(s->ops->record(s, tool, p, now_ms, outcome, token, &r, &st), RD_OK);
    return r;
}

static inline rd_breaker conf_get(rd_store *s, const char *tool, int64_t now_ms, bool *found)
{
    rd_breaker b;
    rd_status st = {0};
    assert_int_equal(s->ops->get(s, tool, now_ms, &b, found, &st), RD_OK);
    return b;
}

static inline bool conf_claim(rd_store *s, const char *outcome_id, int64_t now_ms)
{
    bool duplicate = true;
    rd_status st = {0};
    assert_int_equal(s->ops->claim_outcome(s, outcome_id, now_ms, &duplicate, &st), RD_OK);
    return duplicate;
}

static inline bool conf_turn_exists(rd_store *s, const char *turn_id, int64_t now_ms)
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

static inline rd_trace_event conf_event(rd_event_type type, const char *tool, int64_t at_ms)
{
    rd_trace_event e;
    memset(&e, 0, sizeof e);
    e.type = type;
    e.tool_id_len = (uint16_t)snprintf(e.tool_id, sizeof e.tool_id, "%s", tool);
    e.timestamp_ms = at_ms;
    return e;
}

static inline void conf_append(rd_store *s, const char *turn_id, rd_trace_event *events,
                               size_t n, int64_t now_ms, int64_t *started)
{
    rd_status st = {0};
    assert_int_equal(s->ops->turn_append(s, turn_id, events, n, now_ms, started, &st), RD_OK);
}

static inline int conf_count_visit(void *ctx, const char *tool_id, const rd_breaker *b)
{
    (*(size_t *)ctx)++;
    return 0;
}

static inline size_t conf_count_tools(rd_store *s, int64_t now_ms)
{
    size_t n = 0;
    rd_status st = {0};
    assert_int_equal(s->ops->list(s, now_ms, conf_count_visit, &n, &st), RD_OK);
    return n;
}

/* An operator's hold on the tool's breaker, or its release or reset. */
static inline rd_store_result conf_force(rd_store *s, const char *tool, rd_force_mode mode,
                                         int64_t now_ms, int64_t ttl_ms)
{
    rd_store_result r;
    rd_status st = {0};
    assert_int_equal(s->ops->force(s, tool, mode, now_ms, ttl_ms, &r, &st), RD_OK);
    return r;
}

#endif
