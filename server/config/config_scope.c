/* A manifest's breaker_scope (docs/SCOPES.md): the dimensions its breakers
 * are keyed by, broadest first, and which failures count at which level. */
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config/config_tables.h"
#include "config/rules_parse.h"
#include "domain/err.h"
#include "domain/scope.h"

#define MAX_SCOPE_RULES 64

static int parse_dimensions(const rd_yctx *c, const rd_ynode *list, rd_breaker_scope *bs)
{
    const char *path = "tool.breaker_scope.dimensions";
    int rc = rd_yexpect(c, list, path, RD_YSEQ);
    if (rc != RD_OK)
        return rc;
    if (list->n == 0 || list->n > RD_SCOPE_DIMENSIONS_MAX)
        return rd_yerr(c, list->line, path, "expected 1 to %d dimensions",
                       RD_SCOPE_DIMENSIONS_MAX);
    if (!(bs->dimensions = calloc(list->n, sizeof *bs->dimensions)))
        return rd_yerr(c, list->line, path, "out of memory");
    char pi[RD_YPATH_MAX];
    for (size_t i = 0; i < list->n; i++) {
        const char *text;
        rc = rd_yscalar_str(c, list->items[i], rd_ypath_index(pi, path, i), RD_ID_MAX, &text);
        if (rc != RD_OK)
            return rc;
        if (!rd_scope_dimension_ok(text) || strcmp(text, "tool") == 0 ||
            strcmp(text, "none") == 0)
            return rd_yerr(c, list->items[i]->line, pi,
                           "\"%s\" is not a dimension (1 to %d of a-z, 0-9 and _; not tool "
                           "or none)",
                           text, RD_SCOPE_DIMENSION_MAX);
        for (size_t j = 0; j < i; j++)
            if (strcmp(bs->dimensions[j], text) == 0)
                return rd_yerr(c, list->items[i]->line, pi, "\"%s\" named twice", text);
        if (!(bs->dimensions[i] = strdup(text)))
            return rd_yerr(c, list->line, path, "out of memory");
        bs->n_dimensions = i + 1;
    }
    return RD_OK;
}

/* A level by name: a dimension, tool or none. */
static int parse_level(const rd_yctx *c, const rd_ynode *v, const char *path,
                       const rd_breaker_scope *bs, int *out)
{
    const char *text;
    int rc = rd_yscalar_str(c, v, path, RD_ID_MAX, &text);
    if (rc != RD_OK)
        return rc;
    if (strcmp(text, "tool") == 0) {
        *out = RD_SCOPE_LEVEL_TOOL;
        return RD_OK;
    }
    if (strcmp(text, "none") == 0) {
        *out = RD_SCOPE_LEVEL_NONE;
        return RD_OK;
    }
    for (size_t i = 0; i < bs->n_dimensions; i++)
        if (strcmp(bs->dimensions[i], text) == 0) {
            *out = (int)i;
            return RD_OK;
        }
    return rd_yerr(c, v->line, path, "unknown level \"%s\" (a dimension, tool or none)", text);
}

static const char *const RULE_KEYS[] = {"when", "level", NULL};

static int parse_rules(const rd_yctx *c, const rd_ynode *list, rd_breaker_scope *bs)
{
    const char *path = "tool.breaker_scope.levels";
    int rc = rd_yexpect(c, list, path, RD_YSEQ);
    if (rc != RD_OK || list->n == 0)
        return rc;
    if (list->n > MAX_SCOPE_RULES)
        return rd_yerr(c, list->line, path, "more than %d entries", MAX_SCOPE_RULES);
    if (!(bs->rules = calloc(list->n, sizeof *bs->rules)))
        return rd_yerr(c, list->line, path, "out of memory");
    bs->n_rules = list->n;
    for (size_t i = 0; i < list->n && rc == RD_OK; i++) {
        const rd_ynode *item = list->items[i];
        char pi[RD_YPATH_MAX], p[RD_YPATH_MAX];
        rd_ypath_index(pi, path, i);
        bs->rules[i].line = item->line;
        rc = rd_yexpect(c, item, pi, RD_YMAP);
        if (rc == RD_OK)
            rc = rd_ymap_check(c, item, pi, RULE_KEYS);
        const rd_ynode *when = rd_ymap_get(item, "when"), *level = rd_ymap_get(item, "level");
        if (rc == RD_OK && (!when || !level))
            rc = rd_yerr(c, item->line, pi, "needs when and level");
        if (rc == RD_OK)
            rc = rd_match_parse(c, when, rd_ypath(p, pi, "when"), &bs->rules[i].when);
        if (rc == RD_OK)
            rc = parse_level(c, level, rd_ypath(p, pi, "level"), bs, &bs->rules[i].level);
    }
    return rc;
}

static const char *const SCOPE_KEYS[] = {"dimensions", "levels", "default_level", NULL};

static void free_scope(void *base)
{
    rd_breaker_scope *bs = &((rd_tool_config *)base)->scope;
    for (size_t i = 0; bs->dimensions && i < bs->n_dimensions; i++)
        free(bs->dimensions[i]);
    free(bs->dimensions);
    for (size_t i = 0; bs->rules && i < bs->n_rules; i++)
        rd_match_clear(&bs->rules[i].when);
    free(bs->rules);
    *bs = (rd_breaker_scope){0};
}

static int parse_scope(const rd_yctx *c, const rd_ynode *tool, const rd_ynode *map,
                       const char *path, void *base)
{
    (void)tool;
    rd_breaker_scope *bs = &((rd_tool_config *)base)->scope;
    int rc = rd_yexpect(c, map, path, RD_YMAP);
    if (rc == RD_OK)
        rc = rd_ymap_check(c, map, path, SCOPE_KEYS);
    const rd_ynode *dims = rd_ymap_get(map, "dimensions");
    if (rc == RD_OK && !dims)
        rc = rd_yerr(c, map->line, path, "needs dimensions");
    if (rc == RD_OK)
        rc = parse_dimensions(c, dims, bs);
    if (rc != RD_OK)
        return rc;
    bs->default_level = (int)bs->n_dimensions - 1;
    const rd_ynode *levels = rd_ymap_get(map, "levels");
    if (levels)
        rc = parse_rules(c, levels, bs);
    const rd_ynode *def = rd_ymap_get(map, "default_level");
    if (rc == RD_OK && def)
        rc = parse_level(c, def, "tool.breaker_scope.default_level", bs, &bs->default_level);
    return rc;
}

static const rd_key SCOPE_ROWS[] = {
    {.name = "breaker_scope", .type = RD_KEY_CUSTOM, .offset = RD_KEY_NO_FIELD,
     .parse = parse_scope, .release = free_scope, .type_doc = "mapping",
     .range_doc = "`dimensions` (1..4, broadest first), `levels` (up to 64 `{when, level}`), "
                  "`default_level` (a dimension, `tool` or `none`)",
     .default_doc = "none (one breaker per tool)",
     .doc = "breakers keyed by the request's scope, a failure counted at the level its rule "
            "names (docs/SCOPES.md)"},
};
const rd_key_table rd_keys_scope = RD_KEY_TABLE("tool (breaker_scope)", NULL, SCOPE_ROWS, NULL);
