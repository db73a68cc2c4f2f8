/* One OTLP/HTTP request: connect, POST the batch, read the status line
 * (see otlp_internal.h). A connection per batch: batches are seconds
 * apart, and a collector restarted in between costs nothing. */
#include "ops/otlp_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

bool otlp_endpoint_parse(const char *url, otlp_endpoint *out)
{
    if (strncmp(url, "http://", 7) != 0)
        return false;
    const char *host = url + 7, *colon = strchr(host, ':');
    if (!colon || colon == host)
        return false;
    const char *slash = strchr(colon, '/');
    size_t host_len = (size_t)(colon - host);
    size_t port_len = slash ? (size_t)(slash - colon - 1) : strlen(colon + 1);
    const char *path = slash ? slash : "/";
    if (host_len >= sizeof out->host || port_len == 0 || port_len >= sizeof out->port ||
        strlen(path) >= sizeof out->path)
        return false;
    memcpy(out->host, host, host_len);
    out->host[host_len] = '\0';
    memcpy(out->port, colon + 1, port_len);
    out->port[port_len] = '\0';
    snprintf(out->path, sizeof out->path, "%s", path);
    return true;
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits for `events` on fd until the deadline; false on timeout or error. */
static bool wait_for(int fd, short events, int64_t deadline_ms)
{
    for (;;) {
        int64_t left = deadline_ms - mono_ms();
        if (left <= 0)
            return false;
        struct pollfd p = {.fd = fd, .events = events};
        int rc = poll(&p, 1, (int)left);
        if (rc > 0)
            return (p.revents & (events | POLLHUP)) != 0 && !(p.revents & POLLNVAL);
        if (rc < 0 && errno != EINTR)
            return false;
    }
}

static int connect_by(const otlp_endpoint *ep, int64_t deadline_ms)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res;
    if (getaddrinfo(ep->host, ep->port, &hints, &res) != 0)
        return -1;
    int fd = -1;
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0)
            continue;
        int err = 0;
        socklen_t len = sizeof err;
        if (connect(fd, a->ai_addr, a->ai_addrlen) != 0 &&
            (errno != EINPROGRESS || !wait_for(fd, POLLOUT, deadline_ms) ||
             getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0)) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    return fd;
}

static bool send_all(int fd, const char *p, size_t n, int64_t deadline_ms)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w > 0) {
            p += w;
            n -= (size_t)w;
        } else if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
            if (!wait_for(fd, POLLOUT, deadline_ms))
                return false;
        } else {
            return false;
        }
    }
    return true;
}

/* The status code of the answer's first line, or 0. */
static int read_status(int fd, int64_t deadline_ms)
{
    char buf[256];
    size_t got = 0;
    while (got < sizeof buf - 1 && !memchr(buf, '\n', got)) {
        ssize_t r = recv(fd, buf + got, sizeof buf - 1 - got, 0);
        if (r > 0)
            got += (size_t)r;
        else if (r < 0 && (errno == EAGAIN || errno == EINTR)) {
            if (!wait_for(fd, POLLIN, deadline_ms))
                return 0;
        } else {
            break;
        }
    }
    buf[got] = '\0';
    int status = 0;
    return sscanf(buf, "HTTP/1.%*d %d", &status) == 1 ? status : 0;
}

bool otlp_http_post(const otlp_endpoint *ep, const char *body, size_t len, int64_t timeout_ms)
{
    int64_t deadline = mono_ms() + timeout_ms;
    int fd = connect_by(ep, deadline);
    if (fd < 0)
        return false;
    char head[1200];
    int n = snprintf(head, sizeof head,
                     "POST %s HTTP/1.1\r\nHost: %s:%s\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                     ep->path, ep->host, ep->port, len);
    bool ok = n > 0 && (size_t)n < sizeof head && send_all(fd, head, (size_t)n, deadline) &&
              send_all(fd, body, len, deadline);
    int status = ok ? read_status(fd, deadline) : 0;
    close(fd);
    return status >= 200 && status < 300;
}
