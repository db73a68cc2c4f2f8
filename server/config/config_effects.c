/* A manifest's side-effect keys (see config_effects.h). */
#include "config/config_effects.h"

#include <stdlib.h>
#include <string.h>

#include "config/rules_parse.h"
#include "domain/err.h"

/* One of names[] (NULL-terminated), as values[]; the error lists them. */
static int get_choice(const rd_yctx *c, const rd_ynode *tool, const char *key,
                      const char *const *names, const int *values, const char *listed, int *out)
{
    const rd_ynode *v = rd_ymap_get(tool, key);
    if (!v)
        return RD_OK;
    char p[RD_YPATH_MAX];
    const char *text;
    int rc = rd_yscalar_str(c, v, rd_ypath(p, "tool", key), RD_ID_MAX, &text);
    if (rc != RD_OK)
        return rc;
    for (size_t i = 0; names[i]; i++)
        if (strcmp(text, names[i]) == 0) {
            *out = values[i];
            return RD_OK;
        }
    return rd_yerr(c, v->line, p, "unknown value \"%s\" (%s)", text, listed);
}

static int parse_verify_tool(const rd_yctx *c, const rd_ynode *tool, rd_tool_config *t)
{
    const rd_ynode *v = rd_ymap_get(tool, "verify_tool");
    if (!v)
        return RD_OK;
    const char *text;
    int rc = rd_yscalar_str(c, v, "tool.verify_tool", RD_ID_MAX, &text);
    if (rc != RD_OK)
        return rc;
    if (!rd_valid_tool_id(text, false))
        return rd_yerr(c, v->line, "tool.verify_tool", "\"%s\" is not a tool id", text);
    if (t->id && strcmp(text, t->id) == 0)
        return rd_yerr(c, v->line, "tool.verify_tool",
                       "names the tool itself (it must be a read-only tool that tells whether "
                       "this one's effect happened)");
    t->verify_tool_line = v->line;
    if (!(t->verify_tool = strdup(text)))
        return rd_yerr(c, v->line, "tool.verify_tool", "out of memory");
    return RD_OK;
}

int rd_config_parse_tool_effects(const rd_yctx *c, const rd_ynode *tool, rd_tool_config *t)
{
    static const char *const effects[] = {"none", "idempotent", "non_idempotent", NULL};
    static const int effect_values[] = {RD_EFFECTS_NONE, RD_EFFECTS_IDEMPOTENT,
                                        RD_EFFECTS_NON_IDEMPOTENT};
    static const char *const modes[] = {"none", "key", NULL};
    static const int mode_values[] = {0, 1};
    int e = (int)t->effects, mode = t->idempotency_key;
    int rc = get_choice(c, tool, "effects", effects, effect_values,
                        "none | idempotent | non_idempotent", &e);
    t->effects = (rd_effects)e;
    if (rc == RD_OK)
        rc = get_choice(c, tool, "idempotency", modes, mode_values, "none | key", &mode);
    t->idempotency_key = mode != 0;
    if (rc == RD_OK)
        rc = parse_verify_tool(c, tool, t);
    return rc;
}
