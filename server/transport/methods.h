/* The one table of RPC methods. Each entry names the method's path, its
 * shape (unary, server streaming, bidirectional), who may call it, its
 * request type and its handler. server.c registers every entry and drives
 * every call through it; nothing else knows the list of methods.
 *
 * Handlers run on a worker thread and must not block: anything that waits
 * (a watch stream waiting for the next change) is a stream source whose
 * next() is called again when its wake callback fires. */
#ifndef RD_TRANSPORT_METHODS_H
#define RD_TRANSPORT_METHODS_H

#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>

#include "engine/decide.h"
#include "ops/runtime.h"

/* What the server shares with every handler (rd_services, ops/runtime.h)
 * is borrowed: it outlives the server. */

/* One call (or one message of a bidirectional stream) as a handler sees it.
 * `engine` pairs the configuration snapshot this call holds with the store;
 * the snapshot stays the same for the whole call even across a reload. */
typedef struct rd_rpc {
    const rd_services *svc;
    const rd_engine *engine;
    const rd_config *config;     /* the configuration the call runs under (borrowed) */
    rd_call_ctx ctx;
    /* Where a hot answer may be written in place (the transport's memory,
     * for this call only), or NULL: it then goes to the arena. */
    uint8_t *answer_room;
    size_t answer_room_cap;
} rd_rpc;

/* A handler's answer: a protobuf-c message in the call's arena for the
 * transport to pack, or (the hot RPCs, see answers.h) bytes already packed,
 * in the answer room or the arena. Exactly one of msg and bytes is set. */
typedef struct rd_reply {
    ProtobufCMessage *msg;
    const uint8_t *bytes;
    size_t len;
} rd_reply;

/* Unary, and each message of a bidirectional stream: *reply is set on
 * RD_OK; on error, st holds the code and a message naming the field. */
typedef int (*rd_handler_fn)(const rd_rpc *rpc, const ProtobufCMessage *req, rd_reply *reply,
                             rd_status *st);

/* A hot unary method's request read from its bytes straight into the
 * engine's structs (requests.h), then handled. *read false: the reader
 * declined the bytes and nothing was done; the generic path takes them. */
typedef int (*rd_direct_fn)(const rd_rpc *rpc, const uint8_t *data, size_t len, rd_reply *reply,
                            rd_status *st, bool *read);

typedef void (*rd_wake_fn)(void *arg);

/* A server-streaming method's source of messages. */
typedef struct rd_stream_ops {
    /* Validates the request and starts watching; `wake` may be called from
     * any thread (never under a lock of the caller's) when next() may have
     * something to send. *stream is the source's own state. */
    int (*open)(const rd_rpc *rpc, const ProtobufCMessage *req, rd_wake_fn wake,
                void *wake_arg, void **stream, rd_status *st);
    /* The next message to send (arena), or NULL when there is nothing now. */
    ProtobufCMessage *(*next)(void *stream, const rd_rpc *rpc);
    /* Stops watching and frees the state; wake is never called after this
     * returns. NULL is fine. */
    void (*close)(void *stream);
} rd_stream_ops;

typedef enum { RD_RPC_UNARY, RD_RPC_SERVER_STREAM, RD_RPC_BIDI } rd_rpc_kind;

typedef enum {
    RD_AUTH_NONE,    /* health: open, like every gRPC server's (probes carry no token) */
    RD_AUTH_REFLECTION, /* open while server.reflection is on; UNIMPLEMENTED when off */
    RD_AUTH_CLIENT,  /* server.auth token, when one is configured */
    RD_AUTH_ADMIN,   /* server.admin token, always required */
} rd_auth_kind;

typedef struct rd_method {
    const char *path;                                /* "/recovery.v1.RecoveryService/Decide" */
    rd_rpc_kind kind;
    rd_auth_kind auth;
    const ProtobufCMessageDescriptor *request_type;
    rd_handler_fn handle;                            /* UNARY and BIDI */
    const rd_stream_ops *stream;                     /* SERVER_STREAM */
    rd_direct_fn direct;                             /* NULL, or tried before `handle` */
    unsigned waiting;                                /* calls kept requested per worker */
    bool lists;                                      /* answers with a list that may be large:
                                                        refused unbuilt while unsent answers
                                                        are over their limit (call.c) */
} rd_method;

extern const rd_method rd_methods[];
extern const size_t rd_methods_count;

/* A request's bytes decoded as m's request type in the arena: pbread.c's
 * one pass, else protobuf-c's answer. NULL, with st set, when invalid. */
ProtobufCMessage *rd_method_decode(const rd_method *m, rd_arena *arena, const uint8_t *data,
                                   size_t len, rd_status *st);

/* One unary request's bytes to a reply, as the server runs it: m's direct
 * reader when it has one and it accepts, else decoding and m's handler. */
int rd_method_unary(const rd_method *m, const rd_rpc *rpc, const uint8_t *data, size_t len,
                    rd_reply *reply, rd_status *st);

#endif
