/* Hot reload of the configuration (SIGHUP, or a change in the config
 * directory when reload.watch is true).
 *
 * A reload loads and validates every file again with rd_config_load. An
 * invalid config keeps the previous one: the error (file:line: key:
 * problem) is logged and counted as a failed reload. A valid one is swapped
 * in atomically (ops/live_config.h): calls already running finish with the
 * config they started with, calls starting later see the new one.
 *
 * What reloads: rules, tool manifests, defaults, turn budget,
 * tools.reject_unknown, the auth and admin tokens, log.level,
 * server.shutdown_grace_ms and server.drain_delay_ms. What needs a restart
 * (logged as such, the running value stays): listen address, workers,
 * message size, connection age, keepalive, TLS files, the whole store
 * section, metrics.*, reload.watch, and the tools directory the watcher
 * follows. */
#ifndef RD_OPS_RELOAD_H
#define RD_OPS_RELOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "ops/live_config.h"
#include "ops/metrics.h"

/* Reloads from the main file `path`; `trigger` ("SIGHUP", "file change")
 * is logged. Returns true when the new config is in force. */
bool rd_reload(rd_live_config *live, rd_metrics *metrics, const char *path, const char *trigger);

/* Applies what a (re)loaded config sets process-wide (log.level). */
void rd_config_apply_process_settings(const rd_config *cfg);

/* Watches the main file's directory and the tools directory with inotify
 * (a Kubernetes ConfigMap is swapped through its `..data` symlink, which
 * shows up as a create/move in the directory, not as a write to a file). */
typedef struct rd_config_watch rd_config_watch;

/* NULL when inotify is unavailable (logged; SIGHUP still works). */
rd_config_watch *rd_config_watch_new(const rd_config *cfg);
void rd_config_watch_free(rd_config_watch *w);
/* Drains pending events without blocking. Returns true once changes have
 * been quiet for the debounce period (a burst of writes is one reload). */
bool rd_config_watch_due(rd_config_watch *w, int64_t now_monotonic_ms);

#endif
