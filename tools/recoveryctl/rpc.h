/* recoveryctl's gRPC client: one channel, unary calls and one server stream,
 * on the gRPC core API with a pluck completion queue (single-threaded).
 *
 * Errors: functions return 0 on success, -1 on failure with *st filled in
 * (the gRPC status code, or CTL_LOCAL_ERROR for a failure on this side, and
 * a message). Messages returned to the caller are protobuf-c unpacked
 * messages the caller frees with protobuf_c_message_free_unpacked. */
#ifndef RECOVERYCTL_RPC_H
#define RECOVERYCTL_RPC_H

#include <signal.h>
#include <stdbool.h>

#include <grpc/grpc.h>
#include <protobuf-c/protobuf-c.h>

#define CTL_LOCAL_ERROR (-1)

typedef struct ctl_rpc_status {
    int code;                    /* grpc_status_code, or CTL_LOCAL_ERROR */
    char message[1024];
} ctl_rpc_status;

typedef struct ctl_tls {
    const char *ca_file;         /* NULL = plaintext */
    const char *cert_file;       /* client certificate for mutual TLS, or NULL */
    const char *key_file;
    const char *server_name;     /* override of the name checked in the certificate */
} ctl_tls;

typedef struct ctl_conn {
    grpc_channel *channel;
    grpc_completion_queue *cq;
    int timeout_ms;              /* deadline of every unary call */
    /* Sent as x-recoveryd-tenant on every call (the tenant an admin token
     * acts for, docs/TENANTS.md); NULL = none. Set after ctl_connect. */
    const char *tenant;
} ctl_conn;

/* Opens a channel to addr (host:port). Nothing is sent yet. */
int ctl_connect(ctl_conn *c, const char *addr, const ctl_tls *tls, int timeout_ms,
                ctl_rpc_status *st);
void ctl_disconnect(ctl_conn *c);

/* One unary call with the connection's deadline. token (may be NULL) is
 * sent as `authorization: Bearer <token>`. */
int ctl_unary(ctl_conn *c, const char *method, const char *token, const ProtobufCMessage *req,
              const ProtobufCMessageDescriptor *resp_type, ProtobufCMessage **resp,
              ctl_rpc_status *st);

/* A server-streaming call. duration_ms = 0: no deadline (it ends when the
 * server ends it, on an error, or when *stop becomes non-zero). */
typedef struct ctl_stream ctl_stream;
ctl_stream *ctl_stream_open(ctl_conn *c, const char *method, const char *token,
                            const ProtobufCMessage *req, int64_t duration_ms,
                            ctl_rpc_status *st);
/* 1 with *msg set, 0 when the stream ended or was stopped, -1 on error. */
int ctl_stream_next(ctl_stream *s, const ProtobufCMessageDescriptor *type,
                    ProtobufCMessage **msg, volatile sig_atomic_t *stop);
/* Cancels the call if still running, collects its status (0 when it ended
 * OK, was stopped by *stop, or reached its duration) and frees it. */
int ctl_stream_close(ctl_stream *s, ctl_rpc_status *st);

/* "UNAVAILABLE", "OK", ... */
const char *ctl_status_name(int code);

#endif
