/* Shared between server.c (threads, queues, lifecycle) and call.c (one
 * call's state machine). Not for use outside server/transport. */
#ifndef RD_TRANSPORT_SERVER_INTERNAL_H
#define RD_TRANSPORT_SERVER_INTERNAL_H

#include <grpc/grpc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "domain/arena.h"
#include "domain/retry.h"
#include "transport/server.h"

#define RD_MAX_METHODS 32
#define RD_GENERIC_METHOD (-1)

typedef struct rd_call rd_call;

typedef struct rd_worker {
    struct rd_server *server;
    grpc_completion_queue *cq;
    pthread_t thread;
    bool started;
    rd_arena arena;              /* reset after every unit of work */
    rd_rng rng;
    pthread_mutex_t wake_lock;   /* guards `woken` and each call's wake_queued */
    rd_call *woken;              /* streams whose source has something for them */
    atomic_bool wake_pending;    /* set with `woken`, cleared when it is taken:
                                    the worker skips the lock while it is clear */
    rd_call *streams;            /* open streaming calls; this thread only */
    bool closing_seen;
    bool deferring;              /* inside a cohort: one-batch replies wait */
    int64_t cohort_mono_us;      /* the clocks when the cohort was taken: every */
    int64_t cohort_unix_ms;      /* call in it arrived then (see server.h) */
    struct rd_config_snap *snap; /* the configuration calls start with; a
                                    reference of its own, renewed by the
                                    first arrival after a reload */
    rd_call *deferred;           /* replies ready, batches not started; FIFO */
    rd_call **deferred_tail;
    rd_call *dead;               /* finished during a cohort, freed after it */
    unsigned owed[RD_MAX_METHODS + 1]; /* calls to request after the cohort,
                                          per method; the last: generic */
    grpc_slice slab;             /* answers are pieces of it (call_bytes.c) */
    size_t slab_free;            /* its first bytes not handed out; pieces are
                                    taken from the end of that room */
    bool has_slab;
    /* Calls this worker has requested or taken and not yet freed; changed
     * by its own thread only (before it starts: by the thread starting
     * it), read by the shutdown. Once the shutdown has failed the
     * requests, zero stays zero: nothing is requested but on an arrival.
     * Zero on every worker means every call handed to us is answered:
     * what the core still holds can never reach one (rd_server_shutdown). */
    atomic_int live_calls;
} rd_worker;

struct rd_server {
    grpc_server *grpc;
    grpc_completion_queue *shutdown_cq;
    const rd_services *svc;
    void *registered[RD_MAX_METHODS]; /* grpc handle per rd_methods entry */
    rd_worker *workers;
    unsigned n_workers;
    int port;
    bool grpc_started;
    bool shut_down;
    atomic_bool closing;         /* streams must finish */
    /* Bytes of answers handed to gRPC and not yet sent: a client that
     * stops reading holds them. Past the limit a new answer is refused
     * with RESOURCE_EXHAUSTED instead of queued. */
    atomic_size_t unsent_answer_bytes;
    size_t max_receive_bytes;    /* also the ceiling of an inflated request */
    struct rd_tls_files *tls;    /* NULL = plaintext */
    size_t max_unsent_answer_bytes;
};

/* Only the worker's own thread writes live_calls: a load and a store,
 * not a locked read-modify-write, on the call path. */
static inline void rd_worker_count_call(rd_worker *w, int delta)
{
    int n = atomic_load_explicit(&w->live_calls, memory_order_relaxed);
    atomic_store_explicit(&w->live_calls, n + delta, memory_order_release);
}

/* Keeps one more call requested for `method` on w's queue. */
void rd_call_request(rd_worker *w, int method);
/* A completion on w's queue. */
void rd_call_on_event(rd_worker *w, void *tag, bool success);
/* Starts a cohort (server.h): its completions are taken; reads the clocks
 * its calls share. */
void rd_worker_begin_cohort(rd_worker *w);
/* Ends a cohort (server.h): starts the replies deferred during it, requests
 * as many calls as arrived in it and frees the calls that finished in it. */
void rd_worker_end_cohort(rd_worker *w);
/* Lets every stream whose source woke it send what it has. */
void rd_worker_pump_woken(rd_worker *w);
/* Drops the worker's reference to its answer slab (pieces in flight keep
 * it alive until gRPC has sent them). */
void rd_worker_release_slab(rd_worker *w);
/* Lets every open stream of w finish (the server is closing). */
void rd_worker_finish_streams(rd_worker *w);

#endif
