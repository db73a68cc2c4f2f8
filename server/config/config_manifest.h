/* One tool manifest: `tool: {id, policies, classification, alternatives,
 * depends_on, optional, default}` (config_manifest.c). Internal to the
 * loader. Errors: "FILE:LINE: KEY: problem", RD_ERR_CONFIG. */
#ifndef RD_CONFIG_CONFIG_MANIFEST_H
#define RD_CONFIG_CONFIG_MANIFEST_H

#include "config/config.h"
#include "config/yaml_util.h"

/* Reads the manifest `root` into *t, which starts as a copy of the
 * defaults' policies; what the manifest names replaces them. On error *t
 * may be partly filled (rd_config_free_tool releases it). */
int rd_config_parse_manifest(const rd_yctx *c, const rd_ynode *root, rd_tool_config *t);

#endif
