/* Worker threads, completion queues, binding and the shutdown order (see
 * server.h); what happens to one call is in call.c. */
#include "transport/server.h"

#include <grpc/compression.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain/log.h"
#include "transport/server_internal.h"
#include "transport/tls_files.h"

#define ARENA_CHUNK (64 * 1024)

static gpr_timespec in_ms(int64_t ms)
{
    return gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(ms, GPR_TIMESPAN));
}

/* Completions taken as one cohort (server.h): two per unary call (its
 * arrival and its reply's completion), for the 16 calls per method a
 * worker keeps requested. */
#define RD_COHORT_MAX 32

static void *worker_main(void *arg)
{
    rd_worker *w = arg;
    for (;;) {
        /* A short wait, so streams woken from other threads and the
         * closing flag are noticed within RD_WAKE_INTERVAL_MS. */
        grpc_event cohort[RD_COHORT_MAX];
        size_t n = 0;
        grpc_event ev = grpc_completion_queue_next(w->cq, in_ms(RD_WAKE_INTERVAL_MS), NULL);
        while (ev.type == GRPC_OP_COMPLETE) {
            cohort[n++] = ev;
            if (n == RD_COHORT_MAX)
                break;
            ev = grpc_completion_queue_next(w->cq, gpr_inf_past(GPR_CLOCK_MONOTONIC), NULL);
        }
        if (n > 0) {
            rd_worker_begin_cohort(w);
            for (size_t i = 0; i < n; i++)
                rd_call_on_event(w, cohort[i].tag, cohort[i].success);
            rd_worker_end_cohort(w);
        }
        if (ev.type == GRPC_QUEUE_SHUTDOWN)
            break;
        rd_worker_pump_woken(w);
        if (!w->closing_seen && atomic_load(&w->server->closing)) {
            w->closing_seen = true;
            rd_worker_finish_streams(w);
        }
    }
    return NULL;
}

/* ---- creation ---- */

/* Pings from a client without calls in flight are accepted this often at
 * most (gRPC's own default, written out because the limit is part of what
 * keeps a peer from keeping the transport busy); past two strikes the
 * connection gets GOAWAY(ENHANCE_YOUR_CALM). */
#define MIN_CLIENT_PING_INTERVAL_MS (5 * 60 * 1000)
#define MAX_PING_STRIKES 2
/* Request headers larger than this are refused: ours are a path, a
 * content type, a deadline and a token. */
#define MAX_METADATA_BYTES (16 * 1024)

static grpc_arg int_arg(const char *key, int64_t value)
{
    return (grpc_arg){.type = GRPC_ARG_INTEGER, .key = (char *)key, .value.integer = (int)value};
}

static size_t channel_args(const rd_server_options *opt, grpc_resource_quota *quota,
                           grpc_arg *args)
{
    size_t n = 0;
    args[n++] = int_arg(GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH, (int64_t)opt->max_receive_bytes);
    if (opt->max_connection_age_ms > 0)
        args[n++] = int_arg(GRPC_ARG_MAX_CONNECTION_AGE_MS, opt->max_connection_age_ms);
    if (opt->max_connection_age_grace_ms > 0)
        args[n++] = int_arg(GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS, opt->max_connection_age_grace_ms);
    if (opt->keepalive_time_ms > 0)
        args[n++] = int_arg(GRPC_ARG_KEEPALIVE_TIME_MS, opt->keepalive_time_ms);
    if (opt->keepalive_timeout_ms > 0)
        args[n++] = int_arg(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, opt->keepalive_timeout_ms);
    if (opt->max_concurrent_streams > 0)
        args[n++] = int_arg(GRPC_ARG_MAX_CONCURRENT_STREAMS, opt->max_concurrent_streams);
    if (opt->handshake_timeout_ms > 0)
        args[n++] = int_arg(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS, opt->handshake_timeout_ms);
    if (opt->max_connection_idle_ms > 0)
        args[n++] = int_arg(GRPC_ARG_MAX_CONNECTION_IDLE_MS, opt->max_connection_idle_ms);
    args[n++] = int_arg(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                        MIN_CLIENT_PING_INTERVAL_MS);
    args[n++] = int_arg(GRPC_ARG_HTTP2_MAX_PING_STRIKES, MAX_PING_STRIKES);
    args[n++] = int_arg(GRPC_ARG_MAX_METADATA_SIZE, MAX_METADATA_BYTES);
    /* gRPC 1.51 inflates a compressed message whole before it checks the
     * size limit (a 1 MB gzip bomb became 1 GiB). Either only identity is
     * enabled, and a compressed request is refused before it is inflated,
     * or the core hands it over compressed and call.c inflates it with a
     * ceiling (inflate.h). */
    if (!opt->accept_compressed)
        args[n++] = int_arg(GRPC_COMPRESSION_CHANNEL_ENABLED_ALGORITHMS_BITSET,
                            1u << GRPC_COMPRESS_NONE);
    else
        args[n++] = int_arg(GRPC_ARG_ENABLE_PER_MESSAGE_DECOMPRESSION, 0);
    if (quota)
        args[n++] = (grpc_arg){.type = GRPC_ARG_POINTER, .key = GRPC_ARG_RESOURCE_QUOTA,
                               .value.pointer = {.p = quota,
                                                 .vtable = grpc_resource_quota_arg_vtable()}};
    return n;
}

/* The resource quota bounds the memory the transport accounts (read
 * buffers, call arenas); under pressure gRPC reclaims from idle
 * connections and then cancels streams. */
static grpc_server *create_grpc_server(const rd_server_options *opt)
{
    grpc_resource_quota *quota = NULL;
    if (opt->memory_limit_bytes > 0) {
        quota = grpc_resource_quota_create("recoveryd");
        grpc_resource_quota_resize(quota, opt->memory_limit_bytes);
    }
    grpc_arg args[16];
    grpc_channel_args channel = {.num_args = channel_args(opt, quota, args), .args = args};
    grpc_server *server = grpc_server_create(&channel, NULL);
    if (quota)
        grpc_resource_quota_unref(quota); /* the server's args hold their own reference */
    return server;
}

static int bind_and_register(rd_server *s, const rd_server_options *opt, rd_status *st)
{
    if (rd_methods_count > RD_MAX_METHODS)
        return rd_status_set(st, RD_ERR_INTERNAL, "method table larger than the server supports");
    for (size_t i = 0; i < rd_methods_count; i++) {
        grpc_server_register_method_payload_handling payload =
            rd_methods[i].kind == RD_RPC_BIDI ? GRPC_SRM_PAYLOAD_NONE
                                               : GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER;
        s->registered[i] = grpc_server_register_method(s->grpc, rd_methods[i].path, NULL, payload, 0);
        if (!s->registered[i])
            return rd_status_set(st, RD_ERR_INTERNAL, "cannot register %s", rd_methods[i].path);
    }
    grpc_server_credentials *creds = NULL;
    if (opt->tls_cert_file) {
        s->tls = rd_tls_files_new(opt->tls_cert_file, opt->tls_key_file, opt->tls_client_ca_file,
                                  st);
        if (!s->tls)
            return st->code;
        creds = rd_tls_files_credentials(s->tls);
        if (!creds)
            return rd_status_set(st, RD_ERR_CONFIG, "server.tls: the certificate or key is not usable");
    } else {
        creds = grpc_insecure_server_credentials_create();
    }
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
        pthread_mutex_init(&w->wake_lock, NULL);
        atomic_init(&w->wake_pending, false);
        atomic_init(&w->live_calls, 0);
        w->deferred_tail = &w->deferred;
        grpc_server_register_completion_queue(s->grpc, w->cq, NULL);
    }
    return RD_OK;
}

static int start_workers(rd_server *s, rd_status *st)
{
    for (unsigned i = 0; i < s->n_workers; i++) {
        rd_worker *w = &s->workers[i];
        for (size_t m = 0; m < rd_methods_count; m++)
            for (unsigned k = 0; k < rd_methods[m].waiting; k++)
                rd_call_request(w, (int)m);
        rd_call_request(w, RD_GENERIC_METHOD);
        if (pthread_create(&w->thread, NULL, worker_main, w) != 0)
            return rd_status_set(st, RD_ERR_INTERNAL, "cannot start worker thread %u", i);
        w->started = true;
    }
    return RD_OK;
}

rd_server *rd_server_start(const rd_server_options *opt, const rd_services *svc, rd_status *st)
{
    rd_server *s = calloc(1, sizeof *s);
    if (!s) {
        rd_status_set(st, RD_ERR_NOMEM, "out of memory for the server");
        return NULL;
    }
    s->svc = svc;
    atomic_init(&s->closing, false);
    atomic_init(&s->unsent_answer_bytes, 0);
    s->max_unsent_answer_bytes = opt->max_unsent_answer_bytes;
    s->max_receive_bytes = opt->max_receive_bytes;
    s->grpc = create_grpc_server(opt);
    s->shutdown_cq = grpc_completion_queue_create_for_next(NULL);
    grpc_server_register_completion_queue(s->grpc, s->shutdown_cq, NULL);
    if (create_workers(s, opt->workers ? opt->workers : 1, st) != RD_OK ||
        bind_and_register(s, opt, st) != RD_OK) {
        rd_server_destroy(s);
        return NULL;
    }
    grpc_server_start(s->grpc);
    s->grpc_started = true;
    if (start_workers(s, st) != RD_OK) {
        rd_server_destroy(s);
        return NULL;
    }
    return s;
}

int rd_server_port(const rd_server *s) { return s->port; }

int64_t rd_server_tls_not_after(const rd_server *s) { return rd_tls_files_not_after(s->tls); }

/* ---- shutdown ---- */

/* How often the shutdown looks at live_calls while it waits. */
#define SHUTDOWN_POLL_MS 10

/* Waits on the shutdown queue until `deadline`; true when the shutdown
 * completed. */
static bool shutdown_done_by(rd_server *s, gpr_timespec deadline)
{
    return grpc_completion_queue_next(s->shutdown_cq, deadline, NULL).type == GRPC_OP_COMPLETE;
}

static int live_calls(const rd_server *s)
{
    int n = 0;
    for (unsigned i = 0; i < s->n_workers; i++)
        n += atomic_load_explicit(&s->workers[i].live_calls, memory_order_acquire);
    return n;
}

static void cancel_the_rest(rd_server *s)
{
    grpc_server_cancel_all_calls(s->grpc);
    grpc_completion_queue_next(s->shutdown_cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
}

/* gRPC 1.51 can strand a call that arrives as the shutdown starts: it
 * checks for the shutdown, the shutdown fails every requested call, then
 * the call queues for a request that never comes. A stream whose request
 * message has not arrived is held the same way. Neither reaches a worker,
 * yet either keeps its connection, and so the shutdown, open until the
 * grace period ends. So once no worker has a live call (every call handed to
 * us answered, every request of ours failed), the connections get
 * RD_SHUTDOWN_SETTLE_MS to finish their GOAWAY exchange, and what is still
 * open then is cancelled. */
rd_shutdown_outcome rd_server_shutdown(rd_server *s, int64_t grace_ms)
{
    if (!s || s->shut_down)
        return RD_SHUTDOWN_CLEAN;
    s->shut_down = true;
    atomic_store(&s->closing, true); /* streams finish on their workers */
    grpc_server_shutdown_and_notify(s->grpc, s->shutdown_cq, s);
    gpr_timespec grace_end = in_ms(grace_ms);
    for (;;) {
        gpr_timespec poll_end = in_ms(SHUTDOWN_POLL_MS);
        if (shutdown_done_by(s, gpr_time_min(poll_end, grace_end)))
            return RD_SHUTDOWN_CLEAN;
        if (gpr_time_cmp(gpr_now(GPR_CLOCK_MONOTONIC), grace_end) >= 0) {
            cancel_the_rest(s);
            return RD_SHUTDOWN_GRACE_RAN_OUT;
        }
        if (live_calls(s) == 0)
            break;
    }
    if (shutdown_done_by(s, gpr_time_min(in_ms(RD_SHUTDOWN_SETTLE_MS), grace_end)))
        return RD_SHUTDOWN_CLEAN;
    cancel_the_rest(s);
    return RD_SHUTDOWN_UNTAKEN_CANCELLED;
}

static void drain_and_destroy_cq(grpc_completion_queue *cq)
{
    grpc_completion_queue_shutdown(cq);
    while (grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
           GRPC_QUEUE_SHUTDOWN)
        ;
    grpc_completion_queue_destroy(cq);
}

/* A worker whose thread never started still owns requested calls. */
static void drain_unstarted(rd_worker *w)
{
    for (;;) {
        grpc_event ev = grpc_completion_queue_next(w->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
        if (ev.type == GRPC_QUEUE_SHUTDOWN)
            break;
        if (ev.type == GRPC_OP_COMPLETE)
            rd_call_on_event(w, ev.tag, ev.success);
    }
}

void rd_server_destroy(rd_server *s)
{
    if (!s)
        return;
    /* grpc_server_destroy requires a completed shutdown of a started server */
    if (s->grpc_started)
        (void)rd_server_shutdown(s, 0);
    grpc_server_destroy(s->grpc);
    for (unsigned i = 0; i < s->n_workers; i++) {
        rd_worker *w = &s->workers[i];
        grpc_completion_queue_shutdown(w->cq);
        if (w->started)
            pthread_join(w->thread, NULL);
        else
            drain_unstarted(w);
        grpc_completion_queue_destroy(w->cq);
        rd_arena_free(&w->arena);
        rd_worker_release_slab(w);
        rd_config_snap_release(w->snap);
        pthread_mutex_destroy(&w->wake_lock);
    }
    drain_and_destroy_cq(s->shutdown_cq);
    rd_tls_files_free(s->tls); /* after the server: its credentials call back into it */
    free(s->workers);
    free(s);
}
