/* The metrics endpoint: libmicrohttpd with a pool of polling threads.
 *
 *   GET /metrics  the Prometheus text exposition (with metrics.auth, only
 *                 with `Authorization: Bearer <token>`; otherwise 401)
 *   GET /healthz  "ok" (the process is up; gRPC health is the readiness
 *                 signal); never needs a token, probes carry none
 *   GET /readyz   200 while the API is SERVING, 503 from the first step of
 *                 shutdown: gRPC health over plain HTTP, for a kubelet that
 *                 cannot probe a TLS gRPC port; no token
 *   other paths   404; other methods on the two paths 405
 *
 * A client cannot blind it by holding connections: each address may hold
 * max_connections_per_ip of them, a connection idle for
 * connection_timeout_ms is closed, and more than one thread serves, so a
 * slow render does not hold up /healthz (docs/SECURITY.md).
 *
 * Each scrape renders afresh; nothing is cached, so a scrape is as current
 * as the counters. */
#include "ops/metrics.h"

#include <microhttpd.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

static const rd_metrics_http_limits DEFAULT_LIMITS = {
    .max_connections = 128, .max_connections_per_ip = 8, .threads = 2,
    .connection_timeout_ms = 5000, .token = NULL};

struct rd_metrics_http {
    struct MHD_Daemon *daemon;
    rd_metrics *metrics;                 /* borrowed */
    rd_breaker_lister lister;            /* borrowed */
    void *lister_ctx;
    char *token;                         /* NULL = none; a secret */
    bool (*serving)(void *ctx);
    void *serving_ctx;
};

/* Equal in constant time for a given length of `given`. */
static bool token_matches(const char *want, const char *given)
{
    size_t n = strlen(want), m = strlen(given);
    unsigned char diff = n != m;
    for (size_t i = 0; i < m; i++)
        diff |= (unsigned char)(given[i] ^ want[i % (n ? n : 1)]);
    return diff == 0;
}

static void free_token(char *token)
{
    if (token)
        memset(token, 0, strlen(token));
    free(token);
}

static bool authorized(const rd_metrics_http *h, struct MHD_Connection *conn)
{
    if (!h->token)
        return true;
    const char *auth =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    return auth && strncmp(auth, "Bearer ", 7) == 0 && token_matches(h->token, auth + 7);
}

static int64_t unix_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status, const char *type,
                             char *body, enum MHD_ResponseMemoryMode mode)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(strlen(body), body, mode);
    if (!resp) {
        if (mode == MHD_RESPMEM_MUST_FREE)
            free(body);
        return MHD_NO;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    enum MHD_Result rc = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return rc;
}

static enum MHD_Result reply_text(struct MHD_Connection *conn, unsigned status,
                                  const char *text)
{
    /* Literals outlive the response, so MHD may keep a reference to them. */
    return reply(conn, status, "text/plain; charset=utf-8", (char *)text,
                 MHD_RESPMEM_PERSISTENT);
}

static enum MHD_Result serve_metrics(rd_metrics_http *h, struct MHD_Connection *conn)
{
    char *body = rd_metrics_render(h->metrics, h->lister, h->lister_ctx, unix_now_ms());
    if (!body)
        return reply_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
    return reply(conn, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", body,
                 MHD_RESPMEM_MUST_FREE);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
                              const char *method, const char *version,
                              const char *upload_data, size_t *upload_data_size,
                              void **con_cls)
{
    rd_metrics_http *h = cls;
    bool is_metrics = strcmp(url, "/metrics") == 0;
    bool is_health = strcmp(url, "/healthz") == 0;
    bool is_ready = h->serving && strcmp(url, "/readyz") == 0;
    if (!is_metrics && !is_health && !is_ready)
        return reply_text(conn, MHD_HTTP_NOT_FOUND, "not found\n");
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return reply_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
    if (is_health)
        return reply_text(conn, MHD_HTTP_OK, "ok\n");
    if (is_ready)
        return h->serving(h->serving_ctx)
                   ? reply_text(conn, MHD_HTTP_OK, "serving\n")
                   : reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "not serving\n");
    if (!authorized(h, conn))
        return reply_text(conn, MHD_HTTP_UNAUTHORIZED, "bearer token required\n");
    return serve_metrics(h, conn);
}

/* "host:port", "[v6]:port" or ":port" into an address to bind. */
static int resolve_listen(const char *listen, struct sockaddr_storage *addr, rd_status *st)
{
    const char *colon = listen ? strrchr(listen, ':') : NULL;
    if (!colon || !colon[1])
        return rd_status_set(st, RD_ERR_INVALID, "metrics.listen: '%s' is not host:port",
                             listen ? listen : "");
    char host[256], port[16];
    const char *h = listen;
    size_t hlen = (size_t)(colon - listen);
    if (hlen >= 2 && h[0] == '[' && h[hlen - 1] == ']') {
        h++;
        hlen -= 2;
    }
    char *end;
    long p = strtol(colon + 1, &end, 10);
    if (*end || p < 0 || p > 65535 || hlen >= sizeof host)
        return rd_status_set(st, RD_ERR_INVALID, "metrics.listen: bad port or host in '%s'",
                             listen);
    snprintf(host, sizeof host, "%.*s", (int)hlen, h);
    snprintf(port, sizeof port, "%ld", p);

    struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    int rc = getaddrinfo(host[0] && strcmp(host, "*") != 0 ? host : NULL, port, &hints, &res);
    if (rc != 0)
        return rd_status_set(st, RD_ERR_INVALID, "metrics.listen: cannot resolve '%s': %s",
                             host, gai_strerror(rc));
    /* With no host, AI_PASSIVE may list :: first; prefer IPv4 for "any". */
    struct addrinfo *pick = res;
    for (struct addrinfo *ai = res; ai && !host[0]; ai = ai->ai_next)
        if (ai->ai_family == AF_INET) {
            pick = ai;
            break;
        }
    memcpy(addr, pick->ai_addr, pick->ai_addrlen);
    freeaddrinfo(res);
    return RD_OK;
}

rd_metrics_http *rd_metrics_http_start(rd_metrics *m, const char *listen, rd_breaker_lister lister,
                                       void *lister_ctx, const rd_metrics_http_limits *limits,
                                       rd_status *st)
{
    const rd_metrics_http_limits *lim = limits ? limits : &DEFAULT_LIMITS;
    struct sockaddr_storage addr;
    if (!m) {
        rd_status_set(st, RD_ERR_INVALID, "metrics: no metrics to serve");
        return NULL;
    }
    if (resolve_listen(listen, &addr, st) != RD_OK)
        return NULL;
    rd_metrics_http *h = calloc(1, sizeof *h);
    if (!h) {
        rd_status_set(st, RD_ERR_NOMEM, "metrics: out of memory");
        return NULL;
    }
    *h = (rd_metrics_http){.metrics = m, .lister = lister, .lister_ctx = lister_ctx,
                           .serving = lim->serving, .serving_ctx = lim->serving_ctx};
    if (lim->token && !(h->token = strdup(lim->token))) {
        free(h);
        rd_status_set(st, RD_ERR_NOMEM, "metrics: out of memory");
        return NULL;
    }
    unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD;
    if (addr.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    const struct sockaddr *sa = (const struct sockaddr *)&addr;
    uint16_t port = ntohs(addr.ss_family == AF_INET6
                              ? ((const struct sockaddr_in6 *)sa)->sin6_port
                              : ((const struct sockaddr_in *)sa)->sin_port);
    h->daemon = MHD_start_daemon(flags, port, NULL, NULL, handle, h,
                                 MHD_OPTION_SOCK_ADDR, sa,
                                 MHD_OPTION_CONNECTION_LIMIT, lim->max_connections,
                                 MHD_OPTION_PER_IP_CONNECTION_LIMIT, lim->max_connections_per_ip,
                                 MHD_OPTION_CONNECTION_TIMEOUT,
                                 (unsigned)((lim->connection_timeout_ms + 999) / 1000),
                                 MHD_OPTION_THREAD_POOL_SIZE, lim->threads,
                                 MHD_OPTION_END);
    if (!h->daemon) {
        rd_status_set(st, RD_ERR_UNAVAILABLE, "metrics.listen: cannot listen on '%s'", listen);
        free_token(h->token);
        free(h);
        return NULL;
    }
    return h;
}

int rd_metrics_http_port(const rd_metrics_http *h)
{
    if (!h)
        return -1;
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? (int)info->port : -1;
}

void rd_metrics_http_stop(rd_metrics_http *h)
{
    if (!h)
        return;
    MHD_stop_daemon(h->daemon);
    free_token(h->token);
    free(h);
}
