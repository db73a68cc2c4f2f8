/* recoveryd-client: a C client of the recoveryd service on the gRPC core
 * client API and protobuf-c.
 *
 * Two levels:
 *  - rdc_call(): one unary RPC with the client's deadline, protobuf-c
 *    messages in and out (the plain client, for callers with their own loop);
 *  - rdc_run_tool(): a tool call run under the service's decisions (admission
 *    check, call with the returned timeout, Decide on every failure, sleep and
 *    retry, alternatives, typed stop, RecordOutcome with outcome_id and probe
 *    permit), with a local fallback policy when the service is unreachable.
 *
 * Threads: an rdc_client may be used from several threads at once. */
#ifndef RECOVERYD_CLIENT_H
#define RECOVERYD_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <grpc/grpc.h>
#include <grpc/status.h>

#include "recovery/v1/recovery.pb-c.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RDC_DEFAULT_RPC_TIMEOUT_MS 200
#define RDC_MAX_FALLBACK_DELAYS 8
#define RDC_MAX_DECISIONS 64

typedef struct rdc_client rdc_client;

typedef struct {
    int64_t rpc_timeout_ms;      /* deadline of every service call; 0 = 200 */
    const char *executor_id;     /* sent with Decide and RecordOutcome; NULL = "" */
    /* Local fallback while the service is unreachable or slow: every failure
     * counts as retryable, nothing is classified, no breaker is kept. */
    int fallback_max_attempts;   /* attempts in total, first included; 0 = 3 */
    int64_t fallback_delays_ms[RDC_MAX_FALLBACK_DELAYS]; /* before attempt 2, 3...; all 0 = 100, 200 */
    size_t n_fallback_delays;    /* the last delay repeats */
    int64_t fallback_timeout_ms; /* per call when the service gave none; 0 = 30000 */

    /* TLS (server.tls): on when tls is true or any file is given. The files
     * are PEM and read once, by rdc_client_open. */
    bool tls;
    const char *tls_ca_file;     /* roots that sign the server certificate; NULL = the system's */
    const char *tls_cert_file;   /* client certificate for mutual TLS (server.tls.client_ca_file) */
    const char *tls_key_file;    /* its private key; given together with tls_cert_file */
    const char *tls_server_name; /* name checked in the server certificate; NULL = the target's host */
    /* server.auth: sent as "authorization: Bearer <token>" on every call
     * (works over plaintext on loopback too). NULL or "" = none. Copied. */
    const char *bearer_token;
    /* Load balancing over every address the target resolves to, e.g.
     * "round_robin" with "dns:///recoveryd-headless.ns.svc:50051" (a headless
     * Service). NULL = gRPC's default, pick_first. */
    const char *lb_policy;
    /* Further channel arguments, passed as given (GRPC_ARG_* of grpc_types.h). */
    const grpc_arg *channel_args;
    size_t n_channel_args;
    /* server.tenants: sent as "x-recoveryd-tenant: <tenant>" on every call,
     * the tenant the admin token (bearer_token) acts for. Letters, digits,
     * '_', '.', '-', at most RDC_TENANT_ID_MAX bytes (rdc_client_open refuses
     * anything else). NULL or "" = none. Copied. */
    const char *tenant;
} rdc_options;

#define RDC_TENANT_HEADER "x-recoveryd-tenant"
#define RDC_TENANT_ID_MAX 64

/* 0 when the server would accept tenant as a tenant id (NULL and "" are no
 * tenant); -1 otherwise, with err (if given) saying why. */
int rdc_check_tenant(const char *tenant, char *err, size_t err_len);

/* Connects (lazily) to target ("host:port", or any gRPC target URI such as
 * "dns:///name:port" or "ipv4:10.0.0.1:50051,10.0.0.2:50051"). opts may be
 * NULL. Returns NULL when a TLS file cannot be read or the options
 * contradict each other (err, if given, says which) or when out of memory.
 * The caller frees with rdc_client_free. */
rdc_client *rdc_client_open(const char *target, const rdc_options *opts, char *err, size_t err_len);
/* rdc_client_open without the error text. */
rdc_client *rdc_client_new(const char *target, const rdc_options *opts);
/* Accepts NULL. */
void rdc_client_free(rdc_client *client);

/* One unary RPC. method is a full name such as
 * "/recovery.v1.RecoveryService/Decide"; resp_desc the response descriptor.
 * On GRPC_STATUS_OK *resp is the decoded answer, owned by the caller
 * (protobuf_c_message_free_unpacked(*resp, NULL)); otherwise *resp is NULL and
 * details (if given) holds the status message, truncated to details_len. */
grpc_status_code rdc_call(rdc_client *client, const char *method, const ProtobufCMessage *req,
                          const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **resp,
                          char *details, size_t details_len);

/* Typed shorthands of rdc_call. */
grpc_status_code rdc_decide(rdc_client *client, const Recovery__V1__DecideRequest *req,
                            Recovery__V1__DecideResponse **resp, char *details, size_t details_len);
grpc_status_code rdc_record_outcome(rdc_client *client, const Recovery__V1__RecordOutcomeRequest *req,
                                    Recovery__V1__RecordOutcomeResponse **resp, char *details,
                                    size_t details_len);
grpc_status_code rdc_get_turn_trace(rdc_client *client, const char *turn_id,
                                    Recovery__V1__GetTurnTraceResponse **resp, char *details,
                                    size_t details_len);

/* What a failing tool reports; fields left zero/empty are "not given". */
typedef struct {
    char message[1024];
    int32_t http_status;
    int32_t grpc_code;
    char code[64];             /* ECONNRESET, insufficient_quota, -32602 */
    char exception_type[128];
    Recovery__V1__ErrorKind kind;
    Recovery__V1__ErrorSource source;
    int64_t retry_after_ms;
} rdc_tool_error;

/* One tool call. It must return within timeout_ms (the helper cannot
 * preempt C code). Returns 0 on success; non-zero on failure, with *err
 * filled in (it arrives zeroed). */
typedef int (*rdc_tool_fn)(void *user, int64_t timeout_ms, rdc_tool_error *err);

/* The call an rdc_tool_attempt_fn is running. Valid during the call. */
typedef struct {
    const char *tool_id;
    int number;                  /* 1 for the first call of this tool in the run */
    /* The key to send with the call (an Idempotency-Key header, a client
     * reference): rdc_run_options.idempotency_key, or on a retry the key the
     * service repeated; "" without one. */
    const char *idempotency_key;
    int64_t timeout_ms;
} rdc_attempt;

/* rdc_tool_fn with the attempt: for a tool that sends an idempotency key. */
typedef int (*rdc_tool_attempt_fn)(void *user, const rdc_attempt *attempt, rdc_tool_error *err);

typedef struct {
    const char *tool_id;
    rdc_tool_fn fn;
    void *user;
    rdc_tool_attempt_fn fn_attempt; /* called instead of fn when set */
} rdc_tool;

/* What a verifier is asked: did the failed call of tool_id have its effect?
 * Valid during the call. */
typedef struct {
    const char *tool_id;         /* the tool whose effect is unknown */
    void *tool_user;             /* its rdc_tool.user: the call's arguments */
    const char *verify_tool_id;  /* the read-only tool the manifest names */
    int attempt;                 /* the failed attempt */
    const rdc_tool_error *error; /* what it failed with */
    const char *reason;          /* the service's reason */
    const Recovery__V1__Classification *classification; /* may be NULL */
    const char *idempotency_key; /* the key the failed call was sent with, "" for none */
    const char *turn_id;
    int64_t timeout_ms;          /* the verify tool's timeout: return within it */
} rdc_verify_request;

/* Answers VERIFY: 1 the effect happened (the run succeeds without calling
 * the tool again), 0 it did not (the tool may be called again), -1 cannot
 * tell (the run ends RDC_VERIFICATION_REQUIRED). */
typedef int (*rdc_verify_fn)(void *user, const rdc_verify_request *req);

typedef struct {
    const char *verify_tool_id;  /* the verify tool it answers for; NULL = any */
    rdc_verify_fn fn;
    void *user;
} rdc_verifier;

typedef struct {
    const char *turn_id;                 /* NULL = "" */
    bool has_turn_remaining;             /* false: the service keeps the turn clock */
    int64_t turn_remaining_ms;
    Recovery__V1__PlanStep **plan;       /* NULL: the manifests' graph; borrowed */
    size_t n_plan;
    /* VERIFY (the effect of a non-idempotent call is unknown): the first
     * verifier for the verify tool the service names, else the first with
     * verify_tool_id NULL; with none the run ends RDC_VERIFICATION_REQUIRED. */
    const rdc_verifier *verifiers;
    size_t n_verifiers;
    /* Sent with Decide, and to an rdc_tool_attempt_fn; NULL = none. At most
     * 256 bytes. */
    const char *idempotency_key;
} rdc_run_options;

typedef enum {
    RDC_SUCCEEDED = 0,
    RDC_FAIL_FAST,      /* circuit open: the tool was not called (again) */
    RDC_ESCALATE,       /* permanent error: a person or the model must act */
    RDC_GIVE_UP,        /* attempts or time used up (also: local fallback exhausted) */
    RDC_PARTIAL,        /* turn deadline reached */
    RDC_NO_ALTERNATIVE, /* the service named a tool the caller gave no function for */
    /* the effect of a non-idempotent call is unknown (VERIFY) and no verifier
     * could tell whether it happened; the tool was not called again */
    RDC_VERIFICATION_REQUIRED
} rdc_status;

typedef struct {
    rdc_status status;
    char tool_id[257];          /* the tool that succeeded, or the one the run stopped on */
    int attempts;               /* tool invocations over the whole run */
    char reason[512];
    rdc_tool_error last_error;  /* the last tool failure */
    char permit_id[256];        /* probe permit the successful call held */
    bool outcome_recorded;      /* false when a success could not be reported */
    bool fallback;              /* the local policy decided: the service was unreachable */
    char fallback_reason[512];
    Recovery__V1__Action actions[RDC_MAX_DECISIONS]; /* the decisions, in order */
    size_t n_actions;
    /* The answer that stopped the run (cascade, classification, trace), or
     * NULL. Owned by the result: release with rdc_result_clear. */
    Recovery__V1__DecideResponse *last_decision;
    bool verified;              /* succeeded: a verifier said the failed call's effect happened */
    char verify_tool_id[257];   /* the verify tool the service named (VERIFY) */
    char idempotency_key[257];  /* the key the last call was sent with */
} rdc_result;

/* Runs tool_id (and any alternative named by the service, looked up in
 * tools) under the service's decisions. opts may be NULL. Always fills *out;
 * returns 0, or -1 on bad arguments (NULL client, tool_id or out). */
int rdc_run_tool(rdc_client *client, const char *tool_id, const rdc_tool *tools, size_t n_tools,
                 const rdc_run_options *opts, rdc_result *out);

/* Frees what the result owns. Accepts NULL. */
void rdc_result_clear(rdc_result *result);

/* "succeeded", "fail_fast", ... */
const char *rdc_status_name(rdc_status status);

#ifdef __cplusplus
}
#endif
#endif
