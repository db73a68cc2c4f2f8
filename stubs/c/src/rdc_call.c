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

rdc_client *rdc_client_new(const char *target, const rdc_options *opts)
{
    if (target == NULL)
        return NULL;
    rdc_client *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    if (opts != NULL)
        c->opts = *opts;
    /* The executor id is copied so the caller's string may go away. */
    c->executor_id = strdup(opts != NULL && opts->executor_id != NULL ? opts->executor_id : "");
    if (c->executor_id == NULL) {
        free(c);
        return NULL;
    }
    c->opts.executor_id = c->executor_id;
    apply_defaults(&c->opts);
    grpc_init();
    grpc_channel_credentials *creds = grpc_insecure_credentials_create();
    c->channel = grpc_channel_create(target, creds, NULL);
    grpc_channel_credentials_release(creds);
    return c;
}

void rdc_client_free(rdc_client *client)
{
    if (client == NULL)
        return;
    grpc_channel_destroy(client->channel);
    free(client->executor_id);
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
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
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
