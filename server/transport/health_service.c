/* grpc.health.v1.Health: Check answers at once; Watch sends the current
 * status, then every change, until the client leaves or the server stops. */
#include <stdlib.h>
#include <string.h>

#include "grpc/health/v1/health.pb-c.h"
#include "transport/services.h"

#define SERVICE_NAME_MAX 256

static Grpc__Health__V1__HealthCheckResponse *response(rd_arena *a, rd_health_status status)
{
    Grpc__Health__V1__HealthCheckResponse *r = rd_arena_alloc(a, sizeof *r);
    if (!r)
        return NULL;
    grpc__health__v1__health_check_response__init(r);
    r->status = (Grpc__Health__V1__HealthCheckResponse__ServingStatus)status;
    return r;
}

int rd_health_check_handler(const rd_rpc *rpc, const ProtobufCMessage *req,
                            rd_reply *reply, rd_status *st)
{
    const Grpc__Health__V1__HealthCheckRequest *r = (const void *)req;
    rd_health_status status = rd_health_status_of(rpc->svc->health, r->service);
    if (status == RD_HEALTH_SERVICE_UNKNOWN)
        return rd_status_set(st, RD_ERR_NOT_FOUND, "service: unknown service '%.200s'",
                             r->service);
    reply->msg = (ProtobufCMessage *)response(rpc->ctx.arena, status);
    return reply->msg ? RD_OK : rd_status_set(st, RD_ERR_NOMEM, "response: out of memory");
}

typedef struct health_stream {
    rd_health *health;
    rd_health_watcher *watcher;
    char service[SERVICE_NAME_MAX + 1];
    rd_health_status last_sent;  /* UNKNOWN: nothing sent yet */
} health_stream;

static int watch_open(const rd_rpc *rpc, const ProtobufCMessage *req, rd_wake_fn wake,
                      void *wake_arg, void **stream, rd_status *st)
{
    const Grpc__Health__V1__HealthCheckRequest *r = (const void *)req;
    if (strlen(r->service) > SERVICE_NAME_MAX)
        return rd_status_set(st, RD_ERR_INVALID, "service: longer than %d bytes",
                             SERVICE_NAME_MAX);
    health_stream *hs = calloc(1, sizeof *hs);
    if (!hs)
        return rd_status_set(st, RD_ERR_NOMEM, "watch: out of memory");
    hs->health = rpc->svc->health;
    strcpy(hs->service, r->service);
    hs->watcher = rd_health_watch(hs->health, wake, wake_arg);
    if (!hs->watcher) {
        free(hs);
        return rd_status_set(st, RD_ERR_NOMEM, "watch: out of memory");
    }
    *stream = hs;
    return RD_OK;
}

/* An unknown service is not an error for Watch: the client is told
 * SERVICE_UNKNOWN and keeps watching (the service may appear later). */
static ProtobufCMessage *watch_next(void *stream, const rd_rpc *rpc)
{
    health_stream *hs = stream;
    rd_health_status now = rd_health_status_of(hs->health, hs->service);
    if (now == hs->last_sent)
        return NULL;
    Grpc__Health__V1__HealthCheckResponse *r = response(rpc->ctx.arena, now);
    if (r)
        hs->last_sent = now;
    return (ProtobufCMessage *)r;
}

static void watch_close(void *stream)
{
    health_stream *hs = stream;
    if (!hs)
        return;
    rd_health_unwatch(hs->watcher);
    free(hs);
}

const rd_stream_ops rd_health_watch_stream = {
    .open = watch_open,
    .next = watch_next,
    .close = watch_close,
};
