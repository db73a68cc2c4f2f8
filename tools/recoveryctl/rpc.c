/* gRPC core client calls for recoveryctl. Every call runs as batches on one
 * pluck completion queue; a stream polls in short slices so an interrupt
 * (*stop) can cancel it. */
#include "rpc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>

#define POLL_SLICE_MS 200

__attribute__((format(printf, 3, 4)))
static int fail(ctl_rpc_status *st, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    st->code = code;
    vsnprintf(st->message, sizeof st->message, fmt, ap);
    va_end(ap);
    return -1;
}

const char *ctl_status_name(int code)
{
    static const char *const NAMES[] = {
        "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
        "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
        "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
        "UNAUTHENTICATED",
    };
    if (code == CTL_LOCAL_ERROR)
        return "LOCAL_ERROR";
    if (code >= 0 && code < (int)(sizeof NAMES / sizeof *NAMES))
        return NAMES[code];
    return "UNKNOWN_STATUS";
}

/* Whole file into a NUL-terminated malloc'd string (caller frees). */
static char *slurp(const char *path, ctl_rpc_status *st)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fail(st, CTL_LOCAL_ERROR, "%s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len < 2) {
            char *p = realloc(buf, cap *= 2);
            if (!p)
                free(buf);
            buf = p;
        }
    }
    fclose(f);
    if (!buf) {
        fail(st, CTL_LOCAL_ERROR, "%s: out of memory", path);
        return NULL;
    }
    buf[len] = '\0';
    return buf;
}

static grpc_channel_credentials *tls_credentials(const ctl_tls *tls, ctl_rpc_status *st)
{
    char *ca = slurp(tls->ca_file, st), *cert = NULL, *key = NULL;
    if (!ca)
        return NULL;
    grpc_ssl_pem_key_cert_pair pair = {0};
    bool mutual = tls->cert_file && tls->key_file;
    if (mutual) {
        if (!(cert = slurp(tls->cert_file, st)) || !(key = slurp(tls->key_file, st))) {
            free(ca);
            free(cert);
            return NULL;
        }
        pair.cert_chain = cert;
        pair.private_key = key;
    }
    grpc_channel_credentials *creds =
        grpc_ssl_credentials_create(ca, mutual ? &pair : NULL, NULL, NULL);
    free(ca);
    free(cert);
    free(key);
    if (!creds)
        fail(st, CTL_LOCAL_ERROR, "TLS: cannot use the given certificates");
    return creds;
}

int ctl_connect(ctl_conn *c, const char *addr, const ctl_tls *tls, int timeout_ms,
                ctl_rpc_status *st)
{
    *c = (ctl_conn){.timeout_ms = timeout_ms};
    grpc_init();
    grpc_channel_credentials *creds =
        tls && tls->ca_file ? tls_credentials(tls, st) : grpc_insecure_credentials_create();
    if (!creds) {
        grpc_shutdown();
        return -1;
    }
    grpc_arg args[1];
    size_t n_args = 0;
    if (tls && tls->ca_file && tls->server_name)
        args[n_args++] = (grpc_arg){.type = GRPC_ARG_STRING,
                                    .key = GRPC_SSL_TARGET_NAME_OVERRIDE_ARG,
                                    .value.string = (char *)tls->server_name};
    grpc_channel_args channel_args = {.num_args = n_args, .args = args};
    c->channel = grpc_channel_create(addr, creds, &channel_args);
    grpc_channel_credentials_release(creds);
    c->cq = grpc_completion_queue_create_for_pluck(NULL);
    if (!c->channel || !c->cq) {
        ctl_disconnect(c);
        return fail(st, CTL_LOCAL_ERROR, "cannot create a channel to %s", addr);
    }
    return 0;
}

void ctl_disconnect(ctl_conn *c)
{
    if (!c || (!c->channel && !c->cq))
        return;
    if (c->channel)
        grpc_channel_destroy(c->channel);
    if (c->cq) {
        grpc_completion_queue_shutdown(c->cq);
        grpc_completion_queue_destroy(c->cq);
    }
    *c = (ctl_conn){0};
    grpc_shutdown();
}

/* ---- messages ---- */

static grpc_byte_buffer *pack(const ProtobufCMessage *msg)
{
    size_t size = protobuf_c_message_get_packed_size(msg);
    grpc_slice slice = grpc_slice_malloc(size);
    protobuf_c_message_pack(msg, GRPC_SLICE_START_PTR(slice));
    grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&slice, 1);
    grpc_slice_unref(slice);
    return bb;
}

static ProtobufCMessage *unpack(grpc_byte_buffer *bb, const ProtobufCMessageDescriptor *type)
{
    grpc_byte_buffer_reader reader;
    if (!grpc_byte_buffer_reader_init(&reader, bb))
        return NULL;
    grpc_slice all = grpc_byte_buffer_reader_readall(&reader);
    grpc_byte_buffer_reader_destroy(&reader);
    ProtobufCMessage *msg = protobuf_c_message_unpack(type, NULL, GRPC_SLICE_LENGTH(all),
                                                      GRPC_SLICE_START_PTR(all));
    grpc_slice_unref(all);
    return msg;
}

/* ---- calls ---- */

typedef struct auth_md {
    grpc_metadata md[2];         /* authorization, then x-recoveryd-tenant */
    size_t count;
} auth_md;

static void auth_init(auth_md *a, const char *token, const char *tenant)
{
    a->count = 0;
    if (token && token[0]) {
        size_t len = strlen(token) + sizeof "Bearer ";
        char *value = malloc(len);
        if (value) {
            snprintf(value, len, "Bearer %s", token);
            a->md[a->count++] = (grpc_metadata){
                .key = grpc_slice_from_static_string("authorization"),
                .value = grpc_slice_from_copied_string(value)};
            free(value);
        }
    }
    if (tenant && tenant[0])
        a->md[a->count++] = (grpc_metadata){
            .key = grpc_slice_from_static_string("x-recoveryd-tenant"),
            .value = grpc_slice_from_copied_string(tenant)};
}

static void auth_destroy(auth_md *a)
{
    for (size_t i = 0; i < a->count; i++)
        grpc_slice_unref(a->md[i].value);
}

static gpr_timespec deadline_after(int64_t ms)
{
    if (ms <= 0)
        return gpr_inf_future(GPR_CLOCK_MONOTONIC);
    return gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(ms, GPR_TIMESPAN));
}

static grpc_call *new_call(ctl_conn *c, const char *method, gpr_timespec deadline)
{
    grpc_slice path = grpc_slice_from_static_string(method);
    return grpc_channel_create_call(c->channel, NULL, GRPC_PROPAGATE_DEFAULTS, c->cq, path,
                                    NULL, deadline, NULL);
}

static int status_result(grpc_status_code code, grpc_slice details, ctl_rpc_status *st)
{
    if (code == GRPC_STATUS_OK)
        return 0;
    char *text = grpc_slice_to_c_string(details);
    fail(st, (int)code, "%s", text && text[0] ? text : "(no message)");
    gpr_free(text);
    return -1;
}

int ctl_unary(ctl_conn *c, const char *method, const char *token, const ProtobufCMessage *req,
              const ProtobufCMessageDescriptor *resp_type, ProtobufCMessage **resp,
              ctl_rpc_status *st)
{
    *resp = NULL;
    grpc_call *call = new_call(c, method, deadline_after(c->timeout_ms));
    if (!call)
        return fail(st, CTL_LOCAL_ERROR, "cannot start %s", method);
    auth_md auth;
    auth_init(&auth, token, c->tenant);
    grpc_byte_buffer *request = pack(req), *response = NULL;
    grpc_metadata_array initial_md, trailing_md;
    grpc_metadata_array_init(&initial_md);
    grpc_metadata_array_init(&trailing_md);
    grpc_status_code code = GRPC_STATUS_UNKNOWN;
    grpc_slice details = grpc_empty_slice();

    grpc_op ops[6] = {0};
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[0].data.send_initial_metadata.count = auth.count;
    ops[0].data.send_initial_metadata.metadata = auth.count ? auth.md : NULL;
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = request;
    ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[3].data.recv_initial_metadata.recv_initial_metadata = &initial_md;
    ops[4].op = GRPC_OP_RECV_MESSAGE;
    ops[4].data.recv_message.recv_message = &response;
    ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    ops[5].data.recv_status_on_client.trailing_metadata = &trailing_md;
    ops[5].data.recv_status_on_client.status = &code;
    ops[5].data.recv_status_on_client.status_details = &details;

    int rc = -1;
    grpc_call_error err = grpc_call_start_batch(call, ops, 6, ops, NULL);
    if (err != GRPC_CALL_OK) {
        fail(st, CTL_LOCAL_ERROR, "cannot start %s (call error %d)", method, (int)err);
    } else {
        /* The call's own deadline ends the batch, so waiting forever is safe. */
        grpc_completion_queue_pluck(c->cq, ops, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
        rc = status_result(code, details, st);
        if (rc == 0 && !(response && (*resp = unpack(response, resp_type))))
            rc = fail(st, CTL_LOCAL_ERROR, "%s: the server sent no valid response", method);
    }
    grpc_slice_unref(details);
    grpc_metadata_array_destroy(&initial_md);
    grpc_metadata_array_destroy(&trailing_md);
    grpc_byte_buffer_destroy(request);
    if (response)
        grpc_byte_buffer_destroy(response);
    auth_destroy(&auth);
    grpc_call_unref(call);
    return rc;
}

/* ---- server streams ---- */

struct ctl_stream {
    ctl_conn *conn;
    grpc_call *call;
    auth_md auth;
    grpc_byte_buffer *request;
    grpc_metadata_array initial_md, trailing_md;
    grpc_status_code code;
    grpc_slice details;
    bool has_duration;
    bool got_initial_md;
    bool ended;                  /* no more messages will come */
    bool stopped;                /* cancelled because *stop was set */
    char send_tag, status_tag, recv_tag;
};

/* Waits for one batch, cancelling the call once *stop is set. */
static bool wait_batch(ctl_stream *s, void *tag, volatile sig_atomic_t *stop)
{
    for (;;) {
        gpr_timespec until = stop ? deadline_after(POLL_SLICE_MS)
                                  : gpr_inf_future(GPR_CLOCK_MONOTONIC);
        grpc_event ev = grpc_completion_queue_pluck(s->conn->cq, tag, until, NULL);
        if (ev.type == GRPC_OP_COMPLETE)
            return ev.success;
        if (ev.type == GRPC_QUEUE_SHUTDOWN)
            return false;
        if (stop && *stop && !s->stopped) {
            s->stopped = true;
            grpc_call_cancel(s->call, NULL);
        }
    }
}

static void stream_free(ctl_stream *s)
{
    grpc_slice_unref(s->details);
    grpc_metadata_array_destroy(&s->initial_md);
    grpc_metadata_array_destroy(&s->trailing_md);
    if (s->request)
        grpc_byte_buffer_destroy(s->request);
    auth_destroy(&s->auth);
    if (s->call)
        grpc_call_unref(s->call);
    free(s);
}

static int stream_start(ctl_stream *s, const char *method, ctl_rpc_status *st)
{
    grpc_op send[3] = {0};
    send[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    send[0].data.send_initial_metadata.count = s->auth.count;
    send[0].data.send_initial_metadata.metadata = s->auth.count ? s->auth.md : NULL;
    send[1].op = GRPC_OP_SEND_MESSAGE;
    send[1].data.send_message.send_message = s->request;
    send[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    grpc_op status = {.op = GRPC_OP_RECV_STATUS_ON_CLIENT};
    status.data.recv_status_on_client.trailing_metadata = &s->trailing_md;
    status.data.recv_status_on_client.status = &s->code;
    status.data.recv_status_on_client.status_details = &s->details;
    if (grpc_call_start_batch(s->call, send, 3, &s->send_tag, NULL) != GRPC_CALL_OK)
        return fail(st, CTL_LOCAL_ERROR, "cannot start %s", method);
    if (grpc_call_start_batch(s->call, &status, 1, &s->status_tag, NULL) != GRPC_CALL_OK) {
        grpc_call_cancel(s->call, NULL);
        wait_batch(s, &s->send_tag, NULL);
        return fail(st, CTL_LOCAL_ERROR, "cannot start %s", method);
    }
    /* A failed send shows up as the call's status, read at close. */
    wait_batch(s, &s->send_tag, NULL);
    return 0;
}

ctl_stream *ctl_stream_open(ctl_conn *c, const char *method, const char *token,
                            const ProtobufCMessage *req, int64_t duration_ms,
                            ctl_rpc_status *st)
{
    ctl_stream *s = calloc(1, sizeof *s);
    if (!s) {
        fail(st, CTL_LOCAL_ERROR, "out of memory");
        return NULL;
    }
    s->conn = c;
    s->has_duration = duration_ms > 0;
    s->details = grpc_empty_slice();
    grpc_metadata_array_init(&s->initial_md);
    grpc_metadata_array_init(&s->trailing_md);
    auth_init(&s->auth, token, c->tenant);
    s->request = pack(req);
    s->call = new_call(c, method, deadline_after(duration_ms));
    if (!s->call) {
        fail(st, CTL_LOCAL_ERROR, "cannot start %s", method);
        stream_free(s);
        return NULL;
    }
    if (stream_start(s, method, st) != 0) {
        wait_batch(s, &s->status_tag, NULL);
        stream_free(s);
        return NULL;
    }
    return s;
}

int ctl_stream_next(ctl_stream *s, const ProtobufCMessageDescriptor *type,
                    ProtobufCMessage **msg, volatile sig_atomic_t *stop)
{
    *msg = NULL;
    if (s->stopped)
        return 0;
    grpc_byte_buffer *bb = NULL;
    grpc_op ops[2] = {0};
    size_t n = 0;
    if (!s->got_initial_md) {
        ops[n].op = GRPC_OP_RECV_INITIAL_METADATA;
        ops[n++].data.recv_initial_metadata.recv_initial_metadata = &s->initial_md;
        s->got_initial_md = true;
    }
    ops[n].op = GRPC_OP_RECV_MESSAGE;
    ops[n++].data.recv_message.recv_message = &bb;
    if (grpc_call_start_batch(s->call, ops, n, &s->recv_tag, NULL) != GRPC_CALL_OK)
        return -1;
    bool ok = wait_batch(s, &s->recv_tag, stop);
    if (!ok || !bb) {
        /* No message: the stream ended; its status (read at close) says how. */
        s->ended = true;
        if (bb)
            grpc_byte_buffer_destroy(bb);
        return 0;
    }
    *msg = unpack(bb, type);
    grpc_byte_buffer_destroy(bb);
    return *msg ? 1 : -1;
}

int ctl_stream_close(ctl_stream *s, ctl_rpc_status *st)
{
    if (!s)
        return 0;
    bool closed_early = !s->ended && !s->stopped; /* the caller has seen enough */
    if (closed_early)
        grpc_call_cancel(s->call, NULL);
    wait_batch(s, &s->status_tag, NULL);
    bool expected = s->stopped || closed_early ||
                    (s->has_duration && s->code == GRPC_STATUS_DEADLINE_EXCEEDED);
    int rc = expected ? 0 : status_result(s->code, s->details, st);
    stream_free(s);
    return rc;
}
