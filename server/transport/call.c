/* One call from the moment it is requested until its last completion, as
 * a state machine driven by completion-queue tags (see server.h).
 *
 *   REQUESTED --call arrives--> unary:   one batch (reply + status) -> FINISHING
 *                               streams: STREAMING
 *   STREAMING: one send and (bidi) one receive in flight at most; the next
 *              message goes out when the previous send completed
 *   STREAMING --status sent, or the client went away--> FINISHING
 *   FINISHING --no batch left in flight--> freed
 *
 * The state changes only in set_state(); the stream's source is closed on
 * entering FINISHING, so it never wakes a call that is about to be freed.
 * Everything here runs on the call's worker thread, except rd_call_wake. */
#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "domain/log.h"
#include "transport/auth.h"
#include "engine/tenant.h"
#include "transport/call_bytes.h"
#include "transport/call_internal.h"
#include "transport/server_internal.h"
#include "transport/status.h"
#include "transport/tracecontext.h"
#include "platform/clock.h"

int64_t rd_call_monotonic_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static const rd_method *method_of(const rd_call *c)
{
    return c->method == RD_GENERIC_METHOD ? NULL : &rd_methods[c->method];
}

/* ---- lifetime ---- */

#define SMALL_ANSWER_BYTES (16 * 1024)
#define ANSWER_REFUSED \
    "answers waiting for clients that do not read exceed server.max_unsent_answer_bytes"

/* Every message handed to gRPC (c->sending) is first admitted here and
 * counted against the server's unsent-answer limit until it is sent or the
 * call ends (drop_sending). */
static bool answer_admit(rd_call *c, grpc_byte_buffer *bb)
{
    rd_server *s = c->worker->server;
    size_t len = grpc_byte_buffer_length(bb);
    c->sending_bytes = len;
    size_t held = atomic_fetch_add(&s->unsent_answer_bytes, len);
    /* Small answers (every Decide, Classify, RecordOutcome) always go: the
     * limit is there for the large lists, and an executor must not be
     * refused because someone else stopped reading. */
    if (len > SMALL_ANSWER_BYTES && held + len > s->max_unsent_answer_bytes && held > 0) {
        atomic_fetch_sub(&s->unsent_answer_bytes, len);
        c->sending_bytes = 0;
        return false;
    }
    return true;
}

static void drop_sending(rd_call *c)
{
    if (!c->sending)
        return;
    atomic_fetch_sub(&c->worker->server->unsent_answer_bytes, c->sending_bytes);
    c->sending_bytes = 0;
    grpc_byte_buffer_destroy(c->sending);
    c->sending = NULL;
}

void rd_call_free(rd_call *c)
{
    rd_worker_count_call(c->worker, -1);
    if (c->call)
        grpc_call_unref(c->call);
    grpc_metadata_array_destroy(&c->metadata);
    if (c->method == RD_GENERIC_METHOD)
        grpc_call_details_destroy(&c->details);
    if (c->request)
        grpc_byte_buffer_destroy(c->request);
    drop_sending(c);
    if (c->pending)
        grpc_byte_buffer_destroy(c->pending);
    grpc_slice_unref(c->status_details);
    rd_config_snap_release(c->snap);
    free(c);
}

void rd_call_request(rd_worker *w, int method)
{
    rd_call *c = calloc(1, sizeof *c);
    if (!c) {
        rd_log(RD_LOG_ERROR, "out of memory requesting a call", "");
        return;
    }
    c->worker = w;
    rd_worker_count_call(w, +1);
    c->method = method;
    c->state = CALL_REQUESTED;
    c->status_details = grpc_empty_slice();
    for (int k = 0; k < TAG_COUNT; k++)
        c->tags[k] = (call_tag){.call = c, .kind = (tag_kind)k};
    grpc_metadata_array_init(&c->metadata);
    grpc_call_error err;
    if (method == RD_GENERIC_METHOD) {
        grpc_call_details_init(&c->details);
        err = grpc_server_request_call(w->server->grpc, &c->call, &c->details, &c->metadata,
                                       w->cq, w->cq, &c->tags[TAG_REQUEST]);
    } else {
        bool payload = rd_methods[method].kind != RD_RPC_BIDI;
        err = grpc_server_request_registered_call(
            w->server->grpc, w->server->registered[method], &c->call, &c->deadline,
            &c->metadata, payload ? &c->request : NULL, w->cq, w->cq, &c->tags[TAG_REQUEST]);
    }
    if (err != GRPC_CALL_OK) {
        rd_call_free(c);
        rd_log(RD_LOG_ERROR, "cannot request a call", "");
    }
}

/* ---- the state ---- */

/* The call's latency ends at now_us, when its status was handed to gRPC. */
void rd_call_record_metrics(rd_call *c, int64_t now_us)
{
    const rd_method *m = method_of(c);
    char *generic = NULL;
    if (!m)
        generic = grpc_slice_to_c_string(c->details.method);
    static const char *const GRPC_TYPE[] = {
        [RD_RPC_UNARY] = "unary", [RD_RPC_SERVER_STREAM] = "server_stream",
        [RD_RPC_BIDI] = "bidi_stream"};
    rd_metrics_rpc(c->worker->server->svc->metrics, c->method, m ? m->path : generic,
                   m ? GRPC_TYPE[m->kind] : NULL, (int)c->final_code, now_us - c->started_us);
    gpr_free(generic);
}

static void set_state(rd_call *c, call_state next)
{
    if (c->state == next)
        return;
    if (next == CALL_STREAMING) {
        rd_call_streams_link(c);
    } else if (next == CALL_FINISHING && c->state != CALL_REQUESTED) {
        const rd_method *m = method_of(c);
        if (m && m->stream && c->source)
            m->stream->close(c->source); /* no wake after this */
        c->source = NULL;
        rd_call_streams_unlink(c);
        rd_call_wake_list_remove(c);
        rd_call_record_metrics(c, rd_call_monotonic_us());
    } else if (next == CALL_FINISHING && c->started_us) {
        /* answered at once (unary, refused); in a cohort the reply waits */
        if (c->worker->deferring)
            c->metrics_owed = true;
        else
            rd_call_record_metrics(c, rd_call_monotonic_us());
    }
    c->state = next;
}

void rd_call_maybe_free(rd_call *c)
{
    if (c->state != CALL_FINISHING || c->in_flight != 0)
        return;
    rd_worker *w = c->worker;
    if (w->deferring) { /* freed after the cohort's handlers */
        c->dead_next = w->dead;
        w->dead = c;
        return;
    }
    rd_call_free(c);
}

/* The request's bytes as one slice (the caller unrefs it), or an error. */
static int request_slice(const rd_call *c, grpc_byte_buffer *bb, grpc_slice *bytes,
                         rd_status *st)
{
    if (!bb)
        return rd_status_set(st, RD_ERR_INVALID, "request: no message received");
    return rd_request_bytes(bb, c->worker->server->max_receive_bytes, bytes, st);
}

/* A streaming method's request, decoded (see rd_method_decode). */
static ProtobufCMessage *decode(rd_call *c, const rd_method *m, grpc_byte_buffer *bb,
                                rd_status *st)
{
    grpc_slice bytes;
    if (request_slice(c, bb, &bytes, st) != RD_OK)
        return NULL;
    ProtobufCMessage *msg = rd_method_decode(m, &c->worker->arena, GRPC_SLICE_START_PTR(bytes),
                                             GRPC_SLICE_LENGTH(bytes), st);
    grpc_slice_unref(bytes);
    return msg;
}

/* A unary request's bytes through the method (rd_method_unary). */
static int handle_unary(const rd_call *c, const rd_rpc *rpc, const rd_method *m,
                        grpc_byte_buffer *bb, rd_reply *reply, rd_status *st)
{
    grpc_slice bytes;
    int rc = request_slice(c, bb, &bytes, st);
    if (rc != RD_OK)
        return rc;
    rc = rd_method_unary(m, rpc, GRPC_SLICE_START_PTR(bytes), GRPC_SLICE_LENGTH(bytes), reply,
                         st);
    grpc_slice_unref(bytes);
    return rc;
}

/* Sent as initial metadata on replies answered from the local fallback
 * while the shared store is unreachable (issue 5: responses say so).
 * Static slices: nothing to free, safe to share between calls. */
static grpc_metadata degraded_md;

static void degraded_md_init(void)
{
    degraded_md.key = grpc_slice_from_static_string("recoveryd-degraded");
    degraded_md.value = grpc_slice_from_static_string("true");
}

static grpc_metadata *degraded_metadata(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, degraded_md_init);
    return &degraded_md;
}

/* Ends the call with a status: the whole reply of a unary call (or a call
 * refused before it started) in one batch, or the last batch of a stream. */
static void finish(rd_call *c, grpc_status_code code, const char *details,
                   grpc_byte_buffer *message)
{
    grpc_op ops[4];
    memset(ops, 0, sizeof ops);
    size_t n = 0;
    bool first_batch = c->state == CALL_REQUESTED;
    if (first_batch) {
        if (c->store_degraded) {
            ops[n].data.send_initial_metadata.count = 1;
            ops[n].data.send_initial_metadata.metadata = degraded_metadata();
        }
        ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
        ops[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
        ops[n++].data.recv_close_on_server.cancelled = &c->cancelled;
    }
    if (message) {
        c->sending = message;
        ops[n].op = GRPC_OP_SEND_MESSAGE;
        ops[n++].data.send_message.send_message = message;
    }
    if (code != GRPC_STATUS_OK)
        c->status_details = grpc_slice_from_copied_string(details ? details : "");
    ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
    ops[n].data.send_status_from_server.status = code;
    ops[n++].data.send_status_from_server.status_details =
        code == GRPC_STATUS_OK ? NULL : &c->status_details;
    c->final_code = code;
    set_state(c, CALL_FINISHING);
    if (first_batch && c->worker->deferring)
        rd_call_defer_batch(c, ops, n);
    else
        rd_call_start_batch(c, ops, n, TAG_STATUS);
}

static void send_message(rd_call *c, grpc_byte_buffer *bb)
{
    grpc_op op;
    memset(&op, 0, sizeof op);
    op.op = GRPC_OP_SEND_MESSAGE;
    op.data.send_message.send_message = bb;
    c->sending = bb;
    c->send_busy = rd_call_start_batch(c, &op, 1, TAG_SEND);
}

static void start_receive(rd_call *c)
{
    grpc_op op;
    memset(&op, 0, sizeof op);
    op.op = GRPC_OP_RECV_MESSAGE;
    op.data.recv_message.recv_message = &c->request;
    c->recv_busy = rd_call_start_batch(c, &op, 1, TAG_RECV);
}

/* Opens a stream: initial metadata out, and a close watch that tells us
 * when the client goes away. */
static bool stream_begin(rd_call *c)
{
    grpc_op send_md, close_op;
    memset(&send_md, 0, sizeof send_md);
    memset(&close_op, 0, sizeof close_op);
    send_md.op = GRPC_OP_SEND_INITIAL_METADATA;
    close_op.op = GRPC_OP_RECV_CLOSE_ON_SERVER;
    close_op.data.recv_close_on_server.cancelled = &c->cancelled;
    set_state(c, CALL_STREAMING);
    if (!rd_call_start_batch(c, &close_op, 1, TAG_CLOSE))
        return false;
    c->send_busy = rd_call_start_batch(c, &send_md, 1, TAG_SEND);
    return c->send_busy;
}

/* ---- handling ---- */

typedef struct rpc_scope {
    rd_engine engine;
    rd_tenant_store tenant_store; /* the engine's store when the call has a tenant */
    rd_rpc rpc;
    rd_config_snap *snap;        /* owned by the scope unless borrowed */
    bool borrowed;
    rd_trace_ctx trace;          /* the call's traceparent / tracestate */
} rpc_scope;

/* A handler's view of this call with the snapshot `held` (the worker's,
 * borrowed, for a unary call; the call's own for bidi), or, when NULL, a
 * fresh one for one message of a server stream. */
static int scope_open(rpc_scope *s, rd_call *c, rd_config_snap *held, rd_status *st)
{
    rd_worker *w = c->worker;
    const rd_services *svc = w->server->svc;
    s->borrowed = held != NULL;
    s->snap = held ? held : rd_live_config_acquire(svc->config);
    s->engine = (rd_engine){.policy = &s->snap->cfg->policy, .store = svc->store};
    s->rpc = (rd_rpc){.svc = svc, .engine = &s->engine, .config = s->snap->cfg,
                      .ctx = {.now_ms = w->deferring ? w->cohort_unix_ms : rd_clock_unix_ms(),
                              .arena = &w->arena, .rng = &w->rng, .trace = &s->trace,
                              .tenant = c->tenant}};
    rd_trace_ctx_from_metadata(&c->metadata, svc->otlp != NULL, &s->trace);
    if (!c->tenant[0])
        return RD_OK;
    /* A tenant a reload removed keeps its namespace, without limits, until
     * the call ends. */
    const rd_tenant_config *t =
        rd_config_tenant_by_id(&s->snap->cfg->server, c->tenant, strlen(c->tenant));
    s->engine.store = &s->tenant_store.base;
    return rd_tenant_store_init(&s->tenant_store, svc->store, c->tenant, t ? t->max_tools : 0,
                                t ? t->max_turns : 0, st);
}

static void scope_close(rpc_scope *s, rd_call *c)
{
    if (!s->borrowed)
        rd_config_snap_release(s->snap);
    rd_arena_reset(&c->worker->arena);
}

static bool deadline_passed(const rd_call *c)
{
    if (c->deadline.tv_sec == INT64_MAX)
        return false; /* no deadline (gpr_inf_future): spare the clock read */
    return gpr_time_cmp(c->deadline, gpr_now(c->deadline.clock_type)) < 0;
}

/* While answers already wait past the limit, a call that lists is refused
 * before its answer is built: building 600 KB answers only to drop them
 * would leave a client that never reads in charge of the CPU. */
static bool unsent_over_limit(const rd_call *c)
{
    const rd_server *s = c->worker->server;
    return atomic_load(&s->unsent_answer_bytes) >= s->max_unsent_answer_bytes;
}

static void run_unary(rd_call *c, const rd_method *m, rd_config_snap *snap)
{
    if (m->lists && unsent_over_limit(c)) {
        finish(c, GRPC_STATUS_RESOURCE_EXHAUSTED, ANSWER_REFUSED, NULL);
        return;
    }
    rd_status st;
    rd_status_clear(&st);
    rpc_scope s;
    int rc = scope_open(&s, c, snap, &st);
    rd_worker_open_answer_room(c->worker, &s.rpc);
    rd_reply reply = {NULL, NULL, 0};
    if (rc == RD_OK)
        rc = deadline_passed(c) ? rd_status_set(&st, RD_ERR_DEADLINE,
                                                "deadline passed before the call was handled")
                                : handle_unary(c, &s.rpc, m, c->request, &reply, &st);
    c->store_degraded = st.store_degraded;
    grpc_byte_buffer *out = rc == RD_OK ? rd_worker_encode_reply(c->worker, &reply) : NULL;
    scope_close(&s, c);
    if (out && !answer_admit(c, out)) {
        grpc_byte_buffer_destroy(out);
        finish(c, GRPC_STATUS_RESOURCE_EXHAUSTED, ANSWER_REFUSED, NULL);
        return;
    }
    finish(c, rc == RD_OK ? GRPC_STATUS_OK : rd_status_to_grpc((rd_err)rc), st.msg, out);
}

static void run_server_stream(rd_call *c, const rd_method *m)
{
    rd_status st;
    rd_status_clear(&st);
    rpc_scope s;
    int rc = scope_open(&s, c, NULL, &st);
    ProtobufCMessage *req = rc == RD_OK ? decode(c, m, c->request, &st) : NULL;
    if (rc == RD_OK)
        rc = req ? m->stream->open(&s.rpc, req, rd_call_wake, c, &c->source, &st) : st.code;
    c->store_degraded = st.store_degraded;
    scope_close(&s, c);
    if (rc != RD_OK) {
        finish(c, rd_status_to_grpc((rd_err)rc), st.msg, NULL);
        return;
    }
    if (!stream_begin(c))
        finish(c, GRPC_STATUS_INTERNAL, "cannot start the stream", NULL);
}

/* The worker's snapshot of the configuration, renewed when a reload has
 * replaced it: one atomic load per call instead of a lock and two
 * reference counts on lines every worker shares. */
static rd_config_snap *worker_snapshot(rd_worker *w)
{
    rd_live_config *live = w->server->svc->config;
    if (!w->snap || w->snap->version != rd_live_config_version(live)) {
        rd_config_snap_release(w->snap);
        w->snap = rd_live_config_acquire(live);
    }
    return w->snap;
}

/* The call arrived: authorize, then start it the way its method needs. */
static void on_arrival(rd_call *c)
{
    rd_worker *w = c->worker;
    const rd_method *m = method_of(c);
    c->started_us = w->deferring ? w->cohort_mono_us : rd_call_monotonic_us();
    if (w->deferring) /* keep the same number waiting, after the cohort */
        w->owed[c->method == RD_GENERIC_METHOD ? RD_MAX_METHODS : c->method]++;
    else
        rd_call_request(w, c->method);
    if (!m) {
        char *path = grpc_slice_to_c_string(c->details.method);
        char msg[512];
        snprintf(msg, sizeof msg, "method %s: not implemented", path);
        gpr_free(path);
        finish(c, GRPC_STATUS_UNIMPLEMENTED, msg, NULL);
        return;
    }
    /* A unary call borrows the worker's snapshot: it is handled before the
     * next arrival can renew it. */
    rd_config_snap *snap = worker_snapshot(w);
    const char *why = "";
    grpc_status_code auth = rd_auth_check(m->auth, snap->cfg, &c->metadata, c->tenant, &why);
    if (auth == GRPC_STATUS_UNAUTHENTICATED || auth == GRPC_STATUS_PERMISSION_DENIED)
        rd_auth_log_failure(c->call, m->path, auth, why);
    if (auth != GRPC_STATUS_OK) {
        finish(c, auth, why, NULL);
        return;
    }
    if (m->kind == RD_RPC_UNARY) {
        run_unary(c, m, snap);
    } else if (m->kind == RD_RPC_SERVER_STREAM) {
        run_server_stream(c, m); /* each message takes a fresh snapshot */
    } else {
        c->snap = rd_config_snap_ref(snap); /* bidi: one for the whole call */
        if (!stream_begin(c))
            finish(c, GRPC_STATUS_INTERNAL, "cannot start the stream", NULL);
    }
}

/* Bidi: one received message -> one response (or the end of the call). */
static void on_received(rd_call *c, bool success)
{
    c->recv_busy = false;
    grpc_byte_buffer *bb = c->request;
    c->request = NULL;
    if (!success || !bb) {
        c->half_closed = true; /* the client sent its last message */
        return;
    }
    const rd_method *m = method_of(c);
    rd_status st;
    rd_status_clear(&st);
    rpc_scope s;
    int rc = scope_open(&s, c, c->snap, &st);
    ProtobufCMessage *req = rc == RD_OK ? decode(c, m, bb, &st) : NULL;
    rd_reply reply = {NULL, NULL, 0};
    if (rc == RD_OK)
        rc = req ? m->handle(&s.rpc, req, &reply, &st) : st.code;
    if (rc == RD_OK)
        c->pending = rd_worker_encode_reply(c->worker, &reply);
    scope_close(&s, c);
    grpc_byte_buffer_destroy(bb);
    if (rc != RD_OK)
        finish(c, rd_status_to_grpc((rd_err)rc), st.msg, NULL);
}

static bool server_closing(const rd_call *c)
{
    return atomic_load(&c->worker->server->closing);
}

static void pump_server_stream(rd_call *c, const rd_method *m)
{
    rpc_scope s;
    rd_status st;
    rd_status_clear(&st);
    (void)scope_open(&s, c, NULL, &st); /* its store keeps to the tenant even when this fails */
    ProtobufCMessage *msg = m->stream->next(c->source, &s.rpc);
    grpc_byte_buffer *bb = msg ? rd_encode_message(msg) : NULL;
    scope_close(&s, c);
    if (bb && !answer_admit(c, bb)) {
        grpc_byte_buffer_destroy(bb);
        finish(c, GRPC_STATUS_RESOURCE_EXHAUSTED, ANSWER_REFUSED, NULL);
    } else if (bb)
        send_message(c, bb);
    else if (server_closing(c))
        finish(c, GRPC_STATUS_UNAVAILABLE, "server is shutting down", NULL);
}

static void pump_bidi(rd_call *c)
{
    if (c->pending) {
        grpc_byte_buffer *bb = c->pending;
        c->pending = NULL;
        if (answer_admit(c, bb)) {
            send_message(c, bb);
        } else {
            grpc_byte_buffer_destroy(bb);
            finish(c, GRPC_STATUS_RESOURCE_EXHAUSTED, ANSWER_REFUSED, NULL);
        }
    } else if (server_closing(c)) {
        finish(c, GRPC_STATUS_UNAVAILABLE, "server is shutting down", NULL);
    } else if (c->half_closed) {
        finish(c, GRPC_STATUS_OK, NULL, NULL);
    } else if (!c->recv_busy) {
        start_receive(c);
    }
}

/* Moves a stream forward as far as it can go without waiting. */
static void pump(rd_call *c)
{
    if (c->state != CALL_STREAMING || c->send_busy)
        return;
    const rd_method *m = method_of(c);
    if (m->kind == RD_RPC_SERVER_STREAM)
        pump_server_stream(c, m);
    else
        pump_bidi(c);
}

static void on_sent(rd_call *c, bool success)
{
    c->send_busy = false;
    drop_sending(c);
    if (!success && c->state == CALL_STREAMING) {
        c->final_code = GRPC_STATUS_CANCELLED; /* the call broke under us */
        set_state(c, CALL_FINISHING);
    }
}

/* The call is over from the client's side. Before our status went out,
 * that means the client cancelled or disconnected. */
static void on_closed(rd_call *c)
{
    if (c->state == CALL_STREAMING) {
        c->final_code = GRPC_STATUS_CANCELLED;
        set_state(c, CALL_FINISHING);
    }
}

void rd_call_on_event(rd_worker *w, void *tag, bool success)
{
    call_tag *t = tag;
    rd_call *c = t->call;
    c->in_flight -= t->kind != TAG_REQUEST;
    switch (t->kind) {
    case TAG_REQUEST:
        if (!success) { /* shutting down: the call will never come */
            set_state(c, CALL_FINISHING);
            break;
        }
        on_arrival(c);
        break;
    case TAG_SEND:
        on_sent(c, success);
        break;
    case TAG_RECV:
        on_received(c, success);
        break;
    case TAG_CLOSE:
        on_closed(c);
        break;
    case TAG_STATUS:
    case TAG_COUNT:
        drop_sending(c);
        break;
    }
    (void)w;
    pump(c);
    rd_call_maybe_free(c);
}

/* Runs after every event of the worker's queue, and streams are rarely
 * woken: while nothing is pending, the lock is not taken. A wake that
 * comes after the check is seen on the next event or timeout of the
 * queue's wait, as one that came after the list was taken. */
void rd_worker_pump_woken(rd_worker *w)
{
    if (!atomic_load_explicit(&w->wake_pending, memory_order_acquire))
        return;
    pthread_mutex_lock(&w->wake_lock);
    atomic_store_explicit(&w->wake_pending, false, memory_order_relaxed);
    rd_call *list = w->woken;
    w->woken = NULL;
    for (rd_call *c = list; c; c = c->wake_next)
        c->wake_queued = false;
    pthread_mutex_unlock(&w->wake_lock);
    while (list) {
        rd_call *c = list;
        list = c->wake_next;
        pump(c);
        rd_call_maybe_free(c); /* only if a batch could not be started */
    }
}

void rd_worker_finish_streams(rd_worker *w)
{
    rd_call *c = w->streams;
    while (c) {
        rd_call *next = c->stream_next; /* pump may unlink c */
        pump(c);
        rd_call_maybe_free(c);
        c = next;
    }
}
