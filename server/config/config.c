/* The configuration loader: recovery.yaml, then its rules file, then every
 * manifest in its tools directory. The formats and their limits are those
 * of the configuration format document; the defaults below equal the values
 * it shows. Anything invalid stops the load with "FILE:LINE: KEY: problem"
 * and nothing partly loaded is returned. */
#include "config/config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config_fleet.h"
#include "config/config_ops.h"
#include "config/config_refs.h"
#include "config/rules_parse.h"
#include "config/yaml_util.h"
#include "domain/err.h"

#define DAY_MS 86400000LL
#define MAX_WORKERS 64
#define MAX_MANIFESTS 100000
#define MAX_OVERRIDES 256
#define MAX_ALTERNATIVES 16

/* ---- defaults ---- */

static const rd_retry_policy DEFAULT_RETRY = {
    .initial_delay_ms = 100, .multiplier = 2.0, .max_delay_ms = 800,
    .jitter_percent = 10.0, .max_attempts = 5, .max_total_time_ms = 2000};

/* The fleet keys (docs/FLEET.md) default to what changes nothing: the
 * consecutive mode, quorum off, budget disabled. */
static const rd_breaker_policy DEFAULT_BREAKER = {
    .failure_threshold = 5, .success_threshold = 1, .open_timeout_ms = 30000,
    .mode = RD_BREAKER_MODE_CONSECUTIVE, .failure_rate_threshold = 50, .minimum_calls = 10,
    .window_ms = 60000, .slow_call_ms = 0, .slow_call_rate_threshold = 100,
    .quorum_min_executors = 1, .quorum_window_ms = 60000};

static const rd_retry_budget_policy DEFAULT_RETRY_BUDGET = {
    .enabled = false, .budget_percent = 20.0, .min_retries_per_window = 10,
    .window_ms = 10000};

static const rd_learning_policy DEFAULT_LEARNING = {
    .enabled = false, .min_samples = 20, .max_signatures = 10000, .ttl_ms = DAY_MS};

static int set_defaults(rd_config *cfg, const char *path)
{
    cfg->path = strdup(path);
    cfg->server.listen = strdup("0.0.0.0:50051");
    cfg->server.workers = 2;
    cfg->server.shutdown_grace_ms = 5000;
    cfg->server.max_receive_bytes = 1048576;
    cfg->store = (rd_store_config){
        .backend = RD_STORE_MEMORY, .max_tools = 100000, .tool_idle_ttl_ms = 3600000,
        .turn_ttl_ms = 900000, .max_turns = 10000, .max_events_per_turn = 200,
        .outcome_ttl_ms = 600000, .max_outcomes = 1000000, .evict_interval_ms = 10000};
    cfg->defaults.id = strdup("*");
    cfg->defaults.timeout_ms = 30000;
    cfg->defaults.retry = DEFAULT_RETRY;
    cfg->defaults.breaker = DEFAULT_BREAKER;
    cfg->defaults.retry_budget = DEFAULT_RETRY_BUDGET;
    cfg->defaults.alternatives_ranking = RD_RANKING_LIVE;
    cfg->learning = DEFAULT_LEARNING;
    cfg->turn_timeout_ms = 300000;
    cfg->reject_unknown_tools = false;
    if (rd_config_ops_defaults(cfg) != RD_OK)
        return RD_ERR_NOMEM;
    return cfg->path && cfg->server.listen && cfg->defaults.id ? RD_OK : RD_ERR_NOMEM;
}

/* ---- small typed helpers over rd_yget_int ---- */

/* ---- policies shared by defaults and manifests ---- */

static int parse_strategy(const rd_yctx *c, const rd_ynode *map, const char *path)
{
    const rd_ynode *v = rd_ymap_get(map, "strategy");
    if (!v)
        return RD_OK;
    char p[RD_YPATH_MAX];
    const char *text;
    int rc = rd_yscalar_str(c, v, rd_ypath(p, path, "strategy"), RD_ID_MAX, &text);
    if (rc == RD_OK && strcmp(text, "exponential_backoff") != 0)
        rc = rd_yerr(c, v->line, p, "unknown strategy \"%s\" (only exponential_backoff)", text);
    return rc;
}

static int check_delay_order(const rd_yctx *c, const rd_ynode *map, const char *path,
                             const rd_retry_policy *r)
{
    if (r->max_delay_ms >= r->initial_delay_ms)
        return RD_OK;
    /* Blame the key this file wrote; the other value may be inherited. */
    const char *key = rd_ymap_get(map, "max_delay_ms") ? "max_delay_ms" : "initial_delay_ms";
    char p[RD_YPATH_MAX];
    return rd_yerr(c, rd_ymap_key_line(map, key), rd_ypath(p, path, key),
                   "max_delay_ms (%lld) must be >= initial_delay_ms (%lld)",
                   (long long)r->max_delay_ms, (long long)r->initial_delay_ms);
}

static const char *const RETRY_KEYS[] = {"strategy", "initial_delay_ms", "max_delay_ms",
                                         "multiplier", "jitter_percent", "max_attempts",
                                         "max_total_time_ms", NULL};

/* Keys absent from the mapping keep the values already in *r. */
static int parse_retry(const rd_yctx *c, const rd_ynode *map, const char *path,
                       rd_retry_policy *r)
{
    int rc = rd_ymap_check(c, map, path, RETRY_KEYS);
    if (rc == RD_OK)
        rc = parse_strategy(c, map, path);
    if (rc == RD_OK)
        rc = rd_yget_int(c, map, path, "initial_delay_ms", 0, 3600000, &r->initial_delay_ms);
    if (rc == RD_OK)
        rc = rd_yget_int(c, map, path, "max_delay_ms", 0, 3600000, &r->max_delay_ms);
    if (rc == RD_OK)
        rc = rd_yget_double(c, map, path, "multiplier", 1.0, 10.0, &r->multiplier);
    if (rc == RD_OK)
        rc = rd_yget_double(c, map, path, "jitter_percent", 0.0, 100.0, &r->jitter_percent);
    if (rc == RD_OK)
        rc = rd_yget_u32(c, map, path, "max_attempts", 1, 100, &r->max_attempts);
    if (rc == RD_OK)
        rc = rd_yget_int(c, map, path, "max_total_time_ms", 1, DAY_MS, &r->max_total_time_ms);
    return rc == RD_OK ? check_delay_order(c, map, path, r) : rc;
}

static const char *const BREAKER_KEYS[] = {
    "failure_threshold", "success_threshold", "timeout_ms", "mode", "failure_rate_threshold",
    "minimum_calls", "window_ms", "slow_call_ms", "slow_call_rate_threshold", "quorum", NULL};

static int parse_breaker(const rd_yctx *c, const rd_ynode *map, const char *path,
                         rd_breaker_policy *b)
{
    int rc = rd_ymap_check(c, map, path, BREAKER_KEYS);
    if (rc == RD_OK)
        rc = rd_yget_u32(c, map, path, "failure_threshold", 1, 10000, &b->failure_threshold);
    if (rc == RD_OK)
        rc = rd_yget_u32(c, map, path, "success_threshold", 1, 10000, &b->success_threshold);
    if (rc == RD_OK)
        rc = rd_yget_int(c, map, path, "timeout_ms", 1, DAY_MS, &b->open_timeout_ms);
    return rc == RD_OK ? rd_config_parse_breaker_fleet(c, map, path, b) : rc;
}

/* timeout_ms, retry_policy and circuit_breaker of a defaults section or a
 * manifest, over the values already in *t. */
static int parse_policies(const rd_yctx *c, const rd_ynode *map, const char *path,
                          rd_tool_config *t)
{
    char p[RD_YPATH_MAX];
    int rc = rd_yget_int(c, map, path, "timeout_ms", 1, DAY_MS, &t->timeout_ms);
    const rd_ynode *retry = rd_ymap_get(map, "retry_policy");
    if (rc == RD_OK && retry)
        rc = parse_retry(c, retry, rd_ypath(p, path, "retry_policy"), &t->retry);
    const rd_ynode *breaker = rd_ymap_get(map, "circuit_breaker");
    if (rc == RD_OK && breaker)
        rc = parse_breaker(c, breaker, rd_ypath(p, path, "circuit_breaker"), &t->breaker);
    return rc == RD_OK ? rd_config_parse_tool_fleet(c, map, path, t) : rc;
}

/* ---- the main file ---- */

typedef struct main_refs {
    char *rules_file;        /* as written; resolved later */
    int rules_line;
    char *tools_dir;
    int tools_line;
    bool tools_dir_given;
} main_refs;

static const char *const SERVER_KEYS[] = {
    "listen", "workers", "shutdown_grace_ms", "max_receive_bytes", "drain_delay_ms",
    "max_connection_age_ms", "max_connection_age_grace_ms", "keepalive_time_ms",
    "keepalive_timeout_ms", "max_concurrent_streams", "memory_limit_bytes",
    "handshake_timeout_ms", "max_connection_idle_ms", "accept_compressed",
    "max_unsent_answer_bytes", "reflection", "max_watch_streams", "allow_unauthenticated", "tls",
    "auth", "admin", NULL};

static int parse_server(const rd_yctx *c, const rd_ynode *map, rd_config *cfg)
{
    const char *path = "server";
    rd_server_config *s = &cfg->server;
    int64_t workers = s->workers;
    int rc = rd_ymap_check(c, map, path, SERVER_KEYS);
    if (rc == RD_OK)
        rc = rd_yget_str(c, map, path, "listen", RD_ID_MAX, &s->listen);
    if (rc == RD_OK && !strchr(s->listen, ':'))
        rc = rd_yerr(c, rd_ymap_key_line(map, "listen"), "server.listen",
                     "expected host:port, got \"%s\"", s->listen);
    if (rc == RD_OK)
        rc = rd_yget_int(c, map, path, "workers", 0, MAX_WORKERS, &workers);
    s->workers = (unsigned)workers;
    if (rc == RD_OK)
        rc = rd_yget_int(c, map, path, "shutdown_grace_ms", 0, 600000, &s->shutdown_grace_ms);
    if (rc == RD_OK)
        rc = rd_yget_size(c, map, path, "max_receive_bytes", 1024, 67108864, &s->max_receive_bytes);
    return rc == RD_OK ? rd_config_parse_server_ops(c, map, cfg) : rc;
}

static int parse_backend(const rd_yctx *c, const rd_ynode *map, rd_store_config *s)
{
    const rd_ynode *v = rd_ymap_get(map, "backend");
    const char *text;
    if (!v)
        return RD_OK;
    int rc = rd_yscalar_str(c, v, "store.backend", RD_ID_MAX, &text);
    if (rc != RD_OK)
        return rc;
    if (strcmp(text, "memory") == 0) {
        s->backend = RD_STORE_MEMORY;
        return RD_OK;
    }
    if (strcmp(text, "redis") == 0) {
        s->backend = RD_STORE_REDIS;
        return RD_OK;
    }
    return rd_yerr(c, v->line, "store.backend", "unknown backend \"%s\" (memory | redis)", text);
}

static const char *const STORE_KEYS[] = {
    "backend", "max_tools", "tool_idle_ttl_ms", "turn_ttl_ms", "max_turns",
    "max_events_per_turn", "outcome_ttl_ms", "max_outcomes", "evict_interval_ms", "redis", NULL};

static int parse_store(const rd_yctx *c, const rd_ynode *map, rd_store_config *s)
{
    const char *path = "store";
    const int64_t ttl_max = 30 * DAY_MS;
    int rc = rd_ymap_check(c, map, path, STORE_KEYS);
    if (rc == RD_OK)
        rc = parse_backend(c, map, s);
    if (rc == RD_OK)
        rc = rd_yget_size(c, map, path, "max_tools", 1, 10000000, &s->max_tools);
    if (rc == RD_OK)
        rc = rd_yget_int(c, map, path, "tool_idle_ttl_ms", 1000, ttl_max, &s->tool_idle_ttl_ms);
    if (rc == RD_OK)
        rc = rd_yget_int(c, map, path, "turn_ttl_ms", 1000, ttl_max, &s->turn_ttl_ms);
    if (rc == RD_OK)
        rc = rd_yget_size(c, map, path, "max_turns", 1, 10000000, &s->max_turns);
    if (rc == RD_OK)
        rc = rd_yget_size(c, map, path, "max_events_per_turn", 1, 100000, &s->max_events_per_turn);
    if (rc == RD_OK)
        rc = rd_yget_int(c, map, path, "outcome_ttl_ms", 1000, ttl_max, &s->outcome_ttl_ms);
    if (rc == RD_OK)
        rc = rd_yget_size(c, map, path, "max_outcomes", 1, 100000000, &s->max_outcomes);
    if (rc == RD_OK)
        rc = rd_yget_int(c, map, path, "evict_interval_ms", 100, 3600000, &s->evict_interval_ms);
    return rc == RD_OK ? rd_config_parse_redis(c, map, &s->redis) : rc;
}

static const char *const DEFAULTS_KEYS[] = {"timeout_ms", "retry_policy", "circuit_breaker",
                                            "retry_budget", "alternatives_ranking", NULL};
static const char *const TURN_KEYS[] = {"timeout_ms", NULL};
static const char *const TOOLS_KEYS[] = {"directory", "reject_unknown", "external", NULL};
static const char *const CLASSIFICATION_KEYS[] = {"rules_file", NULL};

static int parse_tools_section(const rd_yctx *c, const rd_ynode *map, rd_config *cfg,
                               main_refs *refs)
{
    int rc = rd_ymap_check(c, map, "tools", TOOLS_KEYS);
    if (rc == RD_OK)
        rc = rd_yget_str(c, map, "tools", "directory", 4096, &refs->tools_dir);
    refs->tools_dir_given = rd_ymap_get(map, "directory") != NULL;
    refs->tools_line = rd_ymap_key_line(map, "directory");
    if (rc == RD_OK)
        rc = rd_yget_bool(c, map, "tools", "reject_unknown", &cfg->reject_unknown_tools);
    if (rc == RD_OK)
        rc = rd_config_parse_external(c, map, cfg);
    return rc;
}

static int parse_classification(const rd_yctx *c, const rd_ynode *root, main_refs *refs)
{
    const rd_ynode *map = rd_ymap_get(root, "classification");
    if (!map)
        return rd_yerr(c, 1, "classification.rules_file", "missing (required)");
    int rc = rd_ymap_check(c, map, "classification", CLASSIFICATION_KEYS);
    if (rc != RD_OK)
        return rc;
    if (!rd_ymap_get(map, "rules_file"))
        return rd_yerr(c, map->key_line, "classification.rules_file", "missing (required)");
    refs->rules_line = rd_ymap_key_line(map, "rules_file");
    return rd_yget_str(c, map, "classification", "rules_file", 4096, &refs->rules_file);
}

static const char *const MAIN_KEYS[] = {"server", "store", "defaults", "turn", "tools",
                                        "classification", "metrics", "log", "reload",
                                        "learning", NULL};

static int parse_main(const rd_yctx *c, const rd_ynode *root, rd_config *cfg, main_refs *refs)
{
    int rc = rd_yexpect(c, root, "(file)", RD_YMAP);
    if (rc == RD_OK)
        rc = rd_ymap_check(c, root, "", MAIN_KEYS);
    const rd_ynode *v;
    if (rc == RD_OK && (v = rd_ymap_get(root, "server")))
        rc = parse_server(c, v, cfg);
    if (rc == RD_OK && (v = rd_ymap_get(root, "store")))
        rc = parse_store(c, v, &cfg->store);
    if (rc == RD_OK && (v = rd_ymap_get(root, "defaults")))
        rc = rd_ymap_check(c, v, "defaults", DEFAULTS_KEYS);
    if (rc == RD_OK && v)
        rc = parse_policies(c, v, "defaults", &cfg->defaults);
    if (rc == RD_OK && (v = rd_ymap_get(root, "turn")))
        rc = rd_ymap_check(c, v, "turn", TURN_KEYS);
    if (rc == RD_OK && v)
        rc = rd_yget_int(c, v, "turn", "timeout_ms", 1, DAY_MS, &cfg->turn_timeout_ms);
    if (rc == RD_OK && (v = rd_ymap_get(root, "tools")))
        rc = parse_tools_section(c, v, cfg, refs);
    if (rc == RD_OK)
        rc = parse_classification(c, root, refs);
    if (rc == RD_OK)
        rc = rd_config_parse_ops_sections(c, root, cfg);
    if (rc == RD_OK && (v = rd_ymap_get(root, "learning")))
        rc = rd_config_parse_learning(c, v, &cfg->learning);
    return rc;
}

/* "dir/name" from the first dir_len bytes of dir; malloc'd. */
static char *join_path(const char *dir, size_t dir_len, const char *name)
{
    size_t n = dir_len + 1 + strlen(name) + 1;
    char *out = malloc(n);
    if (out)
        snprintf(out, n, "%.*s/%s", (int)dir_len, dir, name);
    return out;
}

/* `rel` resolved against the directory of `base_file`; malloc'd. */
static char *resolve_relative(const char *base_file, const char *rel)
{
    const char *slash = strrchr(base_file, '/');
    if (rel[0] == '/' || !slash)
        return strdup(rel);
    return join_path(base_file, (size_t)(slash - base_file), rel);
}

/* ---- one manifest ---- */

static int parse_tool_id(const rd_yctx *c, const rd_ynode *tool, rd_tool_config *t)
{
    const rd_ynode *id = rd_ymap_get(tool, "id");
    if (!id)
        return rd_yerr(c, tool->key_line, "tool.id", "missing (required)");
    const char *text;
    int rc = rd_yscalar_str(c, id, "tool.id", RD_ID_MAX, &text);
    if (rc != RD_OK)
        return rc;
    if (!rd_valid_tool_id(text, false))
        return rd_yerr(c, id->line, "tool.id",
                       "\"%s\" is not a tool id (1..%d bytes of [A-Za-z0-9_.:/-])", text,
                       RD_ID_MAX);
    t->id = strdup(text);
    t->line = id->line;
    return t->id ? RD_OK : rd_yerr(c, id->line, "tool.id", "out of memory");
}

/* A list of other tools' ids: no repeats, never the tool itself. */
static int parse_id_list(const rd_yctx *c, const rd_ynode *tool, const char *key,
                         const char *self, size_t max_n, char ***out, size_t *n)
{
    const rd_ynode *list = rd_ymap_get(tool, key);
    char p[RD_YPATH_MAX], pi[RD_YPATH_MAX];
    rd_ypath(p, "tool", key);
    if (!list)
        return RD_OK;
    int rc = rd_yexpect(c, list, p, RD_YSEQ);
    if (rc != RD_OK)
        return rc;
    if (list->n > max_n)
        return rd_yerr(c, list->line, p, "more than %zu entries", max_n);
    if (list->n == 0)
        return RD_OK;
    *out = calloc(list->n, sizeof **out);
    if (!*out)
        return rd_yerr(c, list->line, p, "out of memory");
    *n = list->n;
    for (size_t i = 0; i < list->n; i++) {
        const rd_ynode *item = list->items[i];
        const char *text;
        rc = rd_yscalar_str(c, item, rd_ypath_index(pi, p, i), RD_ID_MAX, &text);
        if (rc != RD_OK)
            return rc;
        if (!rd_valid_tool_id(text, false))
            return rd_yerr(c, item->line, pi, "\"%s\" is not a tool id", text);
        if (strcmp(text, self) == 0)
            return rd_yerr(c, item->line, pi, "a tool cannot name itself");
        for (size_t j = 0; j < i; j++)
            if (strcmp((*out)[j], text) == 0)
                return rd_yerr(c, item->line, pi, "\"%s\" is listed twice", text);
        if (!((*out)[i] = strdup(text)))
            return rd_yerr(c, item->line, pi, "out of memory");
    }
    return RD_OK;
}

static const char *const OVERRIDE_KEYS[] = {"when", "retryability", "category", "suggestion",
                                            NULL};

static int parse_override(const rd_yctx *c, const rd_ynode *map, const char *path,
                          rd_override *o)
{
    char p[RD_YPATH_MAX];
    int rc = rd_ymap_check(c, map, path, OVERRIDE_KEYS);
    if (rc != RD_OK)
        return rc;
    o->line = map->line;
    const rd_ynode *when = rd_ymap_get(map, "when");
    if (!when)
        return rd_yerr(c, map->line, rd_ypath(p, path, "when"),
                       "missing (at least one condition is required)");
    const rd_ynode *retry = rd_ymap_get(map, "retryability");
    const rd_ynode *cat = rd_ymap_get(map, "category");
    if (!retry && !cat && !rd_ymap_get(map, "suggestion"))
        return rd_yerr(c, map->line, path,
                       "an override needs retryability, category or suggestion");
    rc = rd_match_parse(c, when, rd_ypath(p, path, "when"), &o->when);
    if (rc == RD_OK && retry)
        rc = rd_parse_retryability(c, retry, rd_ypath(p, path, "retryability"),
                                   &o->retryability);
    if (rc == RD_OK && cat)
        rc = rd_parse_category(c, cat, rd_ypath(p, path, "category"), &o->category);
    if (rc == RD_OK)
        rc = rd_yget_str(c, map, path, "suggestion", RD_SUGGESTION_MAX, &o->suggestion);
    return rc;
}

static const char *const TOOL_CLASSIFICATION_KEYS[] = {"overrides", NULL};

static int parse_overrides(const rd_yctx *c, const rd_ynode *tool, rd_tool_config *t)
{
    const char *path = "tool.classification";
    const rd_ynode *map = rd_ymap_get(tool, "classification");
    if (!map)
        return RD_OK;
    int rc = rd_ymap_check(c, map, path, TOOL_CLASSIFICATION_KEYS);
    const rd_ynode *list = rd_ymap_get(map, "overrides");
    if (rc != RD_OK || !list)
        return rc;
    rc = rd_yexpect(c, list, "tool.classification.overrides", RD_YSEQ);
    if (rc == RD_OK && list->n > MAX_OVERRIDES)
        rc = rd_yerr(c, list->line, "tool.classification.overrides", "more than %d entries",
                     MAX_OVERRIDES);
    if (rc != RD_OK || list->n == 0)
        return rc;
    t->overrides = calloc(list->n, sizeof *t->overrides);
    if (!t->overrides)
        return rd_yerr(c, list->line, "tool.classification.overrides", "out of memory");
    t->n_overrides = list->n;
    for (size_t i = 0; i < list->n && rc == RD_OK; i++) {
        char p[RD_YPATH_MAX];
        rc = parse_override(c, list->items[i],
                            rd_ypath_index(p, "tool.classification.overrides", i),
                            &t->overrides[i]);
    }
    return rc;
}

static int parse_default_value(const rd_yctx *c, const rd_ynode *tool, rd_tool_config *t)
{
    const rd_ynode *v = rd_ymap_get(tool, "default");
    if (!v)
        return RD_OK;
    if (v->type != RD_YSCALAR || rd_yis_null(v))
        return rd_yerr(c, v->line, "tool.default",
                       "expected text, got %s (write JSON as a quoted string)",
                       rd_ytype_name(v));
    if (v->len > RD_DEFAULT_VALUE_MAX)
        return rd_yerr(c, v->line, "tool.default", "longer than %d bytes", RD_DEFAULT_VALUE_MAX);
    t->default_value = strdup(v->text);
    t->has_default = t->default_value != NULL;
    return t->has_default ? RD_OK : rd_yerr(c, v->line, "tool.default", "out of memory");
}

static const char *const TOOL_KEYS[] = {"id", "timeout_ms", "retry_policy", "circuit_breaker",
                                        "retry_budget", "alternatives_ranking",
                                        "classification", "alternatives", "depends_on",
                                        "optional", "default", NULL};

/* *t starts as a copy of the defaults' policies; the manifest overrides
 * whatever it names. *depends_line receives the depends_on key's line. */
static int parse_manifest(const rd_yctx *c, const rd_ynode *root, rd_tool_config *t,
                          int *depends_line)
{
    static const char *const top_keys[] = {"tool", NULL};
    int rc = rd_yexpect(c, root, "(file)", RD_YMAP);
    if (rc == RD_OK)
        rc = rd_ymap_check(c, root, "", top_keys);
    const rd_ynode *tool = rd_ymap_get(root, "tool");
    if (rc == RD_OK && !tool)
        rc = rd_yerr(c, root->line, "tool", "missing (a manifest is `tool: {id: ...}`)");
    if (rc == RD_OK)
        rc = rd_ymap_check(c, tool, "tool", TOOL_KEYS);
    if (rc == RD_OK)
        rc = parse_tool_id(c, tool, t);
    if (rc == RD_OK)
        rc = parse_policies(c, tool, "tool", t);
    if (rc == RD_OK)
        rc = parse_overrides(c, tool, t);
    if (rc == RD_OK)
        rc = parse_id_list(c, tool, "alternatives", t->id, MAX_ALTERNATIVES, &t->alternatives,
                           &t->n_alternatives);
    if (rc == RD_OK)
        rc = parse_id_list(c, tool, "depends_on", t->id, RD_DEPENDS_MAX, &t->depends_on,
                           &t->n_depends_on);
    *depends_line = rd_ymap_key_line(tool, "depends_on");
    t->depends_on_line = *depends_line;
    t->alternatives_line = rd_ymap_key_line(tool, "alternatives");
    if (rc == RD_OK)
        rc = rd_yget_bool(c, tool, "tool", "optional", &t->optional);
    if (rc == RD_OK)
        rc = parse_default_value(c, tool, t);
    return rc;
}

static void free_tool(rd_tool_config *t)
{
    free(t->id);
    for (size_t i = 0; t->overrides && i < t->n_overrides; i++) {
        rd_match_clear(&t->overrides[i].when);
        free(t->overrides[i].suggestion);
    }
    free(t->overrides);
    for (size_t i = 0; t->alternatives && i < t->n_alternatives; i++)
        free(t->alternatives[i]);
    free(t->alternatives);
    for (size_t i = 0; t->depends_on && i < t->n_depends_on; i++)
        free(t->depends_on[i]);
    free(t->depends_on);
    free(t->default_value);
    free(t->file);
}

/* ---- the tools directory ---- */

/* Manifests in file-name order, with the line of each depends_on for the
 * cycle message; cfg->tools is sorted by id only at the very end. */
typedef struct tool_loader {
    rd_config *cfg;
    size_t cap;
    int *depends_line;
} tool_loader;

static bool is_manifest_name(const char *name)
{
    size_t len = strlen(name);
    if (name[0] == '.') /* hidden, and Kubernetes' ..data / ..2024_... entries */
        return false;
    return (len > 5 && strcmp(name + len - 5, ".yaml") == 0) ||
           (len > 4 && strcmp(name + len - 4, ".yml") == 0);
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* The manifest file names of dir, sorted; *names is malloc'd (caller frees
 * with free_names). */
static int list_manifests(const rd_yctx *mc, DIR *d, int line, char ***names, size_t *n)
{
    size_t cap = 0;
    *names = NULL;
    *n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!is_manifest_name(e->d_name))
            continue;
        if (*n == MAX_MANIFESTS)
            return rd_yerr(mc, line, "tools.directory", "more than %d manifests",
                           MAX_MANIFESTS);
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            char **grown = realloc(*names, cap * sizeof *grown);
            if (!grown)
                return rd_yerr(mc, line, "tools.directory", "out of memory");
            *names = grown;
        }
        if (!((*names)[*n] = strdup(e->d_name)))
            return rd_yerr(mc, line, "tools.directory", "out of memory");
        (*n)++;
    }
    if (*n > 1)
        qsort(*names, *n, sizeof **names, compare_names);
    return RD_OK;
}

/* A zeroed slot at the end of cfg->tools, already counted so that
 * rd_config_free releases whatever gets filled in. */
static rd_tool_config *new_tool_slot(tool_loader *l)
{
    rd_config *cfg = l->cfg;
    if (cfg->n_tools == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        rd_tool_config *tools = realloc(cfg->tools, cap * sizeof *tools);
        if (!tools)
            return NULL;
        cfg->tools = tools;
        int *lines = realloc(l->depends_line, cap * sizeof *lines);
        if (!lines)
            return NULL;
        l->depends_line = lines;
        l->cap = cap;
    }
    rd_tool_config *t = &cfg->tools[cfg->n_tools++];
    memset(t, 0, sizeof *t);
    return t;
}

static int load_manifest(tool_loader *l, const char *file, char *err, size_t err_cap)
{
    rd_yctx c = {.file = file, .err = err, .err_cap = err_cap};
    rd_tool_config *t = new_tool_slot(l);
    if (!t)
        return rd_yerr(&c, 0, "(file)", "out of memory");
    const rd_tool_config *d = &l->cfg->defaults;
    t->timeout_ms = d->timeout_ms;
    t->retry = d->retry;
    t->breaker = d->breaker;
    t->retry_budget = d->retry_budget;
    t->alternatives_ranking = d->alternatives_ranking;
    if (!(t->file = strdup(file)))
        return rd_yerr(&c, 0, "(file)", "out of memory");
    rd_ynode *root;
    int rc = rd_yaml_load(&c, &root);
    if (rc != RD_OK)
        return rc;
    rc = parse_manifest(&c, root, t, &l->depends_line[l->cfg->n_tools - 1]);
    rd_yaml_free(root);
    return rc;
}

static int compare_tool_ptrs(const void *a, const void *b)
{
    const rd_tool_config *ta = *(const rd_tool_config *const *)a;
    const rd_tool_config *tb = *(const rd_tool_config *const *)b;
    int cmp = strcmp(ta->id, tb->id);
    return cmp ? cmp : (ta < tb ? -1 : ta > tb); /* ties in file order */
}

static int compare_tools(const void *a, const void *b)
{
    return strcmp(((const rd_tool_config *)a)->id, ((const rd_tool_config *)b)->id);
}

/* Tool ids sorted (ties in file order); the later file of a pair is blamed. */
static int check_unique_tool_ids(const rd_config *cfg, const rd_tool_config **byid,
                                 char *err, size_t err_cap)
{
    for (size_t i = 1; i < cfg->n_tools; i++) {
        const rd_tool_config *a = byid[i - 1], *b = byid[i];
        if (strcmp(a->id, b->id) == 0) {
            rd_yctx c = {.file = b->file, .err = err, .err_cap = err_cap};
            return rd_yerr(&c, b->line, "tool.id",
                           "duplicate tool id \"%s\" (also defined at %s:%d)", b->id, a->file,
                           a->line);
        }
    }
    return RD_OK;
}

/* Index into cfg->tools (file order) of the manifest for id, or -1. */
static long find_index(const rd_config *cfg, const rd_tool_config **byid, const char *id)
{
    size_t lo = 0, hi = cfg->n_tools;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int cmp = strcmp(id, byid[mid]->id);
        if (cmp == 0)
            return (long)(byid[mid] - cfg->tools);
        if (cmp < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return -1;
}

/* For each manifest, the manifests that depend on it, in CSR form:
 * dependents of j are rev[first[j] .. first[j+1]). Both arrays malloc'd. */
static int build_dependents(const rd_config *cfg, const rd_tool_config **byid, size_t **first,
                            size_t **rev)
{
    size_t n = cfg->n_tools, edges = 0;
    *first = calloc(n + 1, sizeof **first);
    for (size_t i = 0; i < n; i++)
        edges += cfg->tools[i].n_depends_on;
    *rev = malloc((edges ? edges : 1) * sizeof **rev);
    if (!*first || !*rev)
        return RD_ERR_NOMEM;
    /* Count into first[j], turn counts into range ends, then place each
     * edge by counting down, which leaves first[j] at the range start. */
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < cfg->tools[i].n_depends_on; k++) {
            long j = find_index(cfg, byid, cfg->tools[i].depends_on[k]);
            if (j >= 0)
                (*first)[j]++;
        }
    for (size_t j = 1; j < n; j++)
        (*first)[j] += (*first)[j - 1];
    (*first)[n] = (*first)[n - 1];
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < cfg->tools[i].n_depends_on; k++) {
            long j = find_index(cfg, byid, cfg->tools[i].depends_on[k]);
            if (j >= 0)
                (*rev)[--(*first)[j]] = i;
        }
    return RD_OK;
}

/* Kahn's algorithm on "depends on" edges between manifests: repeatedly
 * resolve tools whose dependencies are all resolved; whatever remains lies
 * on or behind a cycle. On return left[i] counts tool i's unresolved
 * dependencies. Dependencies without a manifest cannot form a cycle and
 * are ignored. */
static int resolve_dependencies(const rd_config *cfg, const rd_tool_config **byid, size_t *left)
{
    size_t n = cfg->n_tools, *first = NULL, *rev = NULL;
    size_t *queue = malloc(n * sizeof *queue);
    int rc = queue ? build_dependents(cfg, byid, &first, &rev) : RD_ERR_NOMEM;
    size_t head = 0, tail = 0;
    for (size_t i = 0; i < n && rc == RD_OK; i++) {
        left[i] = 0;
        for (size_t k = 0; k < cfg->tools[i].n_depends_on; k++)
            left[i] += find_index(cfg, byid, cfg->tools[i].depends_on[k]) >= 0;
        if (left[i] == 0)
            queue[tail++] = i;
    }
    while (rc == RD_OK && head < tail) {
        size_t j = queue[head++];
        for (size_t e = first[j]; e < first[j + 1]; e++)
            if (--left[rev[e]] == 0)
                queue[tail++] = rev[e];
    }
    free(queue);
    free(first);
    free(rev);
    return rc;
}

/* A dependency of tool i that is itself unresolved (one always exists for
 * an unresolved tool), or i when there is none. */
static size_t next_unresolved(const rd_config *cfg, const rd_tool_config **byid,
                              const size_t *left, size_t i)
{
    const rd_tool_config *t = &cfg->tools[i];
    for (size_t k = 0; k < t->n_depends_on; k++) {
        long j = find_index(cfg, byid, t->depends_on[k]);
        if (j >= 0 && left[j] > 0)
            return (size_t)j;
    }
    return i;
}

/* From a tool left unresolved, follow unresolved dependencies until one
 * repeats; that stretch is a cycle, named in the message. */
static int report_cycle(const rd_config *cfg, const rd_tool_config **byid, const size_t *left,
                        size_t start, const int *depends_line, char *err, size_t err_cap)
{
    size_t n = cfg->n_tools, steps = 0;
    size_t *path = malloc(n * sizeof *path);
    if (!path)
        return RD_ERR_NOMEM;
    size_t cur = start;
    for (;;) {
        for (size_t s = 0; s < steps; s++) {
            if (path[s] != cur)
                continue;
            char chain[RD_CONFIG_ERR_MAX / 2] = "";
            size_t used = 0;
            for (size_t k = s; k <= steps && used < sizeof chain; k++) {
                size_t idx = k < steps ? path[k] : cur;
                int w = snprintf(chain + used, sizeof chain - used, "%s%s",
                                 k > s ? " -> " : "", cfg->tools[idx].id);
                used += w > 0 ? (size_t)w : 0;
            }
            const rd_tool_config *t = &cfg->tools[cur];
            rd_yctx c = {.file = t->file, .err = err, .err_cap = err_cap};
            free(path);
            return rd_yerr(&c, depends_line[cur], "tool.depends_on", "dependency cycle: %s",
                           chain);
        }
        path[steps++] = cur;
        size_t next = next_unresolved(cfg, byid, left, cur);
        if (next == cur || steps > n) { /* impossible after Kahn; never loop */
            free(path);
            return RD_ERR_INTERNAL;
        }
        cur = next;
    }
}

static int check_no_cycles(const rd_config *cfg, const rd_tool_config **byid,
                           const int *depends_line, char *err, size_t err_cap)
{
    size_t *left = malloc((cfg->n_tools ? cfg->n_tools : 1) * sizeof *left);
    if (!left || resolve_dependencies(cfg, byid, left) != RD_OK) {
        free(left);
        return RD_ERR_NOMEM;
    }
    int rc = RD_OK;
    for (size_t i = 0; i < cfg->n_tools && rc == RD_OK; i++)
        if (left[i] > 0)
            rc = report_cycle(cfg, byid, left, i, depends_line, err, err_cap);
    free(left);
    return rc;
}

static int check_tool_graph(tool_loader *l, char *err, size_t err_cap)
{
    rd_config *cfg = l->cfg;
    if (cfg->n_tools == 0)
        return RD_OK;
    const rd_tool_config **byid = malloc(cfg->n_tools * sizeof *byid);
    if (!byid)
        return RD_ERR_NOMEM;
    for (size_t i = 0; i < cfg->n_tools; i++)
        byid[i] = &cfg->tools[i];
    qsort(byid, cfg->n_tools, sizeof *byid, compare_tool_ptrs);
    int rc = check_unique_tool_ids(cfg, byid, err, err_cap);
    if (rc == RD_OK)
        rc = check_no_cycles(cfg, byid, l->depends_line, err, err_cap);
    free(byid);
    if (rc == RD_OK)
        qsort(cfg->tools, cfg->n_tools, sizeof *cfg->tools, compare_tools);
    return rc;
}

static int load_manifests(tool_loader *l, const char *dir, char **names, size_t n, char *err,
                          size_t err_cap)
{
    int rc = RD_OK;
    for (size_t i = 0; i < n && rc == RD_OK; i++) {
        char *file = join_path(dir, strlen(dir), names[i]);
        if (!file)
            return RD_ERR_NOMEM;
        rc = load_manifest(l, file, err, err_cap);
        free(file);
    }
    return rc == RD_OK ? check_tool_graph(l, err, err_cap) : rc;
}

static int load_tools(rd_config *cfg, const rd_yctx *mc, const main_refs *refs)
{
    char *dir = resolve_relative(cfg->path, refs->tools_dir ? refs->tools_dir : "tools.d");
    if (!dir)
        return rd_yerr(mc, refs->tools_line, "tools.directory", "out of memory");
    free(cfg->tools_dir);
    cfg->tools_dir = strdup(dir); /* the reload watcher watches it */
    DIR *d = opendir(dir);
    if (!d) {
        int e = errno;
        /* The default directory is optional; one named explicitly is not. */
        int rc = e == ENOENT && !refs->tools_dir_given
                     ? RD_OK
                     : rd_yerr(mc, refs->tools_line, "tools.directory",
                               "cannot open directory \"%s\": %s", dir, strerror(e));
        free(dir);
        return rc;
    }
    char **names;
    size_t n;
    int rc = list_manifests(mc, d, refs->tools_line, &names, &n);
    closedir(d);
    if (rc == RD_OK) {
        tool_loader l = {.cfg = cfg};
        rc = load_manifests(&l, dir, names, n, mc->err, mc->err_cap);
        free(l.depends_line);
        if (rc == RD_OK)
            rc = rd_config_check_refs(cfg, mc->err, mc->err_cap);
    }
    free_names(names, n);
    free(dir);
    return rc;
}

/* ---- the whole load ---- */

static int load_rules(rd_config *cfg, const rd_yctx *mc, const main_refs *refs)
{
    char *file = resolve_relative(cfg->path, refs->rules_file);
    if (!file)
        return rd_yerr(mc, refs->rules_line, "classification.rules_file", "out of memory");
    int rc = RD_OK;
    if (access(file, R_OK) != 0)
        rc = rd_yerr(mc, refs->rules_line, "classification.rules_file",
                     "cannot open \"%s\": %s", file, strerror(errno));
    rd_yctx rc_ctx = {.file = file, .err = mc->err, .err_cap = mc->err_cap};
    if (rc == RD_OK)
        rc = rd_rules_load(&rc_ctx, &cfg->rules);
    free(file);
    return rc;
}

static unsigned workers_for_this_machine(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 1)
        return 1;
    return cores > MAX_WORKERS ? MAX_WORKERS : (unsigned)cores;
}

static int load_all(rd_config *cfg, const char *path, char *err, size_t err_cap)
{
    rd_yctx c = {.file = path, .err = err, .err_cap = err_cap};
    if (set_defaults(cfg, path) != RD_OK)
        return rd_yerr(&c, 0, "(file)", "out of memory");
    rd_ynode *root;
    int rc = rd_yaml_load(&c, &root);
    if (rc != RD_OK)
        return rc;
    main_refs refs = {0};
    rc = parse_main(&c, root, cfg, &refs);
    rd_yaml_free(root);
    if (rc == RD_OK)
        rc = load_rules(cfg, &c, &refs);
    if (rc == RD_OK)
        rc = load_tools(cfg, &c, &refs);
    if (rc == RD_OK && cfg->server.workers == 0)
        cfg->server.workers = workers_for_this_machine();
    free(refs.rules_file);
    free(refs.tools_dir);
    return rc;
}

rd_config *rd_config_load(const char *path, char *err, size_t err_cap)
{
    char scratch[RD_CONFIG_ERR_MAX];
    if (!err || err_cap == 0) {
        err = scratch;
        err_cap = sizeof scratch;
    }
    err[0] = '\0';
    rd_config *cfg = calloc(1, sizeof *cfg);
    if (!cfg) {
        snprintf(err, err_cap, "%s:0: (file): out of memory", path);
        return NULL;
    }
    if (load_all(cfg, path, err, err_cap) != RD_OK) {
        if (err[0] == '\0')
            snprintf(err, err_cap, "%s:0: (file): out of memory", path);
        rd_config_free(cfg);
        return NULL;
    }
    return cfg;
}

void rd_config_free(rd_config *cfg)
{
    if (!cfg)
        return;
    rd_config_ops_free(cfg);
    rd_config_refs_free(cfg);
    free(cfg->path);
    free(cfg->server.listen);
    free_tool(&cfg->defaults);
    rd_ruleset_clear(&cfg->rules);
    for (size_t i = 0; i < cfg->n_tools; i++)
        free_tool(&cfg->tools[i]);
    free(cfg->tools);
    free(cfg);
}

const rd_tool_config *rd_config_find_tool(const rd_config *cfg, const char *tool_id)
{
    return cfg ? rd_policy_find_tool(&cfg->policy, tool_id) : NULL;
}

const rd_tool_config *rd_config_tool_or_defaults(const rd_config *cfg, const char *tool_id)
{
    return rd_policy_tool_or_defaults(&cfg->policy, tool_id);
}
