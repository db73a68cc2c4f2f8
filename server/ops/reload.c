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

static void needs_restart(const char *key, void *ctx)
{
    (void)ctx;
    char fields[256] = "";
    rd_log_kv(fields, sizeof fields, "key", key);
    rd_log(RD_LOG_WARN, "changed in the configuration but needs a restart; the running value stays",
           fields);
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
    if ((old->server.auth_token || old->server.n_tenants) && !next->server.auth_token &&
        !next->server.n_tenants)
        protection_dropped("server.auth",
                           "RecoveryService calls are served without a token from now on");
    if (old->server.n_tenants && !next->server.n_tenants)
        protection_dropped("server.tenants",
                           "every caller shares one namespace from now on");
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
    rd_config_restart_changes(old->cfg, next, needs_restart, NULL);
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
