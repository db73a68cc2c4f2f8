/* The tools directory: every manifest in it loaded (config_manifest.c)
 * in file-name order, ids unique, no dependency cycles, every reference
 * to another tool known (config_refs.c). */
#include "config/config_tools.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_manifest.h"
#include "config/config_refs.h"
#include "config/config_tables.h"
#include "config/rules_parse.h"
#include "domain/err.h"

#define MAX_MANIFESTS 100000

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
    rd_keys_free(&rd_keys_effects, t);
    rd_keys_free(&rd_keys_scope, t);
    free(t->file);
}

/* ---- the tools directory ---- */

/* Manifests in file-name order; cfg->tools is sorted by id only at the
 * very end. */
typedef struct tool_loader {
    rd_config *cfg;
    size_t cap;
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
    /* a manifest starts from the defaults' policies (every row of their table) */
    if (rd_keys_copy(&rd_keys_policies, t, &l->cfg->defaults) != RD_OK ||
        !(t->file = strdup(file)))
        return rd_yerr(&c, 0, "(file)", "out of memory");
    rd_ynode *root;
    int rc = rd_yaml_load(&c, &root);
    if (rc != RD_OK)
        return rc;
    rc = rd_config_parse_manifest(&c, root, t);
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
                        size_t start, char *err, size_t err_cap)
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
            return rd_yerr(&c, t->depends_on_line, "tool.depends_on", "dependency cycle: %s",
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
                           char *err, size_t err_cap)
{
    size_t *left = malloc((cfg->n_tools ? cfg->n_tools : 1) * sizeof *left);
    if (!left || resolve_dependencies(cfg, byid, left) != RD_OK) {
        free(left);
        return RD_ERR_NOMEM;
    }
    int rc = RD_OK;
    for (size_t i = 0; i < cfg->n_tools && rc == RD_OK; i++)
        if (left[i] > 0)
            rc = report_cycle(cfg, byid, left, i, err, err_cap);
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
        rc = check_no_cycles(cfg, byid, err, err_cap);
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
        if (rc == RD_OK)
            rc = rd_config_check_refs(cfg, mc->err, mc->err_cap);
    }
    free_names(names, n);
    free(dir);
    return rc;
}
