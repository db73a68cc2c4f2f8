/* The plain client: one unary RPC on the gRPC core client API, protobuf-c
 * messages in and out, the client's deadline on every call. */
#include "rdc_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>

static void apply_defaults(rdc_options *o)
{
    if (o->rpc_timeout_ms <= 0)
        o->rpc_timeout_ms = RDC_DEFAULT_RPC_TIMEOUT_MS;
    if (o->fallback_max_attempts <= 0)
        o->fallback_max_attempts = 3;
    if (o->n_fallback_delays == 0 || o->n_fallback_delays > RDC_MAX_FALLBACK_DELAYS) {
        o->fallback_delays_ms[0] = 100;
        o->fallback_delays_ms[1] = 200;
        o->n_fallback_delays = 2;
    }
    if (o->fallback_timeout_ms <= 0)
        o->fallback_timeout_ms = 30000;
}

static void set_err(char *err, size_t len, const char *fmt, const char *what, const char *path)
{
    if (err != NULL && len > 0)
        snprintf(err, len, fmt, what, path);
}

/* The whole file as a NUL-terminated string (PEM), or NULL with err set. */
static char *read_pem(const char *what, const char *path, char *err, size_t err_len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        set_err(err, err_len, "%s: cannot open %s", what, path);
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    while (buf != NULL) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        cap *= 2;
        char *grown = realloc(buf, cap + 1);
        if (grown == NULL) {
            free(buf);
            buf = NULL;
        } else {
            buf = grown;
        }
    }
    bool bad = ferror(f) != 0 || buf == NULL || n == 0;
    fclose(f);
    if (bad) {
        free(buf);
        set_err(err, err_len, "%s: cannot read %s (or it is empty)", what, path);
        return NULL;
    }
    buf[n] = '\0';
    return buf;
}

/* Plaintext, or TLS with the given roots and client key pair. NULL with err set. */
static grpc_channel_credentials *channel_credentials(const rdc_options *o, char *err, size_t err_len)
{
    bool tls = o->tls || o->tls_ca_file != NULL || o->tls_cert_file != NULL || o->tls_key_file != NULL;
    if (!tls)
        return grpc_insecure_credentials_create();
    if ((o->tls_cert_file == NULL) != (o->tls_key_file == NULL)) {
        set_err(err, err_len, "%s: %s", "tls_cert_file and tls_key_file",
                "give both for mutual TLS, or neither");
        return NULL;
    }
    char *roots = NULL, *cert = NULL, *key = NULL;
    grpc_channel_credentials *creds = NULL;
    if (o->tls_ca_file != NULL && (roots = read_pem("tls_ca_file", o->tls_ca_file, err, err_len)) == NULL)
        goto out;
    if (o->tls_cert_file != NULL) {
        if ((cert = read_pem("tls_cert_file", o->tls_cert_file, err, err_len)) == NULL ||
            (key = read_pem("tls_key_file", o->tls_key_file, err, err_len)) == NULL)
            goto out;
    }
    grpc_ssl_pem_key_cert_pair pair = {.private_key = key, .cert_chain = cert};
    creds = grpc_ssl_credentials_create(roots, cert != NULL ? &pair : NULL, NULL, NULL);
    if (creds == NULL)
        set_err(err, err_len, "%s: %s", "tls", "gRPC refused the TLS settings");
out:
    free(roots);
    free(cert);
    free(key);
    return creds;
}

/* grpc_channel_create copies the arguments, so these point at the caller's strings. */
static grpc_arg string_arg(const char *key, const char *value)
{
    grpc_arg a = {.type = GRPC_ARG_STRING, .key = (char *)key};
    a.value.string = (char *)value;
    return a;
}

int rdc_check_tenant(const char *tenant, char *err, size_t err_len)
{
    if (tenant == NULL || tenant[0] == '\0')
        return 0;
    size_t n = strlen(tenant);
    if (n > RDC_TENANT_ID_MAX) {
        if (err != NULL && err_len > 0)
            snprintf(err, err_len, "tenant: longer than %d bytes", RDC_TENANT_ID_MAX);
        return -1;
    }
    if (strspn(tenant, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") != n) {
        if (err != NULL && err_len > 0)
            snprintf(err, err_len, "tenant: \"%s\": only letters, digits, '_', '.' and '-'", tenant);
        return -1;
    }
    return 0;
}

rdc_client *rdc_client_open(const char *target, const rdc_options *opts, char *err, size_t err_len)
{
    if (err != NULL && err_len > 0)
        err[0] = '\0';
    if (target == NULL) {
        set_err(err, err_len, "%s: %s", "target", "missing");
        return NULL;
    }
    const char *tenant = opts != NULL ? opts->tenant : NULL;
    if (rdc_check_tenant(tenant, err, err_len) != 0)
        return NULL;
    rdc_client *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    if (opts != NULL)
        c->opts = *opts;
    /* Strings are copied so the caller's may go away; the TLS files are read
     * now and the paths not kept. */
    c->executor_id = strdup(opts != NULL && opts->executor_id != NULL ? opts->executor_id : "");
    const char *token = opts != NULL ? opts->bearer_token : NULL;
    if (token != NULL && token[0] != '\0') {
        size_t n = strlen(token) + sizeof "Bearer ";
        c->authorization = malloc(n);
        if (c->authorization != NULL)
            snprintf(c->authorization, n, "Bearer %s", token);
    }
    if (tenant != NULL && tenant[0] != '\0')
        c->tenant = strdup(tenant);
    if (c->executor_id == NULL || (token != NULL && token[0] != '\0' && c->authorization == NULL) ||
        (tenant != NULL && tenant[0] != '\0' && c->tenant == NULL)) {
        free(c->executor_id);
        free(c->authorization);
        free(c->tenant);
        free(c);
        return NULL;
    }
    c->opts.executor_id = c->executor_id;
    c->opts.bearer_token = NULL;
    c->opts.tenant = NULL;
    c->opts.tls_ca_file = c->opts.tls_cert_file = c->opts.tls_key_file = NULL;
    c->opts.tls_server_name = c->opts.lb_policy = NULL;
    c->opts.channel_args = NULL;
    c->opts.n_channel_args = 0;
    apply_defaults(&c->opts);
    grpc_init();
    rdc_options o = opts != NULL ? *opts : (rdc_options){0};
    grpc_channel_credentials *creds = channel_credentials(&o, err, err_len);
    if (creds == NULL) {
        rdc_client_free(c);
        return NULL;
    }
    size_t n_args = o.n_channel_args + 2;
    grpc_arg *args = calloc(n_args, sizeof *args);
    if (args == NULL) {
        grpc_channel_credentials_release(creds);
        rdc_client_free(c);
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < o.n_channel_args; i++)
        args[k++] = o.channel_args[i];
    if (o.lb_policy != NULL)
        args[k++] = string_arg(GRPC_ARG_LB_POLICY_NAME, o.lb_policy);
    if (o.tls_server_name != NULL)
        args[k++] = string_arg(GRPC_SSL_TARGET_NAME_OVERRIDE_ARG, o.tls_server_name);
    grpc_channel_args channel_args = {.num_args = k, .args = args};
    c->channel = grpc_channel_create(target, creds, &channel_args);
    free(args);
    grpc_channel_credentials_release(creds);
    return c;
}

rdc_client *rdc_client_new(const char *target, const rdc_options *opts)
{
    return rdc_client_open(target, opts, NULL, 0);
}

void rdc_client_free(rdc_client *client)
{
    if (client == NULL)
        return;
    if (client->channel != NULL)
        grpc_channel_destroy(client->channel);
    free(client->executor_id);
    free(client->authorization);
    free(client->tenant);
    free(client);
    grpc_shutdown();
}

static grpc_byte_buffer *encode(const ProtobufCMessage *msg)
{
    size_t len = protobuf_c_message_get_packed_size(msg);
    grpc_slice slice = grpc_slice_malloc(len);
    protobuf_c_message_pack(msg, GRPC_SLICE_START_PTR(slice));
    grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&slice, 1);
    grpc_slice_unref(slice);
    return bb;
}

static ProtobufCMessage *decode(grpc_byte_buffer *bb, const ProtobufCMessageDescriptor *desc)
{
    grpc_byte_buffer_reader reader;
    if (!grpc_byte_buffer_reader_init(&reader, bb))
        return NULL;
    grpc_slice all = grpc_byte_buffer_reader_readall(&reader);
    ProtobufCMessage *msg = protobuf_c_message_unpack(desc, NULL, GRPC_SLICE_LENGTH(all),
                                                      GRPC_SLICE_START_PTR(all));
    grpc_slice_unref(all);
    grpc_byte_buffer_reader_destroy(&reader);
    return msg;
}

static void copy_details(char *dst, size_t len, grpc_slice details)
{
    if (dst == NULL || len == 0)
        return;
    size_t n = GRPC_SLICE_LENGTH(details);
    if (n >= len)
        n = len - 1;
    memcpy(dst, GRPC_SLICE_START_PTR(details), n);
    dst[n] = '\0';
}

grpc_status_code rdc_call(rdc_client *client, const char *method, const ProtobufCMessage *req,
                          const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **resp,
                          char *details, size_t details_len)
{
    *resp = NULL;
    if (details != NULL && details_len > 0)
        details[0] = '\0';
    /* A queue per call keeps concurrent callers apart; the deadline below
     * guarantees the batch completes, so the pluck never waits forever. */
    grpc_completion_queue *cq = grpc_completion_queue_create_for_pluck(NULL);
    gpr_timespec deadline = gpr_time_add(gpr_now(GPR_CLOCK_REALTIME),
                                         gpr_time_from_millis(client->opts.rpc_timeout_ms, GPR_TIMESPAN));
    grpc_slice method_slice = grpc_slice_from_copied_string(method);
    grpc_call *call = grpc_channel_create_call(client->channel, NULL, GRPC_PROPAGATE_DEFAULTS, cq,
                                               method_slice, NULL, deadline, NULL);
    grpc_slice_unref(method_slice);

    grpc_byte_buffer *send = encode(req);
    grpc_byte_buffer *recv = NULL;
    grpc_metadata_array initial_md, trailing_md;
    grpc_metadata_array_init(&initial_md);
    grpc_metadata_array_init(&trailing_md);
    grpc_status_code status = GRPC_STATUS_UNKNOWN;
    grpc_slice status_details = grpc_empty_slice();

    grpc_op ops[6];
    memset(ops, 0, sizeof ops);
    grpc_metadata md[2];
    memset(md, 0, sizeof md);
    size_t n_md = 0;
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    /* static slices: the client outlives every call it makes */
    if (client->authorization != NULL) {
        md[n_md].key = grpc_slice_from_static_string("authorization");
        md[n_md++].value = grpc_slice_from_static_string(client->authorization);
    }
    if (client->tenant != NULL) {
        md[n_md].key = grpc_slice_from_static_string(RDC_TENANT_HEADER);
        md[n_md++].value = grpc_slice_from_static_string(client->tenant);
    }
    ops[0].data.send_initial_metadata.count = n_md;
    ops[0].data.send_initial_metadata.metadata = n_md > 0 ? md : NULL;
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = send;
    ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[3].data.recv_initial_metadata.recv_initial_metadata = &initial_md;
    ops[4].op = GRPC_OP_RECV_MESSAGE;
    ops[4].data.recv_message.recv_message = &recv;
    ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    ops[5].data.recv_status_on_client.trailing_metadata = &trailing_md;
    ops[5].data.recv_status_on_client.status = &status;
    ops[5].data.recv_status_on_client.status_details = &status_details;

    void *tag = &ops;
    grpc_call_error started = grpc_call_start_batch(call, ops, 6, tag, NULL);
    if (started == GRPC_CALL_OK) {
        grpc_event ev = grpc_completion_queue_pluck(cq, tag, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
        if (ev.type != GRPC_OP_COMPLETE || !ev.success)
            status = GRPC_STATUS_UNAVAILABLE;
    } else {
        status = GRPC_STATUS_INTERNAL;
    }

    if (status == GRPC_STATUS_OK) {
        *resp = recv != NULL ? decode(recv, resp_desc) : NULL;
        if (*resp == NULL) {
            status = GRPC_STATUS_INTERNAL;
            if (details != NULL && details_len > 0)
                snprintf(details, details_len, "response could not be decoded");
        }
    } else {
        copy_details(details, details_len, status_details);
    }

    grpc_byte_buffer_destroy(send);
    if (recv != NULL)
        grpc_byte_buffer_destroy(recv);
    grpc_metadata_array_destroy(&initial_md);
    grpc_metadata_array_destroy(&trailing_md);
    grpc_slice_unref(status_details);
    grpc_call_unref(call);
    grpc_completion_queue_shutdown(cq);
    grpc_completion_queue_destroy(cq);
    return status;
}

grpc_status_code rdc_decide(rdc_client *client, const Recovery__V1__DecideRequest *req,
                            Recovery__V1__DecideResponse **resp, char *details, size_t details_len)
{
    return rdc_call(client, "/recovery.v1.RecoveryService/Decide", &req->base,
                    &recovery__v1__decide_response__descriptor, (ProtobufCMessage **)resp, details,
                    details_len);
}

grpc_status_code rdc_record_outcome(rdc_client *client, const Recovery__V1__RecordOutcomeRequest *req,
                                    Recovery__V1__RecordOutcomeResponse **resp, char *details,
                                    size_t details_len)
{
    return rdc_call(client, "/recovery.v1.RecoveryService/RecordOutcome", &req->base,
                    &recovery__v1__record_outcome_response__descriptor, (ProtobufCMessage **)resp,
                    details, details_len);
}

grpc_status_code rdc_get_turn_trace(rdc_client *client, const char *turn_id,
                                    Recovery__V1__GetTurnTraceResponse **resp, char *details,
                                    size_t details_len)
{
    Recovery__V1__GetTurnTraceRequest req = RECOVERY__V1__GET_TURN_TRACE_REQUEST__INIT;
    req.turn_id = (char *)turn_id;
    return rdc_call(client, "/recovery.v1.RecoveryService/GetTurnTrace", &req.base,
                    &recovery__v1__get_turn_trace_response__descriptor, (ProtobufCMessage **)resp,
                    details, details_len);
}
