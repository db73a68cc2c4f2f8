/* Calls into the decision engine and lookups in its answers, shared by
 * the tests of the engine's decisions (test_decide_*.c): errors and inputs
 * built field by field, Decide / RecordOutcome / GetBreakerState / the
 * turn trace called with failure on an error status, the events of a
 * trace found by type and tool. The fixture is engine_fixture.h over
 * tests/unit/fixtures/decide/ (a tool's defaults: 5 attempts within
 * 2000 ms, the breaker opening after 5 transient failures). Include after
 * cmocka.h. */
#ifndef RD_TEST_DECIDE_CALLS_H
#define RD_TEST_DECIDE_CALLS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "domain/arena.h"
#include "domain/classify.h"
#include "domain/err.h"
#include "domain/retry.h"
#include "domain/store.h"
#include "engine/decide.h"

#define FIXTURE RD_SOURCE_DIR "/tests/unit/fixtures/decide/recovery.yaml"
#include "engine_fixture.h"

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

static inline rd_tool_error error_text(const char *message)
{
    return (rd_tool_error){.message = message, .message_len = strlen(message),
                           .code = "", .exception_type = ""};
}

static inline rd_tool_error timeout_error(void)
{
    rd_tool_error e = error_text("Tool timeout after 30s");
    e.kind = RD_KIND_TIMEOUT;
    return e;
}

static inline rd_decide_input input(const char *tool_id, const rd_tool_error *err,
                                     uint32_t attempt)
{
    return (rd_decide_input){.tool_id = tool_id, .error = err, .attempt = attempt,
                             .turn_id = "", .executor_id = "", .outcome_id = "",
                             .permit_id = ""};
}

/* The answer writes an event's texts by their lengths: each must be its
 * text's. */
static inline void assert_event_lengths(const rd_decision *d)
{
    for (size_t i = 0; i < d->n_trace; i++) {
        const rd_trace_event *e = &d->trace[i];
        assert_int_equal(e->tool_id_len, strlen(e->tool_id));
        assert_int_equal(e->error_len, strlen(e->error));
        assert_int_equal(e->detail_len, strlen(e->detail));
    }
}

static inline rd_decision decide_ok(fixture *f, const rd_decide_input *in)
{
    rd_decision d;
    int rc = rd_engine_decide(&f->engine, in, &f->ctx, &d, &f->st);
    if (rc != RD_OK)
        fail_msg("decide %s: %s", in->tool_id, f->st.msg);
    assert_event_lengths(&d);
    return d;
}

/* One failed attempt of tool_id with `err`. */
static inline rd_decision fail_once(fixture *f, const char *tool_id, const rd_tool_error *err,
                                    uint32_t attempt, int64_t elapsed_ms)
{
    rd_decide_input in = input(tool_id, err, attempt);
    in.elapsed_ms = elapsed_ms;
    return decide_ok(f, &in);
}

static inline rd_decision admission(fixture *f, const char *tool_id)
{
    rd_decide_input in = input(tool_id, NULL, 0);
    return decide_ok(f, &in);
}

static inline rd_outcome_input outcome(const char *tool_id, bool success, uint32_t attempt)
{
    return (rd_outcome_input){.tool_id = tool_id, .success = success, .attempt = attempt,
                              .turn_id = "", .outcome_id = "", .permit_id = "",
                              .executor_id = ""};
}

static inline rd_outcome_result record_ok(fixture *f, const rd_outcome_input *in)
{
    rd_outcome_result r;
    if (rd_engine_record_outcome(&f->engine, in, &f->ctx, &r, &f->st) != RD_OK)
        fail_msg("record %s: %s", in->tool_id, f->st.msg);
    return r;
}

static inline rd_breaker_view breaker_of(fixture *f, const char *tool_id)
{
    rd_breaker_view *views;
    size_t n;
    const char *ids[] = {tool_id};
    assert_int_equal(rd_engine_breakers(&f->engine, ids, 1, &f->ctx, &views, &n, &f->st),
                     RD_OK);
    assert_int_equal(n, 1);
    return views[0];
}

/* Index of the first event of `type` for tool_id, or -1. */
static inline int find_event(const rd_trace_event *events, size_t n, rd_event_type type,
                             const char *tool_id)
{
    for (size_t i = 0; i < n; i++)
        if (events[i].type == type && strcmp(events[i].tool_id, tool_id) == 0)
            return (int)i;
    return -1;
}

static inline const rd_trace_event *event_of(const rd_decision *d, rd_event_type type,
                                             const char *tool_id)
{
    int i = find_event(d->trace, d->n_trace, type, tool_id);
    if (i < 0)
        fail_msg("no %s event for %s", rd_event_type_name(type), tool_id);
    return &d->trace[i];
}

static inline rd_turn_trace turn_ok(fixture *f, const char *turn_id)
{
    rd_turn_trace t;
    if (rd_engine_turn_trace(&f->engine, turn_id, &f->ctx, &t, &f->st) != RD_OK)
        fail_msg("turn %s: %s", turn_id, f->st.msg);
    return t;
}

/* Five transient failures of tool_id at the current time. */
static inline rd_decision open_breaker(fixture *f, const char *tool_id)
{
    rd_tool_error err = timeout_error();
    rd_decision d = {0};
    for (int i = 0; i < 5; i++)
        d = fail_once(f, tool_id, &err, 1, 0);
    return d;
}

#endif
