/* What the main file says about watching the service: the Prometheus
 * endpoint (`metrics`, docs/METRICS.md), the log level (`log`) and reloads
 * on a change of the configuration (`reload`). */
#include <string.h>

#include "config/config.h"
#include "config/config_tables.h"
#include "domain/err.h"

/* ---- metrics ---- */

static int check_metrics_listen(const rd_yctx *c, int line, const char *path, const void *field)
{
    const char *listen = *(char *const *)field;
    if (!listen || strchr(listen, ':'))
        return RD_OK;
    return rd_yerr(c, line, path, "expected host:port or \"\" (off), got \"%s\"", listen);
}

static const rd_key METRICS_KEYS[] = {
    {.name = "listen", .type = RD_KEY_OPT_TEXT, RD_FIELD(rd_metrics_config, listen), .hi = 256,
     .sdef = "127.0.0.1:9464", .check = check_metrics_listen,
     .range_doc = "host:port, or \"\" (off)",
     .doc = "the /metrics endpoint; a port that cannot be bound is logged and the service runs "
            "without it"},
    RD_K_INT(rd_metrics_config, "max_tools", max_tools, 1, 100000, 1000,
             "tools with their own series; the rest count as `_other`"),
    RD_K_INT(rd_metrics_config, "max_connections", max_connections, 1, 10000, 128,
             "connections at once, over all clients"),
    RD_K_INT(rd_metrics_config, "max_connections_per_ip", max_connections_per_ip, 1, 10000, 8,
             "connections at once from one client address, so one client cannot blind it"),
    RD_K_INT(rd_metrics_config, "threads", threads, 1, 16, 2, "serving threads"),
    RD_K_INT(rd_metrics_config, "connection_timeout_ms", connection_timeout_ms, 1000, 600000, 5000,
             "an idle connection is closed after this long"),
    RD_K_OFF(rd_metrics_config, "breaker_refresh_ms", breaker_refresh_ms, 1000, 600000, 0,
             "with the Redis store: list breaker states this often instead of at every scrape"),
    RD_K_SECTION(rd_metrics_config, "auth", token, &rd_keys_token,
                 "bearer token /metrics requires (not /healthz)"),
};
const rd_key_table rd_keys_metrics = RD_KEY_TABLE_RESTART("metrics", NULL, METRICS_KEYS, NULL);

/* ---- log ---- */

/* In the order of rd_config_log_level. */
static const char *const LEVELS[] = {"debug", "info", "warn", "error", NULL};

static const rd_key LOG_KEYS[] = {
    RD_K_ENUM(rd_config, "level", log_level, LEVELS, NULL, RD_CONFIG_LOG_INFO,
              "the least severe level logged, as JSON lines on stdout (reloadable)"),
};
const rd_key_table rd_keys_log = RD_KEY_TABLE("log", NULL, LOG_KEYS, NULL);

/* ---- reload ---- */

static const rd_key RELOAD_KEYS[] = {
    RD_K_BOOL(rd_config, "watch", reload_watch, true,
              "reload when a file in the main file's or the tools directory changes; SIGHUP "
              "always reloads", RD_RESTART),
};
const rd_key_table rd_keys_reload = RD_KEY_TABLE("reload", NULL, RELOAD_KEYS, NULL);
