/* A manifest's breaker_scope (config_scope.c; docs/SCOPES.md):
 *
 *   breaker_scope:
 *     dimensions: [provider, credential]   # broadest first, 1..4 names of [a-z0-9_]
 *     levels:                              # first match wins
 *       - {when: {http_status: [429]}, level: credential}
 *       - {when: {http_status: [503]}, level: provider}
 *       - {when: {http_status: [401, 403]}, level: none}
 *     default_level: credential            # absent: the narrowest dimension
 * A level is a dimension, `tool` (the tool's own breaker) or `none`.
 * Errors: "FILE:LINE: tool.breaker_scope...: problem". */
#ifndef RD_CONFIG_CONFIG_SCOPE_H
#define RD_CONFIG_CONFIG_SCOPE_H

#include "config/yaml_util.h"
#include "domain/model.h"

#define RD_CONFIG_SCOPE_KEYS "breaker_scope"

int rd_config_parse_tool_scope(const rd_yctx *c, const rd_ynode *tool, rd_tool_config *t);
void rd_config_free_tool_scope(rd_breaker_scope *bs);

#endif
