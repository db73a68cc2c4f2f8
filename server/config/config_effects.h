/* A manifest's side-effect keys (config_effects.c; docs/EFFECTS.md):
 *
 *   effects: none | idempotent | non_idempotent   (absent: undeclared,
 *            retried as any tool)
 *   idempotency: key | none      (key: the tool honours the executor's
 *                                 idempotency key; absent = none)
 *   verify_tool: <tool id>       (read-only tool that tells whether the
 *                                 effect happened; checked like alternatives)
 * Errors: "FILE:LINE: tool.KEY: problem". */
#ifndef RD_CONFIG_CONFIG_EFFECTS_H
#define RD_CONFIG_CONFIG_EFFECTS_H

#include "config/yaml_util.h"
#include "domain/model.h"

/* The keys, for the manifest's list of known keys. */
#define RD_CONFIG_EFFECT_KEYS "effects", "idempotency", "verify_tool"

int rd_config_parse_tool_effects(const rd_yctx *c, const rd_ynode *tool, rd_tool_config *t);

#endif
