/* Lookups in the policy (model.h). */
#include "domain/model.h"

#include <stdlib.h>
#include <string.h>

static int compare_id_to_tool(const void *key, const void *elem)
{
    return strcmp((const char *)key, ((const rd_tool_config *)elem)->id);
}

const rd_tool_config *rd_policy_find_tool(const rd_policy *p, const char *tool_id)
{
    if (!p || !tool_id || p->n_tools == 0)
        return NULL;
    return bsearch(tool_id, p->tools, p->n_tools, sizeof *p->tools, compare_id_to_tool);
}

const rd_tool_config *rd_policy_tool_or_defaults(const rd_policy *p, const char *tool_id)
{
    const rd_tool_config *t = rd_policy_find_tool(p, tool_id);
    return t ? t : &p->defaults;
}
