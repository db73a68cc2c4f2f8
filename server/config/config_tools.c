/* Tool manifests: one manifest parsed (timeout, policies, overrides,
 * alternatives, dependencies, default), and the tools directory loaded in
 * file-name order, with unique ids and no dependency cycles. */
#include "config/config_tools.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_effects.h"
#include "config/config_fleet.h"
#include "config/config_scope.h"
#include "config/config_ops.h"
#include "config/config_refs.h"
#include "config/rules_parse.h"
#include "domain/err.h"

#define MAX_MANIFESTS 100000
#define MAX_OVERRIDES 256
#define MAX_ALTERNATIVES 16

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
                                        "optional", "default", RD_CONFIG_EFFECT_KEYS,
                                        RD_CONFIG_SCOPE_KEYS, NULL};

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
        rc = rd_config_parse_policies(c, tool, "tool", t);
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
    if (rc == RD_OK)
        rc = rd_config_parse_tool_effects(c, tool, t);
    if (rc == RD_OK)
        rc = rd_config_parse_tool_scope(c, tool, t);
    return rc;
}

void rd_config_free_tool(rd_tool_config *t)
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
    free(t->verify_tool);
    rd_config_free_tool_scope(&t->scope);
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
        char *file = rd_config_join_path(dir, strlen(dir), names[i]);
        if (!file)
            return RD_ERR_NOMEM;
        rc = load_manifest(l, file, err, err_cap);
        free(file);
    }
    return rc == RD_OK ? check_tool_graph(l, err, err_cap) : rc;
}

int rd_config_load_tools(rd_config *cfg, const rd_yctx *mc, const rd_tools_ref *refs)
{
    char *dir = rd_config_resolve_relative(cfg->path, refs->dir ? refs->dir : "tools.d");
    if (!dir)
        return rd_yerr(mc, refs->line, "tools.directory", "out of memory");
    free(cfg->tools_dir);
    cfg->tools_dir = strdup(dir); /* the reload watcher watches it */
    DIR *d = opendir(dir);
    if (!d) {
        int e = errno;
        /* The default directory is optional; one named explicitly is not. */
        int rc = e == ENOENT && !refs->given
                     ? RD_OK
                     : rd_yerr(mc, refs->line, "tools.directory",
                               "cannot open directory \"%s\": %s", dir, strerror(e));
        free(dir);
        return rc;
    }
    char **names;
    size_t n;
    int rc = list_manifests(mc, d, refs->line, &names, &n);
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
