/* A small tool executor that runs one tool call through recoveryd and prints
 * the result as one JSON line. The cross-language conformance run drives it;
 * it doubles as a complete usage example.
 *
 *   rdc_executor --addr 127.0.0.1:50051 --turn t1 --tool search --mode fail
 *
 * Modes choose the tool's behaviour: fail (always a connection reset),
 * succeed, flaky (fails twice, then succeeds), hold (prints HOLDING, then
 * waits until the --release file exists and succeeds), timeout-once (the
 * first call times out after sending, later calls succeed).
 *
 * A non-idempotent tool (docs/EFFECTS.md): --verify-tool find_sent_email
 * registers a verifier for that verify tool, answering --happened (true: the
 * timed-out call did send; false: it did not). With server.tenants, --token
 * and --tenant send the admin token and the tenant it acts for. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <recoveryd_client.h>

typedef struct {
    const char *mode;
    const char *release;
    int calls;
} search_tool;

typedef struct {
    int happened; /* what the verifier answers: 1 it happened, 0 it did not */
    int calls;
} verifier_state;

static int verify_sent(void *user, const rdc_verify_request *req)
{
    verifier_state *v = user;
    (void)req;
    v->calls++;
    return v->happened;
}

static int search(void *user, int64_t timeout_ms, rdc_tool_error *err)
{
    search_tool *t = user;
    t->calls++;
    if (strcmp(t->mode, "fail") == 0) {
        snprintf(err->message, sizeof err->message, "read tcp: connection reset by peer");
        snprintf(err->code, sizeof err->code, "ECONNRESET");
        err->kind = RECOVERY__V1__ERROR_KIND__ERROR_KIND_TRANSPORT_ERROR;
        return -1;
    }
    if (strcmp(t->mode, "flaky") == 0 && t->calls <= 2) {
        snprintf(err->message, sizeof err->message, "503 Service Unavailable");
        err->http_status = 503;
        return -1;
    }
    if (strcmp(t->mode, "timeout-once") == 0 && t->calls == 1) {
        snprintf(err->message, sizeof err->message, "timeout after 10s waiting for the reply");
        err->kind = RECOVERY__V1__ERROR_KIND__ERROR_KIND_TIMEOUT;
        return -1;
    }
    if (strcmp(t->mode, "hold") == 0) {
        printf("HOLDING\n");
        fflush(stdout);
        int64_t waited = 0;
        while (access(t->release, F_OK) != 0 && waited < timeout_ms && waited < 20000) {
            struct timespec ts = {0, 20 * 1000000};
            nanosleep(&ts, NULL);
            waited += 20;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *addr = "127.0.0.1:50051", *turn = "", *tool = "search";
    search_tool st = {.mode = "succeed", .release = ""};
    const char *verify_tool = NULL;
    verifier_state vs = {0};
    /* Connection options: --ca, --cert, --key (TLS / mutual TLS), --token
     * (server.auth, or the admin token of server.tenants), --tenant (the
     * tenant that token acts for), --lb (e.g. round_robin, with a target
     * that resolves to several addresses). */
    rdc_options opts = {.executor_id = "c-executor"};
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--addr") == 0) addr = argv[i + 1];
        else if (strcmp(argv[i], "--turn") == 0) turn = argv[i + 1];
        else if (strcmp(argv[i], "--tool") == 0) tool = argv[i + 1];
        else if (strcmp(argv[i], "--mode") == 0) st.mode = argv[i + 1];
        else if (strcmp(argv[i], "--release") == 0) st.release = argv[i + 1];
        else if (strcmp(argv[i], "--ca") == 0) opts.tls_ca_file = argv[i + 1];
        else if (strcmp(argv[i], "--cert") == 0) opts.tls_cert_file = argv[i + 1];
        else if (strcmp(argv[i], "--key") == 0) opts.tls_key_file = argv[i + 1];
        else if (strcmp(argv[i], "--token") == 0) opts.bearer_token = argv[i + 1];
        else if (strcmp(argv[i], "--tenant") == 0) opts.tenant = argv[i + 1];
        else if (strcmp(argv[i], "--lb") == 0) opts.lb_policy = argv[i + 1];
        else if (strcmp(argv[i], "--verify-tool") == 0) verify_tool = argv[i + 1];
        else if (strcmp(argv[i], "--happened") == 0) vs.happened = strcmp(argv[i + 1], "true") == 0;
    }

    char err[256];
    rdc_client *client = rdc_client_open(addr, &opts, err, sizeof err);
    if (client == NULL) {
        fprintf(stderr, "executor: %s\n", err[0] ? err : "out of memory");
        return 2;
    }
    rdc_tool tools[] = {{.tool_id = tool, .fn = search, .user = &st}};
    rdc_verifier verifiers[] = {{.verify_tool_id = verify_tool, .fn = verify_sent, .user = &vs}};
    rdc_run_options run = {.turn_id = turn};
    if (verify_tool != NULL) {
        run.verifiers = verifiers;
        run.n_verifiers = 1;
    }
    rdc_result res;
    rdc_run_tool(client, tool, tools, 1, &run, &res);

    printf("{\"lang\":\"c\",\"status\":\"%s\",\"attempts\":%d,\"tool_calls\":%d,\"fallback\":%s,"
           "\"permit\":%s,\"recorded\":%s,\"reason\":\"%s\",\"actions\":[",
           rdc_status_name(res.status), res.attempts, st.calls, res.fallback ? "true" : "false",
           res.permit_id[0] ? "true" : "false", res.outcome_recorded ? "true" : "false", res.reason);
    for (size_t i = 0; i < res.n_actions; i++) {
        const ProtobufCEnumValue *v =
            protobuf_c_enum_descriptor_get_value(&recovery__v1__action__descriptor, (int)res.actions[i]);
        printf("%s\"%s\"", i ? "," : "", v != NULL ? v->name : "?");
    }
    printf("],\"verified\":%s,\"verify_tool\":\"%s\",\"verify_calls\":%d}\n",
           res.verified ? "true" : "false", res.verify_tool_id, vs.calls);
    rdc_result_clear(&res);
    rdc_client_free(client);
    return 0;
}
