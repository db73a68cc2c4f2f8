/* recoveryd: the recovery-decision service.
 *
 *   recoveryd --config FILE [--listen HOST:PORT] [--check-config]
 *   recoveryd --config-keys      (every configuration key, as Markdown)
 *
 * Startup: load and validate the config (exit 1 with file:line on error),
 * create the store, metrics, health and watch bus, start the gRPC server
 * and the metrics endpoint, report SERVING, then wait for signals.
 * Signals are blocked in every thread and taken synchronously here with
 * sigtimedwait, so no code runs in signal context at all.
 *
 * SIGHUP (and, with reload.watch, a change in the config directory)
 * reloads the configuration (ops/reload.h).
 *
 * Shutdown on SIGTERM/SIGINT, in this order (docs/OPERATIONS.md):
 *   1. health reports NOT_SERVING (watchers are told);
 *   2. server.drain_delay_ms passes while calls are still served, so load
 *      balancers take the replica out first;
 *   3. streams finish, the server stops accepting calls, in-flight calls
 *      finish within server.shutdown_grace_ms, the rest are cancelled
 *      (transport/server.h);
 *   4. worker threads are joined (nothing touches the engine after this);
 *   5. the metrics endpoint stops; store, config and gRPC are released. */
#include <errno.h>
#include <grpc/grpc.h>
#include <grpc/support/log.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config/config.h"
#include "engine/decide.h"
#include "domain/log.h"
#include "ops/breaker_snapshot.h"
#include "ops/health.h"
#include "ops/heap.h"
#include "ops/live_config.h"
#include "ops/metrics.h"
#include "ops/otlp.h"
#include "ops/reload.h"
#include "ops/store_follow.h"
#include "ops/watch.h"
#include "store/factory.h"
#include "transport/server.h"
#include "platform/clock.h"

#ifndef VERSION /* set by the build from the top-level VERSION file */
#error "VERSION must be defined by the build (CMakeLists.txt reads the VERSION file)"
#endif
#define RD_WATCH_QUEUE 256 /* changes a slow watch stream may fall behind */

typedef struct options {
    const char *config_path;
    const char *listen;          /* overrides server.listen */
    bool check_only;
} options;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: recoveryd --config FILE|DIR [--listen HOST:PORT] [--check-config]\n"
            "  --config FILE       main configuration (e.g. config/recovery.yaml), then the\n"
            "                      drop-in fragments beside it (recovery.d/*.yaml)\n"
            "  --config DIR        the same for DIR/recovery.yaml\n"
            "  --listen HOST:PORT  listen here instead of server.listen\n"
            "  --check-config      validate the configuration and exit (0 = valid)\n"
            "  --config-keys       print every configuration key as Markdown and exit\n"
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
        } else if (!strcmp(a, "--config-keys")) {
            rd_config_keys_markdown(stdout);
            return fflush(stdout) == 0 ? 0 : 1;
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

typedef struct runtime {
    rd_services svc;
    rd_server *server;
    rd_metrics_http *metrics_http;
    rd_store *shared_store;      /* the backend replicas share (borrowed from svc.store), or NULL */
    rd_breaker_snapshot *breakers; /* shared store: what /metrics lists */
    rd_config_watch *watch;      /* NULL: reload.watch is off or unavailable */
    const char *config_path;
    bool degraded;               /* last seen state of the shared store */
    bool auth_refused;           /* last seen: Redis refuses our password */
    int64_t tls_not_after;       /* last seen notAfter of the server certificate */
    int64_t tls_next_warning_ms; /* when an expiring certificate is mentioned again */
    uint64_t store_errors;       /* store errors already counted in the metrics */
} runtime;

/* The endpoint lists breakers through the store at scrape time. */
static int list_store_breakers(void *ctx, int64_t now_ms, rd_store_visit visit, void *visit_ctx)
{
    rd_store *store = ctx;
    rd_status st;
    return store->ops->list(store, now_ms, visit, visit_ctx, &st);
}

/* Carries the shared store's health into the metrics and the log; the
 * store itself knows nothing of either. Only a resilient (Redis) store ever
 * reports degraded or errors. */
static void sync_store_health(runtime *rt)
{
    rd_store_report report;
    rd_store_report_of(rt->svc.store, &report);
    if (report.shared)
        rd_metrics_set_shared_store(rt->svc.metrics, &(rd_shared_store_counts){
                                                         .cache_answers = report.cache_answers,
                                                         .cache_reads = report.cache_reads,
                                                         .outcomes_batched = report.outcomes_batched,
                                                         .outcomes_dropped = report.outcomes_dropped,
                                                         .auth_refused = report.auth_refused,
                                                     });
    if (report.auth_refused != rt->auth_refused) {
        rt->auth_refused = report.auth_refused;
        char fields[RD_LOG_VALUE_MAX + 64] = "";
        rd_log_kv(fields, sizeof fields, "reason", report.last_error);
        if (report.auth_refused)
            rd_log(RD_LOG_ERROR, "Redis refuses the configured password (store.redis.password_*)",
                   fields);
        else
            rd_log(RD_LOG_INFO, "Redis accepts the configured password again", "");
    }
    bool degraded = report.degraded;
    uint64_t errors = report.errors;
    for (; rt->store_errors < errors; rt->store_errors++)
        rd_metrics_store_error(rt->svc.metrics);
    if (degraded == rt->degraded)
        return;
    rt->degraded = degraded;
    rd_metrics_set_degraded(rt->svc.metrics, degraded);
    if (degraded) {
        char fields[RD_LOG_VALUE_MAX + 64] = "";
        rd_log_kv(fields, sizeof fields, "reason", report.last_error);
        rd_log(RD_LOG_WARN, "shared store unreachable: answering from local state (degraded)",
               fields);
    }
    else
        rd_log(RD_LOG_INFO, "shared store reachable again: shared state resumed", "");
}

/* The certificate's expiry as a metric, and in the log from 14 days before
 * it (once a day; at error level once it has passed): a certificate that
 * is not renewed ends every client's connection at once. */
#define TLS_WARN_BEFORE_S (14 * 24 * 3600)
#define TLS_WARN_EVERY_MS (24 * 3600 * 1000LL)

static void watch_certificate(runtime *rt)
{
    int64_t not_after = rd_server_tls_not_after(rt->server);
    if (not_after <= 0)
        return;
    int64_t now_ms = rd_clock_mono_ms();
    if (not_after != rt->tls_not_after) {
        rt->tls_not_after = not_after;
        rt->tls_next_warning_ms = now_ms; /* a new certificate is judged at once */
        rd_metrics_set_tls_not_after(rt->svc.metrics, not_after);
    }
    int64_t left_s = not_after - rd_clock_unix_ms() / 1000;
    if (left_s > TLS_WARN_BEFORE_S || now_ms < rt->tls_next_warning_ms)
        return;
    rt->tls_next_warning_ms = now_ms + TLS_WARN_EVERY_MS;
    char fields[256] = "", text[32];
    snprintf(text, sizeof text, "%lld", (long long)not_after);
    rd_log_kv(fields, sizeof fields, "not_after_unix", text);
    snprintf(text, sizeof text, "%lld", (long long)(left_s / 86400));
    rd_log_kv(fields, sizeof fields, "days_left", text);
    if (left_s <= 0)
        rd_log(RD_LOG_ERROR, "the server's TLS certificate has expired: clients refuse it; "
               "replace server.tls.cert_file (picked up without a restart)", fields);
    else
        rd_log(RD_LOG_WARN, "the server's TLS certificate expires soon; replace "
               "server.tls.cert_file (picked up without a restart)", fields);
}

/* Waits for SIGTERM/SIGINT; meanwhile reloads on SIGHUP or a config
 * directory change, evicts idle store entries, reports store health and
 * returns memory freed after a burst (ops/heap.h). */
static int wait_for_stop(runtime *rt, const sigset_t *signals, int64_t evict_interval_ms)
{
    int64_t next_evict = rd_clock_mono_ms() + evict_interval_ms;
    rd_heap_trimmer heap = {0};
    for (;;) {
        struct timespec tick = {.tv_sec = 0, .tv_nsec = 50 * 1000000L};
        int sig = sigtimedwait(signals, NULL, &tick);
        if (sig == SIGHUP)
            rd_reload(rt->svc.config, rt->svc.metrics, rt->config_path, "SIGHUP");
        else if (sig > 0)
            return sig;
        else if (errno != EAGAIN && errno != EINTR)
            return SIGTERM;
        if (rt->watch && rd_config_watch_due(rt->watch, rd_clock_mono_ms()))
            rd_reload(rt->svc.config, rt->svc.metrics, rt->config_path, "file change");
        sync_store_health(rt);
        watch_certificate(rt);
        rd_heap_tick(&heap, rd_clock_mono_ms());
        if (rd_clock_mono_ms() >= next_evict) {
            rt->svc.store->ops->evict(rt->svc.store, rd_clock_unix_ms());
            next_evict = rd_clock_mono_ms() + evict_interval_ms;
        }
    }
}

static void log_listening(const char *listen, int port, const rd_metrics_http *http)
{
    char fields[512] = "";
    char text[16];
    snprintf(text, sizeof text, "%d", port);
    rd_log_kv(fields, sizeof fields, "listen", listen);
    rd_log_kv(fields, sizeof fields, "port", text);
    if (http) {
        snprintf(text, sizeof text, "%d", rd_metrics_http_port(http));
        rd_log_kv(fields, sizeof fields, "metrics_port", text);
    }
    rd_log_kv(fields, sizeof fields, "version", VERSION);
    rd_log(RD_LOG_INFO, "serving", fields);
}

static rd_server_options server_options(const rd_config *cfg, const char *listen)
{
    const rd_server_config *s = &cfg->server;
    return (rd_server_options){
        .listen = listen,
        .workers = s->workers,
        .max_receive_bytes = s->max_receive_bytes,
        .max_connection_age_ms = s->max_connection_age_ms,
        .max_connection_age_grace_ms = s->max_connection_age_grace_ms,
        .keepalive_time_ms = s->keepalive_time_ms,
        .keepalive_timeout_ms = s->keepalive_timeout_ms,
        .max_concurrent_streams = s->max_concurrent_streams,
        .memory_limit_bytes = s->memory_limit_bytes,
        .handshake_timeout_ms = s->handshake_timeout_ms,
        .max_connection_idle_ms = s->max_connection_idle_ms,
        .accept_compressed = s->accept_compressed,
        .max_unsent_answer_bytes = s->max_unsent_answer_bytes,
        .tls_cert_file = s->tls.cert_file,
        .tls_key_file = s->tls.key_file,
        .tls_client_ca_file = s->tls.client_ca_file,
    };
}

/* Store, metrics, health, watch bus and the live config: everything the
 * server borrows. Takes ownership of cfg (even on failure). */
static int services_create(rd_services *svc, rd_store **shared, rd_config *cfg, rd_status *st)
{
    *svc = (rd_services){0};
    svc->store = rd_store_from_config(&cfg->store, &cfg->learning, cfg->server.workers, shared,
                                      st);
    svc->metrics = rd_metrics_new(cfg->metrics.max_tools);
    rd_metrics_set_build_info(svc->metrics, VERSION);
    svc->health = rd_health_new();
    svc->watch = rd_watch_bus_new(RD_WATCH_QUEUE);
    svc->config = rd_live_config_new(cfg);
    if (!svc->store)
        return st->code;
    if (!svc->metrics || !svc->health || !svc->watch || !svc->config)
        return rd_status_set(st, RD_ERR_NOMEM, "out of memory starting up");
    svc->otlp = rd_otlp_start(&cfg->otlp, svc->metrics, st);
    if (!svc->otlp && cfg->otlp.endpoint)
        return st->code;
    /* A shared store reports every replica's breaker changes to the watch
     * bus; then the transport leaves those changes to it. */
    svc->follower = rd_store_follow_start(svc);
    svc->follows_store_changes = svc->follower != NULL;
    return RD_OK;
}

static void services_free(rd_services *svc)
{
    rd_store_follow_stop(svc->follower); /* before the store and bus it uses */
    rd_otlp_stop(svc->otlp);             /* before the metrics it counts in */
    rd_live_config_free(svc->config);
    rd_watch_bus_free(svc->watch);
    rd_health_free(svc->health);
    rd_metrics_free(svc->metrics);
    rd_store_destroy(svc->store);
}

static bool api_serving(void *health)
{
    return rd_health_status_of(health, "recovery.v1.RecoveryService") == RD_HEALTH_SERVING;
}

/* A metrics port that cannot be bound is logged, not fatal: the decisions
 * executors wait for matter more than their counters. */
static void start_metrics_endpoint(runtime *rt, const char *listen)
{
    if (!listen)
        return; /* metrics.listen: "" */
    rd_status st = {0};
    rd_config_snap *snap = rd_live_config_acquire(rt->svc.config);
    const rd_metrics_config *mc = &snap->cfg->metrics;
    rd_metrics_http_limits limits = {
        .max_connections = mc->max_connections,
        .max_connections_per_ip = mc->max_connections_per_ip,
        .threads = mc->threads,
        .connection_timeout_ms = mc->connection_timeout_ms,
        .token = mc->token,
        .serving = api_serving,
        .serving_ctx = rt->svc.health};
    /* Redis itself, not the degraded-mode wrapper: a listing that fails
     * keeps the previous snapshot rather than counting as an outage. */
    if (mc->breaker_refresh_ms > 0 && rt->shared_store)
        rt->breakers = rd_breaker_snapshot_start(rt->shared_store, mc->breaker_refresh_ms);
    rt->metrics_http = rd_metrics_http_start(
        rt->svc.metrics, listen, rt->breakers ? rd_breaker_snapshot_list : list_store_breakers,
        rt->breakers ? (void *)rt->breakers : (void *)rt->svc.store, &limits, &st);
    rd_config_snap_release(snap);
    if (!rt->metrics_http) {
        char fields[RD_STATUS_MSG_MAX + 64] = "";
        rd_log_kv(fields, sizeof fields, "error", st.msg);
        rd_log(RD_LOG_ERROR, "metrics endpoint not started; serving without it", fields);
    }
}

/* The shutdown order of docs/OPERATIONS.md: NOT_SERVING, drain delay, stop
 * accepting and finish in-flight calls within the grace period, cancel
 * what remains, release everything. */
static void shut_down(runtime *rt, int sig)
{
    rd_health_set_serving(rt->svc.health, false);
    rd_config_snap *snap = rd_live_config_acquire(rt->svc.config);
    int64_t drain_ms = snap->cfg->server.drain_delay_ms;
    int64_t grace_ms = snap->cfg->server.shutdown_grace_ms;
    rd_config_snap_release(snap);
    rd_log(RD_LOG_INFO, sig == SIGINT ? "SIGINT: shutting down" : "SIGTERM: shutting down", "");
    if (drain_ms > 0) {
        struct timespec d = {.tv_sec = drain_ms / 1000, .tv_nsec = (drain_ms % 1000) * 1000000L};
        while (nanosleep(&d, &d) != 0 && errno == EINTR)
            ;
    }
    rd_shutdown_outcome outcome = rd_server_shutdown(rt->server, grace_ms);
    rd_server_destroy(rt->server);
    rd_metrics_http_stop(rt->metrics_http);
    rd_breaker_snapshot_stop(rt->breakers); /* after the endpoint that reads it */
    rd_config_watch_free(rt->watch);
    rd_log(RD_LOG_INFO,
           outcome == RD_SHUTDOWN_GRACE_RAN_OUT       ? "stopped (grace period ran out; calls cancelled)"
           : outcome == RD_SHUTDOWN_UNTAKEN_CANCELLED ? "stopped (every call taken was answered; "
                                                        "calls not handed over were cancelled)"
                                                      : "stopped",
           "");
}

/* gRPC's own messages (a refused compressed request, a broken handshake)
 * as our JSON lines, not its text format on stderr. */
static void log_from_grpc(gpr_log_func_args *args)
{
    char fields[RD_LOG_VALUE_MAX + 64] = "", line[16];
    snprintf(line, sizeof line, "%d", args->line);
    rd_log_kv(fields, sizeof fields, "source", args->file);
    rd_log_kv(fields, sizeof fields, "line", line);
    rd_log_kv(fields, sizeof fields, "detail", args->message);
    rd_log(args->severity == GPR_LOG_SEVERITY_ERROR   ? RD_LOG_ERROR
           : args->severity == GPR_LOG_SEVERITY_INFO ? RD_LOG_INFO
                                                     : RD_LOG_DEBUG,
           "grpc", fields);
}

/* Runs the service until SIGTERM/SIGINT. Takes ownership of cfg. */
static int serve(rd_config *cfg, const char *listen)
{
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &signals, NULL); /* before any thread exists */

    runtime rt = {.config_path = cfg->path};
    rd_status st = {0};
    char *path = strdup(cfg->path), *metrics_listen = cfg->metrics.listen ? strdup(cfg->metrics.listen) : NULL;
    int64_t evict_ms = cfg->store.evict_interval_ms;
    rd_server_options opt = server_options(cfg, listen);
    rt.config_path = path;
    rt.watch = cfg->reload_watch ? rd_config_watch_new(cfg) : NULL;
    gpr_set_log_function(log_from_grpc);
    grpc_init();
    /* cfg belongs to rt.svc.config now */
    int rc = services_create(&rt.svc, &rt.shared_store, cfg, &st);
    if (rc == RD_OK && !(rt.server = rd_server_start(&opt, &rt.svc, &st)))
        rc = st.code;
    if (rc == RD_OK)
        start_metrics_endpoint(&rt, metrics_listen);
    if (rc != RD_OK) {
        fprintf(stderr, "recoveryd: %s\n", st.msg);
        rd_server_destroy(rt.server);
        rd_config_watch_free(rt.watch);
    } else {
        rd_health_set_serving(rt.svc.health, true);
        log_listening(opt.listen, rd_server_port(rt.server), rt.metrics_http);
        shut_down(&rt, wait_for_stop(&rt, &signals, evict_ms));
    }
    services_free(&rt.svc);
    grpc_shutdown();
    free(path);
    free(metrics_listen);
    return rc == RD_OK ? 0 : 1;
}

/* Under load the worker's heap grew and was trimmed back around each
 * call's allocations (most of them gRPC's call arena), and every regrowth
 * faulted its pages in again: 25 to 230 minor page faults per 1,000 calls
 * at saturation, varying from run to run. Freed memory is kept up to 64 MiB
 * and the heap grows by 1 MiB at a time, so the same pages are reused. */
static void keep_heap_pages(void)
{
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
    mallopt(M_TOP_PAD, 1 << 20);
}

/* Protected mode, as Redis has it: a server without server.auth answers
 * anyone who reaches it, and one reachable from other hosts can have every
 * breaker of the fleet opened. Unless the configuration says it may
 * (server.allow_unauthenticated), it listens on loopback only, on the
 * port it was given. Returns the address to listen on (malloc'd). */
static char *protected_listen(const rd_config *cfg, const char *wanted)
{
    if (cfg->server.auth_token || cfg->server.n_tenants || cfg->server.allow_unauthenticated ||
        rd_config_listen_is_local(wanted))
        return strdup(wanted);
    const char *colon = strrchr(wanted, ':');
    char local[64];
    snprintf(local, sizeof local, "127.0.0.1:%s", colon ? colon + 1 : "50051");
    char fields[512] = "";
    rd_log_kv(fields, sizeof fields, "configured", wanted);
    rd_log_kv(fields, sizeof fields, "listen", local);
    rd_log(RD_LOG_WARN,
           "server.auth is not set: listening on loopback only; set server.auth, or "
           "server.allow_unauthenticated: true to serve without a token on other addresses",
           fields);
    return strdup(local);
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
    rd_config_apply_process_settings(cfg);
    keep_heap_pages();
    char *listen = protected_listen(cfg, o.listen ? o.listen : cfg->server.listen);
    rc = listen ? serve(cfg, listen) : 1; /* serve owns cfg */
    if (!listen)
        rd_config_free(cfg);
    free(listen);
    return rc;
}
