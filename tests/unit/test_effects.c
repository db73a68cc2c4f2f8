/* Retry safety (domain/effects.h, engine/effect_decision.c): the verdict
 * of each kind of failure, and what Decide and Classify answer for tools
 * of declared effects over the in-memory store (and chat_completion for
 * tests/unit/test_scope.c). Configuration:
 * tests/unit/fixtures/effects/ (the shipped rules). */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "config/config.h"
#include "domain/arena.h"
#include "domain/classify.h"
#include "domain/effects.h"
#include "domain/err.h"
#include "domain/store.h"
#include "engine/decide.h"

#include "engine_fixture.h"


/* ---- helpers ---- */

static rd_tool_error error_text(const char *message)
{
    return (rd_tool_error){.message = message, .message_len = strlen(message), .code = "",
                           .exception_type = ""};
}

static rd_tool_error timeout_error(void)
{
    rd_tool_error e = error_text("Tool timeout after 10s");
    e.kind = RD_KIND_TIMEOUT;
    return e;
}

static rd_tool_error http_error(int status)
{
    rd_tool_error e = error_text("upstream answered with an error");
    e.http_status = status;
    return e;
}

static rd_decide_input input(const char *tool_id, const rd_tool_error *err)
{
    return (rd_decide_input){.tool_id = tool_id, .error = err, .attempt = 1, .turn_id = "",
                             .executor_id = "", .outcome_id = "", .permit_id = "",
                             .idempotency_key = ""};
}

static rd_decision decide_ok(fixture *f, const rd_decide_input *in)
{
    rd_decision d;
    if (rd_engine_decide(&f->engine, in, &f->ctx, &d, &f->st) != RD_OK)
        fail_msg("decide %s: %s", in->tool_id, f->st.msg);
    return d;
}

static rd_decision fail_once(fixture *f, const char *tool_id, const rd_tool_error *err)
{
    rd_decide_input in = input(tool_id, err);
    return decide_ok(f, &in);
}

static const rd_trace_event *find_event(const rd_decision *d, rd_event_type type)
{
    for (size_t i = 0; i < d->n_trace; i++)
        if (d->trace[i].type == type)
            return &d->trace[i];
    return NULL;
}

static const rd_classification *cls(const rd_decision *d)
{
    assert_true(d->has_classification);
    return &d->classification.classification;
}

/* ---- the verdict (domain) ---- */

static rd_classification classified(const rd_tool_error *e)
{
    rd_classification c;
    rd_classify(&g_config->policy.rules, NULL, "t", e, &c);
    return c;
}

static rd_effect_safety safety_of(const rd_tool_error *e, bool key_mode, bool has_key)
{
    rd_classification c = classified(e);
    return rd_effect_judge(RD_EFFECTS_NON_IDEMPOTENT, key_mode, has_key, e, &c).safety;
}

static void test_errors_that_prove_the_tool_did_not_run(void **state)
{
    (void)state;
    rd_tool_error e = error_text("Invalid parameters: 'to' is required");
    e.kind = RD_KIND_INVALID_PARAMETERS;
    assert_int_equal(safety_of(&e, false, false), RD_EFFECT_SAFETY_NOT_EXECUTED);
    e = error_text("connect failed");
    e.code = "ECONNREFUSED";
    e.kind = RD_KIND_TRANSPORT_ERROR; /* the kind says executed; the errno proves otherwise */
    assert_int_equal(safety_of(&e, false, false), RD_EFFECT_SAFETY_NOT_EXECUTED);
    e = error_text("dial tcp 10.0.0.7:443: connect: Connection refused");
    assert_int_equal(safety_of(&e, false, false), RD_EFFECT_SAFETY_NOT_EXECUTED);
    e = error_text("timed out");
    e.exception_type = "httpx.ConnectTimeout";
    assert_int_equal(safety_of(&e, false, false), RD_EFFECT_SAFETY_NOT_EXECUTED);
    for (int status = 429; status <= 503; status += 503 - 429) {
        e = http_error(status);
        assert_int_equal(safety_of(&e, false, false), RD_EFFECT_SAFETY_NOT_EXECUTED);
    }
    e = http_error(422);
    assert_int_equal(safety_of(&e, false, false), RD_EFFECT_SAFETY_NOT_EXECUTED);
    e = error_text("quota");
    e.grpc_code = 8; /* RESOURCE_EXHAUSTED */
    assert_int_equal(safety_of(&e, false, false), RD_EFFECT_SAFETY_NOT_EXECUTED);
}

static void test_errors_that_leave_the_effect_unknown(void **state)
{
    (void)state;
    rd_tool_error e = timeout_error();
    assert_int_equal(safety_of(&e, false, false), RD_EFFECT_SAFETY_UNKNOWN);
    e = error_text("read failed");
    e.code = "ECONNRESET";
    e.kind = RD_KIND_TRANSPORT_ERROR;
    assert_int_equal(safety_of(&e, false, false), RD_EFFECT_SAFETY_UNKNOWN);
    int statuses[] = {500, 502, 504, 408};
    for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++) {
        e = http_error(statuses[i]);
        assert_int_equal(safety_of(&e, false, false), RD_EFFECT_SAFETY_UNKNOWN);
    }
    e = error_text("deadline");
    e.grpc_code = 14; /* UNAVAILABLE may come after the call was sent */
    assert_int_equal(safety_of(&e, false, false), RD_EFFECT_SAFETY_UNKNOWN);
    /* A key helps only a tool that honours one, and only when sent. */
    e = timeout_error();
    assert_int_equal(safety_of(&e, true, true), RD_EFFECT_SAFETY_IDEMPOTENCY_KEY);
    assert_int_equal(safety_of(&e, true, false), RD_EFFECT_SAFETY_UNKNOWN);
    assert_int_equal(safety_of(&e, false, true), RD_EFFECT_SAFETY_UNKNOWN);
}

static void test_declared_and_undeclared_effects(void **state)
{
    (void)state;
    rd_tool_error e = timeout_error();
    rd_classification c = classified(&e);
    rd_effect_verdict v = rd_effect_judge(RD_EFFECTS_UNSPECIFIED, false, false, &e, &c);
    assert_int_equal(v.safety, RD_EFFECT_SAFETY_UNSPECIFIED);
    assert_null(v.reason);
    v = rd_effect_judge(RD_EFFECTS_NONE, false, false, &e, &c);
    assert_int_equal(v.safety, RD_EFFECT_SAFETY_DECLARED_SAFE);
    v = rd_effect_judge(RD_EFFECTS_IDEMPOTENT, false, false, &e, &c);
    assert_int_equal(v.safety, RD_EFFECT_SAFETY_DECLARED_SAFE);
    assert_non_null(v.reason);
}

static void test_hints_resolve_only_what_the_manifest_leaves_open(void **state)
{
    (void)state;
    rd_tool_error e = timeout_error();
    assert_int_equal(rd_effects_resolve(RD_EFFECTS_UNSPECIFIED, &e), RD_EFFECTS_UNSPECIFIED);
    assert_int_equal(rd_effects_resolve(RD_EFFECTS_UNSPECIFIED, NULL), RD_EFFECTS_UNSPECIFIED);
    e.destructive_hint = RD_HINT_TRUE;
    assert_int_equal(rd_effects_resolve(RD_EFFECTS_UNSPECIFIED, &e), RD_EFFECTS_NON_IDEMPOTENT);
    e.idempotent_hint = RD_HINT_TRUE;
    assert_int_equal(rd_effects_resolve(RD_EFFECTS_UNSPECIFIED, &e), RD_EFFECTS_IDEMPOTENT);
    e.read_only_hint = RD_HINT_TRUE;
    assert_int_equal(rd_effects_resolve(RD_EFFECTS_UNSPECIFIED, &e), RD_EFFECTS_NONE);
    e = timeout_error();
    e.idempotent_hint = RD_HINT_FALSE;
    assert_int_equal(rd_effects_resolve(RD_EFFECTS_UNSPECIFIED, &e), RD_EFFECTS_NON_IDEMPOTENT);
    e.destructive_hint = RD_HINT_FALSE; /* non-destructive, yet a repeat adds again */
    assert_int_equal(rd_effects_resolve(RD_EFFECTS_UNSPECIFIED, &e), RD_EFFECTS_NON_IDEMPOTENT);
    /* the manifest wins */
    e.read_only_hint = RD_HINT_TRUE;
    assert_int_equal(rd_effects_resolve(RD_EFFECTS_NON_IDEMPOTENT, &e), RD_EFFECTS_NON_IDEMPOTENT);
    e = timeout_error();
    e.destructive_hint = RD_HINT_FALSE;
    assert_int_equal(rd_effects_resolve(RD_EFFECTS_UNSPECIFIED, &e), RD_EFFECTS_UNSPECIFIED);
}

/* ---- Decide ---- */

static void test_timeout_of_a_non_idempotent_tool_is_verified_not_retried(void **state)
{
    fixture *f = *state;
    rd_tool_error e = timeout_error();
    rd_decision d = fail_once(f, "send_email", &e);
    assert_int_equal(d.action, RD_ACTION_VERIFY);
    assert_string_equal(d.verify_tool_id, "find_sent_email");
    assert_int_equal(d.timeout_ms, 2000); /* the verify tool's */
    assert_int_equal(d.delay_ms, 0);
    assert_string_equal(d.idempotency_key, "");
    const rd_classification *c = cls(&d);
    assert_int_equal(c->effects, RD_EFFECTS_NON_IDEMPOTENT);
    assert_int_equal(c->effect_safety, RD_EFFECT_SAFETY_UNKNOWN);
    assert_contains(c->effect_reason, "timed out");
    assert_contains(d.reason, "effect unknown");
    assert_contains(d.reason, "find_sent_email");
    assert_contains(d.classification.llm_message, "Tool Execution Failed");
    assert_contains(d.classification.llm_message, "may have carried out its action");
    assert_contains(d.classification.llm_message, "Do not call it again: first call "
                                                  "find_sent_email");
    assert_null(strstr(d.classification.llm_message, "cannot be used for this request"));
    assert_int_equal(d.classification.llm_message_len, strlen(d.classification.llm_message));
    const rd_trace_event *ev = find_event(&d, RD_EV_EFFECT_CHECKED);
    assert_non_null(ev);
    assert_int_equal(ev->decision, RD_ACTION_VERIFY);
    assert_contains(ev->detail, "effects non_idempotent, unknown: ");
    assert_int_equal(ev->detail_len, strlen(ev->detail));
    assert_null(find_event(&d, RD_EV_RETRY));
    /* the failure still counts against the breaker */
    assert_int_equal(d.breaker.consecutive_failures, 1);
}

/* A verifier that finds nothing done lets the executor call the tool
 * again; attempts bound that cycle as they bound retries: at max_attempts
 * the answer is ESCALATE, never another VERIFY. */
static void test_verify_cycles_end_at_max_attempts(void **state)
{
    fixture *f = *state;
    rd_tool_error e = timeout_error();
    const uint32_t max = 5; /* the defaults' retry.max_attempts */
    for (uint32_t attempt = 1; attempt <= max; attempt++) {
        rd_decide_input in = input("send_email", &e);
        in.attempt = attempt;
        rd_decision d = decide_ok(f, &in);
        if (attempt < max) {
            assert_int_equal(d.action, RD_ACTION_VERIFY);
            continue;
        }
        assert_int_equal(d.action, RD_ACTION_ESCALATE);
        assert_string_equal(d.verify_tool_id, "");
        assert_contains(d.reason, "max attempts (5) reached and the effect is unknown");
        assert_int_equal(cls(&d)->effect_safety, RD_EFFECT_SAFETY_UNKNOWN);
        assert_null(find_event(&d, RD_EV_RETRY));
    }
}

static void test_proven_not_executed_failures_are_retried(void **state)
{
    fixture *f = *state;
    rd_tool_error refused = error_text("connect failed");
    refused.code = "ECONNREFUSED";
    rd_tool_error limited = http_error(429);
    rd_tool_error unavailable = http_error(503);
    const rd_tool_error *errors[] = {&refused, &limited, &unavailable};
    for (size_t i = 0; i < 3; i++) {
        rd_decision d = fail_once(f, "send_email", errors[i]);
        assert_int_equal(d.action, RD_ACTION_RETRY);
        assert_true(d.delay_ms > 0);
        assert_int_equal(cls(&d)->effect_safety, RD_EFFECT_SAFETY_NOT_EXECUTED);
        assert_non_null(cls(&d)->effect_reason);
        const rd_trace_event *ev = find_event(&d, RD_EV_EFFECT_CHECKED);
        assert_non_null(ev);
        assert_int_equal(ev->decision, RD_ACTION_RETRY);
        assert_contains(ev->detail, "not_executed");
        assert_non_null(find_event(&d, RD_EV_RETRY));
    }
    rd_tool_error bad_gateway = http_error(502);
    assert_int_equal(fail_once(f, "send_email", &bad_gateway).action, RD_ACTION_VERIFY);
}

static void test_an_idempotency_key_makes_the_retry_safe(void **state)
{
    fixture *f = *state;
    rd_tool_error e = error_text("read ECONNRESET");
    e.code = "ECONNRESET";
    rd_decide_input in = input("charge_card", &e);
    in.idempotency_key = "order-7731-charge";
    rd_decision d = decide_ok(f, &in);
    assert_int_equal(d.action, RD_ACTION_RETRY);
    assert_string_equal(d.idempotency_key, "order-7731-charge");
    assert_int_equal(cls(&d)->effect_safety, RD_EFFECT_SAFETY_IDEMPOTENCY_KEY);

    /* without the key: no verify tool named, so a person or the model decides */
    in.idempotency_key = "";
    d = decide_ok(f, &in);
    assert_int_equal(d.action, RD_ACTION_ESCALATE);
    assert_string_equal(d.idempotency_key, "");
    assert_string_equal(d.verify_tool_id, "");
    assert_int_equal(cls(&d)->effect_safety, RD_EFFECT_SAFETY_UNKNOWN);
    assert_contains(cls(&d)->effect_reason, "no idempotency_key");
    assert_contains(d.reason, "not retried");
    assert_contains(d.classification.llm_message, "Do not call it again: ask whether it happened.");
    assert_non_null(find_event(&d, RD_EV_ESCALATED));
}

static void test_the_alternative_is_not_offered_when_the_effect_is_unknown(void **state)
{
    fixture *f = *state;
    rd_tool_error e = timeout_error();
    rd_decision d = fail_once(f, "create_ticket", &e);
    assert_int_equal(d.action, RD_ACTION_ESCALATE);
    assert_string_equal(d.alternative_tool_id, "");
    /* proven not run: the failover works as before */
    rd_tool_error bad = error_text("Invalid parameters: 'title' is required");
    bad.kind = RD_KIND_INVALID_PARAMETERS;
    d = fail_once(f, "create_ticket", &bad);
    assert_int_equal(d.action, RD_ACTION_USE_ALTERNATIVE);
    assert_string_equal(d.alternative_tool_id, "create_ticket_backup");
    assert_int_equal(cls(&d)->effect_safety, RD_EFFECT_SAFETY_NOT_EXECUTED);
}

static void test_undeclared_tools_are_retried_as_before(void **state)
{
    fixture *f = *state;
    rd_tool_error e = timeout_error();
    const char *tools[] = {"web_search", "create_ticket_backup"};
    for (size_t i = 0; i < 2; i++) {
        rd_decision d = fail_once(f, tools[i], &e);
        assert_int_equal(d.action, RD_ACTION_RETRY);
        assert_int_equal(cls(&d)->effects, RD_EFFECTS_UNSPECIFIED);
        assert_int_equal(cls(&d)->effect_safety, RD_EFFECT_SAFETY_UNSPECIFIED);
        assert_null(cls(&d)->effect_reason);
        assert_null(find_event(&d, RD_EV_EFFECT_CHECKED));
        assert_string_equal(d.verify_tool_id, "");
    }
    /* idempotent and read-only tools: retried, and the trace says why */
    rd_decision d = fail_once(f, "set_status", &e);
    assert_int_equal(d.action, RD_ACTION_RETRY);
    assert_int_equal(cls(&d)->effect_safety, RD_EFFECT_SAFETY_DECLARED_SAFE);
    assert_non_null(find_event(&d, RD_EV_EFFECT_CHECKED));
}

static void test_mcp_hints_declare_a_tool_without_manifest(void **state)
{
    fixture *f = *state;
    rd_tool_error e = timeout_error();
    e.destructive_hint = RD_HINT_TRUE;
    rd_decision d = fail_once(f, "delete_file", &e);
    assert_int_equal(d.action, RD_ACTION_ESCALATE);
    assert_int_equal(cls(&d)->effects, RD_EFFECTS_NON_IDEMPOTENT);
    e.destructive_hint = RD_HINT_UNSPECIFIED;
    e.read_only_hint = RD_HINT_TRUE;
    d = fail_once(f, "list_files", &e);
    assert_int_equal(d.action, RD_ACTION_RETRY);
    assert_int_equal(cls(&d)->effects, RD_EFFECTS_NONE);
    /* the manifest wins: send_email stays non-idempotent whatever the hints say */
    e.idempotent_hint = RD_HINT_TRUE;
    d = fail_once(f, "send_email", &e);
    assert_int_equal(d.action, RD_ACTION_VERIFY);
}

static void test_a_replayed_failure_gets_the_same_answer(void **state)
{
    fixture *f = *state;
    rd_tool_error e = timeout_error();
    rd_decide_input in = input("send_email", &e);
    in.outcome_id = "o-1";
    rd_decision first = decide_ok(f, &in);
    rd_decision again = decide_ok(f, &in);
    assert_int_equal(first.action, RD_ACTION_VERIFY);
    assert_int_equal(again.action, RD_ACTION_VERIFY);
    assert_true(again.duplicate);
    assert_int_equal(again.breaker.consecutive_failures, 1);
}

static void test_an_idempotency_key_is_checked_like_an_id(void **state)
{
    fixture *f = *state;
    rd_tool_error e = timeout_error();
    rd_decide_input in = input("charge_card", &e);
    char key[RD_ID_MAX + 2];
    memset(key, 'k', sizeof key - 1);
    key[sizeof key - 1] = '\0';
    in.idempotency_key = key;
    rd_decision d;
    assert_int_equal(rd_engine_decide(&f->engine, &in, &f->ctx, &d, &f->st), RD_ERR_INVALID);
    assert_contains(f->st.msg, "idempotency_key: longer than 256 bytes");
}

static void test_classify_says_which_case_applies(void **state)
{
    fixture *f = *state;
    rd_tool_error e = timeout_error();
    rd_classify_result r;
    assert_int_equal(rd_engine_classify(&f->engine, "send_email", &e, &f->ctx, &r, &f->st), RD_OK);
    assert_int_equal(r.classification.effects, RD_EFFECTS_NON_IDEMPOTENT);
    assert_int_equal(r.classification.effect_safety, RD_EFFECT_SAFETY_UNKNOWN);
    rd_tool_error limited = http_error(429);
    assert_int_equal(rd_engine_classify(&f->engine, "send_email", &limited, &f->ctx, &r, &f->st),
                     RD_OK);
    assert_int_equal(r.classification.effect_safety, RD_EFFECT_SAFETY_NOT_EXECUTED);
    assert_int_equal(rd_engine_classify(&f->engine, "web_search", &e, &f->ctx, &r, &f->st), RD_OK);
    assert_int_equal(r.classification.effect_safety, RD_EFFECT_SAFETY_UNSPECIFIED);
}

/* ---- the manifest keys ---- */

static char g_dir[] = "/tmp/rd_effects_XXXXXX";

static void put(const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", g_dir, rel);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

/* Loads a config whose tools.d holds a.yaml (and b.yaml when given); the
 * error (or "") into err. */
static rd_config *load_tools(const char *a, const char *b, char *err, size_t cap)
{
    assert_non_null(mkdtemp(strcpy(g_dir, "/tmp/rd_effects_XXXXXX")));
    char sub[512];
    snprintf(sub, sizeof sub, "%s/tools.d", g_dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    put("recovery.yaml", "tools:\n  directory: tools.d\nclassification:\n  rules_file: rules.yaml\n");
    put("rules.yaml", "suggestions:\n  transient: t\n  input_validation: iv\n"
                      "  external_service: es\n  permission: p\n  logic: l\n  resource: r\n"
                      "  unknown: u\nrules: []\n");
    put("tools.d/a.yaml", a);
    if (b)
        put("tools.d/b.yaml", b);
    char main_path[512];
    snprintf(main_path, sizeof main_path, "%s/recovery.yaml", g_dir);
    err[0] = '\0';
    rd_config *cfg = rd_config_load(main_path, err, cap);
    nftw(g_dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    return cfg;
}

static void test_manifest_keys_are_read(void **state)
{
    (void)state;
    char err[RD_CONFIG_ERR_MAX];
    rd_config *cfg = load_tools("tool:\n  id: pay\n  effects: non_idempotent\n  idempotency: key\n"
                                "  verify_tool: find_payment\n",
                                "tool:\n  id: find_payment\n  effects: none\n", err, sizeof err);
    if (!cfg)
        fail_msg("%s", err);
    const rd_tool_config *t = rd_policy_find_tool(&cfg->policy, "pay");
    assert_non_null(t);
    assert_int_equal(t->effects, RD_EFFECTS_NON_IDEMPOTENT);
    assert_true(t->idempotency_key);
    assert_string_equal(t->verify_tool, "find_payment");
    t = rd_policy_find_tool(&cfg->policy, "find_payment");
    assert_int_equal(t->effects, RD_EFFECTS_NONE);
    assert_false(t->idempotency_key);
    assert_null(t->verify_tool);
    assert_int_equal(cfg->policy.defaults.effects, RD_EFFECTS_UNSPECIFIED);
    rd_config_free(cfg);
}

static void expect_error(const char *a, const char *b, const char *expected)
{
    char err[RD_CONFIG_ERR_MAX];
    rd_config *cfg = load_tools(a, b, err, sizeof err);
    if (cfg) {
        rd_config_free(cfg);
        fail_msg("loaded; expected %s", expected);
    }
    assert_contains(err, expected);
}

static void test_manifest_key_errors_name_file_line_and_key(void **state)
{
    (void)state;
    expect_error("tool:\n  id: pay\n  effects: sometimes\n", NULL,
                 "a.yaml:3: tool.effects: unknown effects \"sometimes\" (none | idempotent | "
                 "non_idempotent)");
    expect_error("tool:\n  id: pay\n  idempotency: header\n", NULL,
                 "a.yaml:3: tool.idempotency: unknown idempotency \"header\" (none | key)");
    expect_error("tool:\n  id: pay\n  verify_tool: find_payment\n", NULL,
                 "a.yaml:3: tool.verify_tool: unknown tool \"find_payment\"");
    expect_error("tool:\n  id: pay\n  verify_tool: pay\n", NULL,
                 "a.yaml:3: tool.verify_tool: names the tool itself");
    expect_error("tool:\n  id: pay\n  verify_tool: [a, b]\n", NULL, "a.yaml:3: tool.verify_tool");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_errors_that_prove_the_tool_did_not_run),
        cmocka_unit_test(test_errors_that_leave_the_effect_unknown),
        cmocka_unit_test(test_declared_and_undeclared_effects),
        cmocka_unit_test(test_hints_resolve_only_what_the_manifest_leaves_open),
        cmocka_unit_test_setup_teardown(
            test_timeout_of_a_non_idempotent_tool_is_verified_not_retried, setup, teardown),
        cmocka_unit_test_setup_teardown(test_verify_cycles_end_at_max_attempts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_proven_not_executed_failures_are_retried, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_an_idempotency_key_makes_the_retry_safe, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_the_alternative_is_not_offered_when_the_effect_is_unknown, setup, teardown),
        cmocka_unit_test_setup_teardown(test_undeclared_tools_are_retried_as_before, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_mcp_hints_declare_a_tool_without_manifest, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_replayed_failure_gets_the_same_answer, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_an_idempotency_key_is_checked_like_an_id, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_classify_says_which_case_applies, setup, teardown),
        cmocka_unit_test(test_manifest_keys_are_read),
        cmocka_unit_test(test_manifest_key_errors_name_file_line_and_key),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
