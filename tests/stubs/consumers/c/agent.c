/* A fresh project's executor built with `pkg-config recoveryd-client`: the
 * tool fails once, then answers; prints "<status> attempts=<n> fallback=<bool>".
 * Usage: agent HOST:PORT */
#include <stdio.h>

#include <recoveryd_client.h>

static int weather(void *user, int64_t timeout_ms, rdc_tool_error *err)
{
    int *calls = user;
    (void)timeout_ms;
    if (++*calls < 2) {
        snprintf(err->message, sizeof err->message, "connection reset by peer");
        snprintf(err->code, sizeof err->code, "ECONNRESET");
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    char err[256];
    rdc_options o = {.rpc_timeout_ms = 2000, .executor_id = "c-user"};
    rdc_client *c = rdc_client_open(argv[1], &o, err, sizeof err);
    if (c == NULL) {
        fprintf(stderr, "agent: %s\n", err);
        return 1;
    }
    int calls = 0;
    rdc_tool tools[] = {{.tool_id = "weather", .fn = weather, .user = &calls}};
    rdc_run_options run = {.turn_id = "c-user"};
    rdc_result res;
    rdc_run_tool(c, "weather", tools, 1, &run, &res);
    printf("%s attempts=%d fallback=%s\n", rdc_status_name(res.status), res.attempts,
           res.fallback ? "true" : "false");
    rdc_result_clear(&res);
    rdc_client_free(c);
    return 0;
}
