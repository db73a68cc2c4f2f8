/* VERIFY, idempotency keys and tenants of rdc_run_tool against live
 * recoveryd servers (tests/stubs/test_c_verify_tenant.sh starts them):
 *   verify_tenant_test EFFECTS_ADDR TENANTS_ADDR ADMIN_TOKEN TEAM_A_TOKEN TEAM_B_TOKEN
 * EFFECTS_ADDR has send_email (non-idempotent, verify tool find_sent_email,
 * 700 ms) and charge_card (idempotency: key); TENANTS_ADDR has tenants
 * team-a and team-b and the tool search. Exits 0 when every check holds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recoveryd_client.h"

static int failures;

#define CHECK(cond, ...)                                                                     \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            failures++;                                                                      \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                  \
            fprintf(stderr, __VA_ARGS__);                                                    \
            fputc('\n', stderr);                                                             \
        }                                                                                    \
    } while (0)

/* A tool reset after sending on its first call (the effect is unknown). */
typedef struct {
    int calls;
    int numbers[4];
    char keys[4][64];
} reset_tool;

static int reset_then_ok(void *user, const rdc_attempt *a, rdc_tool_error *err)
{
    reset_tool *t = user;
    if (t->calls < 4) {
        t->numbers[t->calls] = a->number;
        snprintf(t->keys[t->calls], sizeof t->keys[0], "%s", a->idempotency_key);
    }
    if (++t->calls == 1) {
        snprintf(err->message, sizeof err->message, "read ECONNRESET");
        snprintf(err->code, sizeof err->code, "ECONNRESET");
        return -1;
    }
    return 0;
}

typedef struct {
    int answer; /* what the verifier says: 1, 0 or -1 */
    int asked;
    rdc_verify_request seen;
    reset_tool *tool_user_seen;
} verifier_state;

static int verifier(void *user, const rdc_verify_request *req)
{
    verifier_state *v = user;
    v->asked++;
    v->seen = *req;
    v->tool_user_seen = req->tool_user;
    CHECK(strcmp(req->error->code, "ECONNRESET") == 0, "error code %s", req->error->code);
    CHECK(strstr(req->reason, "effect unknown") != NULL, "reason %s", req->reason);
    return v->answer;
}

static uint32_t consecutive_failures(rdc_client *c, const char *tool)
{
    char *ids[] = {(char *)tool};
    Recovery__V1__GetBreakerStateRequest req = RECOVERY__V1__GET_BREAKER_STATE_REQUEST__INIT;
    req.tool_ids = ids;
    req.n_tool_ids = 1;
    Recovery__V1__GetBreakerStateResponse *resp = NULL;
    char details[256] = "";
    grpc_status_code st = rdc_call(c, "/recovery.v1.RecoveryService/GetBreakerState", &req.base,
                                   &recovery__v1__get_breaker_state_response__descriptor,
                                   (ProtobufCMessage **)&resp, details, sizeof details);
    uint32_t n = 99;
    if (st == GRPC_STATUS_OK && resp->n_breakers == 1)
        n = resp->breakers[0]->consecutive_failures;
    CHECK(st == GRPC_STATUS_OK, "GetBreakerState: %d %s", (int)st, details);
    if (resp != NULL)
        recovery__v1__get_breaker_state_response__free_unpacked(resp, NULL);
    return n;
}

static void run_send_email(rdc_client *c, const rdc_verifier *vs, size_t n_vs, reset_tool *tool,
                           rdc_result *res)
{
    rdc_tool tools[] = {{.tool_id = "send_email", .fn_attempt = reset_then_ok, .user = tool}};
    rdc_run_options opts = {.turn_id = "c-verify", .verifiers = vs, .n_verifiers = n_vs};
    rdc_run_tool(c, "send_email", tools, 1, &opts, res);
}

static void test_verify(const char *addr)
{
    rdc_options o = {.rpc_timeout_ms = 2000};
    rdc_client *c = rdc_client_new(addr, &o);
    CHECK(c != NULL, "client");

    /* happened: a recorded success, the tool not called again */
    verifier_state v = {.answer = 1};
    reset_tool tool = {0};
    rdc_verifier vs[] = {{.verify_tool_id = "other_tool", .fn = verifier, .user = NULL},
                         {.verify_tool_id = "find_sent_email", .fn = verifier, .user = &v}};
    rdc_result res;
    run_send_email(c, vs, 2, &tool, &res);
    CHECK(res.status == RDC_SUCCEEDED && res.verified, "status %s verified %d reason %s",
          rdc_status_name(res.status), res.verified, res.reason);
    CHECK(res.attempts == 1 && tool.calls == 1 && v.asked == 1, "attempts %d calls %d asked %d",
          res.attempts, tool.calls, v.asked);
    CHECK(res.outcome_recorded, "outcome not recorded");
    CHECK(strcmp(res.verify_tool_id, "find_sent_email") == 0, "verify tool %s", res.verify_tool_id);
    CHECK(v.seen.attempt == 1 && v.seen.timeout_ms == 700 && v.tool_user_seen == &tool,
          "verify request attempt %d timeout %lld", v.seen.attempt, (long long)v.seen.timeout_ms);
    CHECK(res.n_actions == 2 && res.actions[1] == RECOVERY__V1__ACTION__ACTION_VERIFY, "actions %zu",
          res.n_actions);
    CHECK(consecutive_failures(c, "send_email") == 0, "the success did not reach the breaker");
    rdc_result_clear(&res);

    /* did not happen: admission, then the tool again */
    v = (verifier_state){.answer = 0};
    tool = (reset_tool){0};
    run_send_email(c, vs, 2, &tool, &res);
    CHECK(res.status == RDC_SUCCEEDED && !res.verified, "status %s reason %s",
          rdc_status_name(res.status), res.reason);
    CHECK(res.attempts == 2 && tool.calls == 2 && tool.numbers[1] == 2, "attempts %d calls %d",
          res.attempts, tool.calls);
    CHECK(res.n_actions == 3 && res.actions[2] == RECOVERY__V1__ACTION__ACTION_PROCEED,
          "actions %zu", res.n_actions);
    rdc_result_clear(&res);

    /* no verifier for the tool, or one that cannot tell: verification required */
    for (int k = 0; k < 2; k++) {
        v = (verifier_state){.answer = -1};
        tool = (reset_tool){0};
        run_send_email(c, k == 0 ? vs : &vs[1], 1, &tool, &res);
        CHECK(res.status == RDC_VERIFICATION_REQUIRED, "case %d: status %s", k,
              rdc_status_name(res.status));
        CHECK(tool.calls == 1 && v.asked == k, "case %d: calls %d asked %d", k, tool.calls, v.asked);
        CHECK(strstr(res.reason, "effect unknown") != NULL, "reason %s", res.reason);
        CHECK(strcmp(res.verify_tool_id, "find_sent_email") == 0, "verify tool %s", res.verify_tool_id);
        CHECK(res.last_decision != NULL && res.last_decision->classification != NULL &&
                  strstr(res.last_decision->classification->llm_message, "find_sent_email") != NULL,
              "llm_message");
        rdc_result_clear(&res);
    }

    /* the idempotency key reaches the tool on the retry */
    tool = (reset_tool){0};
    rdc_tool charge[] = {{.tool_id = "charge_card", .fn_attempt = reset_then_ok, .user = &tool}};
    rdc_run_options ko = {.turn_id = "c-key", .idempotency_key = "order-7731"};
    rdc_run_tool(c, "charge_card", charge, 1, &ko, &res);
    CHECK(res.status == RDC_SUCCEEDED && tool.calls == 2, "status %s calls %d",
          rdc_status_name(res.status), tool.calls);
    CHECK(strcmp(tool.keys[0], "order-7731") == 0 && strcmp(tool.keys[1], "order-7731") == 0,
          "keys %s %s", tool.keys[0], tool.keys[1]);
    CHECK(res.actions[1] == RECOVERY__V1__ACTION__ACTION_RETRY, "second action %d", (int)res.actions[1]);
    CHECK(strcmp(res.idempotency_key, "order-7731") == 0, "result key %s", res.idempotency_key);
    rdc_result_clear(&res);
    /* without it the same failure is never retried blind */
    tool = (reset_tool){0};
    rdc_run_options no_key = {.turn_id = "c-key"};
    rdc_run_tool(c, "charge_card", charge, 1, &no_key, &res);
    CHECK(res.status == RDC_ESCALATE && tool.calls == 1 && tool.keys[0][0] == '\0', "status %s calls %d",
          rdc_status_name(res.status), tool.calls);
    rdc_result_clear(&res);
    rdc_client_free(c);
}

static int fails_once(void *user, int64_t timeout_ms, rdc_tool_error *err)
{
    (void)timeout_ms;
    int *calls = user;
    if (++*calls == 1) {
        snprintf(err->message, sizeof err->message, "503 Service Unavailable");
        err->http_status = 503;
        return -1;
    }
    return 0;
}

static rdc_client *tenant_client(const char *addr, const char *token, const char *tenant)
{
    rdc_options o = {.rpc_timeout_ms = 2000, .bearer_token = token, .tenant = tenant};
    char err[256] = "";
    rdc_client *c = rdc_client_open(addr, &o, err, sizeof err);
    CHECK(c != NULL, "client: %s", err);
    return c;
}

static void test_tenants(const char *addr, const char *admin, const char *team_a, const char *team_b)
{
    const char *bad[][2] = {{"a b", "only letters"},
                            {"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "longer than 64"},
                            {"\xc3\xa9", "only letters"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rdc_options o = {.tenant = bad[i][0]};
        char err[256] = "";
        rdc_client *c = rdc_client_open(addr, &o, err, sizeof err);
        CHECK(c == NULL && strncmp(err, "tenant: ", 8) == 0 && strstr(err, bad[i][1]) != NULL,
              "tenant %s: %s", bad[i][0], err);
        rdc_client_free(c);
    }
    CHECK(rdc_check_tenant("team-a.b_c", NULL, 0) == 0 && rdc_check_tenant(NULL, NULL, 0) == 0, "good ids");

    rdc_client *admin_b = tenant_client(addr, admin, "team-b");
    rdc_client *admin_none = tenant_client(addr, admin, NULL);
    rdc_client *a = tenant_client(addr, team_a, NULL);
    rdc_client *b = tenant_client(addr, team_b, NULL);
    int calls = 0;
    rdc_tool tools[] = {{.tool_id = "search", .fn = fails_once, .user = &calls}};
    rdc_run_options opts = {.turn_id = "c-tenant-turn"};
    rdc_result res;
    rdc_run_tool(admin_b, "search", tools, 1, &opts, &res);
    CHECK(res.status == RDC_SUCCEEDED && !res.fallback && res.attempts == 2, "status %s fallback %d (%s)",
          rdc_status_name(res.status), res.fallback, res.fallback_reason);
    rdc_result_clear(&res);

    /* The run's state is team-b's: its token reads the trace, team-a's cannot. */
    Recovery__V1__GetTurnTraceResponse *trace = NULL;
    char details[256] = "";
    grpc_status_code st = rdc_get_turn_trace(b, "c-tenant-turn", &trace, details, sizeof details);
    CHECK(st == GRPC_STATUS_OK && trace->n_events > 0, "team-b trace: %d %s", (int)st, details);
    if (trace != NULL)
        recovery__v1__get_turn_trace_response__free_unpacked(trace, NULL);
    trace = NULL;
    st = rdc_get_turn_trace(a, "c-tenant-turn", &trace, details, sizeof details);
    CHECK(st == GRPC_STATUS_NOT_FOUND && trace == NULL, "team-a read team-b's trace: %d", (int)st);
    st = rdc_get_turn_trace(admin_none, "c-tenant-turn", &trace, details, sizeof details);
    CHECK(st == GRPC_STATUS_INVALID_ARGUMENT && strstr(details, RDC_TENANT_HEADER) != NULL,
          "admin without a tenant: %d %s", (int)st, details);
    rdc_client_free(admin_b);
    rdc_client_free(admin_none);
    rdc_client_free(a);
    rdc_client_free(b);
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: %s EFFECTS_ADDR TENANTS_ADDR ADMIN_TOKEN TEAM_A_TOKEN TEAM_B_TOKEN\n",
                argv[0]);
        return 2;
    }
    test_verify(argv[1]);
    test_tenants(argv[2], argv[3], argv[4], argv[5]);
    if (failures == 0)
        printf("verify_tenant_test: ok\n");
    return failures == 0 ? 0 : 1;
}
