/* The configuration loader: recovery.yaml with its drop-in fragments merged
 * over it (config_merge.h), then its rules file, then every manifest in its
 * tools directory. The formats and their limits are those
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
#include "config/config_merge.h"
#include "config/config_ops.h"
#include "config/config_refs.h"
#include "config/config_tools.h"
#include "config/rules_parse.h"
#include "config/yaml_util.h"
#include "domain/err.h"

#define DAY_MS 86400000LL
#define MAX_WORKERS 64

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
int rd_config_parse_policies(const rd_yctx *c, const rd_ynode *map, const char *path,
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
        rc = rd_config_parse_policies(c, v, "defaults", &cfg->defaults);
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
char *rd_config_join_path(const char *dir, size_t dir_len, const char *name)
{
    size_t n = dir_len + 1 + strlen(name) + 1;
    char *out = malloc(n);
    if (out)
        snprintf(out, n, "%.*s/%s", (int)dir_len, dir, name);
    return out;
}

/* `rel` resolved against the directory of `base_file`; malloc'd. */
char *rd_config_resolve_relative(const char *base_file, const char *rel)
{
    const char *slash = strrchr(base_file, '/');
    if (rel[0] == '/' || !slash)
        return strdup(rel);
    return rd_config_join_path(base_file, (size_t)(slash - base_file), rel);
}

/* ---- the whole load ---- */

static int load_rules(rd_config *cfg, const rd_yctx *mc, const main_refs *refs)
{
    char *file = rd_config_resolve_relative(cfg->path, refs->rules_file);
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
    rd_config_sources sources = {0};
    int rc = rd_config_merge_load(&c, &root, &sources);
    main_refs refs = {0};
    if (rc != RD_OK)
        goto done;
    rc = parse_main(&c, root, cfg, &refs);
    rd_yaml_free(root);
    if (rc == RD_OK)
        rc = load_rules(cfg, &c, &refs);
    if (rc == RD_OK)
        rc = rd_config_load_tools(cfg, &c,
                                  &(rd_tools_ref){.dir = refs.tools_dir, .line = refs.tools_line,
                                                  .given = refs.tools_dir_given});
    if (rc == RD_OK && cfg->server.workers == 0)
        cfg->server.workers = workers_for_this_machine();
done:
    if (rc != RD_OK)
        rd_config_merge_blame(&sources, path, err, err_cap);
    rd_config_sources_free(&sources);
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
    char *main_file = rd_config_main_file(path); /* a directory means its recovery.yaml */
    int rc = main_file ? load_all(cfg, main_file, err, err_cap) : RD_ERR_NOMEM;
    free(main_file);
    if (rc != RD_OK) {
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
    rd_config_free_tool(&cfg->defaults);
    rd_ruleset_clear(&cfg->rules);
    for (size_t i = 0; i < cfg->n_tools; i++)
        rd_config_free_tool(&cfg->tools[i]);
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
