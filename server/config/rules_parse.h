/* Internal to server/config: the rules file and the condition/result
 * vocabulary shared by rules and tool-manifest overrides.
 *
 * Ownership: every function fills structs whose strings and arrays are
 * malloc'd; on error the struct may be partly filled and the caller
 * releases it with the matching *_clear function (which accepts zeroed or
 * partly filled structs). */
#ifndef RD_CONFIG_RULES_PARSE_H
#define RD_CONFIG_RULES_PARSE_H

#include "config/config.h"
#include "config/yaml_util.h"

#define RD_RULES_MAX 4096
#define RD_PATTERN_MAX 256
#define RD_SUGGESTION_MAX 4096
#define RD_CONDITION_LIST_MAX 1024

/* Loads c->file as a rules file into *rs (zeroed by the caller). */
int rd_rules_load(const rd_yctx *c, rd_ruleset *rs);
void rd_ruleset_clear(rd_ruleset *rs);

/* A `when:` mapping: at least one condition, no empty lists. */
int rd_match_parse(const rd_yctx *c, const rd_ynode *when, const char *path, rd_match *m);
void rd_match_clear(rd_match *m);

int rd_parse_retryability(const rd_yctx *c, const rd_ynode *node, const char *path,
                          rd_retryability *out);
int rd_parse_category(const rd_yctx *c, const rd_ynode *node, const char *path,
                      rd_category *out);

/* 1..RD_ID_MAX bytes of [A-Za-z0-9_.:/-]; with allow_prefix, one trailing
 * '*' is allowed as well ("web_*"). */
bool rd_valid_tool_id(const char *s, bool allow_prefix);

#endif
