/* Tool references of the manifests (see config_refs.h). */
#include "config/config_refs.h"

#include <stdlib.h>
#include <string.h>

#include "config/rules_parse.h"
#include "domain/err.h"

#define MAX_EXTERNAL 1024

int rd_config_parse_external(const rd_yctx *c, const rd_ynode *tools_map, rd_config *cfg)
{
    const rd_ynode *list = rd_ymap_get(tools_map, "external");
    if (!list)
        return RD_OK;
    int rc = rd_yexpect(c, list, "tools.external", RD_YSEQ);
    if (rc != RD_OK)
        return rc;
    if (list->n > MAX_EXTERNAL)
        return rd_yerr(c, list->line, "tools.external", "more than %d entries", MAX_EXTERNAL);
    if (list->n == 0)
        return RD_OK;
    if (!(cfg->external_tools = calloc(list->n, sizeof *cfg->external_tools)))
        return rd_yerr(c, list->line, "tools.external", "out of memory");
    char pi[RD_YPATH_MAX];
    for (size_t i = 0; i < list->n; i++) {
        const rd_ynode *item = list->items[i];
        const char *text;
        rc = rd_yscalar_str(c, item, rd_ypath_index(pi, "tools.external", i), RD_ID_MAX, &text);
        if (rc != RD_OK)
            return rc;
        if (!rd_valid_tool_id(text, true))
            return rd_yerr(c, item->line, pi, "\"%s\" is not a tool id or \"prefix*\"", text);
        if (!(cfg->external_tools[i] = strdup(text)))
            return rd_yerr(c, item->line, pi, "out of memory");
        cfg->n_external_tools = i + 1;
    }
    return RD_OK;
}

static bool is_external(const rd_config *cfg, const char *tool_id)
{
    for (size_t i = 0; i < cfg->n_external_tools; i++) {
        const char *e = cfg->external_tools[i];
        size_t len = strlen(e);
        if (len > 0 && e[len - 1] == '*' ? strncmp(tool_id, e, len - 1) == 0
                                         : strcmp(tool_id, e) == 0)
            return true;
    }
    return false;
}

static int check_list(const rd_config *cfg, const rd_tool_config *t, const char *key,
                      char *const *ids, size_t n, int line, char *err, size_t err_cap)
{
    rd_yctx c = {.file = t->file, .err = err, .err_cap = err_cap};
    char p[RD_YPATH_MAX], pi[RD_YPATH_MAX];
    rd_ypath(p, "tool", key);
    for (size_t i = 0; i < n; i++) {
        if (rd_config_find_tool(cfg, ids[i]) || is_external(cfg, ids[i]))
            continue;
        return rd_yerr(&c, line, rd_ypath_index(pi, p, i),
                       "unknown tool \"%s\": no manifest in the tools directory and not in "
                       "tools.external",
                       ids[i]);
    }
    return RD_OK;
}

static int check_one(const rd_config *cfg, const rd_tool_config *t, const char *key,
                     const char *id, int line, char *err, size_t err_cap)
{
    if (rd_config_find_tool(cfg, id) || is_external(cfg, id))
        return RD_OK;
    rd_yctx c = {.file = t->file, .err = err, .err_cap = err_cap};
    char p[RD_YPATH_MAX];
    return rd_yerr(&c, line, rd_ypath(p, "tool", key),
                   "unknown tool \"%s\": no manifest in the tools directory and not in "
                   "tools.external",
                   id);
}

int rd_config_check_refs(const rd_config *cfg, char *err, size_t err_cap)
{
    int rc = RD_OK;
    for (size_t i = 0; i < cfg->n_tools && rc == RD_OK; i++) {
        const rd_tool_config *t = &cfg->tools[i];
        rc = check_list(cfg, t, "alternatives", t->alternatives, t->n_alternatives,
                        t->alternatives_line, err, err_cap);
        if (rc == RD_OK)
            rc = check_list(cfg, t, "depends_on", t->depends_on, t->n_depends_on,
                            t->depends_on_line, err, err_cap);
        if (rc == RD_OK && t->verify_tool)
            rc = check_one(cfg, t, "verify_tool", t->verify_tool, t->verify_tool_line, err,
                           err_cap);
    }
    return rc;
}

void rd_config_refs_free(rd_config *cfg)
{
    for (size_t i = 0; i < cfg->n_external_tools; i++)
        free(cfg->external_tools[i]);
    free(cfg->external_tools);
    cfg->external_tools = NULL;
    cfg->n_external_tools = 0;
}
