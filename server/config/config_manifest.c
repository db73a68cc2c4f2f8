/* One tool manifest (a file of the tools directory): its id, the policies
 * it changes over the defaults (config_policies.c), classification
 * overrides, alternatives, dependencies and its default value. */
#include "config/config_manifest.h"

#include <stdlib.h>
#include <string.h>

#include "config/config_tables.h"
#include "config/rules_parse.h"
#include "domain/err.h"

#define MAX_OVERRIDES 256
#define MAX_ALTERNATIVES 16

static int parse_tool_id(const rd_yctx *c, const rd_ynode *map, const rd_ynode *id,
                         const char *path, void *base)
{
    (void)map;
    rd_tool_config *t = base;
    const char *text;
    int rc = rd_yscalar_str(c, id, path, RD_ID_MAX, &text);
    if (rc != RD_OK)
        return rc;
    if (!rd_valid_tool_id(text, false))
        return rd_yerr(c, id->line, path,
                       "\"%s\" is not a tool id (1..%d bytes of [A-Za-z0-9_.:/-])", text,
                       RD_ID_MAX);
    t->id = strdup(text);
    t->line = id->line;
    return t->id ? RD_OK : rd_yerr(c, id->line, path, "out of memory");
}

/* A list of other tools' ids: no repeats, never the tool itself. */
static int parse_id_list(const rd_yctx *c, const rd_ynode *list, const char *p,
                         const char *self, size_t max_n, char ***out, size_t *n)
{
    char pi[RD_YPATH_MAX];
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

static int parse_alternatives(const rd_yctx *c, const rd_ynode *map, const rd_ynode *list,
                              const char *path, void *base)
{
    rd_tool_config *t = base;
    t->alternatives_line = rd_ymap_key_line(map, "alternatives");
    return parse_id_list(c, list, path, t->id, MAX_ALTERNATIVES, &t->alternatives,
                         &t->n_alternatives);
}

static int parse_depends_on(const rd_yctx *c, const rd_ynode *map, const rd_ynode *list,
                            const char *path, void *base)
{
    rd_tool_config *t = base;
    t->depends_on_line = rd_ymap_key_line(map, "depends_on");
    return parse_id_list(c, list, path, t->id, RD_DEPENDS_MAX, &t->depends_on,
                         &t->n_depends_on);
}

/* ---- classification.overrides: a table per entry ---- */

static int parse_when(const rd_yctx *c, const rd_ynode *map, const rd_ynode *v, const char *path,
                      void *base)
{
    (void)map;
    return rd_match_parse(c, v, path, &((rd_override *)base)->when);
}

static int parse_override_retryability(const rd_yctx *c, const rd_ynode *map, const rd_ynode *v,
                                       const char *path, void *base)
{
    (void)map;
    return rd_parse_retryability(c, v, path, &((rd_override *)base)->retryability);
}

static int parse_override_category(const rd_yctx *c, const rd_ynode *map, const rd_ynode *v,
                                   const char *path, void *base)
{
    (void)map;
    return rd_parse_category(c, v, path, &((rd_override *)base)->category);
}

static int check_override(const rd_yctx *c, const rd_ynode *map, const char *path, void *base)
{
    (void)base;
    if (rd_ymap_get(map, "retryability") || rd_ymap_get(map, "category") ||
        rd_ymap_get(map, "suggestion"))
        return RD_OK;
    return rd_yerr(c, map->line, path, "an override needs retryability, category or suggestion");
}

static const rd_key OVERRIDE_KEYS[] = {
    {.name = "when", .type = RD_KEY_CUSTOM, .offset = RD_KEY_NO_FIELD, .parse = parse_when,
     .required = true, .type_doc = "mapping", .range_doc = "the conditions of a rule",
     .doc = "when the override applies (docs/CLASSIFICATION.md); at least one condition"},
    {.name = "retryability", .type = RD_KEY_CUSTOM, .offset = RD_KEY_NO_FIELD,
     .parse = parse_override_retryability, .type_doc = "choice",
     .range_doc = "`transient` | `permanent`", .default_doc = "the rules'",
     .doc = "replaces the rules' retryability"},
    {.name = "category", .type = RD_KEY_CUSTOM, .offset = RD_KEY_NO_FIELD,
     .parse = parse_override_category, .type_doc = "choice",
     .range_doc = "a category of the rules file", .default_doc = "the rules'",
     .doc = "replaces the rules' category"},
    {.name = "suggestion", .type = RD_KEY_TEXT, RD_FIELD(rd_override, suggestion),
     .hi = RD_SUGGESTION_MAX, .doc = "replaces the rules' suggestion"},
};
static const rd_key_table OVERRIDE = RD_KEY_TABLE(
    "tool.classification.overrides[]",
    "Each entry needs `when` and at least one of the other keys.", OVERRIDE_KEYS, check_override);

static int parse_overrides(const rd_yctx *c, const rd_ynode *map, const rd_ynode *list,
                           const char *path, void *base)
{
    (void)map;
    rd_tool_config *t = base;
    int rc = rd_yexpect(c, list, path, RD_YSEQ);
    if (rc == RD_OK && list->n > MAX_OVERRIDES)
        rc = rd_yerr(c, list->line, path, "more than %d entries", MAX_OVERRIDES);
    if (rc != RD_OK || list->n == 0)
        return rc;
    t->overrides = calloc(list->n, sizeof *t->overrides);
    if (!t->overrides)
        return rd_yerr(c, list->line, path, "out of memory");
    t->n_overrides = list->n;
    for (size_t i = 0; i < list->n && rc == RD_OK; i++) {
        char p[RD_YPATH_MAX];
        rd_override *o = &t->overrides[i];
        o->line = list->items[i]->line;
        rc = rd_keys_parse(c, list->items[i], o->line, rd_ypath_index(p, path, i), &OVERRIDE, o);
    }
    return rc;
}

static int parse_default_value(const rd_yctx *c, const rd_ynode *map, const rd_ynode *v,
                               const char *path, void *base)
{
    (void)map;
    rd_tool_config *t = base;
    if (v->type != RD_YSCALAR || rd_yis_null(v))
        return rd_yerr(c, v->line, path, "expected text, got %s (write JSON as a quoted string)",
                       rd_ytype_name(v));
    if (v->len > RD_DEFAULT_VALUE_MAX)
        return rd_yerr(c, v->line, path, "longer than %d bytes", RD_DEFAULT_VALUE_MAX);
    t->default_value = strdup(v->text);
    t->has_default = t->default_value != NULL;
    return t->has_default ? RD_OK : rd_yerr(c, v->line, path, "out of memory");
}

static const rd_key CLASSIFICATION_KEYS[] = {
    {.name = "overrides", .type = RD_KEY_CUSTOM, .offset = RD_KEY_NO_FIELD,
     .parse = parse_overrides, .sub = &OVERRIDE, .type_doc = "list", .default_doc = "none",
     .range_doc = "up to 256 entries: `tool.classification.overrides[]`",
     .doc = "when `when` matches (the conditions of the rules file), the fields given replace "
            "the rules' classification"},
};
static const rd_key_table CLASSIFICATION =
    RD_KEY_TABLE("tool.classification", NULL, CLASSIFICATION_KEYS, NULL);

static const rd_key TOOL_KEYS[] = {
    {.name = "id", .type = RD_KEY_CUSTOM, .offset = RD_KEY_NO_FIELD, .parse = parse_tool_id,
     .required = true, .type_doc = "text", .range_doc = "1..256 bytes of [A-Za-z0-9_.:/-]",
     .doc = "the tool id executors send; unique across the directory"},
    {.name = "policies", .type = RD_KEY_INCLUDE, .offset = 0, .sub = &rd_keys_policies},
    {.name = "effects", .type = RD_KEY_INCLUDE, .offset = 0, .sub = &rd_keys_effects},
    {.name = "scope", .type = RD_KEY_INCLUDE, .offset = 0, .sub = &rd_keys_scope},
    RD_K_SECTION_HERE("classification", &CLASSIFICATION, "this tool's classification overrides"),
    {.name = "alternatives", .type = RD_KEY_CUSTOM, .offset = RD_KEY_NO_FIELD,
     .parse = parse_alternatives, .type_doc = "list", .default_doc = "none",
     .range_doc = "up to 16 tool ids",
     .doc = "tools to use instead, in order of preference; each a manifest or in "
            "`tools.external`"},
    {.name = "depends_on", .type = RD_KEY_CUSTOM, .offset = RD_KEY_NO_FIELD,
     .parse = parse_depends_on, .type_doc = "list", .default_doc = "none",
     .range_doc = "up to 64 tool ids, no cycles",
     .doc = "tools whose failure skips or defaults this one in a plan"},
    RD_K_BOOL(rd_tool_config, "optional", optional, false,
              "a failure of this tool does not fail the plan"),
    {.name = "default", .type = RD_KEY_CUSTOM, .offset = RD_KEY_NO_FIELD,
     .parse = parse_default_value, .type_doc = "text", .default_doc = "none",
     .range_doc = "up to 65536 bytes (JSON as a quoted string)",
     .doc = "the value used in place of this tool's result when it is skipped"},
};
static const rd_key_table TOOL = RD_KEY_TABLE(
    "tool", "A tool manifest: one file of `tools.directory` holding `tool:` and these keys. It "
            "starts from the values of `defaults` and changes what it names.",
    TOOL_KEYS, NULL);

static const rd_key MANIFEST_KEYS[] = {
    {.name = "tool", .type = RD_KEY_SECTION, .offset = 0, .sub = &TOOL, .required = true,
     .doc = "one manifest per file"},
};
const rd_key_table rd_keys_manifest = RD_KEY_TABLE("(manifest)", NULL, MANIFEST_KEYS, NULL);

int rd_config_parse_manifest(const rd_yctx *c, const rd_ynode *root, rd_tool_config *t)
{
    t->depends_on_line = root->line;
    t->alternatives_line = root->line;
    return rd_keys_parse(c, root, root->line, "", &rd_keys_manifest, t);
}
