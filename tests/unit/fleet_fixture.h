/* An engine over the in-memory store with an injected clock, for the tests
 * of the fleet features (test_budget.c, test_breaker_rate.c,
 * test_signature.c). The configuration is tests/unit/fixtures/decide/,
 * copied shallowly per test so a test may change the defaults' policies
 * (tools without a manifest use them). Static functions: include it from
 * one test program only. */
#ifndef RD_TESTS_FLEET_FIXTURE_H
#define RD_TESTS_FLEET_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "config/config.h"
#include "domain/arena.h"
#include "engine/decide.h"
#include "domain/err.h"
#include "domain/store.h"

#define FLEET_FIXTURE RD_SOURCE_DIR "/tests/unit/fixtures/decide/recovery.yaml"
#define FLEET_T0 1762338645000

static rd_config *g_fleet_config;

typedef struct fleet {
    rd_config config;   /* shallow copy of g_fleet_config */
    rd_store *store;
    rd_engine engine;
    rd_arena arena;
    rd_rng rng;
    rd_call_ctx ctx;
    rd_status st;
} fleet;

static int fleet_group_setup(void **state)
{
    char err[RD_CONFIG_ERR_MAX];
    g_fleet_config = rd_config_load(FLEET_FIXTURE, err, sizeof err);
    if (!g_fleet_config)
        fprintf(stderr, "fixture config: %s\n", err);
    return g_fleet_config ? 0 : -1;
}

static int fleet_group_teardown(void **state)
{
    rd_config_free(g_fleet_config);
    return 0;
}

static int fleet_setup(void **state)
{
    static fleet f;
    memset(&f, 0, sizeof f);
    f.config = *g_fleet_config;
    rd_store_limits limits = {
        .tool_idle_ttl_ms = 3600000, .turn_ttl_ms = 3600000, .max_events_per_turn = 1000,
        .outcome_ttl_ms = 600000, .max_signatures = 100, .signature_ttl_ms = 60000};
    f.store = rd_store_memory_new(&limits);
    if (!f.store)
        return -1;
    f.engine = (rd_engine){.policy = &f.config.policy, .store = f.store};
    rd_arena_init(&f.arena, 16384);
    rd_rng_seed(&f.rng, 7);
    f.ctx = (rd_call_ctx){.now_ms = FLEET_T0, .arena = &f.arena, .rng = &f.rng};
    *state = &f;
    return 0;
}

static int fleet_teardown(void **state)
{
    fleet *f = *state;
    rd_store_destroy(f->store);
    rd_arena_free(&f->arena);
    return 0;
}

static inline rd_tool_error fleet_error(const char *message)
{
    return (rd_tool_error){.message = message, .message_len = strlen(message), .code = "",
                           .exception_type = ""};
}

static inline rd_decide_input fleet_input(const char *tool_id, const rd_tool_error *err,
                                   uint32_t attempt)
{
    return (rd_decide_input){.tool_id = tool_id, .error = err, .attempt = attempt,
                             .turn_id = "", .executor_id = "", .outcome_id = "",
                             .permit_id = ""};
}

static inline rd_decision fleet_decide(fleet *f, const rd_decide_input *in)
{
    rd_decision d;
    rd_arena_reset(&f->arena);
    if (rd_engine_decide(&f->engine, in, &f->ctx, &d, &f->st) != RD_OK)
        fail_msg("decide %s: %s", in->tool_id, f->st.msg);
    return d;
}

static inline rd_outcome_result fleet_record(fleet *f, const rd_outcome_input *in)
{
    rd_outcome_result r;
    rd_arena_reset(&f->arena);
    if (rd_engine_record_outcome(&f->engine, in, &f->ctx, &r, &f->st) != RD_OK)
        fail_msg("record %s: %s", in->tool_id, f->st.msg);
    return r;
}

static inline rd_outcome_input fleet_outcome(const char *tool_id, bool success, uint32_t attempt)
{
    return (rd_outcome_input){.tool_id = tool_id, .success = success, .attempt = attempt,
                              .turn_id = "", .outcome_id = "", .permit_id = "",
                              .executor_id = ""};
}

#endif
