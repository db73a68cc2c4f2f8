/* Tenants (engine/tenant.h): every store operation keys by the tenant
 * (budgets, latencies and learned signatures under the tool's key), and two
 * tenants' engines over one in-memory store keep breakers, scoped keys,
 * turns and outcome ids apart, list only their own, cannot name each
 * other's keys, and are held to their limits.
 * chat_completion (tests/unit/fixtures/effects/tools.d) opens after two
 * failures and keys its breakers by provider and credential. */
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
#include "domain/store.h"
#include "engine/decide.h"
#include "engine/tenant.h"

#define FIXTURE RD_SOURCE_DIR "/tests/unit/fixtures/effects/recovery.yaml"
#define T0 1762338645000
#define TOOL "chat_completion"
#define IDLE_MS 3600000

static rd_config *g_config;

typedef struct fixture {
    rd_store *store;             /* the shared store */
    rd_tenant_store a_store, b_store;
    rd_engine a, b;              /* tenant "a-<n>" and "b-<n>" */
    char a_name[32], b_name[32];
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
    if (!g_config)
        fprintf(stderr, "fixture config: %s\n", err);
    return g_config ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    rd_config_free(g_config);
    return 0;
}

/* Each test its own tenant names: the limits' counts live for the process. */
static void use_tenants(fixture *f, size_t max_tools, size_t max_turns)
{
    static int n;
    n++;
    snprintf(f->a_name, sizeof f->a_name, "a-%d", n);
    snprintf(f->b_name, sizeof f->b_name, "b-%d", n);
    assert_int_equal(rd_tenant_store_init(&f->a_store, f->store, f->a_name, max_tools,
                                          max_turns, &f->st), RD_OK);
    assert_int_equal(rd_tenant_store_init(&f->b_store, f->store, f->b_name, max_tools,
                                          max_turns, &f->st), RD_OK);
    f->a = (rd_engine){.policy = &g_config->policy, .store = &f->a_store.base};
    f->b = (rd_engine){.policy = &g_config->policy, .store = &f->b_store.base};
}

static int setup(void **state)
{
    static fixture f;
    memset(&f, 0, sizeof f);
    rd_store_limits limits = {
        .max_tools = 1000, .tool_idle_ttl_ms = IDLE_MS, .turn_ttl_ms = IDLE_MS,
        .max_turns = 1000, .max_events_per_turn = 1000, .outcome_ttl_ms = IDLE_MS,
        .max_outcomes = 1000,
    };
    if (!(f.store = rd_store_memory_new(&limits)))
        return -1;
    rd_arena_init(&f.arena, 16384);
    rd_rng_seed(&f.rng, 7);
    f.ctx = (rd_call_ctx){.now_ms = T0, .arena = &f.arena, .rng = &f.rng};
    use_tenants(&f, 0, 0);
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

static const rd_scope_label K1[] = {{"provider", "openai"}, {"credential", "k1"}};

static rd_decide_input input(const char *tool, const rd_tool_error *err, const char *turn,
                             const rd_scope_label *scope, size_t n)
{
    return (rd_decide_input){.tool_id = tool, .error = err, .attempt = err ? 1 : 0,
                             .turn_id = turn, .executor_id = "", .outcome_id = "",
                             .permit_id = "", .idempotency_key = "", .scope = scope,
                             .n_scope = n};
}

static int decide(fixture *f, const rd_engine *e, const char *tool, int http_status,
                  const char *turn, const rd_scope_label *scope, size_t n, rd_decision *d)
{
    rd_tool_error err = {.message = "upstream error", .message_len = 14, .code = "",
                         .exception_type = "", .http_status = http_status};
    rd_decide_input in = input(tool, http_status ? &err : NULL, turn, scope, n);
    return rd_engine_decide(e, &in, &f->ctx, d, &f->st);
}

static rd_decision decide_ok(fixture *f, const rd_engine *e, const char *tool, int http_status,
                             const char *turn)
{
    rd_decision d;
    if (decide(f, e, tool, http_status, turn, NULL, 0, &d) != RD_OK)
        fail_msg("decide: %s", f->st.msg);
    return d;
}

static bool raw_has(fixture *f, const char *key)
{
    rd_breaker b;
    bool found = false;
    assert_int_equal(f->store->ops->get(f->store, key, f->ctx.now_ms, &b, &found, &f->st), RD_OK);
    return found;
}

static void test_same_tool_separate_breakers(void **state)
{
    fixture *f = *state;
    decide_ok(f, &f->a, TOOL, 503, "");
    rd_decision d = decide_ok(f, &f->a, TOOL, 503, "");
    assert_int_equal(d.breaker.status, RD_BREAKER_OPEN);
    assert_string_equal(d.breaker.tool_id, TOOL); /* answers name the tool, not the key */
    assert_int_equal(decide_ok(f, &f->a, TOOL, 0, "").action, RD_ACTION_FAIL_FAST);
    assert_int_equal(decide_ok(f, &f->b, TOOL, 0, "").action, RD_ACTION_PROCEED);
    char key[128];
    snprintf(key, sizeof key, "%s/%s", f->a_name, TOOL);
    assert_true(raw_has(f, key));
    assert_false(raw_has(f, TOOL)); /* nothing outside a namespace */

    rd_breaker_view *views;
    size_t n;
    assert_int_equal(rd_engine_breakers(&f->a, NULL, 0, &f->ctx, &views, &n, &f->st), RD_OK);
    assert_int_equal(n, 1);
    assert_string_equal(views[0].tool_id, TOOL);
    assert_int_equal(views[0].status, RD_BREAKER_OPEN);
    assert_int_equal(views[0].failure_threshold, 2); /* the tool's own settings found */
    assert_int_equal(rd_engine_breakers(&f->b, NULL, 0, &f->ctx, &views, &n, &f->st), RD_OK);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(views[i].status, RD_BREAKER_CLOSED);
}

static void test_scoped_keys_live_in_the_namespace(void **state)
{
    fixture *f = *state;
    rd_decision d;
    for (int i = 0; i < 2; i++)
        assert_int_equal(decide(f, &f->a, TOOL, 429, "", K1, 2, &d), RD_OK);
    assert_int_equal(d.breaker.status, RD_BREAKER_OPEN);
    assert_string_equal(d.breaker.tool_id, TOOL "|provider=openai|credential=k1");
    assert_int_equal(d.breaker.scope_level_len, strlen("credential"));
    char key[256];
    snprintf(key, sizeof key, "%s/%s", f->a_name, TOOL "|provider=openai|credential=k1");
    assert_true(raw_has(f, key));
    assert_int_equal(decide(f, &f->b, TOOL, 0, "", K1, 2, &d), RD_OK);
    assert_int_equal(d.action, RD_ACTION_PROCEED);
}

static void test_turns_and_outcomes_are_per_tenant(void **state)
{
    fixture *f = *state;
    decide_ok(f, &f->a, TOOL, 503, "turn-1");
    rd_turn_trace t;
    assert_int_equal(rd_engine_turn_trace(&f->a, "turn-1", &f->ctx, &t, &f->st), RD_OK);
    assert_true(t.n_events > 0);
    assert_int_equal(rd_engine_turn_trace(&f->b, "turn-1", &f->ctx, &t, &f->st),
                     RD_ERR_NOT_FOUND);
    char forged[128];
    snprintf(forged, sizeof forged, "%s/turn-1", f->a_name);
    assert_int_equal(rd_engine_turn_trace(&f->b, forged, &f->ctx, &t, &f->st),
                     RD_ERR_NOT_FOUND);

    rd_outcome_input o = {.tool_id = TOOL, .success = true, .attempt = 1, .turn_id = "",
                          .outcome_id = "o-1", .permit_id = "", .executor_id = ""};
    rd_outcome_result r;
    assert_int_equal(rd_engine_record_outcome(&f->a, &o, &f->ctx, &r, &f->st), RD_OK);
    assert_false(r.duplicate);
    assert_int_equal(rd_engine_record_outcome(&f->b, &o, &f->ctx, &r, &f->st), RD_OK);
    assert_false(r.duplicate);
    assert_int_equal(rd_engine_record_outcome(&f->a, &o, &f->ctx, &r, &f->st), RD_OK);
    assert_true(r.duplicate);
}

static void test_a_tenant_cannot_name_anothers_key(void **state)
{
    fixture *f = *state;
    decide_ok(f, &f->a, TOOL, 503, "");
    decide_ok(f, &f->a, TOOL, 503, "");
    char forged[128];
    snprintf(forged, sizeof forged, "%s/%s", f->a_name, TOOL);
    rd_breaker_view v;
    assert_int_equal(rd_engine_force(&f->b, forged, RD_FORCE_CLOSED, 0, &f->ctx, &v, &f->st),
                     RD_OK); /* b's own key "<b>/<a>/chat_completion" */
    assert_int_equal(decide_ok(f, &f->a, TOOL, 0, "").action, RD_ACTION_FAIL_FAST);
    rd_breaker_view *views;
    size_t n;
    const char *ids[] = {forged};
    assert_int_equal(rd_engine_breakers(&f->b, ids, 1, &f->ctx, &views, &n, &f->st), RD_OK);
    assert_int_equal(views[0].status, RD_BREAKER_CLOSED);
    assert_int_equal(views[0].forced, RD_BREAKER_CLOSED);
}

static void test_ids_keep_to_the_store_bound_with_the_prefix(void **state)
{
    fixture *f = *state;
    char tool[RD_ID_MAX + 1];
    memset(tool, 't', RD_ID_MAX);
    tool[RD_ID_MAX] = '\0';
    rd_decision d;
    assert_int_equal(decide(f, &f->a, tool, 0, "", NULL, 0, &d), RD_ERR_INVALID);
    char want[128];
    snprintf(want, sizeof want, "tool_id: longer than %zu bytes for tenant '%s'",
             (size_t)RD_ID_MAX - strlen(f->a_name) - 1, f->a_name);
    assert_string_equal(f->st.msg, want);
    tool[RD_ID_MAX - strlen(f->a_name) - 1] = '\0';
    assert_int_equal(decide(f, &f->a, tool, 0, "", NULL, 0, &d), RD_OK);
}

static void test_limits_per_tenant(void **state)
{
    fixture *f = *state;
    use_tenants(f, 2, 1);
    rd_decision d;
    assert_int_equal(decide(f, &f->a, "t1", 0, "", NULL, 0, &d), RD_OK);
    assert_int_equal(decide(f, &f->a, "t2", 0, "", NULL, 0, &d), RD_OK);
    assert_int_equal(decide(f, &f->a, "t1", 0, "", NULL, 0, &d), RD_OK);
    assert_int_equal(decide(f, &f->a, "t3", 0, "", NULL, 0, &d), RD_ERR_EXHAUSTED);
    char want[160];
    snprintf(want, sizeof want,
             "tenant '%s': tracked breakers at max_tools (server.tenants[].max_tools) reached",
             f->a_name);
    assert_string_equal(f->st.msg, want);
    assert_int_equal(decide(f, &f->b, "t3", 0, "", NULL, 0, &d), RD_OK); /* b counts its own */

    assert_int_equal(decide(f, &f->a, "t1", 0, "turn-1", NULL, 0, &d), RD_OK);
    assert_int_equal(decide(f, &f->a, "t1", 0, "turn-2", NULL, 0, &d), RD_ERR_EXHAUSTED);
    assert_non_null(strstr(f->st.msg, "max_turns"));
    assert_int_equal(decide(f, &f->a, "t1", 0, "turn-1", NULL, 0, &d), RD_OK);

    /* a RecordOutcome for a new turn past the limit changes nothing: no
     * failure counted, its outcome id not taken */
    rd_outcome_input o = {.tool_id = "t1", .success = false, .attempt = 1,
                          .turn_id = "turn-3", .outcome_id = "o-late", .permit_id = "",
                          .executor_id = ""};
    rd_outcome_result r;
    assert_int_equal(rd_engine_record_outcome(&f->a, &o, &f->ctx, &r, &f->st),
                     RD_ERR_EXHAUSTED);
    assert_non_null(strstr(f->st.msg, "max_turns"));
    rd_breaker_view *views;
    size_t n;
    const char *ids[] = {"t1"};
    assert_int_equal(rd_engine_breakers(&f->a, ids, 1, &f->ctx, &views, &n, &f->st), RD_OK);
    assert_int_equal(views[0].consecutive_failures, 0);
    o.turn_id = "turn-1";
    assert_int_equal(rd_engine_record_outcome(&f->a, &o, &f->ctx, &r, &f->st), RD_OK);
    assert_false(r.duplicate);
    assert_int_equal(r.breaker.consecutive_failures, 1);
    /* a Decide that tells the turn's remaining time is refused up front too */
    rd_tool_error err = {.message = "x", .message_len = 1, .code = "", .exception_type = "",
                         .http_status = 503};
    rd_decide_input in = input("t1", &err, "turn-3", NULL, 0);
    in.has_turn_remaining = true;
    in.turn_remaining_ms = 1000;
    assert_int_equal(rd_engine_decide(&f->a, &in, &f->ctx, &d, &f->st), RD_ERR_EXHAUSTED);
    assert_int_equal(rd_engine_breakers(&f->a, ids, 1, &f->ctx, &views, &n, &f->st), RD_OK);
    assert_int_equal(views[0].consecutive_failures, 1);

    /* keys unseen for the store's idle time stop counting */
    f->ctx.now_ms += IDLE_MS + 1;
    assert_int_equal(decide(f, &f->a, "t3", 0, "turn-2", NULL, 0, &d), RD_OK);
}

/* ---- every operation through the prefix: a store that notes the keys it gets ---- */

static char seen_key[RD_ID_MAX + 1];
static char seen_extra[RD_ID_MAX + 1];

static void note(const char *key)
{
    snprintf(seen_key, sizeof seen_key, "%s", key);
}

static int n_admit(rd_store *s, const char *k, const rd_breaker_policy *p, int64_t now,
                   int64_t lease, rd_store_result *out, rd_status *st)
{
    (void)s, (void)p, (void)now, (void)lease, (void)out, (void)st;
    note(k);
    return RD_OK;
}
static int n_record(rd_store *s, const char *k, const rd_breaker_policy *p, int64_t now,
                    rd_outcome o, uint64_t t, rd_store_result *out, rd_status *st)
{
    (void)s, (void)p, (void)now, (void)o, (void)t, (void)out, (void)st;
    note(k);
    return RD_OK;
}
static int n_record_call(rd_store *s, const char *k, const rd_breaker_policy *p, int64_t now,
                         const rd_call_report *c, rd_store_result *out, rd_status *st)
{
    (void)s, (void)p, (void)now, (void)c, (void)out, (void)st;
    note(k);
    return RD_OK;
}
static int n_stats(rd_store *s, const char *k, const rd_breaker_policy *p, int64_t now,
                   rd_breaker *b, rd_breaker_evidence *ev, bool *found, rd_status *st)
{
    (void)s, (void)p, (void)now, (void)b, (void)ev, (void)found, (void)st;
    note(k);
    return RD_OK;
}
static int n_budget(rd_store *s, const char *k, const rd_retry_budget_policy *p, int64_t now,
                    rd_budget_op op, rd_budget_result *out, rd_status *st)
{
    (void)s, (void)p, (void)now, (void)op, (void)out, (void)st;
    note(k);
    return RD_OK;
}
static int n_latency(rd_store *s, const char *k, int64_t w, int64_t now, int64_t sample,
                     rd_latency_hist *out, rd_status *st)
{
    (void)s, (void)w, (void)now, (void)sample, (void)out, (void)st;
    note(k);
    return RD_OK;
}
static int n_learn_link(rd_store *s, const char *k, const char *link, const char *sig,
                        rd_learn_settle settle, int64_t now, rd_status *st)
{
    (void)s, (void)settle, (void)now, (void)st;
    note(k);
    snprintf(seen_extra, sizeof seen_extra, "%s %s", link, sig);
    return RD_OK;
}
static int n_learn_stats(rd_store *s, const char *k, const char *sig, int64_t now,
                         rd_learn_stats *out, rd_status *st)
{
    (void)s, (void)now, (void)out, (void)st;
    note(k);
    snprintf(seen_extra, sizeof seen_extra, "%s", sig);
    return RD_OK;
}
static int n_force(rd_store *s, const char *k, rd_force_mode m, int64_t now, int64_t ttl,
                   rd_store_result *out, rd_status *st)
{
    (void)s, (void)m, (void)now, (void)ttl, (void)out, (void)st;
    note(k);
    return RD_OK;
}
static int n_get(rd_store *s, const char *k, int64_t now, rd_breaker *out, bool *found,
                 rd_status *st)
{
    (void)s, (void)now, (void)out, (void)found, (void)st;
    note(k);
    return RD_OK;
}
static int n_list(rd_store *s, int64_t now, rd_store_visit visit, void *ctx, rd_status *st)
{
    (void)s, (void)now, (void)st;
    rd_breaker b;
    rd_breaker_init(&b, now);
    const char *keys[] = {"t/x", "u/y", "t/z|p=1", "tx/w", "x"};
    for (size_t i = 0; i < 5; i++)
        if (visit(ctx, keys[i], &b))
            break;
    return RD_OK;
}
static int n_claim(rd_store *s, const char *k, int64_t now, bool *dup, rd_status *st)
{
    (void)s, (void)now, (void)dup, (void)st;
    note(k);
    return RD_OK;
}
static int n_append(rd_store *s, const char *k, rd_trace_event *ev, size_t n, int64_t now,
                    int64_t *started, rd_status *st)
{
    (void)s, (void)ev, (void)n, (void)now, (void)started, (void)st;
    note(k);
    return RD_OK;
}
static int n_touch(rd_store *s, const char *k, int64_t now, int64_t *started, rd_status *st)
{
    (void)s, (void)now, (void)started, (void)st;
    note(k);
    return RD_OK;
}
static int n_read(rd_store *s, const char *k, int64_t now, rd_trace_event **ev, size_t *n,
                  int64_t *started, rd_status *st)
{
    (void)s, (void)now, (void)ev, (void)n, (void)started, (void)st;
    note(k);
    return RD_OK;
}

static const rd_store_ops NOTING = {
    .name = "noting", .admit = n_admit, .record = n_record, .record_call = n_record_call,
    .stats = n_stats, .budget = n_budget, .latency = n_latency, .learn_link = n_learn_link,
    .learn_stats = n_learn_stats, .force = n_force, .get = n_get, .list = n_list,
    .claim_outcome = n_claim, .turn_append = n_append, .turn_touch = n_touch,
    .turn_read = n_read,
};

static char listed[4][RD_ID_MAX + 1];
static size_t n_listed;

static int visit_listed(void *ctx, const char *tool_id, const rd_breaker *b)
{
    (void)ctx, (void)b;
    snprintf(listed[n_listed++], sizeof listed[0], "%s", tool_id);
    return n_listed == 4;
}

#define EXPECT_KEY(call, want)                                                                \
    do {                                                                                      \
        seen_key[0] = '\0';                                                                   \
        assert_int_equal((call), RD_OK);                                                      \
        assert_string_equal(seen_key, want);                                                  \
    } while (0)

static void test_every_operation_keys_by_the_tenant(void **state)
{
    (void)state;
    rd_store inner = {.ops = &NOTING};
    rd_tenant_store t;
    rd_status st;
    assert_int_equal(rd_tenant_store_init(&t, &inner, "t", 0, 0, &st), RD_OK);
    rd_store *s = &t.base;
    rd_breaker_policy bp = {0};
    rd_retry_budget_policy rp = {0};
    rd_store_result res;
    rd_breaker b;
    rd_breaker_evidence ev;
    bool found, dup;
    rd_budget_result br;
    rd_latency_hist h;
    rd_learn_stats ls;
    rd_call_report call = {0};
    int64_t started;
    rd_trace_event *events = NULL;
    size_t n;
    EXPECT_KEY(s->ops->admit(s, "tool", &bp, T0, 0, &res, &st), "t/tool");
    EXPECT_KEY(s->ops->record(s, "tool|p=1", &bp, T0, RD_OUTCOME_SUCCESS, 0, &res, &st),
               "t/tool|p=1");
    EXPECT_KEY(s->ops->record_call(s, "tool", &bp, T0, &call, &res, &st), "t/tool");
    EXPECT_KEY(s->ops->stats(s, "tool", &bp, T0, &b, &ev, &found, &st), "t/tool");
    EXPECT_KEY(s->ops->budget(s, "tool", &rp, T0, RD_BUDGET_PEEK, &br, &st), "t/tool");
    EXPECT_KEY(s->ops->latency(s, "tool", 1000, T0, -1, &h, &st), "t/tool");
    EXPECT_KEY(s->ops->learn_link(s, "tool", "turn-1", "sig", RD_LEARN_KEEP, T0, &st),
               "t/tool");
    assert_string_equal(seen_extra, "turn-1 sig"); /* kept under the tool's key */
    EXPECT_KEY(s->ops->learn_stats(s, "tool", "sig", T0, &ls, &st), "t/tool");
    EXPECT_KEY(s->ops->force(s, "tool", RD_FORCE_OPEN, T0, 0, &res, &st), "t/tool");
    EXPECT_KEY(s->ops->get(s, "tool", T0, &b, &found, &st), "t/tool");
    EXPECT_KEY(s->ops->claim_outcome(s, "o-1", T0, &dup, &st), "t/o-1");
    EXPECT_KEY(s->ops->turn_append(s, "turn-1", NULL, 0, T0, &started, &st), "t/turn-1");
    EXPECT_KEY(s->ops->turn_touch(s, "turn-1", T0, &started, &st), "t/turn-1");
    EXPECT_KEY(s->ops->turn_read(s, "turn-1", T0, &events, &n, &started, &st), "t/turn-1");
    assert_int_equal(s->ops->get(s, "", T0, &b, &found, &st), RD_ERR_INVALID);
    assert_string_equal(st.msg, "tool_id: required");

    n_listed = 0;
    assert_int_equal(s->ops->list(s, T0, visit_listed, NULL, &st), RD_OK);
    assert_int_equal(n_listed, 2); /* "u/y", "tx/w" and "x" are not t's */
    assert_string_equal(listed[0], "x");
    assert_string_equal(listed[1], "z|p=1");
}

static void test_split(void **state)
{
    (void)state;
    char tenant[RD_TENANT_ID_MAX + 1];
    const char *rest;
    assert_true(rd_tenant_split("team-a/search|provider=x", tenant, &rest));
    assert_string_equal(tenant, "team-a");
    assert_string_equal(rest, "search|provider=x");
    assert_true(rd_tenant_split("team-a/b/c", tenant, &rest));
    assert_string_equal(rest, "b/c");
    assert_false(rd_tenant_split("search", tenant, &rest));
    assert_false(rd_tenant_split("/search", tenant, &rest));
    rd_tenant_store t;
    rd_status st;
    assert_int_equal(rd_tenant_store_init(&t, NULL, "a/b", 0, 0, &st), RD_ERR_INVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_same_tool_separate_breakers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scoped_keys_live_in_the_namespace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_turns_and_outcomes_are_per_tenant, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_tenant_cannot_name_anothers_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ids_keep_to_the_store_bound_with_the_prefix, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_limits_per_tenant, setup, teardown),
        cmocka_unit_test(test_every_operation_keys_by_the_tenant),
        cmocka_unit_test(test_split),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
