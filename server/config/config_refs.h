/* References between tools: every tool a manifest names in `alternatives`
 * or `depends_on` must exist, either as a manifest of its own or in
 * `tools.external` (ids, or "prefix*" for a family of tools served without
 * manifests). A misspelt alternative would otherwise send executors to a
 * tool that does not exist; a misspelt dependency would never cascade. */
#ifndef RD_CONFIG_REFS_H
#define RD_CONFIG_REFS_H

#include <stddef.h>

#include "config/config.h"
#include "config/yaml_util.h"

/* tools.external of the main file's `tools` map into cfg (owned by cfg,
 * released by rd_config_refs_free). Errors name file:line. */
int rd_config_parse_external(const rd_yctx *c, const rd_ynode *tools_map, rd_config *cfg);

/* Checks every reference of cfg->tools (sorted by id). The error names the
 * manifest's file:line and the key ("tool.alternatives[0]"). */
int rd_config_check_refs(const rd_config *cfg, char *err, size_t err_cap);

void rd_config_refs_free(rd_config *cfg);

#endif
