/* The decision engine over the in-memory store, with an injected clock and a
 * seeded random source: the scenarios of 003 sections 2 to 7 as the core
 * sees them. Configuration: tests/unit/fixtures/decide/. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/config.h"
#include "domain/arena.h"
#include "domain/classify.h"
#include "engine/decide.h"
#include "domain/err.h"
#include "domain/retry.h"
#include "domain/store.h"

#define FIXTURE RD_SOURCE_DIR "/tests/unit/fixtures/decide/recovery.yaml"
#define T0 1762338645000 /* 2025-11-05T10:30:45Z */

static rd_config *g_config;

typedef struct fixture {
    rd_config config;   /* a shallow copy, so a test may flip a flag */
    rd_store *store;
    rd_engine engine;
    rd_arena arena;
    rd_rng rng;
    rd_call_ctx ctx;
    rd_status st;
} fixture;

static int group_setup(void **state)
{
    char err[RD_CONFIG_ERR_MAX];
    g_config = rd_config_load(FIXTURE, err, sizeof err);
    if (!g_config) {
        fprintf(stderr, "fixture config: %s\n", err);
        return -1;
    }
    return 0;
}

static int group_teardown(void **state)
{
    rd_config_free(g_config);
    return 0;
}

static int setup(void **state)
{
    static fixture f;
    memset(&f, 0, sizeof f);
    f.config = *g_config;
    rd_store_limits limits = {
        .max_tools = f.config.store.max_tools,
        .tool_idle_ttl_ms = f.config.store.tool_idle_ttl_ms,
        .turn_ttl_ms = f.config.store.turn_ttl_ms,
        .max_turns = f.config.store.max_turns,
        .max_events_per_turn = f.config.store.max_events_per_turn,
        .outcome_ttl_ms = f.config.store.outcome_ttl_ms,
        .max_outcomes = f.config.store.max_outcomes,
    };
    f.store = rd_store_memory_new(&limits);
    if (!f.store)
        return -1;
    f.engine = (rd_engine){.policy = &f.config.policy, .store = f.store};
    rd_arena_init(&f.arena, 16384);
    rd_rng_seed(&f.rng, 42);
    f.ctx = (rd_call_ctx){.now_ms = T0, .arena = &f.arena, .rng = &f.rng};
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    rd_store_destroy(f->store);
    rd_arena_free(&f->arena);
    return 0;
}

/* ---- helpers ---- */

static rd_tool_error error_text(const char *message)
{
    return (rd_tool_error){.message = message, .message_len = strlen(message),
                           .code = "", .exception_type = ""};
}

static rd_tool_error timeout_error(void)
{
    rd_tool_error e = error_text("Tool timeout after 30s");
    e.kind = RD_KIND_TIMEOUT;
    return e;
}

static rd_decide_input input(const char *tool_id, const rd_tool_error *err, uint32_t attempt)
{
    return (rd_decide_input){.tool_id = tool_id, .error = err, .attempt = attempt,
                             .turn_id = "", .executor_id = "", .outcome_id = "",
                             .permit_id = ""};
}

/* The answer writes an event's texts by their lengths: each must be its
 * text's. */
static void assert_event_lengths(const rd_decision *d)
{
    for (size_t i = 0; i < d->n_trace; i++) {
        const rd_trace_event *e = &d->trace[i];
        assert_int_equal(e->tool_id_len, strlen(e->tool_id));
        assert_int_equal(e->error_len, strlen(e->error));
        assert_int_equal(e->detail_len, strlen(e->detail));
    }
}

static rd_decision decide_ok(fixture *f, const rd_decide_input *in)
{
    rd_decision d;
    int rc = rd_engine_decide(&f->engine, in, &f->ctx, &d, &f->st);
    if (rc != RD_OK)
        fail_msg("decide %s: %s", in->tool_id, f->st.msg);
    assert_event_lengths(&d);
    return d;
}

/* One failed attempt of tool_id with `err`. */
static rd_decision fail_once(fixture *f, const char *tool_id, const rd_tool_error *err,
                             uint32_t attempt, int64_t elapsed_ms)
{
    rd_decide_input in = input(tool_id, err, attempt);
    in.elapsed_ms = elapsed_ms;
    return decide_ok(f, &in);
}

static rd_decision admission(fixture *f, const char *tool_id)
{
    rd_decide_input in = input(tool_id, NULL, 0);
    return decide_ok(f, &in);
}

static rd_outcome_input outcome(const char *tool_id, bool success, uint32_t attempt)
{
    return (rd_outcome_input){.tool_id = tool_id, .success = success, .attempt = attempt,
                              .turn_id = "", .outcome_id = "", .permit_id = "",
                              .executor_id = ""};
}

static rd_outcome_result record_ok(fixture *f, const rd_outcome_input *in)
{
    rd_outcome_result r;
    if (rd_engine_record_outcome(&f->engine, in, &f->ctx, &r, &f->st) != RD_OK)
        fail_msg("record %s: %s", in->tool_id, f->st.msg);
    return r;
}

static rd_breaker_view breaker_of(fixture *f, const char *tool_id)
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
static int find_event(const rd_trace_event *events, size_t n, rd_event_type type,
                      const char *tool_id)
{
    for (size_t i = 0; i < n; i++)
        if (events[i].type == type && strcmp(events[i].tool_id, tool_id) == 0)
            return (int)i;
    return -1;
}

static const rd_trace_event *event_of(const rd_decision *d, rd_event_type type,
                                      const char *tool_id)
{
    int i = find_event(d->trace, d->n_trace, type, tool_id);
    if (i < 0)
        fail_msg("no %s event for %s", rd_event_type_name(type), tool_id);
    return &d->trace[i];
}

static rd_turn_trace turn_ok(fixture *f, const char *turn_id)
{
    rd_turn_trace t;
    if (rd_engine_turn_trace(&f->engine, turn_id, &f->ctx, &t, &f->st) != RD_OK)
        fail_msg("turn %s: %s", turn_id, f->st.msg);
    return t;
}

static void assert_delay_within(int64_t delay, int64_t base, int64_t spread)
{
    if (delay < base - spread || delay > base + spread)
        fail_msg("delay %lld outside %lld +- %lld", (long long)delay, (long long)base,
                 (long long)spread);
}

/* Five transient failures of tool_id at the current time. */
static rd_decision open_breaker(fixture *f, const char *tool_id)
{
    rd_tool_error err = timeout_error();
    rd_decision d = {0};
    for (int i = 0; i < 5; i++)
        d = fail_once(f, tool_id, &err, 1, 0);
    return d;
}

/* ---- 6.2, 4.1, 4.3, 4.4: a transient timeout is retried ---- */

static void test_transient_timeout_retries(void **state)
{
    fixture *f = *state;
    rd_tool_error err = timeout_error();
    rd_decision d = fail_once(f, "flight_search", &err, 1, 0);
    assert_int_equal(d.action, RD_ACTION_RETRY);
    assert_delay_within(d.delay_ms, 100, 10);
    assert_int_equal(d.timeout_ms, 30000);
    assert_true(d.has_classification);
    assert_int_equal(d.classification.classification.retryability, RD_TRANSIENT);
    assert_int_equal(d.breaker.status, RD_BREAKER_CLOSED);
    assert_int_equal(d.breaker.consecutive_failures, 1);
    assert_int_equal(d.n_cascade, 0);
    assert_string_equal(d.permit_id, "");

    const rd_trace_event *timeout = event_of(&d, RD_EV_TOOL_TIMEOUT, "flight_search");
    assert_int_equal(timeout->timeout_ms, 30000);
    assert_int_equal(timeout->timestamp_ms, T0);
    assert_true(timeout->executed);
    const rd_trace_event *error = event_of(&d, RD_EV_TOOL_ERROR, "flight_search");
    assert_string_equal(error->error, "Tool timeout after 30s");
    assert_int_equal(error->retryability, RD_TRANSIENT);
    assert_int_equal(error->breaker, RD_BREAKER_CLOSED);
    assert_int_equal(error->decision, RD_ACTION_RETRY);
    assert_int_equal(error->retry_count, 0);
    const rd_trace_event *retry = event_of(&d, RD_EV_RETRY, "flight_search");
    assert_int_equal(retry->retry_count, 1);
    char detail[64];
    snprintf(detail, sizeof detail, "retry 1 of 4 after %lld ms", (long long)d.delay_ms);
    assert_string_equal(retry->detail, detail);
}

/* ---- 2.1, 2.3: backoff per attempt, then the attempt budget ---- */

static void test_backoff_per_attempt_then_give_up(void **state)
{
    fixture *f = *state;
    rd_tool_error err = error_text("Connection reset by peer");
    const int64_t base[] = {100, 200, 400, 800};
    int64_t elapsed = 0;
    for (uint32_t attempt = 1; attempt <= 4; attempt++) {
        rd_decision d = fail_once(f, "search_api", &err, attempt, elapsed);
        assert_int_equal(d.action, RD_ACTION_RETRY);
        assert_delay_within(d.delay_ms, base[attempt - 1], base[attempt - 1] / 10);
        /* the model hears of a failure only when the tool is given up */
        assert_true(d.has_classification);
        assert_null(d.classification.llm_message);
        assert_int_equal(d.classification.llm_message_len, 0);
        elapsed += d.delay_ms;
    }
    rd_decision d = fail_once(f, "search_api", &err, 5, elapsed);
    assert_int_equal(d.action, RD_ACTION_GIVE_UP);
    assert_string_equal(d.reason, "max attempts (5) reached");
    assert_string_equal(d.classification.llm_message,
                        "Tool Execution Failed\nTool: search_api\n"
                        "Error Type: transient\nMessage: Connection reset by peer\n\n"
                        "The tool failed and cannot be used for this request.");
    assert_int_equal(d.classification.llm_message_len, strlen(d.classification.llm_message));
    assert_int_equal(event_of(&d, RD_EV_GAVE_UP, "search_api")->decision, RD_ACTION_GIVE_UP);
    assert_int_equal(d.delay_ms, 0);
}

static int compare_int64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static size_t count_distinct(int64_t *values, size_t n)
{
    qsort(values, n, sizeof *values, compare_int64);
    size_t distinct = n > 0;
    for (size_t i = 1; i < n; i++)
        distinct += values[i] != values[i - 1];
    return distinct;
}

/* Jitter spreads the delays: over many draws both halves of the band occur,
 * and to the microsecond (delay_us) the draws hardly ever coincide, where
 * whole milliseconds (21 values for 100 ms +-10 %) would collide often. */
static void test_jitter_spreads_delays(void **state)
{
    fixture *f = *state;
    rd_tool_error err = error_text("Connection reset by peer");
    enum { DRAWS = 40 };
    int below = 0, above = 0;
    int64_t us[DRAWS];
    char ids[DRAWS][16];
    for (int i = 0; i < DRAWS; i++) {
        rd_decide_input in = input("search_api", &err, 1);
        snprintf(ids[i], sizeof ids[i], "o-%d", i); /* each failure its own report */
        in.outcome_id = ids[i];
        rd_outcome_input ok = outcome("search_api", true, 1); /* no streak builds up */
        record_ok(f, &ok);
        rd_decision d = decide_ok(f, &in);
        assert_delay_within(d.delay_ms, 100, 10);
        assert_delay_within(d.delay_us, 100000, 10000);
        assert_int_equal(rd_us_to_ms(d.delay_us), d.delay_ms);
        below += d.delay_ms < 100;
        above += d.delay_ms > 100;
        us[i] = d.delay_us;
    }
    assert_true(below > 0 && above > 0);
    assert_true(count_distinct(us, DRAWS) >= DRAWS - 2);
}

/* With the default threshold the fifth failure opens the breaker, and an
 * open breaker answers before the attempt budget does. */
static void test_fifth_failure_with_default_threshold_fails_fast(void **state)
{
    fixture *f = *state;
    rd_tool_error err = timeout_error();
    for (uint32_t attempt = 1; attempt <= 4; attempt++)
        assert_int_equal(fail_once(f, "flight_search", &err, attempt, 0).action,
                         RD_ACTION_RETRY);
    rd_decision d = fail_once(f, "flight_search", &err, 5, 0);
    assert_int_equal(d.action, RD_ACTION_FAIL_FAST);
}

static void test_attempt_zero_counts_as_first(void **state)
{
    fixture *f = *state;
    rd_tool_error err = timeout_error();
    rd_decision d = fail_once(f, "flight_search", &err, 0, 0);
    assert_int_equal(d.action, RD_ACTION_RETRY);
    assert_delay_within(d.delay_ms, 100, 10);
}

/* A report sent again with its outcome_id is counted once and answered
 * with the first answer's delay. */
static void test_repeated_outcome_id_gets_the_same_delay(void **state)
{
    fixture *f = *state;
    rd_tool_error err = error_text("Connection reset by peer");
    rd_decide_input in = input("search_api", &err, 2);
    in.outcome_id = "report-1";
    rd_decision first = decide_ok(f, &in);
    for (int i = 0; i < 5; i++) {
        rd_decision again = decide_ok(f, &in);
        assert_true(again.duplicate);
        assert_int_equal(again.action, first.action);
        assert_int_equal(again.delay_us, first.delay_us);
        assert_int_equal(again.delay_ms, first.delay_ms);
        assert_string_equal(again.reason, first.reason);
    }
}

/* ---- 2.4: the total time budget ---- */

static void test_max_total_time(void **state)
{
    fixture *f = *state;
    rd_tool_error err = timeout_error();
    const int64_t elapsed[] = {0, 600, 1200};
    for (uint32_t i = 0; i < 3; i++)
        assert_int_equal(fail_once(f, "flight_search", &err, i + 1, elapsed[i]).action,
                         RD_ACTION_RETRY);
    rd_decision d = fail_once(f, "flight_search", &err, 4, 1800);
    assert_int_equal(d.action, RD_ACTION_GIVE_UP);
    assert_string_equal(d.reason, "max total retry time (2000 ms) would be exceeded");
}

/* ---- 2.5: a manifest's retry policy ---- */

static void test_manifest_retry_overrides(void **state)
{
    fixture *f = *state;
    rd_tool_error err = timeout_error();
    rd_decision d = fail_once(f, "custom_api", &err, 1, 0);
    assert_int_equal(d.action, RD_ACTION_RETRY);
    assert_delay_within(d.delay_ms, 50, 5);
    assert_int_equal(d.timeout_ms, 5000);
    d = fail_once(f, "custom_api", &err, 2, 50);
    assert_int_equal(d.action, RD_ACTION_RETRY);
    assert_delay_within(d.delay_ms, 100, 10);
    d = fail_once(f, "custom_api", &err, 3, 150);
    assert_int_equal(d.action, RD_ACTION_GIVE_UP);
    assert_string_equal(d.reason, "max attempts (3) reached");
}

/* ---- retry_after ---- */

static void test_retry_after_honoured(void **state)
{
    fixture *f = *state;
    rd_tool_error err = error_text("Rate limit exceeded (429)");
    err.retry_after_ms = 1500;
    rd_decision d = fail_once(f, "flight_search", &err, 1, 0);
    assert_int_equal(d.action, RD_ACTION_RETRY);
    assert_int_equal(d.delay_ms, 1500);
    assert_int_equal(d.delay_us, 1500000);

    /* a hint beyond the total budget ends the retries */
    err.retry_after_ms = 5000;
    d = fail_once(f, "flight_search", &err, 1, 0);
    assert_int_equal(d.action, RD_ACTION_GIVE_UP);

    /* a hint shorter than the backoff does not shorten it */
    err.retry_after_ms = 1;
    d = fail_once(f, "flight_search", &err, 1, 0);
    assert_delay_within(d.delay_ms, 100, 10);
    assert_delay_within(d.delay_us, 100000, 10000);
}

/* ---- 3.1: the breaker opens after 5 transient failures ---- */

static void test_breaker_opens_after_five(void **state)
{
    fixture *f = *state;
    rd_tool_error err = timeout_error();
    for (uint32_t i = 1; i <= 4; i++) {
        rd_decide_input in = input("flight_search", &err, 1);
        in.turn_id = "turn-31";
        rd_decision d = decide_ok(f, &in);
        assert_int_equal(d.action, RD_ACTION_RETRY);
        assert_int_equal(d.breaker.status, RD_BREAKER_CLOSED);
        assert_int_equal(d.breaker.consecutive_failures, i);
        assert_int_equal(find_event(d.trace, d.n_trace, RD_EV_CIRCUIT_OPENED,
                                    "flight_search"), -1);
    }
    rd_decide_input in = input("flight_search", &err, 1);
    in.turn_id = "turn-31";
    rd_decision d = decide_ok(f, &in);
    assert_int_equal(d.action, RD_ACTION_FAIL_FAST);
    assert_string_equal(d.reason, "circuit open");
    assert_int_equal(d.breaker.status, RD_BREAKER_OPEN);
    assert_int_equal(d.breaker.opens_total, 1);
    assert_int_equal(d.breaker.open_until_ms, T0 + 30000);
    const rd_trace_event *opened = event_of(&d, RD_EV_CIRCUIT_OPENED, "flight_search");
    assert_string_equal(opened->detail, "Circuit breaker opened for flight_search");
    assert_int_equal(opened->breaker, RD_BREAKER_OPEN);

    /* the 6th call is refused at once */
    d = admission(f, "flight_search");
    assert_int_equal(d.action, RD_ACTION_FAIL_FAST);
    assert_int_equal(d.timeout_ms, 30000);
    event_of(&d, RD_EV_FAIL_FAST, "flight_search");

    /* and the turn's trace holds the sentence 003 3.1 looks for */
    rd_turn_trace t = turn_ok(f, "turn-31");
    int i = find_event(t.events, t.n_events, RD_EV_CIRCUIT_OPENED, "flight_search");
    assert_true(i >= 0);
    assert_string_equal(t.events[i].detail, "Circuit breaker opened for flight_search");
}

/* ---- 3.2, 3.3: half-open, one probe, close or re-open ---- */

static void test_half_open_grants_one_probe_and_success_closes(void **state)
{
    fixture *f = *state;
    open_breaker(f, "flight_search");

    f->ctx.now_ms = T0 + 15000;
    assert_int_equal(admission(f, "flight_search").action, RD_ACTION_FAIL_FAST);
    assert_int_equal(breaker_of(f, "flight_search").status, RD_BREAKER_OPEN);

    f->ctx.now_ms = T0 + 30000;
    assert_int_equal(breaker_of(f, "flight_search").status, RD_BREAKER_HALF_OPEN);
    rd_decision probe = admission(f, "flight_search");
    assert_int_equal(probe.action, RD_ACTION_PROCEED);
    assert_true(probe.permit_id[0] != '\0');
    assert_string_equal(event_of(&probe, RD_EV_CIRCUIT_HALF_OPENED, "flight_search")->detail,
                        "Circuit breaker half-open for flight_search: probe permit granted");
    assert_true(probe.breaker.probe_in_flight);

    rd_decision second = admission(f, "flight_search");
    assert_int_equal(second.action, RD_ACTION_FAIL_FAST);
    assert_string_equal(second.permit_id, "");

    /* 3.3: the probe succeeds */
    f->ctx.now_ms = T0 + 30020;
    rd_outcome_input ok = outcome("flight_search", true, 1);
    ok.permit_id = probe.permit_id;
    ok.turn_id = "turn-33";
    rd_outcome_result r = record_ok(f, &ok);
    assert_int_equal(r.breaker.status, RD_BREAKER_CLOSED);
    assert_int_equal(r.breaker.consecutive_failures, 0);
    rd_turn_trace t = turn_ok(f, "turn-33");
    int i = find_event(t.events, t.n_events, RD_EV_CIRCUIT_CLOSED, "flight_search");
    assert_true(i >= 0);
    assert_string_equal(t.events[i].detail, "Circuit breaker closed for flight_search");

    rd_decision normal = admission(f, "flight_search");
    assert_int_equal(normal.action, RD_ACTION_PROCEED);
    assert_string_equal(normal.permit_id, "");
    assert_int_equal(normal.n_trace, 0);
}

static void test_failed_probe_reopens(void **state)
{
    fixture *f = *state;
    open_breaker(f, "flight_search");
    f->ctx.now_ms = T0 + 30000;
    rd_decision probe = admission(f, "flight_search");
    assert_int_equal(probe.action, RD_ACTION_PROCEED);

    f->ctx.now_ms = T0 + 30040;
    rd_tool_error err = timeout_error();
    rd_decide_input in = input("flight_search", &err, 1);
    in.permit_id = probe.permit_id;
    rd_decision d = decide_ok(f, &in);
    assert_int_equal(d.action, RD_ACTION_FAIL_FAST);
    assert_int_equal(d.breaker.status, RD_BREAKER_OPEN);
    assert_int_equal(d.breaker.open_until_ms, T0 + 30040 + 30000); /* timer restarted */
    assert_int_equal(d.breaker.opens_total, 2);
    assert_string_equal(event_of(&d, RD_EV_CIRCUIT_OPENED, "flight_search")->detail,
                        "Circuit breaker opened for flight_search");
}

static void test_failed_probe_reported_by_record_outcome_reopens(void **state)
{
    fixture *f = *state;
    open_breaker(f, "flight_search");
    f->ctx.now_ms = T0 + 30000;
    rd_decision probe = admission(f, "flight_search");
    rd_outcome_input fail = outcome("flight_search", false, 1);
    fail.permit_id = probe.permit_id;
    rd_outcome_result r = record_ok(f, &fail);
    assert_int_equal(r.breaker.status, RD_BREAKER_OPEN);
    assert_int_equal(r.breaker.open_until_ms, T0 + 60000);
}

/* A probe that never reports frees its permit when its lease (the tool's
 * timeout and a 250 ms margin for the report) runs out. */
static void test_probe_lease_expires(void **state)
{
    fixture *f = *state;
    open_breaker(f, "flight_search");
    f->ctx.now_ms = T0 + 30000;
    assert_int_equal(admission(f, "flight_search").action, RD_ACTION_PROCEED);
    f->ctx.now_ms = T0 + 30000 + 30249;
    assert_int_equal(admission(f, "flight_search").action, RD_ACTION_FAIL_FAST);
    f->ctx.now_ms = T0 + 30000 + 30250;
    rd_decision d = admission(f, "flight_search");
    assert_int_equal(d.action, RD_ACTION_PROCEED);
    assert_true(d.permit_id[0] != '\0');
}

/* A failure reported while half-open by a caller without the permit (its
 * call started before the breaker opened) changes nothing, and its retry
 * may only go ahead as the one probe. */
static void test_retry_while_half_open_is_the_probe(void **state)
{
    fixture *f = *state;
    open_breaker(f, "flight_search");
    f->ctx.now_ms = T0 + 30000;
    rd_tool_error err = timeout_error();
    rd_decision d = fail_once(f, "flight_search", &err, 1, 0);
    assert_int_equal(d.action, RD_ACTION_RETRY);
    assert_true(d.permit_id[0] != '\0');
    event_of(&d, RD_EV_CIRCUIT_HALF_OPENED, "flight_search");
    assert_int_equal(d.breaker.status, RD_BREAKER_HALF_OPEN);

    d = fail_once(f, "flight_search", &err, 1, 0);
    assert_int_equal(d.action, RD_ACTION_FAIL_FAST);
    assert_string_equal(d.permit_id, "");
}

/* ---- 3.4, 7.2: permanent errors do not count ---- */

static void test_permanent_errors_do_not_count(void **state)
{
    fixture *f = *state;
    const char *messages[] = {"Invalid airport code: XYZ", "Authentication failed (401)",
                              "Route not found", "Invalid date", "Authentication failed (401)"};
    for (int i = 0; i < 5; i++) {
        rd_tool_error err = error_text(messages[i]);
        rd_decision d = fail_once(f, "flight_search", &err, 1, 0);
        assert_int_equal(d.action, RD_ACTION_ESCALATE);
        assert_int_equal(d.breaker.consecutive_failures, 0);
        assert_int_equal(d.breaker.status, RD_BREAKER_CLOSED);
    }
    assert_int_equal(breaker_of(f, "flight_search").consecutive_failures, 0);
}

static void test_mixed_errors_count_only_transient(void **state)
{
    fixture *f = *state;
    rd_tool_error timeout = timeout_error();
    rd_tool_error invalid = error_text("Invalid airport code: XYZ");
    rd_tool_error rate = error_text("Rate limit exceeded (429)");
    assert_int_equal(fail_once(f, "flight_search", &timeout, 1, 0).action, RD_ACTION_RETRY);
    assert_int_equal(fail_once(f, "flight_search", &invalid, 1, 0).action, RD_ACTION_ESCALATE);
    rd_decision d = fail_once(f, "flight_search", &rate, 1, 0);
    assert_int_equal(d.action, RD_ACTION_RETRY);
    assert_int_equal(d.breaker.consecutive_failures, 1);
}

/* ---- 6.4, 6.5: alternatives and escalation ---- */

static void test_permanent_with_alternative(void **state)
{
    fixture *f = *state;
    rd_tool_error err = error_text("Invalid hotel id");
    rd_decision d = fail_once(f, "hotel_search", &err, 1, 0);
    assert_int_equal(d.action, RD_ACTION_USE_ALTERNATIVE);
    assert_string_equal(d.alternative_tool_id, "hotel_search_backup");
    assert_int_equal(d.timeout_ms, 20000); /* the alternative's own timeout */
    assert_int_equal(d.n_cascade, 0);
    assert_string_equal(event_of(&d, RD_EV_ALTERNATIVE_USED, "hotel_search")->detail,
                        "Used alternative tool hotel_search_backup for hotel_search");
}

static void test_permanent_without_alternative_escalates(void **state)
{
    fixture *f = *state;
    rd_tool_error err = error_text("Invalid airport code: XYZ");
    rd_decision d = fail_once(f, "flight_search", &err, 1, 0);
    assert_int_equal(d.action, RD_ACTION_ESCALATE);
    assert_string_equal(d.reason, "permanent error: input_validation");
    assert_int_equal(d.classification.classification.retryability, RD_PERMANENT);
    assert_string_equal(d.classification.llm_message,
                        "Tool Execution Failed\nTool: flight_search\n"
                        "Error Type: input_validation\nMessage: Invalid airport code: XYZ\n\n"
                        "The tool failed and cannot be used for this request.");
    assert_int_equal(d.classification.llm_message_len, strlen(d.classification.llm_message));
    const rd_trace_event *ev = event_of(&d, RD_EV_ESCALATED, "flight_search");
    assert_int_equal(ev->decision, RD_ACTION_ESCALATE);

    err.exception_type = "ValueError";
    d = fail_once(f, "flight_search", &err, 1, 0);
    assert_non_null(strstr(d.classification.llm_message, "Error Type: ValueError\n"));
}

static void test_open_breaker_uses_alternative(void **state)
{
    fixture *f = *state;
    rd_decision d = open_breaker(f, "hotel_search");
    assert_int_equal(d.breaker.status, RD_BREAKER_OPEN);
    assert_int_equal(d.action, RD_ACTION_USE_ALTERNATIVE);
    assert_string_equal(d.alternative_tool_id, "hotel_search_backup");

    d = admission(f, "hotel_search");
    assert_int_equal(d.action, RD_ACTION_USE_ALTERNATIVE);
    assert_string_equal(d.alternative_tool_id, "hotel_search_backup");
    assert_int_equal(d.timeout_ms, 20000);

    /* when the alternative's own breaker is open too, fail fast */
    open_breaker(f, "hotel_search_backup");
    d = admission(f, "hotel_search");
    assert_int_equal(d.action, RD_ACTION_FAIL_FAST);
    assert_string_equal(d.alternative_tool_id, "");
}

/* ---- 4.2, 7.4: the turn deadline ---- */

static void test_turn_deadline_partial_results(void **state)
{
    fixture *f = *state;
    rd_outcome_input ok = outcome("flight_search", true, 1);
    ok.turn_id = "trip";
    record_ok(f, &ok);

    const char *running[] = {"hotel_search", "activity_search"};
    for (int i = 0; i < 2; i++) {
        rd_decide_input in = input(running[i], NULL, 0);
        in.turn_id = "trip";
        in.has_turn_remaining = true;
        in.turn_remaining_ms = 0;
        rd_decision d = decide_ok(f, &in);
        assert_int_equal(d.action, RD_ACTION_PARTIAL);
        assert_string_equal(d.reason, "turn deadline reached");
        event_of(&d, RD_EV_TURN_TIMEOUT, running[i]);
        assert_string_equal(event_of(&d, RD_EV_SKIPPED, running[i])->detail,
                            "skipped: turn deadline reached");
    }
    rd_turn_trace t = turn_ok(f, "trip");
    assert_string_equal(t.summary.partial_result,
                        "Completed flight search, but hotel search and activity search "
                        "timed out");
    assert_false(t.summary.turn_failed);
    assert_int_equal(t.summary.n_timed_out, 2);
}

/* Without a figure from the caller, the configured 300 s count from the
 * turn's first appearance. */
static void test_turn_budget_from_config(void **state)
{
    fixture *f = *state;
    rd_decide_input in = input("flight_search", NULL, 0);
    in.turn_id = "long-turn";
    assert_int_equal(decide_ok(f, &in).action, RD_ACTION_PROCEED);
    f->ctx.now_ms = T0 + 299999;
    assert_int_equal(decide_ok(f, &in).action, RD_ACTION_PROCEED);
    f->ctx.now_ms = T0 + 300000;
    assert_int_equal(decide_ok(f, &in).action, RD_ACTION_PARTIAL);
}

static void test_turn_deadline_during_retry(void **state)
{
    fixture *f = *state;
    rd_tool_error err = timeout_error();
    rd_decide_input in = input("flight_search", &err, 1);
    in.has_turn_remaining = true;
    in.turn_remaining_ms = 50; /* the ~100 ms backoff would end after the deadline */
    rd_decision d = decide_ok(f, &in);
    assert_int_equal(d.action, RD_ACTION_PARTIAL);
    assert_string_equal(d.reason, "turn deadline before retry");

    in.turn_remaining_ms = 0;
    d = decide_ok(f, &in);
    assert_int_equal(d.action, RD_ACTION_PARTIAL);
    assert_string_equal(d.reason, "turn deadline reached");
    event_of(&d, RD_EV_TURN_TIMEOUT, "flight_search");

    in.turn_remaining_ms = 60000;
    assert_int_equal(decide_ok(f, &in).action, RD_ACTION_RETRY);
}

/* ---- 5.x: cascades ---- */

static const rd_cascade_step *step_of(const rd_decision *d, const char *tool_id)
{
    for (size_t i = 0; i < d->n_cascade; i++)
        if (strcmp(d->cascade[i].tool_id, tool_id) == 0)
            return &d->cascade[i];
    fail_msg("no cascade step for %s", tool_id);
    return NULL;
}

static void test_cascade_from_request_plan(void **state)
{
    fixture *f = *state;
    const char *on_flight[] = {"flight_search"};
    rd_plan_step plan[] = {
        {.tool_id = "flight_search", .default_value = ""},
        {.tool_id = "compare_prices", .depends_on = on_flight, .n_depends_on = 1,
         .optional = true, .default_value = ""},
        {.tool_id = "create_itinerary", .depends_on = on_flight, .n_depends_on = 1,
         .default_value = ""},
        {.tool_id = "price_table", .depends_on = on_flight, .n_depends_on = 1,
         .has_default = true, .default_value = "{}"},
        {.tool_id = "hotel_search", .default_value = ""},
    };
    rd_tool_error err = error_text("Invalid airport code: XYZ");
    rd_decide_input in = input("flight_search", &err, 1);
    in.plan = plan;
    in.n_plan = 5;
    in.turn_id = "turn-5";
    rd_decision d = decide_ok(f, &in);
    assert_int_equal(d.action, RD_ACTION_ESCALATE);
    assert_int_equal(d.n_cascade, 3); /* 5.4: hotel_search untouched */
    assert_int_equal(step_of(&d, "compare_prices")->action, RD_CASCADE_SKIP);
    assert_int_equal(step_of(&d, "create_itinerary")->action, RD_CASCADE_ESCALATE);
    assert_int_equal(step_of(&d, "price_table")->action, RD_CASCADE_USE_DEFAULT);
    assert_string_equal(step_of(&d, "price_table")->default_value, "{}");

    assert_string_equal(event_of(&d, RD_EV_SKIPPED, "compare_prices")->detail,
                        "skipped: dependency flight_search failed");
    assert_string_equal(event_of(&d, RD_EV_ESCALATED, "create_itinerary")->detail,
                        "Required tool skipped due to dependency failure: "
                        "create_itinerary needs flight_search");
    assert_string_equal(event_of(&d, RD_EV_DEFAULT_USED, "price_table")->detail,
                        "Used default value for price_table");
    assert_int_equal(find_event(d.trace, d.n_trace, RD_EV_SKIPPED, "hotel_search"), -1);

    rd_turn_trace t = turn_ok(f, "turn-5");
    assert_int_equal(t.n_events, d.n_trace);
    assert_int_equal(t.summary.n_failed, 1);
    assert_string_equal(t.summary.failed[0], "flight_search");
    assert_int_equal(t.summary.n_skipped, 2);
}

static void test_cascade_from_manifest_graph(void **state)
{
    fixture *f = *state;
    rd_tool_error err = error_text("Invalid airport code: XYZ");
    rd_decision d = fail_once(f, "flight_search", &err, 1, 0);
    assert_int_equal(d.action, RD_ACTION_ESCALATE);
    assert_int_equal(d.n_cascade, 3);
    /* BFS: direct dependents in manifest (id) order, then theirs */
    assert_string_equal(d.cascade[0].tool_id, "compare_prices");
    assert_int_equal(d.cascade[0].action, RD_CASCADE_SKIP);
    assert_string_equal(d.cascade[1].tool_id, "price_summary");
    assert_int_equal(d.cascade[1].action, RD_CASCADE_USE_DEFAULT);
    assert_string_equal(d.cascade[1].default_value, "[]");
    assert_string_equal(d.cascade[2].tool_id, "create_itinerary");
    assert_int_equal(d.cascade[2].action, RD_CASCADE_ESCALATE);
}

/* Only a tool that ends failed cascades. */
static void test_no_cascade_on_retry_or_alternative(void **state)
{
    fixture *f = *state;
    rd_tool_error err = timeout_error();
    assert_int_equal(fail_once(f, "flight_search", &err, 1, 0).n_cascade, 0);
    rd_decision d = fail_once(f, "search_api", &err, 5, 0); /* GIVE_UP, no dependents */
    assert_int_equal(d.action, RD_ACTION_GIVE_UP);
    assert_int_equal(d.n_cascade, 0);
    rd_decision opened = open_breaker(f, "flight_search");
    assert_int_equal(opened.action, RD_ACTION_FAIL_FAST);
    assert_int_equal(opened.n_cascade, 3);
}

/* ---- outcome ids ---- */

static void test_duplicate_outcome_in_decide(void **state)
{
    fixture *f = *state;
    rd_tool_error err = timeout_error();
    rd_decide_input in = input("flight_search", &err, 1);
    in.outcome_id = "call-1";
    in.turn_id = "dup-turn";
    rd_decision first = decide_ok(f, &in);
    assert_false(first.duplicate);
    assert_int_equal(first.breaker.consecutive_failures, 1);
    size_t events = turn_ok(f, "dup-turn").n_events;

    rd_decision again = decide_ok(f, &in);
    assert_true(again.duplicate);
    assert_int_equal(again.action, RD_ACTION_RETRY);
    assert_int_equal(again.breaker.consecutive_failures, 1);
    assert_int_equal(turn_ok(f, "dup-turn").n_events, events);

    /* the same id through RecordOutcome is a replay too */
    rd_outcome_input o = outcome("flight_search", false, 1);
    o.outcome_id = "call-1";
    rd_outcome_result r = record_ok(f, &o);
    assert_true(r.duplicate);
    assert_int_equal(r.breaker.consecutive_failures, 1);
}

static void test_duplicate_outcome_in_record_outcome(void **state)
{
    fixture *f = *state;
    rd_outcome_input o = outcome("flight_search", false, 1);
    o.outcome_id = "call-2";
    rd_outcome_result r = record_ok(f, &o);
    assert_false(r.duplicate);
    assert_int_equal(r.breaker.consecutive_failures, 1);
    r = record_ok(f, &o);
    assert_true(r.duplicate);
    assert_int_equal(r.breaker.consecutive_failures, 1);
    assert_int_equal(breaker_of(f, "flight_search").consecutive_failures, 1);
}

/* ---- RecordOutcome events ---- */

static void test_record_outcome_events(void **state)
{
    fixture *f = *state;
    rd_outcome_input ok = outcome("flight_search", true, 2);
    ok.turn_id = "rec";
    record_ok(f, &ok);
    rd_tool_error err = timeout_error();
    rd_outcome_input fail = outcome("hotel_search", false, 1);
    fail.error = &err;
    fail.turn_id = "rec";
    record_ok(f, &fail);

    rd_turn_trace t = turn_ok(f, "rec");
    int i = find_event(t.events, t.n_events, RD_EV_RETRY_SUCCEEDED, "flight_search");
    assert_true(i >= 0);
    assert_string_equal(t.events[i].detail, "flight_search succeeded on retry (attempt 2)");
    assert_true(t.events[i].executed);
    i = find_event(t.events, t.n_events, RD_EV_TOOL_TIMEOUT, "hotel_search");
    assert_true(i >= 0);
    assert_int_equal(t.events[i].timeout_ms, 30000);
    assert_true(find_event(t.events, t.n_events, RD_EV_TOOL_FAILED, "hotel_search") > i);
    assert_int_equal(breaker_of(f, "hotel_search").consecutive_failures, 1);
}

/* ---- texts: the same bytes as the printf forms they replaced ---- */

static void printf_detail(char *out, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A detail as printf wrote it, then cut and made safe like any trace text. */
static void printf_detail(char *out, size_t cap, const char *fmt, ...)
{
    char buf[RD_TRACE_TEXT_MAX * 2];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    size_t len = n < 0 ? 0 : (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1;
    rd_trace_copy_text(out, cap, buf, len);
}

static void assert_detail(const rd_decision *d, rd_event_type type, const char *tool,
                          const char *want)
{
    assert_string_equal(event_of(d, type, tool)->detail, want);
}

/* A tool id whose details run past the 255-byte cut, with a 2- and a
 * 3-byte character where the cut falls; the largest attempt number. */
static void test_texts_match_printf_forms(void **state)
{
    fixture *f = *state;
    char tool[RD_ID_MAX + 1], want[RD_TRACE_TEXT_MAX], reason[128];
    memset(tool, 'x', 226);
    strcpy(tool + 226, "\xC3\xA9\xE2\x82\xAC_flight");
    rd_tool_error err = timeout_error();
    rd_decision d = fail_once(f, tool, &err, 1, 0);
    const rd_classification *c = &d.classification.classification;
    printf_detail(want, sizeof want, "%s timed out (limit %" PRId64 " ms)", tool, (int64_t)30000);
    assert_detail(&d, RD_EV_TOOL_TIMEOUT, tool, want);
    printf_detail(want, sizeof want, "%s error (%s, rule %s)",
                  rd_retryability_name(c->retryability), rd_category_name(c->category), c->rule_id);
    assert_detail(&d, RD_EV_TOOL_ERROR, tool, want);
    printf_detail(want, sizeof want, "retry %u of %u after %" PRId64 " ms", 1u, 4u, d.delay_ms);
    assert_detail(&d, RD_EV_RETRY, tool, want);
    snprintf(reason, sizeof reason, "transient error: retry %u of %u%s", 1u, 4u, "");
    assert_string_equal(d.reason, reason);

    d = fail_once(f, tool, &err, UINT32_MAX, 0);
    snprintf(reason, sizeof reason, "max attempts (%u) reached", 5u);
    assert_string_equal(d.reason, reason);
    printf_detail(want, sizeof want, "Gave up on %s: %s", tool, reason);
    assert_detail(&d, RD_EV_GAVE_UP, tool, want);

    for (int i = 0; i < 3; i++) /* the fifth failure opens the breaker */
        d = fail_once(f, tool, &err, 1, 0);
    printf_detail(want, sizeof want, "Circuit breaker opened for %s", tool);
    assert_detail(&d, RD_EV_CIRCUIT_OPENED, tool, want);
    printf_detail(want, sizeof want, "Circuit breaker open for %s: failing fast", tool);
    assert_detail(&d, RD_EV_FAIL_FAST, tool, want);

    rd_outcome_input ok = outcome("flight_search", true, UINT32_MAX);
    rd_outcome_result r = record_ok(f, &ok);
    printf_detail(want, sizeof want, "%s succeeded on retry (attempt %u)", "flight_search",
                  UINT32_MAX);
    assert_string_equal(r.trace[0].detail, want);
}

static int setup_checked(void **state)
{
    int rc = setup(state);
    if (rc == 0)
        ((fixture *)*state)->ctx.text_checked = true;
    return rc;
}

/* The texts of two decisions, field by field. */
static void assert_same_texts(const rd_decision *a, const rd_decision *b)
{
    assert_string_equal(a->reason, b->reason);
    const char *llm_a = a->classification.llm_message, *llm_b = b->classification.llm_message;
    assert_true((llm_a == NULL) == (llm_b == NULL));
    if (llm_a)
        assert_string_equal(llm_a, llm_b);
    assert_int_equal(a->classification.llm_message_len, b->classification.llm_message_len);
    assert_int_equal(a->classification.llm_message_len, llm_a ? strlen(llm_a) : 0);
    assert_int_equal(a->n_trace, b->n_trace);
    for (size_t i = 0; i < a->n_trace; i++) {
        assert_string_equal(a->trace[i].tool_id, b->trace[i].tool_id);
        assert_string_equal(a->trace[i].error, b->trace[i].error);
        assert_string_equal(a->trace[i].detail, b->trace[i].detail);
    }
    assert_event_lengths(a);
    assert_event_lengths(b);
}

/* A transport that checked the input (text_checked) gets the same texts
 * as one that did not: the unchecked copies keep every byte and still cut
 * between characters. The message is longer than a trace text, so the
 * trace keeps its head and tail; the tool id runs details past theirs. */
static void test_checked_input_gives_the_same_texts(void **state)
{
    fixture *f = *state;
    char tool[RD_ID_MAX + 1], message[400];
    memset(tool, 'x', 226);
    strcpy(tool + 226, "\xC3\xA9\xE2\x82\xAC_flight");
    memset(message, 'm', 254);
    strcpy(message + 254, "\xE2\x82\xAC 503 Service Unavailable \xC3\xA9");
    rd_tool_error err = error_text(message);
    rd_decide_input in = input(tool, &err, 1);
    /* two RETRY answers (a timeout adds its event), then the last attempt,
     * whose answer carries the text for the model */
    const uint32_t attempts[] = {1, 1, 5};
    for (int i = 0; i < 3; i++) {
        err.kind = i == 1 ? RD_KIND_TIMEOUT : RD_KIND_UNSPECIFIED;
        in.attempt = attempts[i];
        rd_outcome_input ok = outcome(tool, true, 1); /* each pair starts on the same breaker */
        record_ok(f, &ok);
        f->ctx.text_checked = false;
        rd_rng_seed(&f->rng, 7); /* the same jitter, so the same retry detail */
        rd_decision plain = decide_ok(f, &in);
        f->ctx.text_checked = true;
        rd_rng_seed(&f->rng, 7);
        rd_decision checked = decide_ok(f, &in);
        assert_int_equal(checked.action == RD_ACTION_RETRY, i < 2);
        assert_true((checked.classification.llm_message != NULL) == (i == 2));
        assert_same_texts(&plain, &checked);
        const rd_trace_event *ev = event_of(&checked, RD_EV_TOOL_ERROR, tool);
        /* Too long for the trace: its head and tail around the marker, the
         * tail (where a traceback's cause is) kept whole. */
        assert_true(strlen(ev->error) <= RD_TRACE_TEXT_MAX - 1);
        assert_non_null(strstr(ev->error, " bytes cut ...]"));
        const char *end = "503 Service Unavailable \xC3\xA9";
        assert_string_equal(ev->error + strlen(ev->error) - strlen(end), end);
    }
}

/* 004 decision B through the engine: a tool that never ran does not make
 * the turn a success; a tool that timed out did run. */
static void test_turn_failed_by_executed_kind(void **state)
{
    fixture *f = *state;
    rd_tool_error invalid = error_text("bad arguments");
    invalid.kind = RD_KIND_INVALID_PARAMETERS;
    rd_decide_input in = input("flight_search", &invalid, 1);
    in.turn_id = "not-run";
    assert_int_equal(decide_ok(f, &in).action, RD_ACTION_ESCALATE);
    assert_true(turn_ok(f, "not-run").summary.turn_failed);

    rd_tool_error timeout = timeout_error();
    in = input("flight_search", &timeout, 1);
    in.turn_id = "ran";
    decide_ok(f, &in);
    assert_false(turn_ok(f, "ran").summary.turn_failed);
}

/* ---- errors ---- */

static void test_malformed_permit_rejected(void **state)
{
    fixture *f = *state;
    rd_tool_error err = timeout_error();
    rd_decide_input in = input("flight_search", &err, 1);
    in.permit_id = "not-a-permit";
    rd_decision d;
    assert_int_equal(rd_engine_decide(&f->engine, &in, &f->ctx, &d, &f->st), RD_ERR_INVALID);
    assert_string_equal(f->st.msg, "permit_id: malformed");
    assert_int_equal(breaker_of(f, "flight_search").consecutive_failures, 0);

    rd_outcome_input o = outcome("flight_search", true, 1);
    o.permit_id = "p-1-xyz";
    rd_outcome_result r;
    assert_int_equal(rd_engine_record_outcome(&f->engine, &o, &f->ctx, &r, &f->st),
                     RD_ERR_INVALID);
}

static void test_permit_format_and_parse(void **state)
{
    char buf[RD_PERMIT_ID_MAX + 1];
    rd_permit_format(buf, sizeof buf, 7, 0xabc);
    assert_string_equal(buf, "p-7-abc");
    uint64_t gen, tok;
    assert_true(rd_permit_parse(buf, &gen, &tok));
    assert_int_equal(gen, 7);
    assert_int_equal(tok, 0xabc);
    rd_permit_format(buf, sizeof buf, UINT64_MAX, UINT64_MAX);
    assert_true(rd_permit_parse(buf, &gen, &tok));
    assert_true(gen == UINT64_MAX && tok == UINT64_MAX);
    const char *bad[] = {"", "p-", "p-1", "p-1-", "p--1", "p-1-0", "x-1-1", "p-1-1-",
                         "p-18446744073709551616-1", "p-1-10000000000000000", "p-1-1 "};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_false(rd_permit_parse(bad[i], &gen, &tok));
}

static void test_unknown_turn(void **state)
{
    fixture *f = *state;
    rd_turn_trace t;
    assert_int_equal(rd_engine_turn_trace(&f->engine, "nope", &f->ctx, &t, &f->st),
                     RD_ERR_NOT_FOUND);
    assert_string_equal(f->st.msg, "turn_id: unknown turn 'nope'");
}

static void test_breaker_state_views(void **state)
{
    fixture *f = *state;
    rd_tool_error err = timeout_error();
    fail_once(f, "flight_search", &err, 1, 0);
    fail_once(f, "flight_search", &err, 2, 0);
    fail_once(f, "search_api", &err, 1, 0);

    rd_breaker_view *views;
    size_t n;
    assert_int_equal(rd_engine_breakers(&f->engine, NULL, 0, &f->ctx, &views, &n, &f->st),
                     RD_OK);
    assert_int_equal(n, 2);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(views[i].tool_id, "flight_search") == 0) {
            assert_int_equal(views[i].consecutive_failures, 2);
            assert_int_equal(views[i].failure_threshold, 5);
        } else {
            assert_string_equal(views[i].tool_id, "search_api");
            assert_int_equal(views[i].failure_threshold, 10);
        }
    }

    const char *ids[] = {"flight_search", "never_seen"};
    assert_int_equal(rd_engine_breakers(&f->engine, ids, 2, &f->ctx, &views, &n, &f->st),
                     RD_OK);
    assert_int_equal(n, 2);
    assert_string_equal(views[0].tool_id, "flight_search");
    assert_int_equal(views[0].consecutive_failures, 2);
    assert_string_equal(views[1].tool_id, "never_seen");
    assert_int_equal(views[1].status, RD_BREAKER_CLOSED);
    assert_int_equal(views[1].consecutive_failures, 0);
    assert_int_equal(views[1].open_until_ms, 0);
    assert_int_equal(views[1].success_threshold, 1);
}

static void test_reject_unknown_tools(void **state)
{
    fixture *f = *state;
    f->config.reject_unknown_tools = true;
    rd_decide_input in = input("no_such_tool", NULL, 0);
    rd_decision d;
    assert_int_equal(rd_engine_decide(&f->engine, &in, &f->ctx, &d, &f->st),
                     RD_ERR_NOT_FOUND);
    assert_string_equal(f->st.msg, "tool_id: unknown tool 'no_such_tool'");
    rd_outcome_input o = outcome("no_such_tool", true, 1);
    rd_outcome_result r;
    assert_int_equal(rd_engine_record_outcome(&f->engine, &o, &f->ctx, &r, &f->st),
                     RD_ERR_NOT_FOUND);
    assert_int_equal(admission(f, "flight_search").action, RD_ACTION_PROCEED);

    f->config.reject_unknown_tools = false;
    assert_int_equal(admission(f, "no_such_tool").action, RD_ACTION_PROCEED);
}

static void test_invalid_inputs_name_the_field(void **state)
{
    fixture *f = *state;
    rd_decide_input in = input("", NULL, 0);
    rd_decision d;
    assert_int_equal(rd_engine_decide(&f->engine, &in, &f->ctx, &d, &f->st), RD_ERR_INVALID);
    assert_string_equal(f->st.msg, "tool_id: required");
    rd_tool_error err = timeout_error();
    in = input("flight_search", &err, 1);
    in.elapsed_ms = -1;
    assert_int_equal(rd_engine_decide(&f->engine, &in, &f->ctx, &d, &f->st), RD_ERR_INVALID);
    assert_string_equal(f->st.msg, "elapsed_ms: must not be negative");
}

/* 1.5 through the engine: the manifest's override applies. */
static void test_classify_applies_manifest_override(void **state)
{
    fixture *f = *state;
    rd_tool_error err = error_text("Service unavailable (503)");
    err.http_status = 503;
    rd_classify_result r;
    assert_int_equal(rd_engine_classify(&f->engine, "custom_api", &err, &f->ctx, &r, &f->st),
                     RD_OK);
    assert_int_equal(r.classification.retryability, RD_PERMANENT);
    assert_true(r.classification.overridden);
    assert_non_null(strstr(r.llm_message, "Tool: custom_api\n"));
    assert_int_equal(r.llm_message_len, strlen(r.llm_message));
    assert_int_equal(rd_engine_classify(&f->engine, "flight_search", &err, &f->ctx, &r, &f->st),
                     RD_OK);
    assert_int_equal(r.classification.retryability, RD_TRANSIENT);
}

/* The same override on the Decide path: the manifest's permanent 503
 * escalates at once where a tool without a manifest would retry. */
static void test_decide_applies_manifest_override(void **state)
{
    fixture *f = *state;
    rd_tool_error err = error_text("Service unavailable (503)");
    err.http_status = 503;
    rd_decision d = fail_once(f, "custom_api", &err, 1, 0);
    assert_true(d.classification.classification.overridden);
    assert_int_equal(d.classification.classification.retryability, RD_PERMANENT);
    assert_int_equal(d.action, RD_ACTION_ESCALATE);
    d = fail_once(f, "flight_search", &err, 1, 0);
    assert_false(d.classification.classification.overridden);
    assert_int_equal(d.action, RD_ACTION_RETRY);
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_transient_timeout_retries),
        T(test_backoff_per_attempt_then_give_up),
        T(test_jitter_spreads_delays),
        T(test_fifth_failure_with_default_threshold_fails_fast),
        T(test_attempt_zero_counts_as_first),
        T(test_repeated_outcome_id_gets_the_same_delay),
        T(test_max_total_time),
        T(test_manifest_retry_overrides),
        T(test_retry_after_honoured),
        T(test_breaker_opens_after_five),
        T(test_half_open_grants_one_probe_and_success_closes),
        T(test_failed_probe_reopens),
        T(test_failed_probe_reported_by_record_outcome_reopens),
        T(test_probe_lease_expires),
        T(test_retry_while_half_open_is_the_probe),
        T(test_permanent_errors_do_not_count),
        T(test_mixed_errors_count_only_transient),
        T(test_permanent_with_alternative),
        T(test_permanent_without_alternative_escalates),
        T(test_open_breaker_uses_alternative),
        T(test_turn_deadline_partial_results),
        T(test_turn_budget_from_config),
        T(test_turn_deadline_during_retry),
        T(test_cascade_from_request_plan),
        T(test_cascade_from_manifest_graph),
        T(test_no_cascade_on_retry_or_alternative),
        T(test_duplicate_outcome_in_decide),
        T(test_duplicate_outcome_in_record_outcome),
        T(test_record_outcome_events),
        T(test_texts_match_printf_forms),
        cmocka_unit_test_setup_teardown(test_texts_match_printf_forms, setup_checked, teardown),
        T(test_checked_input_gives_the_same_texts),
        T(test_turn_failed_by_executed_kind),
        T(test_malformed_permit_rejected),
        T(test_permit_format_and_parse),
        T(test_unknown_turn),
        T(test_breaker_state_views),
        T(test_reject_unknown_tools),
        T(test_invalid_inputs_name_the_field),
        T(test_classify_applies_manifest_override),
        T(test_decide_applies_manifest_override),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
