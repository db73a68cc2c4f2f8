/* One call's state (call.c) and what call.c and call_worker.c share
 * (transport internal). */
#ifndef RD_TRANSPORT_CALL_INTERNAL_H
#define RD_TRANSPORT_CALL_INTERNAL_H

#include <grpc/grpc.h>

#include "transport/server_internal.h"

typedef enum { TAG_REQUEST, TAG_SEND, TAG_RECV, TAG_CLOSE, TAG_STATUS, TAG_COUNT } tag_kind;

typedef struct call_tag {
    rd_call *call;
    tag_kind kind;
} call_tag;

typedef enum { CALL_REQUESTED, CALL_STREAMING, CALL_FINISHING } call_state;

struct rd_call {
    rd_worker *worker;
    int method;                  /* index into rd_methods, or RD_GENERIC_METHOD */
    call_state state;
    call_tag tags[TAG_COUNT];
    grpc_call *call;
    gpr_timespec deadline;
    grpc_metadata_array metadata;
    char tenant[RD_TENANT_ID_MAX + 1]; /* the tenant the call acts for; "" = none */
    grpc_call_details details;   /* RD_GENERIC_METHOD only */
    grpc_byte_buffer *request;   /* the unary/first message, then bidi receives */
    grpc_byte_buffer *sending;   /* the message of the send in flight */
    size_t sending_bytes;        /* its length when admitted: gRPC may take its slices */
    grpc_byte_buffer *pending;   /* bidi: a response waiting for the send slot */
    grpc_slice status_details;
    int cancelled;
    int in_flight;               /* batches started and not completed */
    bool send_busy, recv_busy, half_closed;
    rd_config_snap *snap;        /* bidi: the call's configuration (a reference) */
    void *source;                /* server streaming: the source's state */
    int64_t started_us;
    bool metrics_owed;           /* recorded when the deferred reply is handed over */
    bool store_degraded;         /* the handler's store operations were answered degraded */
    grpc_status_code final_code;
    bool wake_queued;
    rd_call *wake_next;
    rd_call *stream_prev, *stream_next;
    bool in_streams;
    rd_call *deferred_next;      /* the worker's deferred list */
    rd_call *dead_next;          /* the worker's list of calls to free */
    size_t n_deferred_ops;
    grpc_op deferred_ops[4];     /* the reply's batch while it waits */
};

/* call.c */
void rd_call_free(rd_call *c);

/* call_worker.c: batches. A one-batch reply made during a cohort waits until the cohort's handlers
 * have all run (rd_worker_end_cohort), so the handlers run back to back
 * with their code and data in the caches. It counts as in flight, so
 * nothing frees the call meanwhile. */
void rd_call_defer_batch(rd_call *c, const grpc_op *ops, size_t n);
void rd_call_maybe_free(rd_call *c);
int64_t rd_call_monotonic_us(void);
/* The call's latency ends at now_us, when its status was handed to gRPC. */
void rd_call_record_metrics(rd_call *c, int64_t now_us);
/* Starts a batch of ops with the call's tag of that kind. */
bool rd_call_start_batch(rd_call *c, grpc_op *ops, size_t n, tag_kind tag);

/* call_worker.c: the worker's lists of streams and of woken calls. */
void rd_call_streams_link(rd_call *c);
void rd_call_streams_unlink(rd_call *c);
void rd_call_wake_list_remove(rd_call *c);
/* From any thread: the call's source has something. */
void rd_call_wake(void *arg);

#endif
