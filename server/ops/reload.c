/* Hot reload (see reload.h). */
#include "ops/reload.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "config/config_merge.h"
#include "domain/log.h"

#define DEBOUNCE_MS 200
#define WATCH_EVENTS (IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CLOSE_WRITE)

void rd_config_apply_process_settings(const rd_config *cfg)
{
    rd_log_set_level((rd_log_level)cfg->log_level);
}

/* ---- keys that need a restart ---- */

static bool str_differs(const char *a, const char *b)
{
    if (!a || !b)
        return a != b;
    return strcmp(a, b) != 0;
}

static void needs_restart(const char *key)
{
    char fields[256] = "";
    rd_log_kv(fields, sizeof fields, "key", key);
    rd_log(RD_LOG_WARN, "changed in the configuration but needs a restart; the running value stays",
           fields);
}

static void check_server_keys(const rd_server_config *a, const rd_server_config *b)
{
    if (str_differs(a->listen, b->listen))
        needs_restart("server.listen");
    if (a->workers != b->workers)
        needs_restart("server.workers");
    if (a->max_receive_bytes != b->max_receive_bytes)
        needs_restart("server.max_receive_bytes");
    if (a->max_connection_age_ms != b->max_connection_age_ms ||
        a->max_connection_age_grace_ms != b->max_connection_age_grace_ms)
        needs_restart("server.max_connection_age_ms");
    if (a->keepalive_time_ms != b->keepalive_time_ms ||
        a->keepalive_timeout_ms != b->keepalive_timeout_ms)
        needs_restart("server.keepalive_time_ms");
    if (a->max_concurrent_streams != b->max_concurrent_streams)
        needs_restart("server.max_concurrent_streams");
    if (a->memory_limit_bytes != b->memory_limit_bytes)
        needs_restart("server.memory_limit_bytes");
    if (a->handshake_timeout_ms != b->handshake_timeout_ms)
        needs_restart("server.handshake_timeout_ms");
    if (a->max_connection_idle_ms != b->max_connection_idle_ms)
        needs_restart("server.max_connection_idle_ms");
    if (a->accept_compressed != b->accept_compressed)
        needs_restart("server.accept_compressed");
    if (a->allow_unauthenticated != b->allow_unauthenticated)
        needs_restart("server.allow_unauthenticated");
    if (a->max_unsent_answer_bytes != b->max_unsent_answer_bytes)
        needs_restart("server.max_unsent_answer_bytes");
    if (str_differs(a->tls.cert_file, b->tls.cert_file) ||
        str_differs(a->tls.key_file, b->tls.key_file) ||
        str_differs(a->tls.client_ca_file, b->tls.client_ca_file))
        needs_restart("server.tls");
}

static bool store_differs(const rd_store_config *a, const rd_store_config *b)
{
    const rd_redis_config *x = &a->redis, *y = &b->redis;
    return a->backend != b->backend || a->max_tools != b->max_tools ||
           a->tool_idle_ttl_ms != b->tool_idle_ttl_ms || a->turn_ttl_ms != b->turn_ttl_ms ||
           a->max_turns != b->max_turns || a->max_events_per_turn != b->max_events_per_turn ||
           a->outcome_ttl_ms != b->outcome_ttl_ms || a->max_outcomes != b->max_outcomes ||
           a->evict_interval_ms != b->evict_interval_ms || str_differs(x->address, y->address) ||
           str_differs(x->password, y->password) || x->db != y->db ||
           str_differs(x->key_prefix, y->key_prefix) ||
           x->command_timeout_ms != y->command_timeout_ms ||
           x->connect_timeout_ms != y->connect_timeout_ms || x->n_sentinels != y->n_sentinels ||
           str_differs(x->master_name, y->master_name) ||
           x->probe_interval_ms != y->probe_interval_ms ||
           x->closed_cache_ms != y->closed_cache_ms ||
           x->outcome_batch_ms != y->outcome_batch_ms || x->read_cache_ms != y->read_cache_ms;
}

/* Logs every key whose new value will not take effect until a restart. */
static void report_restart_keys(const rd_config *old, const rd_config *next)
{
    check_server_keys(&old->server, &next->server);
    if (store_differs(&old->store, &next->store))
        needs_restart("store");
    if (str_differs(old->metrics.listen, next->metrics.listen) ||
        old->metrics.max_tools != next->metrics.max_tools ||
        old->metrics.max_connections != next->metrics.max_connections ||
        old->metrics.max_connections_per_ip != next->metrics.max_connections_per_ip ||
        old->metrics.threads != next->metrics.threads ||
        old->metrics.connection_timeout_ms != next->metrics.connection_timeout_ms ||
        old->metrics.breaker_refresh_ms != next->metrics.breaker_refresh_ms ||
        str_differs(old->metrics.token, next->metrics.token))
        needs_restart("metrics");
    if (old->reload_watch != next->reload_watch)
        needs_restart("reload.watch");
    if (str_differs(old->tools_dir, next->tools_dir))
        needs_restart("tools.directory (watched directory)");
}

static void protection_dropped(const char *key, const char *what)
{
    char fields[256] = "";
    rd_log_kv(fields, sizeof fields, "key", key);
    rd_log_kv(fields, sizeof fields, "effect", what);
    rd_log(RD_LOG_WARN, "a reload removed a protection", fields);
}

/* Protections a reload turns off are worth more than "configuration
 * reloaded": whoever can reach the port may now do more. */
static void report_protections_dropped(const rd_config *old, const rd_config *next)
{
    if (old->server.auth_token && !next->server.auth_token)
        protection_dropped("server.auth",
                           "RecoveryService calls are served without a token from now on");
    if (old->server.admin_token && !next->server.admin_token)
        protection_dropped("server.admin",
                           "AdminService is refused from now on (no admin token configured)");
    if (old->server.tls.cert_file && !next->server.tls.cert_file)
        protection_dropped("server.tls", "plaintext after the next restart");
    else if (old->server.tls.client_ca_file && !next->server.tls.client_ca_file)
        protection_dropped("server.tls.client_ca_file",
                           "clients need no certificate after the next restart");
    if (old->metrics.token && !next->metrics.token)
        protection_dropped("metrics.auth", "/metrics open without a token after the next restart");
    if (old->server.reflection != next->server.reflection && next->server.reflection)
        protection_dropped("server.reflection", "reflection lists the services from now on");
}

bool rd_reload(rd_live_config *live, rd_metrics *metrics, const char *path, const char *trigger)
{
    char err[RD_CONFIG_ERR_MAX];
    char fields[RD_CONFIG_ERR_MAX + 256] = "";
    rd_log_kv(fields, sizeof fields, "trigger", trigger);
    rd_config *next = rd_config_load(path, err, sizeof err);
    if (!next) {
        rd_log_kv(fields, sizeof fields, "error", err);
        rd_log(RD_LOG_ERROR, "reload failed: the previous configuration stays in force", fields);
        rd_metrics_config_reload(metrics, false);
        return false;
    }
    rd_config_snap *old = rd_live_config_acquire(live);
    report_restart_keys(old->cfg, next);
    report_protections_dropped(old->cfg, next);
    rd_config_snap_release(old);
    rd_config_apply_process_settings(next);
    char counts[64];
    snprintf(counts, sizeof counts, "%zu", next->n_tools);
    rd_log_kv(fields, sizeof fields, "tools", counts);
    uint64_t version = rd_live_config_swap(live, next);
    if (version == 0) {
        rd_log(RD_LOG_ERROR, "reload failed: out of memory", fields);
        rd_metrics_config_reload(metrics, false);
        return false;
    }
    snprintf(counts, sizeof counts, "%llu", (unsigned long long)version);
    rd_log_kv(fields, sizeof fields, "version", counts);
    rd_log(RD_LOG_INFO, "configuration reloaded", fields);
    rd_metrics_config_reload(metrics, true);
    return true;
}

/* ---- the directory watch ---- */

struct rd_config_watch {
    int fd;
    int64_t due_ms;              /* 0 = nothing pending */
};

static bool add_dir_watch(int fd, const char *dir)
{
    if (inotify_add_watch(fd, dir, WATCH_EVENTS) >= 0)
        return true;
    char fields[PATH_MAX + 128] = "";
    rd_log_kv(fields, sizeof fields, "directory", dir);
    rd_log_kv(fields, sizeof fields, "error", strerror(errno));
    rd_log(RD_LOG_WARN, "cannot watch a configuration directory", fields);
    return false;
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    return strndup(path, n);
}

rd_config_watch *rd_config_watch_new(const rd_config *cfg)
{
    rd_config_watch *w = calloc(1, sizeof *w);
    char *main_dir = dir_of(cfg->path);
    if (!w || !main_dir) {
        free(w);
        free(main_dir);
        return NULL;
    }
    w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    bool ok = w->fd >= 0 && add_dir_watch(w->fd, main_dir);
    if (ok && cfg->tools_dir)
        add_dir_watch(w->fd, cfg->tools_dir); /* optional: it may not exist */
    char *dropin = ok ? rd_config_dropin_dir(cfg->path) : NULL;
    if (dropin && access(dropin, F_OK) == 0) /* most installs have no drop-ins */
        add_dir_watch(w->fd, dropin);
    free(dropin);
    free(main_dir);
    if (!ok) {
        rd_config_watch_free(w);
        return NULL;
    }
    return w;
}

void rd_config_watch_free(rd_config_watch *w)
{
    if (!w)
        return;
    if (w->fd >= 0)
        close(w->fd);
    free(w);
}

/* Only configuration files and Kubernetes' ConfigMap swaps ("..data",
 * "..2024_..." directories) matter; a log or editor file written next to
 * the config must not trigger a reload. */
static bool relevant_name(const char *name)
{
    if (strncmp(name, "..", 2) == 0)
        return true;
    const char *dot = strrchr(name, '.');
    return dot && (strcmp(dot, ".yaml") == 0 || strcmp(dot, ".yml") == 0);
}

static bool any_relevant_event(const char *buf, ssize_t n)
{
    for (ssize_t off = 0; off + (ssize_t)sizeof(struct inotify_event) <= n;) {
        const struct inotify_event *ev = (const struct inotify_event *)(buf + off);
        if (ev->len == 0 || relevant_name(ev->name))
            return true;
        off += (ssize_t)sizeof *ev + ev->len;
    }
    return false;
}

bool rd_config_watch_due(rd_config_watch *w, int64_t now_ms)
{
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    ssize_t n;
    while ((n = read(w->fd, buf, sizeof buf)) > 0)
        if (any_relevant_event(buf, n))
            w->due_ms = now_ms + DEBOUNCE_MS; /* every event restarts the quiet period */
    if (w->due_ms == 0 || now_ms < w->due_ms)
        return false;
    w->due_ms = 0;
    return true;
}
