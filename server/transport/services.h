/* Handlers and stream sources of the services besides RecoveryService's
 * unary methods, referenced by the method table (methods.c). Each lives
 * with its subject under server/ops. */
#ifndef RD_TRANSPORT_SERVICES_H
#define RD_TRANSPORT_SERVICES_H

#include "transport/methods.h"

/* grpc.health.v1.Health (transport/health_service.c) */
int rd_health_check_handler(const rd_rpc *rpc, const ProtobufCMessage *req,
                            rd_reply *reply, rd_status *st);
extern const rd_stream_ops rd_health_watch_stream;

/* recovery.v1.RecoveryService/WatchBreakers (transport/breaker_watch.c) */
extern const rd_stream_ops rd_breaker_watch_stream;

/* recovery.v1.AdminService/ForceBreaker (transport/admin.c) */
int rd_admin_force_handler(const rd_rpc *rpc, const ProtobufCMessage *req,
                           rd_reply *reply, rd_status *st);

/* grpc.reflection.{v1alpha,v1}.ServerReflection (transport/reflection.c); the two
 * versions' messages are identical on the wire, so one handler serves both. */
int rd_reflection_handler(const rd_rpc *rpc, const ProtobufCMessage *req,
                          rd_reply *reply, rd_status *st);

#endif
