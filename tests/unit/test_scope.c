/* Scoped breakers (domain/scope.h, engine/scope_breakers.c): labels
 * checked, keys built, and Decide / RecordOutcome / GetBreakerState on
 * chat_completion (tests/unit/fixtures/effects/tools.d), whose breakers are
 * keyed by provider and credential, over the in-memory store. */
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
#include "domain/err.h"
#include "domain/scope.h"
#include "domain/store.h"
#include "engine/decide.h"

#include "engine_fixture.h"

#define TOOL "chat_completion"


/* ---- labels and keys (domain) ---- */

static const char *check_message(const rd_scope_label *labels, size_t n)
{
    static rd_status st;
    st = (rd_status){0};
    return rd_scope_check(labels, n, &st) == RD_OK ? "" : st.msg;
}

static void test_labels_are_checked_field_by_field(void **state)
{
    (void)state;
    rd_scope_label ok[] = {{"provider", "openai"}, {"credential", "key-1"}};
    assert_string_equal(check_message(ok, 2), "");
    rd_scope_label many[RD_SCOPE_LABELS_MAX + 1];
    for (size_t i = 0; i < RD_SCOPE_LABELS_MAX + 1; i++)
        many[i] = (rd_scope_label){"d", "v"};
    assert_string_equal(check_message(many, RD_SCOPE_LABELS_MAX + 1),
                        "scope: more than 8 labels");
    rd_scope_label upper[] = {{"Provider", "openai"}};
    assert_contains(check_message(upper, 1), "scope[0].dimension: must be 1 to 32 of a-z");
    rd_scope_label twice[] = {{"provider", "a"}, {"provider", "b"}};
    assert_string_equal(check_message(twice, 2), "scope[1].dimension: \"provider\" given twice");
    char long_value[RD_SCOPE_VALUE_MAX + 2];
    memset(long_value, 'v', sizeof long_value - 1);
    long_value[sizeof long_value - 1] = '\0';
    rd_scope_label too_long[] = {{"provider", "a"}, {"credential", long_value}};
    assert_string_equal(check_message(too_long, 2), "scope[1].value: longer than 64 bytes");
    rd_scope_label separator[] = {{"provider", "a|b"}};
    assert_contains(check_message(separator, 1), "scope[0].value: contains '|'");
    rd_scope_label empty[] = {{"provider", ""}};
    assert_string_equal(check_message(empty, 1), "scope[0].value: required");
    rd_scope_label control[] = {{"provider", "a\nb"}};
    assert_string_equal(check_message(control, 1),
                        "scope[0].value: contains a control character");
}

static void test_keys_follow_the_manifest_dimensions(void **state)
{
    (void)state;
    const rd_tool_config *t = rd_policy_find_tool(&g_config->policy, TOOL);
    assert_non_null(t);
    assert_int_equal(t->scope.n_dimensions, 2);
    rd_scope_label labels[] = {{"region", "eu"}, {"credential", "k1"}, {"provider", "openai"}};
    char key[RD_ID_MAX + 1];
    assert_int_equal(rd_scope_depth(&t->scope, labels, 3), 2);
    assert_true(rd_scope_key(key, TOOL, &t->scope, labels, 3, RD_SCOPE_LEVEL_TOOL));
    assert_string_equal(key, TOOL);
    assert_true(rd_scope_key(key, TOOL, &t->scope, labels, 3, 0));
    assert_string_equal(key, TOOL "|provider=openai");
    assert_true(rd_scope_key(key, TOOL, &t->scope, labels, 3, 1));
    assert_string_equal(key, TOOL "|provider=openai|credential=k1");
    size_t len;
    const char *level = rd_scope_level_name(key, &len);
    assert_int_equal(len, strlen("credential"));
    assert_memory_equal(level, "credential", len);
    rd_scope_level_name(TOOL, &len);
    assert_int_equal(len, 0);
    /* a credential without its provider reaches no level */
    assert_int_equal(rd_scope_depth(&t->scope, labels + 1, 1), 0);
    assert_true(rd_policy_tool_of_key(&g_config->policy, TOOL "|provider=x") == t);

    rd_tool_error e = {.message = "", .code = "", .exception_type = "", .http_status = 429};
    assert_int_equal(rd_scope_level_of(&t->scope, TOOL, &e), 1);
    e.http_status = 503;
    assert_int_equal(rd_scope_level_of(&t->scope, TOOL, &e), 0);
    e.http_status = 401;
    assert_int_equal(rd_scope_level_of(&t->scope, TOOL, &e), RD_SCOPE_LEVEL_NONE);
    e.http_status = 500;
    assert_int_equal(rd_scope_level_of(&t->scope, TOOL, &e), RD_SCOPE_LEVEL_TOOL);
    e.http_status = 504; /* no rule: the narrowest */
    assert_int_equal(rd_scope_level_of(&t->scope, TOOL, &e), 1);
}

/* ---- Decide and RecordOutcome ---- */

static rd_decide_input input(const rd_tool_error *err, const rd_scope_label *scope, size_t n)
{
    return (rd_decide_input){.tool_id = TOOL, .error = err, .attempt = 1, .turn_id = "",
                             .executor_id = "", .outcome_id = "", .permit_id = "",
                             .idempotency_key = "", .scope = scope, .n_scope = n};
}

static rd_decision decide_ok(fixture *f, const rd_decide_input *in)
{
    rd_decision d;
    if (rd_engine_decide(&f->engine, in, &f->ctx, &d, &f->st) != RD_OK)
        fail_msg("decide: %s", f->st.msg);
    return d;
}

static rd_decision fail_with(fixture *f, int status, const rd_scope_label *scope, size_t n)
{
    rd_tool_error e = {.message = "upstream error", .message_len = 14, .code = "",
                       .exception_type = "", .http_status = status};
    rd_decide_input in = input(&e, scope, n);
    return decide_ok(f, &in);
}

static rd_decision admit(fixture *f, const rd_scope_label *scope, size_t n)
{
    rd_decide_input in = input(NULL, scope, n);
    return decide_ok(f, &in);
}

static const rd_scope_label K1[] = {{"provider", "openai"}, {"credential", "k1"}};
static const rd_scope_label K2[] = {{"provider", "openai"}, {"credential", "k2"}};
static const rd_scope_label K3[] = {{"provider", "openai"}, {"credential", "k3"}};
static const rd_scope_label OTHER[] = {{"provider", "azure"}, {"credential", "k1"}};

static void test_a_credentials_rate_limit_opens_only_its_breaker(void **state)
{
    fixture *f = *state;
    rd_decision d = fail_with(f, 429, K1, 2);
    assert_int_equal(d.action, RD_ACTION_RETRY);
    assert_string_equal(d.breaker.tool_id, TOOL "|provider=openai|credential=k1");
    assert_int_equal(d.breaker.scope_level_len, strlen("credential"));
    d = fail_with(f, 429, K1, 2);
    assert_int_equal(d.breaker.status, RD_BREAKER_OPEN);
    assert_int_equal(d.action, RD_ACTION_FAIL_FAST);
    assert_contains(d.reason, "circuit open for " TOOL "|provider=openai|credential=k1");

    d = admit(f, K1, 2);
    assert_int_equal(d.action, RD_ACTION_FAIL_FAST);
    assert_contains(d.reason, "credential=k1");
    d = admit(f, K2, 2);
    assert_int_equal(d.action, RD_ACTION_PROCEED);
    assert_string_equal(d.breaker.tool_id, TOOL "|provider=openai|credential=k2");
    d = admit(f, NULL, 0); /* an unscoped call: the tool's own breaker */
    assert_int_equal(d.action, RD_ACTION_PROCEED);
    assert_string_equal(d.breaker.tool_id, TOOL);
}

static void test_a_providers_overload_opens_the_shared_parent(void **state)
{
    fixture *f = *state;
    fail_with(f, 503, K1, 2);
    rd_decision d = fail_with(f, 503, K2, 2);
    assert_string_equal(d.breaker.tool_id, TOOL "|provider=openai");
    assert_int_equal(d.breaker.status, RD_BREAKER_OPEN);
    d = admit(f, K3, 2); /* a credential never used: its parent is open */
    assert_int_equal(d.action, RD_ACTION_FAIL_FAST);
    assert_contains(d.reason, "circuit open for " TOOL "|provider=openai");
    assert_string_equal(d.breaker.tool_id, TOOL "|provider=openai");
    assert_int_equal(admit(f, OTHER, 2).action, RD_ACTION_PROCEED);
    /* a credential's own failure is not retried while its provider is open */
    d = fail_with(f, 429, K3, 2);
    assert_int_equal(d.action, RD_ACTION_FAIL_FAST);
    assert_string_equal(d.breaker.tool_id, TOOL "|provider=openai");
    assert_contains(d.reason, "circuit open for " TOOL "|provider=openai");
    assert_int_equal(fail_with(f, 429, OTHER, 2).action, RD_ACTION_RETRY);

    /* half-open after the open timeout: one probe, and its success closes it */
    f->ctx.now_ms += 1001;
    d = admit(f, K3, 2);
    assert_int_equal(d.action, RD_ACTION_PROCEED);
    assert_string_not_equal(d.permit_id, "");
    assert_int_equal(admit(f, K2, 2).action, RD_ACTION_FAIL_FAST); /* the probe is taken */
    rd_outcome_input ok = {.tool_id = TOOL, .success = true, .attempt = 1, .turn_id = "",
                           .outcome_id = "", .permit_id = d.permit_id, .executor_id = "",
                           .scope = K3, .n_scope = 2};
    rd_outcome_result r;
    assert_int_equal(rd_engine_record_outcome(&f->engine, &ok, &f->ctx, &r, &f->st), RD_OK);
    assert_int_equal(r.transition, RD_TRANSITION_CLOSED);
    assert_string_equal(r.breaker.tool_id, TOOL "|provider=openai");
    assert_int_equal(admit(f, K2, 2).action, RD_ACTION_PROCEED);
}

static void test_level_none_counts_against_nothing_and_tool_against_all(void **state)
{
    fixture *f = *state;
    for (int i = 0; i < 4; i++) {
        rd_decision d = fail_with(f, 502, K1, 2);
        assert_int_equal(d.breaker.consecutive_failures, 0);
        assert_int_equal(d.breaker.status, RD_BREAKER_CLOSED);
        fail_with(f, 401, K1, 2);
    }
    assert_int_equal(admit(f, K1, 2).action, RD_ACTION_PROCEED);
    fail_with(f, 500, K1, 2);
    rd_decision d = fail_with(f, 500, K2, 2);
    assert_string_equal(d.breaker.tool_id, TOOL);
    assert_int_equal(d.breaker.status, RD_BREAKER_OPEN);
    d = admit(f, OTHER, 2);
    assert_int_equal(d.action, RD_ACTION_FAIL_FAST);
    assert_string_equal(d.breaker.tool_id, TOOL);
}

static void test_a_failure_reported_by_record_outcome_counts_at_its_level(void **state)
{
    fixture *f = *state;
    rd_tool_error e = {.message = "", .code = "", .exception_type = "", .http_status = 429};
    rd_outcome_input in = {.tool_id = TOOL, .error = &e, .attempt = 1, .turn_id = "",
                           .outcome_id = "", .permit_id = "", .executor_id = "",
                           .scope = K2, .n_scope = 2};
    rd_outcome_result r;
    for (int i = 0; i < 2; i++)
        assert_int_equal(rd_engine_record_outcome(&f->engine, &in, &f->ctx, &r, &f->st), RD_OK);
    assert_string_equal(r.breaker.tool_id, TOOL "|provider=openai|credential=k2");
    assert_int_equal(r.breaker.status, RD_BREAKER_OPEN);
    assert_int_equal(admit(f, K2, 2).action, RD_ACTION_FAIL_FAST);
    assert_int_equal(admit(f, K1, 2).action, RD_ACTION_PROCEED);
}

static void test_get_breaker_state_lists_scoped_keys(void **state)
{
    fixture *f = *state;
    fail_with(f, 429, K1, 2);
    fail_with(f, 503, K2, 2);
    rd_breaker_view *views;
    size_t n;
    assert_int_equal(rd_engine_breakers(&f->engine, NULL, 0, &f->ctx, &views, &n, &f->st), RD_OK);
    bool credential = false, provider = false;
    for (size_t i = 0; i < n; i++) {
        const char *level = views[i].scope_level;
        size_t len = views[i].scope_level_len;
        if (strcmp(views[i].tool_id, TOOL "|provider=openai|credential=k1") == 0) {
            credential = len == 10 && memcmp(level, "credential", 10) == 0;
            assert_int_equal(views[i].failure_threshold, 2); /* the manifest's policy */
        }
        if (strcmp(views[i].tool_id, TOOL "|provider=openai") == 0)
            provider = len == 8 && memcmp(level, "provider", 8) == 0;
    }
    assert_true(credential);
    assert_true(provider);
    const char *named[] = {TOOL "|provider=openai"};
    assert_int_equal(rd_engine_breakers(&f->engine, named, 1, &f->ctx, &views, &n, &f->st), RD_OK);
    assert_int_equal(n, 1);
    assert_int_equal(views[0].consecutive_failures, 1);
}

static void test_bad_scopes_are_refused(void **state)
{
    fixture *f = *state;
    rd_scope_label twice[] = {{"provider", "a"}, {"provider", "b"}};
    rd_decide_input in = input(NULL, twice, 2);
    rd_decision d;
    assert_int_equal(rd_engine_decide(&f->engine, &in, &f->ctx, &d, &f->st), RD_ERR_INVALID);
    assert_string_equal(f->st.msg, "scope[1].dimension: \"provider\" given twice");
    /* the longest values keep the key within an id's bound */
    char value[RD_SCOPE_VALUE_MAX + 1];
    memset(value, 'v', RD_SCOPE_VALUE_MAX);
    value[RD_SCOPE_VALUE_MAX] = '\0';
    rd_scope_label deep[] = {{"provider", value}, {"credential", value}};
    in = input(NULL, deep, 2);
    rd_tool_error e = {.message = "", .code = "", .exception_type = "", .http_status = 429};
    in.error = &e;
    d = decide_ok(f, &in); /* 15 + 2 * (12 + 64) bytes: fits */
    assert_int_equal(d.action, RD_ACTION_RETRY);
}

/* ---- alternatives at the call's scope ---- */

static rd_decision decide_tool(fixture *f, const char *tool, int status,
                               const rd_scope_label *scope, size_t n)
{
    rd_tool_error e = {.message = "upstream error", .message_len = 14, .code = "",
                       .exception_type = "", .http_status = status};
    rd_decide_input in = input(status ? &e : NULL, scope, n);
    in.tool_id = tool;
    in.attempt = status ? 1 : 0;
    return decide_ok(f, &in);
}

static void test_alternatives_are_admitted_through_their_scoped_keys(void **state)
{
    fixture *f = *state;
    /* the backup's openai breaker opens; its azure one stays closed */
    decide_tool(f, "summarize_backup", 503, K1, 2);
    rd_decision d = decide_tool(f, "summarize_backup", 0, K1, 2);
    assert_string_equal(d.breaker.tool_id, "summarize_backup|provider=openai");
    assert_int_equal(d.breaker.status, RD_BREAKER_OPEN); /* (its primary's next: the spare) */
    assert_int_equal(decide_tool(f, "summarize_backup", 0, OTHER, 2).action, RD_ACTION_PROCEED);
    /* summarize's k1 credential opens: the backup is passed over at
     * openai (its provider key is open) for the spare */
    decide_tool(f, "summarize", 429, K1, 2);
    d = decide_tool(f, "summarize", 429, K1, 2);
    assert_int_equal(d.action, RD_ACTION_USE_ALTERNATIVE);
    assert_string_equal(d.alternative_tool_id, "summarize_spare");
    /* at azure the backup's key is closed, and it comes first */
    decide_tool(f, "summarize", 429, OTHER, 2);
    d = decide_tool(f, "summarize", 429, OTHER, 2);
    assert_int_equal(d.action, RD_ACTION_USE_ALTERNATIVE);
    assert_string_equal(d.alternative_tool_id, "summarize_backup");
    /* the spare's openai key opens too: nothing left at openai */
    decide_tool(f, "summarize_spare", 503, K1, 2);
    d = decide_tool(f, "summarize", 0, K1, 2);
    assert_int_equal(d.action, RD_ACTION_FAIL_FAST);
    /* without a scope, the backups' own (tool) breakers are closed */
    d = decide_tool(f, "summarize", 0, NULL, 0);
    assert_int_equal(d.action, RD_ACTION_PROCEED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_labels_are_checked_field_by_field),
        cmocka_unit_test(test_keys_follow_the_manifest_dimensions),
        cmocka_unit_test_setup_teardown(test_a_credentials_rate_limit_opens_only_its_breaker,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_providers_overload_opens_the_shared_parent, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_level_none_counts_against_nothing_and_tool_against_all, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_failure_reported_by_record_outcome_counts_at_its_level, setup, teardown),
        cmocka_unit_test_setup_teardown(test_get_breaker_state_lists_scoped_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_scopes_are_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_alternatives_are_admitted_through_their_scoped_keys,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
