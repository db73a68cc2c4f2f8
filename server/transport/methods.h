/* The one table of RPC methods. Each entry names the method's path, its
 * request type and the handler that turns a decoded request into a response
 * through the decision engine. server.c registers every entry and dispatches
 * calls through it; nothing else knows the list of methods. */
#ifndef RD_TRANSPORT_METHODS_H
#define RD_TRANSPORT_METHODS_H

#include <protobuf-c/protobuf-c.h>

#include "core/decide.h"

/* Handler contract: *resp is set to an arena-allocated message on RD_OK;
 * on error, st holds the code and a message naming the field. */
typedef int (*rd_handler_fn)(const rd_engine *engine, const rd_call_ctx *ctx,
                             const ProtobufCMessage *req, ProtobufCMessage **resp,
                             rd_status *st);

typedef struct rd_method {
    const char *path;                                /* "/recovery.v1.RecoveryService/Decide" */
    const ProtobufCMessageDescriptor *request_type;
    rd_handler_fn handle;
} rd_method;

extern const rd_method rd_methods[];
extern const size_t rd_methods_count;

#endif
