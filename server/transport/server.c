#include "transport/server.h"

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/log.h"
#include "transport/codec.h"
#include "transport/methods.h"
#include "transport/status.h"

/* Calls kept requested per method per worker: enough that a burst on one
 * queue never waits for a re-request. */
#define PENDING_PER_METHOD 4
#define GENERIC_METHOD (-1)
#define ARENA_CHUNK (64 * 1024)

typedef struct rd_worker {
    struct rd_server *server;
    grpc_completion_queue *cq;
    pthread_t thread;
    bool started;
    rd_arena arena;
    rd_rng rng;
} rd_worker;

struct rd_server {
    grpc_server *grpc;
    grpc_completion_queue *shutdown_cq;
    const rd_engine *engine;
    void *registered[16];        /* grpc handle per rd_methods entry */
    rd_worker *workers;
    unsigned n_workers;
    int port;
    bool shut_down;
};

typedef enum { CALL_WAITING, CALL_REPLYING } call_phase;

/* One requested call, from the request until its reply batch completes. */
typedef struct rd_call {
    rd_worker *worker;
    int method;                  /* index into rd_methods, or GENERIC_METHOD */
    call_phase phase;
    grpc_call *call;
    gpr_timespec deadline;
    grpc_metadata_array metadata;
    grpc_call_details details;   /* GENERIC_METHOD only */
    grpc_byte_buffer *request;
    grpc_byte_buffer *response;
    grpc_slice status_details;
    int cancelled;
} rd_call;

static void call_free(rd_call *c)
{
    if (!c)
        return;
    if (c->call)
        grpc_call_unref(c->call);
    grpc_metadata_array_destroy(&c->metadata);
    if (c->method == GENERIC_METHOD)
        grpc_call_details_destroy(&c->details);
    if (c->request)
        grpc_byte_buffer_destroy(c->request);
    if (c->response)
        grpc_byte_buffer_destroy(c->response);
    grpc_slice_unref(c->status_details);
    free(c);
}

static void request_call(rd_worker *w, int method)
{
    rd_call *c = calloc(1, sizeof *c);
    if (!c) {
        rd_log(RD_LOG_ERROR, "out of memory requesting a call", "");
        return;
    }
    c->worker = w;
    c->method = method;
    c->phase = CALL_WAITING;
    c->status_details = grpc_empty_slice();
    grpc_metadata_array_init(&c->metadata);
    grpc_call_error err;
    if (method == GENERIC_METHOD) {
        grpc_call_details_init(&c->details);
        err = grpc_server_request_call(w->server->grpc, &c->call, &c->details, &c->metadata,
                                       w->cq, w->cq, c);
    } else {
        err = grpc_server_request_registered_call(w->server->grpc, w->server->registered[method],
                                                  &c->call, &c->deadline, &c->metadata,
                                                  &c->request, w->cq, w->cq, c);
    }
    if (err != GRPC_CALL_OK) {
        call_free(c);
        rd_log(RD_LOG_ERROR, "cannot request a call", "");
    }
}

static int64_t now_unix_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static ProtobufCMessage *decode(rd_call *c, const rd_method *m, rd_status *st)
{
    if (!c->request) {
        rd_status_set(st, RD_ERR_INVALID, "request: no message received");
        return NULL;
    }
    grpc_byte_buffer_reader reader;
    if (!grpc_byte_buffer_reader_init(&reader, c->request)) {
        rd_status_set(st, RD_ERR_INVALID, "request: cannot read the message (bad compression?)");
        return NULL;
    }
    grpc_slice bytes = grpc_byte_buffer_reader_readall(&reader);
    grpc_byte_buffer_reader_destroy(&reader);
    ProtobufCAllocator alloc = rd_codec_allocator(&c->worker->arena);
    ProtobufCMessage *msg = protobuf_c_message_unpack(m->request_type, &alloc,
                                                      GRPC_SLICE_LENGTH(bytes),
                                                      GRPC_SLICE_START_PTR(bytes));
    grpc_slice_unref(bytes);
    if (!msg)
        rd_status_set(st, RD_ERR_INVALID, "request: not a valid %s message", m->request_type->name);
    return msg;
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

static bool deadline_passed(const rd_call *c)
{
    return gpr_time_cmp(c->deadline, gpr_now(c->deadline.clock_type)) < 0;
}

/* Runs the method; on success c->response holds the encoded reply. */
static int handle(rd_call *c, rd_status *st)
{
    rd_worker *w = c->worker;
    if (c->method == GENERIC_METHOD) {
        char *path = grpc_slice_to_c_string(c->details.method);
        rd_status_set(st, RD_ERR_INVALID, "method %s: not implemented", path);
        gpr_free(path);
        return GRPC_STATUS_UNIMPLEMENTED;
    }
    if (deadline_passed(c)) {
        rd_status_set(st, RD_ERR_DEADLINE, "deadline passed before the call was handled");
        return rd_status_to_grpc(RD_ERR_DEADLINE);
    }
    const rd_method *m = &rd_methods[c->method];
    ProtobufCMessage *req = decode(c, m, st);
    if (!req)
        return rd_status_to_grpc(st->code);
    rd_call_ctx ctx = {.now_ms = now_unix_ms(), .arena = &w->arena, .rng = &w->rng};
    ProtobufCMessage *resp = NULL;
    int rc = m->handle(w->server->engine, &ctx, req, &resp, st);
    if (rc != RD_OK)
        return rd_status_to_grpc((rd_err)rc);
    c->response = encode(resp);
    return GRPC_STATUS_OK;
}

static void reply(rd_call *c)
{
    rd_status st = {.code = RD_OK, .msg = ""};
    grpc_status_code code = (grpc_status_code)handle(c, &st);
    rd_arena_reset(&c->worker->arena);
    if (code != GRPC_STATUS_OK)
        c->status_details = grpc_slice_from_copied_string(st.msg);

    grpc_op ops[4];
    memset(ops, 0, sizeof ops);
    size_t n = 0;
    ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
    ops[n++].data.recv_close_on_server.cancelled = &c->cancelled;
    if (c->response) {
        ops[n].op = GRPC_OP_SEND_MESSAGE;
        ops[n++].data.send_message.send_message = c->response;
    }
    ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
    ops[n].data.send_status_from_server.status = code;
    ops[n++].data.send_status_from_server.status_details =
        code == GRPC_STATUS_OK ? NULL : &c->status_details;

    c->phase = CALL_REPLYING;
    if (grpc_call_start_batch(c->call, ops, n, c, NULL) != GRPC_CALL_OK) {
        rd_log(RD_LOG_ERROR, "cannot start the reply batch", "");
        call_free(c);
    }
}

static void on_event(rd_worker *w, rd_call *c, int success)
{
    if (c->phase == CALL_REPLYING || !success) {
        /* reply sent (or the call died), or the server is shutting down and
         * the requested call will never come */
        call_free(c);
        return;
    }
    request_call(w, c->method); /* keep the same number waiting */
    reply(c);
}

static void *worker_main(void *arg)
{
    rd_worker *w = arg;
    for (;;) {
        grpc_event ev = grpc_completion_queue_next(w->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
        if (ev.type == GRPC_QUEUE_SHUTDOWN)
            break;
        if (ev.type == GRPC_OP_COMPLETE)
            on_event(w, ev.tag, ev.success);
    }
    return NULL;
}

static grpc_server *create_grpc_server(const rd_server_options *opt)
{
    grpc_arg args[] = {
        {.type = GRPC_ARG_INTEGER, .key = GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH,
         .value.integer = (int)opt->max_receive_bytes},
    };
    grpc_channel_args channel_args = {.num_args = sizeof args / sizeof args[0], .args = args};
    return grpc_server_create(&channel_args, NULL);
}

static int bind_and_register(rd_server *s, const rd_server_options *opt, rd_status *st)
{
    if (rd_methods_count > sizeof s->registered / sizeof s->registered[0])
        return rd_status_set(st, RD_ERR_INTERNAL, "method table larger than the server supports");
    for (size_t i = 0; i < rd_methods_count; i++) {
        s->registered[i] = grpc_server_register_method(s->grpc, rd_methods[i].path, NULL,
                                                       GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER, 0);
        if (!s->registered[i])
            return rd_status_set(st, RD_ERR_INTERNAL, "cannot register %s", rd_methods[i].path);
    }
    grpc_server_credentials *creds = grpc_insecure_server_credentials_create();
    s->port = grpc_server_add_http2_port(s->grpc, opt->listen, creds);
    grpc_server_credentials_release(creds);
    if (s->port == 0)
        return rd_status_set(st, RD_ERR_CONFIG, "server.listen: cannot listen on %s", opt->listen);
    return RD_OK;
}

static int create_workers(rd_server *s, unsigned n, rd_status *st)
{
    s->workers = calloc(n, sizeof *s->workers);
    if (!s->workers)
        return rd_status_set(st, RD_ERR_NOMEM, "out of memory for workers");
    s->n_workers = n;
    for (unsigned i = 0; i < n; i++) {
        rd_worker *w = &s->workers[i];
        w->server = s;
        w->cq = grpc_completion_queue_create_for_next(NULL);
        rd_arena_init(&w->arena, ARENA_CHUNK);
        rd_rng_seed_os(&w->rng);
        grpc_server_register_completion_queue(s->grpc, w->cq, NULL);
    }
    return RD_OK;
}

static int start_workers(rd_server *s, rd_status *st)
{
    for (unsigned i = 0; i < s->n_workers; i++) {
        rd_worker *w = &s->workers[i];
        for (size_t m = 0; m < rd_methods_count; m++)
            for (int k = 0; k < PENDING_PER_METHOD; k++)
                request_call(w, (int)m);
        request_call(w, GENERIC_METHOD);
        if (pthread_create(&w->thread, NULL, worker_main, w) != 0)
            return rd_status_set(st, RD_ERR_INTERNAL, "cannot start worker thread %u", i);
        w->started = true;
    }
    return RD_OK;
}

rd_server *rd_server_start(const rd_server_options *opt, const rd_engine *engine, rd_status *st)
{
    rd_server *s = calloc(1, sizeof *s);
    if (!s) {
        rd_status_set(st, RD_ERR_NOMEM, "out of memory for the server");
        return NULL;
    }
    s->engine = engine;
    s->grpc = create_grpc_server(opt);
    s->shutdown_cq = grpc_completion_queue_create_for_next(NULL);
    grpc_server_register_completion_queue(s->grpc, s->shutdown_cq, NULL);
    if (create_workers(s, opt->workers ? opt->workers : 1, st) != RD_OK ||
        bind_and_register(s, opt, st) != RD_OK) {
        rd_server_destroy(s);
        return NULL;
    }
    grpc_server_start(s->grpc);
    if (start_workers(s, st) != RD_OK) {
        rd_server_destroy(s);
        return NULL;
    }
    return s;
}

int rd_server_port(const rd_server *s) { return s->port; }

static gpr_timespec in_ms(int64_t ms)
{
    return gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(ms, GPR_TIMESPAN));
}

int rd_server_shutdown(rd_server *s, int64_t grace_ms)
{
    if (!s || s->shut_down)
        return 0;
    s->shut_down = true;
    int cancelled = 0;
    grpc_server_shutdown_and_notify(s->grpc, s->shutdown_cq, s);
    grpc_event ev = grpc_completion_queue_next(s->shutdown_cq, in_ms(grace_ms), NULL);
    if (ev.type == GRPC_QUEUE_TIMEOUT) {
        grpc_server_cancel_all_calls(s->grpc);
        cancelled = 1;
        grpc_completion_queue_next(s->shutdown_cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
    }
    return cancelled;
}

static void drain_and_destroy_cq(grpc_completion_queue *cq)
{
    grpc_completion_queue_shutdown(cq);
    while (grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
           GRPC_QUEUE_SHUTDOWN)
        ;
    grpc_completion_queue_destroy(cq);
}

void rd_server_destroy(rd_server *s)
{
    if (!s)
        return;
    bool any_started = false;
    for (unsigned i = 0; i < s->n_workers; i++)
        any_started |= s->workers[i].started;
    if (any_started || s->port) {
        /* grpc_server_destroy requires a completed shutdown */
        rd_server_shutdown(s, 0);
    }
    grpc_server_destroy(s->grpc);
    for (unsigned i = 0; i < s->n_workers; i++) {
        rd_worker *w = &s->workers[i];
        grpc_completion_queue_shutdown(w->cq);
        if (w->started)
            pthread_join(w->thread, NULL);
        else
            while (grpc_completion_queue_next(w->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
                   GRPC_QUEUE_SHUTDOWN)
                ;
        grpc_completion_queue_destroy(w->cq);
        rd_arena_free(&w->arena);
    }
    drain_and_destroy_cq(s->shutdown_cq);
    free(s->workers);
    free(s);
}
