/* The engine over the in-memory store, shared by the unit tests of the
 * decision engine (test_decide_*.c, test_effects.c, test_scope.c,
 * test_shadow.c, test_latency.c). The configuration is FIXTURE (define it before the
 * include; tests/unit/fixtures/effects by default), loaded once per group.
 * Each test gets a fresh store, arena and call context at T0, and a
 * shallow copy of the configuration the engine decides by, so a test may
 * change a setting of its own copy. Include after cmocka.h. */
#ifndef RD_TEST_ENGINE_FIXTURE_H
#define RD_TEST_ENGINE_FIXTURE_H

#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "domain/arena.h"
#include "domain/err.h"
#include "domain/store.h"
#include "engine/decide.h"

#ifndef FIXTURE
#define FIXTURE RD_SOURCE_DIR "/tests/unit/fixtures/effects/recovery.yaml"
#endif
#define T0 1762338645000 /* 2025-11-05T10:30:45Z */

static rd_config *g_config;

typedef struct fixture {
    rd_config config; /* a shallow copy of *g_config */
    rd_store *store;
    rd_engine engine;
    rd_arena arena;
    rd_rng rng;
    rd_call_ctx ctx;
    rd_status st;
} fixture;

static int group_setup(void **state)
{
    (void)state;
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
    (void)state;
    rd_config_free(g_config);
    return 0;
}

static int setup(void **state)
{
    static fixture f;
    memset(&f, 0, sizeof f);
    f.config = *g_config;
    rd_store_limits limits = {
        .max_tools = 1000, .tool_idle_ttl_ms = 3600000, .turn_ttl_ms = 3600000,
        .max_turns = 1000, .max_events_per_turn = 1000, .outcome_ttl_ms = 3600000,
        .max_outcomes = 1000,
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

static inline void assert_contains(const char *haystack, const char *needle)
{
    if (!haystack || !strstr(haystack, needle))
        fail_msg("\"%s\" does not contain \"%s\"", haystack ? haystack : "(null)", needle);
}

#endif
