/* The commands of recoveryctl: each builds one request, makes one call and
 * prints the answer as a table (or key/value lines) or as JSON. */
#include "ctl.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "output.h"

#define RECOVERY_SERVICE "/recovery.v1.RecoveryService/"
#define ADMIN_SERVICE "/recovery.v1.AdminService/"

static int report_failure(const ctl_opts *o, const char *rpc, const ctl_rpc_status *st)
{
    if (st->code == CTL_LOCAL_ERROR)
        fprintf(stderr, "recoveryctl: %s: %s\n", rpc, st->message);
    else
        fprintf(stderr, "recoveryctl: %s failed: %s: %s (server %s)\n", rpc,
                ctl_status_name(st->code), st->message, o->addr);
    return CTL_EXIT_FAIL;
}

/* Connects, makes one unary call, disconnects. */
static int call(const ctl_opts *o, const char *path, const char *token,
                const ProtobufCMessage *req, const ProtobufCMessageDescriptor *resp_type,
                ProtobufCMessage **resp)
{
    ctl_conn conn;
    ctl_rpc_status st = {0};
    const char *rpc = strrchr(path, '/') + 1;
    if (ctl_connect(&conn, o->addr, &o->tls, o->timeout_ms, &st) != 0)
        return report_failure(o, rpc, &st);
    conn.tenant = o->tenant;
    int rc = ctl_unary(&conn, path, token, req, resp_type, resp, &st);
    ctl_disconnect(&conn);
    return rc == 0 ? CTL_EXIT_OK : report_failure(o, rpc, &st);
}

static void print_json(json_t *v)
{
    ctl_json_print(v, false, stdout);
    json_decref(v);
}

static void print_breakers(const ctl_opts *o, Recovery__V1__BreakerState **b, size_t n)
{
    if (o->json) {
        json_t *list = json_array();
        for (size_t i = 0; i < n; i++)
            json_array_append_new(list, ctl_breaker_json(b[i]));
        print_json(json_pack("{s:o}", "breakers", list));
        return;
    }
    ctl_table *t = ctl_breaker_table();
    for (size_t i = 0; i < n; i++)
        ctl_breaker_row(t, b[i]);
    ctl_table_print(t, stdout);
    ctl_table_free(t);
}

/* ---- state ---- */

int ctl_cmd_state(const ctl_opts *o)
{
    Recovery__V1__GetBreakerStateRequest req = RECOVERY__V1__GET_BREAKER_STATE_REQUEST__INIT;
    req.tool_ids = o->args;
    req.n_tool_ids = (size_t)o->n_args;
    ProtobufCMessage *resp;
    int rc = call(o, RECOVERY_SERVICE "GetBreakerState", o->token, &req.base,
                  &recovery__v1__get_breaker_state_response__descriptor, &resp);
    if (rc != CTL_EXIT_OK)
        return rc;
    Recovery__V1__GetBreakerStateResponse *r = (Recovery__V1__GetBreakerStateResponse *)resp;
    print_breakers(o, r->breakers, r->n_breakers);
    protobuf_c_message_free_unpacked(resp, NULL);
    return CTL_EXIT_OK;
}

/* ---- watch ---- */

static volatile sig_atomic_t watch_stop;

static void on_stop_signal(int signo)
{
    (void)signo;
    watch_stop = 1;
}

static void install_stop_handlers(void)
{
    struct sigaction sa = {.sa_handler = on_stop_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

static void print_change(const ctl_opts *o, const Recovery__V1__BreakerChange *c)
{
    if (o->json) {
        json_t *v = ctl_breaker_change_json(c);
        ctl_json_print(v, true, stdout);
        json_decref(v);
    } else {
        ctl_breaker_change_line(c, stdout);
    }
    fflush(stdout); /* one line per change, as it happens, even into a pipe */
}

/* Prints changes until the stream ends, --count is reached or a signal. */
static int watch_loop(const ctl_opts *o, ctl_stream *s)
{
    int64_t seen = 0;
    ProtobufCMessage *msg;
    int rc = 0;
    while ((o->count == 0 || seen < o->count) &&
           (rc = ctl_stream_next(s, &recovery__v1__breaker_change__descriptor, &msg,
                                 &watch_stop)) == 1) {
        print_change(o, (Recovery__V1__BreakerChange *)msg);
        protobuf_c_message_free_unpacked(msg, NULL);
        seen++;
    }
    if (o->count == 0 || seen < o->count)
        return rc;
    return 0;
}

int ctl_cmd_watch(const ctl_opts *o)
{
    Recovery__V1__WatchBreakersRequest req = RECOVERY__V1__WATCH_BREAKERS_REQUEST__INIT;
    req.tool_ids = o->args;
    req.n_tool_ids = (size_t)o->n_args;
    ctl_conn conn;
    ctl_rpc_status st = {0};
    if (ctl_connect(&conn, o->addr, &o->tls, o->timeout_ms, &st) != 0)
        return report_failure(o, "WatchBreakers", &st);
    conn.tenant = o->tenant;
    install_stop_handlers();
    ctl_stream *s = ctl_stream_open(&conn, RECOVERY_SERVICE "WatchBreakers", o->token,
                                    &req.base, o->duration_ms, &st);
    int rc = CTL_EXIT_OK;
    if (!s) {
        rc = report_failure(o, "WatchBreakers", &st);
    } else {
        int loop = watch_loop(o, s);
        if (ctl_stream_close(s, &st) != 0)
            rc = report_failure(o, "WatchBreakers", &st);
        else if (loop < 0)
            rc = report_failure(o, "WatchBreakers",
                                &(ctl_rpc_status){CTL_LOCAL_ERROR, "undecodable message"});
    }
    ctl_disconnect(&conn);
    return rc;
}

/* ---- manual control ---- */

static int force(const ctl_opts *o, Recovery__V1__ForceMode mode)
{
    Recovery__V1__ForceBreakerRequest req = RECOVERY__V1__FORCE_BREAKER_REQUEST__INIT;
    req.tool_id = o->args[0];
    req.mode = mode;
    req.ttl_ms = o->ttl_ms;
    req.reason = (char *)(o->reason ? o->reason : "");
    req.operator_ = (char *)(o->operator_ ? o->operator_ : "");
    ProtobufCMessage *resp;
    const char *token = o->admin_token ? o->admin_token : o->token;
    int rc = call(o, ADMIN_SERVICE "ForceBreaker", token, &req.base,
                  &recovery__v1__force_breaker_response__descriptor, &resp);
    if (rc != CTL_EXIT_OK)
        return rc;
    Recovery__V1__ForceBreakerResponse *r = (Recovery__V1__ForceBreakerResponse *)resp;
    if (o->json)
        print_json(json_pack("{s:o}", "breaker", ctl_breaker_json(r->breaker)));
    else if (r->breaker)
        print_breakers(o, &r->breaker, 1);
    protobuf_c_message_free_unpacked(resp, NULL);
    return CTL_EXIT_OK;
}

int ctl_cmd_force_open(const ctl_opts *o)
{
    return force(o, RECOVERY__V1__FORCE_MODE__FORCE_MODE_OPEN);
}

int ctl_cmd_force_close(const ctl_opts *o)
{
    return force(o, RECOVERY__V1__FORCE_MODE__FORCE_MODE_CLOSED);
}

int ctl_cmd_reset(const ctl_opts *o)
{
    return force(o, RECOVERY__V1__FORCE_MODE__FORCE_MODE_RESET);
}

int ctl_cmd_release(const ctl_opts *o)
{
    return force(o, RECOVERY__V1__FORCE_MODE__FORCE_MODE_RELEASE);
}

/* ---- classify ---- */

/* The positionals joined with spaces: `classify Connection reset by peer`. */
static char *joined_message(const ctl_opts *o)
{
    size_t len = 1;
    for (int i = 0; i < o->n_args; i++)
        len += strlen(o->args[i]) + 1;
    char *msg = malloc(len);
    if (!msg)
        return NULL;
    msg[0] = '\0';
    for (int i = 0; i < o->n_args; i++) {
        if (i)
            strcat(msg, " ");
        strcat(msg, o->args[i]);
    }
    return msg;
}

int ctl_cmd_classify(const ctl_opts *o)
{
    Recovery__V1__ToolError err = RECOVERY__V1__TOOL_ERROR__INIT;
    char *message = joined_message(o);
    if (!message) {
        fprintf(stderr, "recoveryctl: out of memory\n");
        return CTL_EXIT_FAIL;
    }
    err.message = message;
    err.http_status = o->http_status;
    err.grpc_code = o->grpc_code;
    err.code = (char *)(o->code ? o->code : "");
    err.exception_type = (char *)(o->exception_type ? o->exception_type : "");
    err.kind = (Recovery__V1__ErrorKind)o->kind;
    err.source = (Recovery__V1__ErrorSource)o->source;
    err.retry_after_ms = o->retry_after_ms;
    Recovery__V1__ClassifyRequest req = RECOVERY__V1__CLASSIFY_REQUEST__INIT;
    req.tool_id = (char *)(o->tool ? o->tool : "recoveryctl");
    req.error = &err;
    ProtobufCMessage *resp;
    int rc = call(o, RECOVERY_SERVICE "Classify", o->token, &req.base,
                  &recovery__v1__classify_response__descriptor, &resp);
    free(message);
    if (rc != CTL_EXIT_OK)
        return rc;
    Recovery__V1__ClassifyResponse *r = (Recovery__V1__ClassifyResponse *)resp;
    if (o->json)
        print_json(ctl_classification_json(r->classification));
    else
        ctl_classification_print(r->classification, stdout);
    protobuf_c_message_free_unpacked(resp, NULL);
    return CTL_EXIT_OK;
}

/* ---- trace ---- */

int ctl_cmd_trace(const ctl_opts *o)
{
    Recovery__V1__GetTurnTraceRequest req = RECOVERY__V1__GET_TURN_TRACE_REQUEST__INIT;
    req.turn_id = o->args[0];
    ProtobufCMessage *resp;
    int rc = call(o, RECOVERY_SERVICE "GetTurnTrace", o->token, &req.base,
                  &recovery__v1__get_turn_trace_response__descriptor, &resp);
    if (rc != CTL_EXIT_OK)
        return rc;
    Recovery__V1__GetTurnTraceResponse *r = (Recovery__V1__GetTurnTraceResponse *)resp;
    if (o->json)
        print_json(ctl_trace_json(r));
    else
        ctl_trace_print(r, stdout);
    protobuf_c_message_free_unpacked(resp, NULL);
    return CTL_EXIT_OK;
}

json_t *ctl_fetch_trace_json(const ctl_opts *o, const char *turn_id)
{
    Recovery__V1__GetTurnTraceRequest req = RECOVERY__V1__GET_TURN_TRACE_REQUEST__INIT;
    req.turn_id = (char *)turn_id;
    ProtobufCMessage *resp;
    if (call(o, RECOVERY_SERVICE "GetTurnTrace", o->token, &req.base,
             &recovery__v1__get_turn_trace_response__descriptor, &resp) != CTL_EXIT_OK)
        return NULL;
    json_t *doc = ctl_trace_json((Recovery__V1__GetTurnTraceResponse *)resp);
    protobuf_c_message_free_unpacked(resp, NULL);
    return doc;
}

/* ---- check-config ---- */

/* Loads the file exactly as recoveryd does, without a server. */
int ctl_cmd_check_config(const ctl_opts *o)
{
    const char *path = o->args[0];
    char err[RD_CONFIG_ERR_MAX];
    err[0] = '\0';
    rd_config *cfg = rd_config_load(path, err, sizeof err);
    if (!cfg) {
        if (o->json)
            print_json(json_pack("{s:s, s:b, s:s}", "file", path, "ok", 0, "error", err));
        else
            fprintf(stderr, "%s\n", err[0] ? err : "invalid configuration");
        return CTL_EXIT_FAIL;
    }
    if (o->json)
        print_json(json_pack("{s:s, s:b, s:I, s:I}", "file", path, "ok", 1, "tools",
                             (json_int_t)cfg->n_tools, "rules",
                             (json_int_t)cfg->rules.n_rules));
    else
        printf("%s: ok (%zu tool manifest%s, %zu classification rules)\n", path, cfg->n_tools,
               cfg->n_tools == 1 ? "" : "s", cfg->rules.n_rules);
    rd_config_free(cfg);
    return CTL_EXIT_OK;
}
