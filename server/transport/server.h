/* The gRPC server loop on the gRPC core API.
 *
 * Model: N worker threads, each with its own completion queue. Every worker
 * keeps a few calls requested for every method of the table (methods.c) and
 * for unknown methods (answered UNIMPLEMENTED). A call lives on the worker
 * whose queue it arrived on, as a small state machine driven by completion
 * tags (call.c): a unary call is answered in one batch; a streaming call
 * sends and receives one message at a time and, while it waits for
 * something to send (a watch stream), costs nothing: its source wakes the
 * worker, which polls its wake list at least every RD_WAKE_INTERVAL_MS.
 * Handling never blocks on I/O with the memory store.
 *
 * Cohorts: a worker takes every completion already on its queue (up to
 * RD_COHORT_MAX) before it handles any, runs their handlers back to back,
 * and only then starts their one-batch replies, requests the calls that
 * replace those that arrived, and frees the calls that finished. Under
 * load gRPC's own code (reading, writing, creating and destroying calls)
 * would otherwise run between every two handlers and push the handlers'
 * code and tables out of the CPU's caches; this way one cohort's handlers
 * share them. A lone call is a cohort
 * of one: its reply waits only for one poll of the queue that finds it
 * empty. The clocks are read once per cohort: its calls all arrived when
 * it was taken and share that "now"; their latency (the RPC duration
 * metric) ends when the cohort's replies are handed to gRPC.
 *
 * Every call takes a configuration snapshot when it starts and keeps it to
 * its end, so a reload never changes the rules under a running call. A
 * unary call borrows its worker's snapshot; the worker renews it on the
 * first arrival after a reload, so an idle worker keeps the configuration
 * before a reload in memory until its next call or the shutdown.
 *
 * Shutdown order (rd_server_shutdown), with its preconditions; the caller
 * (main.c) first sets health NOT_SERVING and waits server.drain_delay_ms:
 *   1. streams are told to finish: each sends what it has queued (a health
 *      watcher gets its NOT_SERVING) and ends with UNAVAILABLE;
 *   2. stop accepting: grpc_server_shutdown_and_notify; calls already
 *      received keep running and are answered;
 *   3. wait up to grace_ms for them; past that, cancel what remains
 *      (grpc_server_cancel_all_calls) and wait for the cancellations.
 *      Once every call a worker took is answered, what the core still
 *      holds never reaches a worker: it is cancelled after
 *      RD_SHUTDOWN_SETTLE_MS rather than at the end of the grace period;
 *   4. only then (rd_server_destroy) destroy the server, shut the worker
 *      queues down (the workers drain them, freeing every requested call)
 *      and join the workers. The services must outlive rd_server_destroy.
 *
 * Ownership: the server borrows the services; rd_server_destroy(NULL) is a
 * no-op. */
#ifndef RD_TRANSPORT_SERVER_H
#define RD_TRANSPORT_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "domain/err.h"
#include "transport/methods.h"

#define RD_WAKE_INTERVAL_MS 20

typedef struct rd_server rd_server;

typedef struct rd_server_options {
    const char *listen;          /* host:port; port 0 picks a free one */
    unsigned workers;            /* >= 1 */
    size_t max_receive_bytes;
    int64_t max_connection_age_ms;       /* 0 = unlimited */
    int64_t max_connection_age_grace_ms; /* 0 = gRPC default */
    int64_t keepalive_time_ms;           /* 0 = gRPC default */
    int64_t keepalive_timeout_ms;        /* 0 = gRPC default */
    /* Hostile-peer limits (docs/SECURITY.md). */
    unsigned max_concurrent_streams;     /* per connection */
    size_t memory_limit_bytes;           /* gRPC's resource quota */
    int64_t handshake_timeout_ms;
    int64_t max_connection_idle_ms;      /* 0 = never closed for idleness */
    bool accept_compressed;              /* false = identity only */
    size_t max_unsent_answer_bytes;      /* answers held for slow readers */
    const char *tls_cert_file;   /* NULL = plaintext */
    const char *tls_key_file;
    const char *tls_client_ca_file; /* set = clients must present a certificate */
} rd_server_options;

/* Binds, starts the workers and begins serving. NULL on failure with st set. */
rd_server *rd_server_start(const rd_server_options *opt, const rd_services *svc, rd_status *st);
int rd_server_port(const rd_server *s);
/* notAfter (Unix seconds) of the certificate in use; 0 without TLS. The
 * files are picked up again when they change (tls_files.h). */
int64_t rd_server_tls_not_after(const rd_server *s);
/* A connection gets this long to close on its GOAWAY once every call the
 * server took is answered (step 3); a GOAWAY exchange is one ping round
 * trip. */
#define RD_SHUTDOWN_SETTLE_MS 1000

typedef enum rd_shutdown_outcome {
    RD_SHUTDOWN_CLEAN,             /* every connection closed on its own */
    RD_SHUTDOWN_UNTAKEN_CANCELLED, /* every taken call answered; calls never
                                      handed over were cancelled */
    RD_SHUTDOWN_GRACE_RAN_OUT,     /* calls we were handling were cancelled */
} rd_shutdown_outcome;

/* Steps 1-3 above. */
rd_shutdown_outcome rd_server_shutdown(rd_server *s, int64_t grace_ms);
void rd_server_destroy(rd_server *s);

#endif
