/* recoveryd: the recovery-decision service.
 *
 *   recoveryd --config FILE [--listen HOST:PORT] [--check-config]
 *
 * Startup: load and validate the config (exit 1 with file:line on error),
 * create the store, start the gRPC server, then wait for signals.
 * Signals are blocked in every thread and taken synchronously here with
 * sigtimedwait, so no code runs in signal context at all.
 *
 * Shutdown on SIGTERM/SIGINT, in this order:
 *   1. the server stops accepting calls; in-flight calls finish within
 *      server.shutdown_grace_ms, the rest are cancelled (transport/server.h);
 *   2. worker threads are joined (nothing touches the engine after this);
 *   3. store, config and the gRPC library are released. */
#include <errno.h>
#include <grpc/grpc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config/config.h"
#include "core/decide.h"
#include "core/log.h"
#include "store/factory.h"
#include "transport/server.h"

#define VERSION "0.1.0"

typedef struct options {
    const char *config_path;
    const char *listen;          /* overrides server.listen */
    bool check_only;
} options;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: recoveryd --config FILE [--listen HOST:PORT] [--check-config]\n"
            "  --config FILE       main configuration (e.g. config/recovery.yaml)\n"
            "  --listen HOST:PORT  listen here instead of server.listen\n"
            "  --check-config      validate the configuration and exit (0 = valid)\n"
            "  --version           print the version and exit\n");
}

/* Returns -1 to continue, else the exit code. */
static int parse_args(int argc, char **argv, options *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--config") && i + 1 < argc) {
            o->config_path = argv[++i];
        } else if (!strcmp(a, "--listen") && i + 1 < argc) {
            o->listen = argv[++i];
        } else if (!strcmp(a, "--check-config")) {
            o->check_only = true;
        } else if (!strcmp(a, "--version")) {
            printf("recoveryd %s\n", VERSION);
            return 0;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "recoveryd: unknown or incomplete argument '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (!o->config_path) {
        fprintf(stderr, "recoveryd: --config FILE is required\n");
        usage(stderr);
        return 2;
    }
    return -1;
}

static int64_t monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t unix_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits for SIGTERM/SIGINT, evicting idle store entries on the way. */
static int wait_for_stop(const sigset_t *stop, rd_store *store, int64_t evict_interval_ms)
{
    int64_t next_evict = monotonic_ms() + evict_interval_ms;
    for (;;) {
        struct timespec tick = {.tv_sec = 0, .tv_nsec = 200 * 1000000L};
        int sig = sigtimedwait(stop, NULL, &tick);
        if (sig > 0)
            return sig;
        if (sig < 0 && errno != EAGAIN && errno != EINTR)
            return SIGTERM;
        if (monotonic_ms() >= next_evict) {
            store->ops->evict(store, unix_ms());
            next_evict = monotonic_ms() + evict_interval_ms;
        }
    }
}

static void log_listening(const char *listen, int port)
{
    char fields[512] = "";
    char port_text[16];
    snprintf(port_text, sizeof port_text, "%d", port);
    rd_log_kv(fields, sizeof fields, "listen", listen);
    rd_log_kv(fields, sizeof fields, "port", port_text);
    rd_log_kv(fields, sizeof fields, "version", VERSION);
    rd_log(RD_LOG_INFO, "serving", fields);
}

static int serve(const rd_config *cfg, const char *listen)
{
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop, NULL); /* before any thread exists */

    rd_status st = {0};
    rd_store *store = rd_store_from_config(cfg, &st);
    if (!store) {
        fprintf(stderr, "recoveryd: %s\n", st.msg);
        return 1;
    }
    grpc_init();
    rd_engine engine = {.config = cfg, .store = store};
    rd_server_options opt = {.listen = listen, .workers = cfg->server.workers,
                             .max_receive_bytes = cfg->server.max_receive_bytes};
    rd_server *server = rd_server_start(&opt, &engine, &st);
    if (!server) {
        fprintf(stderr, "recoveryd: %s\n", st.msg);
        grpc_shutdown();
        rd_store_destroy(store);
        return 1;
    }
    log_listening(listen, rd_server_port(server));

    int sig = wait_for_stop(&stop, store, cfg->store.evict_interval_ms);
    rd_log(RD_LOG_INFO, sig == SIGINT ? "SIGINT: shutting down" : "SIGTERM: shutting down", "");
    int cancelled = rd_server_shutdown(server, cfg->server.shutdown_grace_ms);
    rd_server_destroy(server);
    grpc_shutdown();
    rd_store_destroy(store);
    rd_log(RD_LOG_INFO, cancelled ? "stopped (grace period ran out; calls cancelled)" : "stopped", "");
    return 0;
}

int main(int argc, char **argv)
{
    options o = {0};
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0)
        return rc;

    char err[RD_CONFIG_ERR_MAX];
    rd_config *cfg = rd_config_load(o.config_path, err, sizeof err);
    if (!cfg) {
        fprintf(stderr, "recoveryd: invalid configuration: %s\n", err);
        return 1;
    }
    if (o.check_only) {
        printf("%s: configuration is valid (%zu tools, %zu rules)\n", o.config_path, cfg->n_tools,
               cfg->rules.n_rules);
        rd_config_free(cfg);
        return 0;
    }
    rc = serve(cfg, o.listen ? o.listen : cfg->server.listen);
    rd_config_free(cfg);
    return rc;
}
