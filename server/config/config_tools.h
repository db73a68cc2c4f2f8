/* The tools directory (config_tools.c): its manifests loaded and their
 * graph checked; and the path helpers config.c and config_tools.c share. Errors: "FILE:LINE: KEY: problem" in the context's
 * buffer, as everywhere in the loader. */
#ifndef RD_CONFIG_CONFIG_TOOLS_H
#define RD_CONFIG_CONFIG_TOOLS_H

#include "config/config.h"
#include "config/yaml_util.h"

/* Where the main file says the tools directory is. */
typedef struct rd_tools_ref {
    const char *dir;             /* as written (relative to the main file); NULL = "tools.d" */
    int line;
    bool given;                  /* named explicitly: it must exist */
} rd_tools_ref;

/* Loads every manifest of the directory into cfg->tools (sorted by id)
 * and checks their references and dependency graph. */
int rd_config_load_tools(rd_config *cfg, const rd_yctx *mc, const rd_tools_ref *refs);

/* Frees what a manifest owns (not t itself). */
void rd_config_free_tool(rd_tool_config *t);
/* "dir/name" from the first dir_len bytes of dir; malloc'd. */
char *rd_config_join_path(const char *dir, size_t dir_len, const char *name);
/* `rel` resolved against the directory of `base_file`; malloc'd. */
char *rd_config_resolve_relative(const char *base_file, const char *rel);

#endif
