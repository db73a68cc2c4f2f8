/* The store conformance suite: the behaviour every rd_store backend owes
 * its callers, as cmocka tests parameterised by a factory.
 *
 * Use from a backend's test program (one program per backend, since the
 * tests are static functions defined in the headers included here):
 *
 *     static rd_store_conformance memory = {.make = rd_store_memory_new};
 *     const struct CMUnitTest tests[] = { RD_STORE_CONFORMANCE_TESTS(&memory) };
 *
 * Every test makes its own store with the limits it needs and destroys it.
 * A backend whose data outlives the rd_store (Redis) must give each make()
 * a fresh namespace (key prefix) so tests do not see each other's keys.
 * Time is driven through now_ms; a backend with its own clock runs this
 * suite in a mode that honours the caller's time.
 *
 * The factory type and the helpers are in store_conformance_fixture.h; the
 * cases, by theme, in the store_conformance_*.h headers below. A case is
 * run by every backend once it is listed in RD_STORE_CONFORMANCE_TESTS (an
 * unlisted one draws an unused-function warning). */
#ifndef RD_TESTS_STORE_CONFORMANCE_H
#define RD_TESTS_STORE_CONFORMANCE_H

#include "store_conformance_fixture.h"

#include "store_conformance_breakers.h"
#include "store_conformance_outcomes.h"
#include "store_conformance_latency.h"
#include "store_conformance_turns.h"
#include "store_conformance_capacity.h"
#include "store_conformance_holds.h"
#include "store_conformance_fleet.h"
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
