/* The benchmark's baseline: a gRPC server on the core API that does nothing
 * but answer. It copies recoveryd's thread and queue model
 * (server/transport/server.c) so that the difference between the two is the
 * service's own work:
 *   - N worker threads, one completion queue each, polled with the same
 *     20 ms wake interval;
 *   - the five unary methods of recovery.v1.RecoveryService registered with
 *     GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER, sixteen calls kept
 *     requested per method per worker, plus one request for unknown methods
 *     (answered UNIMPLEMENTED);
 *   - cohorts: every completion already queued (up to 32) is taken before
 *     any is handled; the answers of the cohort are made, then their
 *     batches started, the calls that arrived requested anew and the
 *     finished calls freed, in that order;
 *   - one heap-allocated state per call, answered in one batch (initial
 *     metadata, close watch, message, status);
 *   - the same channel argument (max receive message size).
 * Every known call gets an empty message and OK; the request is read (the
 * byte buffer is flattened, as recoveryd does before decoding) and dropped.
 * With --answer FILE every call gets FILE's bytes instead: the benchmark's
 * control for what a client spends decoding recoveryd's (larger) answers.
 *
 *   null_server [--listen HOST:PORT] [--workers N] [--max-receive-bytes N]
 *               [--answer FILE]
 *
 * Prints "listening on port P" on stdout once serving; SIGTERM/SIGINT stop
 * it (calls in flight are answered first). */
#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PENDING_PER_METHOD 16 /* as WAITING_HOT, server/transport/methods.c */
#define WAKE_INTERVAL_MS 20  /* as RD_WAKE_INTERVAL_MS */
#define GENERIC_METHOD (-1)
#define MAX_WORKERS 64
#define COHORT_MAX 32 /* as RD_COHORT_MAX, server/transport/server.c */

static const char *const method_paths[] = {
    "/recovery.v1.RecoveryService/Classify",
    "/recovery.v1.RecoveryService/Decide",
    "/recovery.v1.RecoveryService/RecordOutcome",
    "/recovery.v1.RecoveryService/GetBreakerState",
    "/recovery.v1.RecoveryService/GetTurnTrace",
};
#define METHOD_COUNT (sizeof method_paths / sizeof method_paths[0])

typedef struct null_server null_server;

typedef struct call call;

typedef struct worker {
    null_server *server;
    grpc_completion_queue *cq;
    pthread_t thread;
    call *deferred; /* answers of this cohort, batches not started; FIFO */
    call **deferred_tail;
    call *dead;     /* answered calls to free after the cohort */
    unsigned owed[METHOD_COUNT + 1]; /* calls to request after the cohort; last: generic */
} worker;

struct null_server {
    grpc_server *grpc;
    grpc_completion_queue *shutdown_cq;
    void *registered[METHOD_COUNT];
    worker workers[MAX_WORKERS];
    unsigned n_workers;
    grpc_slice answer; /* every call's message: empty, or --answer's bytes */
};

/* One call: requested, then answered in one batch, then freed when that
 * batch completes. The tag is the call itself; `answered` tells the two
 * completions apart. */
struct call {
    worker *worker;
    int method;
    bool answered;
    grpc_call *call;
    gpr_timespec deadline;
    grpc_metadata_array metadata;
    grpc_call_details details; /* GENERIC_METHOD only */
    grpc_byte_buffer *request;
    grpc_byte_buffer *response;
    grpc_slice status_details;
    int cancelled;
    call *deferred_next;
    call *dead_next;
    size_t n_ops;
    grpc_op ops[4]; /* the answer's batch while it waits for its cohort */
};

static void call_free(call *c)
{
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

static void request_call(worker *w, int method)
{
    call *c = calloc(1, sizeof *c);
    if (!c) {
        fprintf(stderr, "null_server: out of memory requesting a call\n");
        return;
    }
    c->worker = w;
    c->method = method;
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
        fprintf(stderr, "null_server: cannot request a call (%d)\n", (int)err);
        call_free(c);
    }
}

/* Reads the request the way recoveryd does before decoding it: one flat
 * slice (in place when it arrived as one, as recoveryd reads it). Returns
 * its length, or 0 for no message. */
static size_t read_request(grpc_byte_buffer *bb)
{
    if (!bb)
        return 0;
    if (bb->type == GRPC_BB_RAW && bb->data.raw.compression == GRPC_COMPRESS_NONE &&
        bb->data.raw.slice_buffer.count == 1) {
        /* the reference recoveryd takes and drops, so the cost is the same */
        grpc_slice bytes = grpc_slice_ref(bb->data.raw.slice_buffer.slices[0]);
        size_t n = GRPC_SLICE_LENGTH(bytes);
        grpc_slice_unref(bytes);
        return n;
    }
    grpc_byte_buffer_reader reader;
    if (!grpc_byte_buffer_reader_init(&reader, bb))
        return 0;
    grpc_slice bytes = grpc_byte_buffer_reader_readall(&reader);
    grpc_byte_buffer_reader_destroy(&reader);
    size_t n = GRPC_SLICE_LENGTH(bytes);
    grpc_slice_unref(bytes);
    return n;
}

static void answer(call *c)
{
    grpc_op ops[4];
    memset(ops, 0, sizeof ops);
    size_t n = 0;
    ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
    ops[n++].data.recv_close_on_server.cancelled = &c->cancelled;
    grpc_status_code code = GRPC_STATUS_OK;
    if (c->method == GENERIC_METHOD) {
        code = GRPC_STATUS_UNIMPLEMENTED;
        c->status_details = grpc_slice_from_static_string("method not implemented");
    } else {
        (void)read_request(c->request);
        c->response = grpc_raw_byte_buffer_create(&c->worker->server->answer, 1);
        ops[n].op = GRPC_OP_SEND_MESSAGE;
        ops[n++].data.send_message.send_message = c->response;
    }
    ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
    ops[n].data.send_status_from_server.status = code;
    ops[n++].data.send_status_from_server.status_details =
        code == GRPC_STATUS_OK ? NULL : &c->status_details;
    c->answered = true;
    /* as recoveryd: the batch starts once the cohort's answers are made */
    memcpy(c->ops, ops, n * sizeof *ops);
    c->n_ops = n;
    c->deferred_next = NULL;
    *c->worker->deferred_tail = c;
    c->worker->deferred_tail = &c->deferred_next;
}

static void end_cohort(worker *w)
{
    call *c = w->deferred;
    w->deferred = NULL;
    w->deferred_tail = &w->deferred;
    while (c) {
        call *next = c->deferred_next;
        if (grpc_call_start_batch(c->call, c->ops, c->n_ops, c, NULL) != GRPC_CALL_OK) {
            fprintf(stderr, "null_server: cannot start a batch\n");
            call_free(c);
        }
        c = next;
    }
    for (size_t m = 0; m <= METHOD_COUNT; m++) {
        for (; w->owed[m]; w->owed[m]--)
            request_call(w, m == METHOD_COUNT ? GENERIC_METHOD : (int)m);
    }
    for (c = w->dead, w->dead = NULL; c;) {
        call *next = c->dead_next;
        call_free(c);
        c = next;
    }
}

static void on_event(call *c, bool success)
{
    if (c->answered || !success) { /* reply sent, or shutting down: freed after the cohort */
        c->dead_next = c->worker->dead;
        c->worker->dead = c;
        return;
    }
    /* keep the same number waiting, requested after the cohort */
    c->worker->owed[c->method == GENERIC_METHOD ? METHOD_COUNT : (size_t)c->method]++;
    answer(c);
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    for (;;) {
        gpr_timespec wake = gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                                         gpr_time_from_millis(WAKE_INTERVAL_MS, GPR_TIMESPAN));
        /* a cohort of the events already queued, as recoveryd's worker */
        grpc_event cohort[COHORT_MAX];
        size_t n = 0;
        grpc_event ev = grpc_completion_queue_next(w->cq, wake, NULL);
        while (ev.type == GRPC_OP_COMPLETE) {
            cohort[n++] = ev;
            if (n == COHORT_MAX)
                break;
            ev = grpc_completion_queue_next(w->cq, gpr_inf_past(GPR_CLOCK_MONOTONIC), NULL);
        }
        for (size_t i = 0; i < n; i++)
            on_event(cohort[i].tag, cohort[i].success);
        end_cohort(w);
        if (ev.type == GRPC_QUEUE_SHUTDOWN)
            break;
    }
    return NULL;
}

typedef struct options {
    const char *listen;
    unsigned workers;
    int max_receive_bytes;
    const char *answer_file;
} options;

static int parse_options(int argc, char **argv, options *opt)
{
    *opt = (options){.listen = "127.0.0.1:0", .workers = 2, .max_receive_bytes = 1048576};
    for (int i = 1; i < argc; i++) {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--listen") && value) {
            opt->listen = value;
        } else if (!strcmp(argv[i], "--workers") && value) {
            opt->workers = (unsigned)strtoul(value, NULL, 10);
        } else if (!strcmp(argv[i], "--max-receive-bytes") && value) {
            opt->max_receive_bytes = (int)strtol(value, NULL, 10);
        } else if (!strcmp(argv[i], "--answer") && value) {
            opt->answer_file = value;
        } else {
            fprintf(stderr, "usage: null_server [--listen HOST:PORT] [--workers N] "
                            "[--max-receive-bytes N] [--answer FILE]\n");
            return -1;
        }
        i++;
    }
    if (opt->workers < 1 || opt->workers > MAX_WORKERS) {
        fprintf(stderr, "null_server: --workers must be 1..%d\n", MAX_WORKERS);
        return -1;
    }
    return 0;
}

/* The whole file as one slice; 0 on success. */
static int load_answer(const char *path, grpc_slice *answer)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    char buf[65536];
    size_t n = fread(buf, 1, sizeof buf, f);
    bool whole = feof(f) && !ferror(f);
    fclose(f);
    if (!whole) {
        fprintf(stderr, "null_server: cannot read %s whole (at most %zu bytes)\n", path,
                sizeof buf - 1);
        return -1;
    }
    *answer = grpc_slice_from_copied_buffer(buf, n);
    return 0;
}

static int start(null_server *s, const options *opt)
{
    s->answer = grpc_empty_slice();
    if (opt->answer_file && load_answer(opt->answer_file, &s->answer) != 0)
        return -1;
    grpc_arg arg = {.type = GRPC_ARG_INTEGER, .key = GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH,
                    .value.integer = opt->max_receive_bytes};
    grpc_channel_args args = {.num_args = 1, .args = &arg};
    s->grpc = grpc_server_create(&args, NULL);
    s->shutdown_cq = grpc_completion_queue_create_for_next(NULL);
    grpc_server_register_completion_queue(s->grpc, s->shutdown_cq, NULL);
    s->n_workers = opt->workers;
    for (unsigned i = 0; i < s->n_workers; i++) {
        s->workers[i] = (worker){.server = s, .cq = grpc_completion_queue_create_for_next(NULL)};
        grpc_server_register_completion_queue(s->grpc, s->workers[i].cq, NULL);
        s->workers[i].deferred_tail = &s->workers[i].deferred;
    }
    for (size_t m = 0; m < METHOD_COUNT; m++)
        s->registered[m] = grpc_server_register_method(
            s->grpc, method_paths[m], NULL, GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER, 0);
    grpc_server_credentials *creds = grpc_insecure_server_credentials_create();
    int port = grpc_server_add_http2_port(s->grpc, opt->listen, creds);
    grpc_server_credentials_release(creds);
    if (port == 0) {
        fprintf(stderr, "null_server: cannot listen on %s\n", opt->listen);
        return -1;
    }
    grpc_server_start(s->grpc);
    for (unsigned i = 0; i < s->n_workers; i++) {
        worker *w = &s->workers[i];
        for (int m = 0; m < (int)METHOD_COUNT; m++)
            for (int k = 0; k < PENDING_PER_METHOD; k++)
                request_call(w, m);
        request_call(w, GENERIC_METHOD);
        pthread_create(&w->thread, NULL, worker_main, w);
    }
    printf("listening on port %d\n", port);
    fflush(stdout);
    return 0;
}

static void stop(null_server *s)
{
    grpc_server_shutdown_and_notify(s->grpc, s->shutdown_cq, s);
    grpc_completion_queue_next(s->shutdown_cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    grpc_server_destroy(s->grpc);
    for (unsigned i = 0; i < s->n_workers; i++) {
        grpc_completion_queue_shutdown(s->workers[i].cq);
        pthread_join(s->workers[i].thread, NULL);
        grpc_completion_queue_destroy(s->workers[i].cq);
    }
    grpc_completion_queue_shutdown(s->shutdown_cq);
    while (grpc_completion_queue_next(s->shutdown_cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL)
               .type != GRPC_QUEUE_SHUTDOWN)
        ;
    grpc_completion_queue_destroy(s->shutdown_cq);
    grpc_slice_unref(s->answer);
}

int main(int argc, char **argv)
{
    options opt;
    if (parse_options(argc, argv, &opt) != 0)
        return 2;
    /* The same heap settings as recoveryd (server/main.c, keep_heap_pages),
     * so neither pays page faults the other does not. */
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
    mallopt(M_TOP_PAD, 1 << 20);
    /* Block the stop signals in every thread; the main thread waits for them. */
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
    grpc_init();
    static null_server server;
    int rc = start(&server, &opt);
    if (rc == 0) {
        int sig;
        sigwait(&stop_signals, &sig);
        stop(&server);
    }
    grpc_shutdown();
    return rc == 0 ? 0 : 1;
}
