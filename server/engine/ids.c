/* Checks of the ids a request names (tool, turn, outcome, ...). */
#include "engine/engine_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- validation ---- */

/* *len (when not NULL) receives the value's length, measured once here
 * for the writers that need it later. */
static int measure_id(const char *field, const char *value, bool required, size_t *len,
                      rd_status *st)
{
    size_t n = value && value[0] ? strlen(value) : 0; /* most optional ids are "" */
    if (len)
        *len = n;
    if (n == 0)
        return required ? rd_status_set(st, RD_ERR_INVALID, "%s: required", field) : RD_OK;
    if (n > RD_ID_MAX)
        return rd_status_set(st, RD_ERR_INVALID, "%s: longer than %d bytes", field,
                             RD_ID_MAX);
    return RD_OK;
}

int eng_check_id(const char *field, const char *value, bool required, rd_status *st)
{
    return measure_id(field, value, required, NULL, st);
}

int eng_check_tool(const rd_engine *e, const char *tool_id, size_t *len, rd_status *st)
{
    int rc = measure_id("tool_id", tool_id, true, len, st);
    if (rc != RD_OK)
        return rc;
    if (e->policy->reject_unknown_tools && !rd_policy_find_tool(e->policy, tool_id))
        return rd_status_set(st, RD_ERR_NOT_FOUND, "tool_id: unknown tool '%s'", tool_id);
    return RD_OK;
}

const char *eng_safe_str(const char *s)
{
    return s ? s : "";
}
