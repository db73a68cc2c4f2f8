/* The gRPC server loop on the gRPC core API.
 *
 * Model: N worker threads, each with its own completion queue. Every worker
 * keeps a few calls requested for every method of the table (methods.c) and
 * for unknown methods (answered UNIMPLEMENTED). A worker handles a call to
 * completion on its own thread: decode, decide, encode, start the reply batch;
 * the batch completion frees the call. Handling never blocks on I/O with the
 * memory store, so one queue per thread keeps every core busy without locks
 * in the transport.
 *
 * Shutdown order (rd_server_shutdown), with its preconditions:
 *   1. stop accepting: grpc_server_shutdown_and_notify; calls already
 *      received keep running and are answered;
 *   2. wait up to grace_ms for them; past that, cancel what remains
 *      (grpc_server_cancel_all_calls) and wait for the cancellations;
 *   3. only then destroy the server, shut the worker queues down (the
 *      workers drain them, freeing every requested call) and join the
 *      workers. The engine must outlive rd_server_shutdown.
 *
 * Ownership: the server borrows the engine; rd_server_destroy(NULL) is a
 * no-op. */
#ifndef RD_TRANSPORT_SERVER_H
#define RD_TRANSPORT_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "core/decide.h"
#include "core/err.h"

typedef struct rd_server rd_server;

typedef struct rd_server_options {
    const char *listen;          /* host:port; port 0 picks a free one */
    unsigned workers;            /* >= 1 */
    size_t max_receive_bytes;
} rd_server_options;

/* Binds, starts the workers and begins serving. NULL on failure with st set. */
rd_server *rd_server_start(const rd_server_options *opt, const rd_engine *engine, rd_status *st);
int rd_server_port(const rd_server *s);
/* Graceful stop as described above; returns how many calls were cancelled
 * because the grace period ran out (0 or 1: gRPC cancels them as a group). */
int rd_server_shutdown(rd_server *s, int64_t grace_ms);
void rd_server_destroy(rd_server *s);

#endif
