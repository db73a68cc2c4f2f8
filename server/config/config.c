/* The configuration loader: recovery.yaml with its drop-in fragments merged
 * over it (config_merge.h), read with the key tables (config_tables.h),
 * then its rules file, then every manifest in its tools directory. Anything
 * invalid stops the load with "FILE:LINE: KEY: problem" and nothing partly
 * loaded is returned. */
#include "config/config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config_keys.h"
#include "config/config_merge.h"
#include "config/config_refs.h"
#include "config/config_tables.h"
#include "config/config_tools.h"
#include "config/rules_parse.h"
#include "config/yaml_util.h"
#include "domain/err.h"

#define PATH_TEXT_MAX 4096

/* ---- the main file's own sections ---- */

static int parse_external(const rd_yctx *c, const rd_ynode *map, const rd_ynode *v,
                          const char *path, void *base)
{
    (void)v;
    (void)path;
    return rd_config_parse_external(c, map, base);
}

static void free_external(void *base)
{
    rd_config_refs_free(base);
}

static const rd_key TOOLS_KEYS[] = {
    RD_K_TEXT(rd_config, "directory", tools_dir, PATH_TEXT_MAX, "tools.d",
              "the manifests (*.yaml, *.yml; dot-files skipped), relative to this file; "
              "must exist when given", RD_RESTART),
    RD_K_BOOL(rd_config, "reject_unknown", reject_unknown_tools, false,
              "true: a tool without a manifest is NOT_FOUND (reloadable)"),
    {.name = "external", .type = RD_KEY_CUSTOM, .offset = RD_KEY_NO_FIELD,
     .parse = parse_external, .release = free_external, .type_doc = "list",
     .range_doc = "up to 1024 tool ids or \"prefix*\"", .default_doc = "none",
     .doc = "tools served without a manifest that manifests may name in alternatives and "
            "depends_on (reloadable)"},
};
static const rd_key_table TOOLS = RD_KEY_TABLE("tools", NULL, TOOLS_KEYS, NULL);

static const rd_key CLASSIFICATION_KEYS[] = {
    {.name = "rules_file", .type = RD_KEY_TEXT, RD_FIELD(rd_config, rules_file),
     .hi = PATH_TEXT_MAX, .required = true,
     .doc = "the classification rules (docs/CLASSIFICATION.md), relative to this file "
            "(reloadable)"},
};
static const rd_key_table CLASSIFICATION =
    RD_KEY_TABLE("classification", NULL, CLASSIFICATION_KEYS, NULL);

/* The main file. Its sections in the order the docs show them. */
static const rd_key MAIN_KEYS[] = {
    RD_K_SECTION(rd_config, "server", server, &rd_keys_server, "the gRPC server"),
    RD_K_SECTION(rd_config, "store", store, &rd_keys_store, "where the state lives"),
    RD_K_SECTION(rd_config, "defaults", defaults, &rd_keys_policies,
                 "the policies of a tool without a manifest"),
    RD_K_SECTION_HERE("turn", &rd_keys_turn, "per-turn settings"),
    RD_K_SECTION_HERE("tools", &TOOLS, "the tool manifests"),
    {.name = "classification", .type = RD_KEY_SECTION, .offset = 0, .sub = &CLASSIFICATION,
     .required = true, .doc = "the rules file"},
    RD_K_SECTION(rd_config, "metrics", metrics, &rd_keys_metrics, "the Prometheus endpoint"),
    RD_K_SECTION_HERE("log", &rd_keys_log, "logging"),
    RD_K_SECTION_HERE("reload", &rd_keys_reload, "reloading"),
    RD_K_SECTION(rd_config, "learning", learning, &rd_keys_learning,
                 "learning from outcomes (docs/FLEET.md)"),
    RD_K_SECTION_HERE("tracing", &rd_keys_tracing, "decisions as OpenTelemetry spans"),
};
const rd_key_table rd_keys_main = RD_KEY_TABLE("recovery.yaml", NULL, MAIN_KEYS, NULL);

void rd_config_restart_changes(const rd_config *old, const rd_config *next,
                               rd_config_change_fn report, void *ctx)
{
    rd_keys_restart_changes(&rd_keys_main, old, next, "", report, ctx);
}

void rd_config_keys_markdown(FILE *out)
{
    const rd_key_table *files[] = {&rd_keys_main, &rd_keys_manifest};
    rd_keys_markdown(out, files, 2, "###");
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

static int load_rules(rd_config *cfg, const rd_yctx *mc, const rd_ynode *root)
{
    const char *key = "classification.rules_file";
    int line = rd_ymap_key_line(rd_ymap_get(root, "classification"), "rules_file");
    char *file = rd_config_resolve_relative(cfg->path, cfg->rules_file);
    if (!file)
        return rd_yerr(mc, line, key, "out of memory");
    free(cfg->rules_file);
    cfg->rules_file = file;
    if (access(file, R_OK) != 0)
        return rd_yerr(mc, line, key, "cannot open \"%s\": %s", file, strerror(errno));
    rd_yctx rc_ctx = {.file = file, .err = mc->err, .err_cap = mc->err_cap};
    return rd_rules_load(&rc_ctx, &cfg->rules);
}

static unsigned workers_for_this_machine(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 1)
        return 1;
    return cores > RD_MAX_WORKERS ? RD_MAX_WORKERS : (unsigned)cores;
}

static int set_defaults(rd_config *cfg, const char *path)
{
    if (rd_keys_defaults(&rd_keys_main, cfg) != RD_OK)
        return RD_ERR_NOMEM;
    cfg->path = strdup(path);
    cfg->defaults.id = strdup("*");
    return cfg->path && cfg->defaults.id ? RD_OK : RD_ERR_NOMEM;
}

static int load_all(rd_config *cfg, const char *path, char *err, size_t err_cap)
{
    rd_yctx c = {.file = path, .err = err, .err_cap = err_cap};
    if (set_defaults(cfg, path) != RD_OK)
        return rd_yerr(&c, 0, "(file)", "out of memory");
    rd_ynode *root;
    rd_config_sources sources = {0};
    int rc = rd_config_merge_load(&c, &root, &sources);
    if (rc != RD_OK)
        goto done;
    rc = rd_keys_parse(&c, root, 1, "", &rd_keys_main, cfg);
    if (rc == RD_OK)
        rc = load_rules(cfg, &c, root);
    if (rc == RD_OK) {
        const rd_ynode *tools = rd_ymap_get(root, "tools");
        rd_tools_ref ref = {.dir = cfg->tools_dir,
                            .line = rd_ymap_key_line(tools, "directory"),
                            .given = rd_ymap_get(tools, "directory") != NULL};
        rc = rd_config_load_tools(cfg, &c, &ref);
    }
    if (rc == RD_OK && cfg->server.workers == 0)
        cfg->server.workers = workers_for_this_machine();
    rd_yaml_free(root);
done:
    if (rc != RD_OK)
        rd_config_merge_blame(&sources, path, err, err_cap);
    rd_config_sources_free(&sources);
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
    rd_keys_free(&rd_keys_main, cfg);
    free(cfg->path);
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
