/* A manifest's side-effect keys (docs/EFFECTS.md): what the tool does to
 * the world, whether it honours an idempotency key, and which read-only tool
 * tells whether its effect happened. */
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config/config_tables.h"
#include "config/rules_parse.h"
#include "domain/err.h"

static const char *const EFFECTS[] = {"none", "idempotent", "non_idempotent", NULL};
static const int EFFECT_VALUES[] = {RD_EFFECTS_NONE, RD_EFFECTS_IDEMPOTENT,
                                    RD_EFFECTS_NON_IDEMPOTENT};

static int parse_idempotency(const rd_yctx *c, const rd_ynode *map, const rd_ynode *v,
                             const char *path, void *base)
{
    (void)map;
    const char *text;
    int rc = rd_yscalar_str(c, v, path, 16, &text);
    if (rc != RD_OK)
        return rc;
    rd_tool_config *t = base;
    if (strcmp(text, "none") == 0 || strcmp(text, "key") == 0) {
        t->idempotency_key = strcmp(text, "key") == 0;
        return RD_OK;
    }
    return rd_yerr(c, v->line, path, "unknown idempotency \"%s\" (none | key)", text);
}

static int parse_verify_tool(const rd_yctx *c, const rd_ynode *map, const rd_ynode *v,
                             const char *path, void *base)
{
    (void)map;
    rd_tool_config *t = base;
    const char *text;
    int rc = rd_yscalar_str(c, v, path, RD_ID_MAX, &text);
    if (rc != RD_OK)
        return rc;
    if (!rd_valid_tool_id(text, false))
        return rd_yerr(c, v->line, path, "\"%s\" is not a tool id", text);
    if (t->id && strcmp(text, t->id) == 0)
        return rd_yerr(c, v->line, path,
                       "names the tool itself (it must be a read-only tool that tells whether "
                       "this one's effect happened)");
    t->verify_tool_line = v->line;
    free(t->verify_tool);
    if (!(t->verify_tool = strdup(text)))
        return rd_yerr(c, v->line, path, "out of memory");
    return RD_OK;
}

static void free_verify_tool(void *base)
{
    rd_tool_config *t = base;
    free(t->verify_tool);
    t->verify_tool = NULL;
}

static const rd_key EFFECT_KEYS[] = {
    {.name = "effects", .type = RD_KEY_ENUM, RD_FIELD(rd_tool_config, effects), .names = EFFECTS,
     .values = EFFECT_VALUES, .default_doc = "undeclared (retried as any tool)",
     .doc = "what a call does to the world; non_idempotent: a failure whose effect may have "
            "happened is answered VERIFY or ESCALATE, never RETRY"},
    {.name = "idempotency", .type = RD_KEY_CUSTOM, .offset = RD_KEY_NO_FIELD,
     .parse = parse_idempotency, .type_doc = "enum", .range_doc = "none, key",
     .default_doc = "none",
     .doc = "key: the tool honours the idempotency key the executor sends, so a retry with "
            "the same key is safe"},
    {.name = "verify_tool", .type = RD_KEY_CUSTOM, .offset = RD_KEY_NO_FIELD,
     .parse = parse_verify_tool, .release = free_verify_tool, .type_doc = "text",
     .range_doc = "a tool id (a manifest or in `tools.external`), not this tool",
     .default_doc = "none", .doc = "the read-only tool VERIFY names"},
};
const rd_key_table rd_keys_effects =
    RD_KEY_TABLE("tool (effects)", NULL, EFFECT_KEYS, NULL);
