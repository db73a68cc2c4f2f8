/* The metrics HTTP endpoint (ops/metrics): /metrics and /healthz over a raw
 * socket, 404 and 405 answers, and listen addresses refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "metrics_exposition.h"

/* One HTTP/1.0 request over a raw socket; the whole response, malloc'd. */
static char *http_request(int port, const char *method, const char *path)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    char req[256];
    int n = snprintf(req, sizeof req, "%s %s HTTP/1.0\r\nHost: localhost\r\n\r\n", method, path);
    assert_int_equal(write(fd, req, (size_t)n), n);
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    ssize_t got;
    while ((got = read(fd, buf + len, cap - len - 1)) > 0) {
        len += (size_t)got;
        if (cap - len < 1024)
            buf = realloc(buf, cap *= 2);
    }
    buf[len] = '\0';
    close(fd);
    return buf;
}

static int status_of(const char *response)
{
    int status = 0;
    sscanf(response, "HTTP/1.%*d %d", &status);
    return status;
}

static void test_http_endpoint(void **state)
{
    rd_metrics *m = rd_metrics_new(10);
    rd_decision d = decision(RD_ACTION_RETRY, RD_TRANSIENT, NULL, 0);
    rd_metrics_decision(m, "web", &d);
    rd_status st = {0};
    rd_metrics_http *h = rd_metrics_http_start(m, "127.0.0.1:0", fake_breakers, NULL, NULL, &st);
    assert_non_null(h);
    int port = rd_metrics_http_port(h);
    assert_true(port > 0 && port < 65536);

    char *r = http_request(port, "GET", "/metrics");
    assert_int_equal(status_of(r), 200);
    assert_non_null(strstr(r, "text/plain; version=0.0.4"));
    char *body = strstr(r, "\r\n\r\n");
    assert_non_null(body);
    parse_exposition(body + 4);
    assert_sample(body + 4, "recoveryd_tool_retries_total{tool=\"web\"}", 1);
    assert_sample(body + 4, "recoveryd_breaker_state{tool=\"open-tool\",state=\"open\"}", 1);
    free(r);

    r = http_request(port, "GET", "/healthz");
    assert_int_equal(status_of(r), 200);
    assert_non_null(strstr(r, "\r\n\r\nok"));
    free(r);

    r = http_request(port, "GET", "/nope");
    assert_int_equal(status_of(r), 404);
    free(r);

    r = http_request(port, "POST", "/metrics");
    assert_int_equal(status_of(r), 405);
    assert_non_null(strstr(r, "Allow: GET, HEAD"));
    free(r);

    r = http_request(port, "DELETE", "/healthz");
    assert_int_equal(status_of(r), 405);
    free(r);

    rd_metrics_http_stop(h);
    rd_metrics_http_stop(NULL);
    rd_metrics_free(m);
}

static void test_http_bad_listen(void **state)
{
    rd_metrics *m = rd_metrics_new(10);
    rd_status st = {0};
    assert_null(rd_metrics_http_start(m, "no-port", NULL, NULL, NULL, &st));
    assert_int_equal(st.code, RD_ERR_INVALID);
    assert_non_null(strstr(st.msg, "metrics.listen"));
    assert_null(rd_metrics_http_start(m, "127.0.0.1:70000", NULL, NULL, NULL, &st));
    assert_int_equal(st.code, RD_ERR_INVALID);

    /* A port already taken is refused, naming the address. */
    rd_metrics_http *first = rd_metrics_http_start(m, "127.0.0.1:0", NULL, NULL, NULL, &st);
    assert_non_null(first);
    char taken[64];
    snprintf(taken, sizeof taken, "127.0.0.1:%d", rd_metrics_http_port(first));
    assert_null(rd_metrics_http_start(m, taken, NULL, NULL, NULL, &st));
    assert_int_equal(st.code, RD_ERR_UNAVAILABLE);
    assert_non_null(strstr(st.msg, taken));
    rd_metrics_http_stop(first);
    rd_metrics_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_http_endpoint),
        cmocka_unit_test(test_http_bad_listen),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
