/* Scoped breaker keys (see scope.h). */
#include "domain/scope.h"

#include <string.h>

#include "domain/classify.h"
#include "domain/trace.h"

bool rd_scope_dimension_ok(const char *s)
{
    size_t n = 0;
    for (; s[n]; n++) {
        char ch = s[n];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_'))
            return false;
    }
    return n >= 1 && n <= RD_SCOPE_DIMENSION_MAX;
}

/* A value may not hold what separates a key's parts, nor a Redis hash tag's
 * braces. */
static const char *value_problem(const char *v)
{
    size_t n = strlen(v);
    if (n == 0)
        return "required";
    if (n > RD_SCOPE_VALUE_MAX)
        return "longer than 64 bytes";
    if (rd_utf8_valid_len(v, n) != n)
        return "not valid UTF-8";
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)v[i];
        if (ch < 0x20 || ch == 0x7f)
            return "contains a control character";
        if (ch == '|' || ch == '=' || ch == '{' || ch == '}')
            return "contains '|', '=', '{' or '}'";
    }
    return NULL;
}

int rd_scope_check(const rd_scope_label *labels, size_t n, rd_status *st)
{
    if (n > RD_SCOPE_LABELS_MAX)
        return rd_status_set(st, RD_ERR_INVALID, "scope: more than %d labels",
                             RD_SCOPE_LABELS_MAX);
    for (size_t i = 0; i < n; i++) {
        if (!rd_scope_dimension_ok(labels[i].dimension))
            return rd_status_set(st, RD_ERR_INVALID,
                                 "scope[%zu].dimension: must be 1 to %d of a-z, 0-9 and _", i,
                                 RD_SCOPE_DIMENSION_MAX);
        for (size_t j = 0; j < i; j++)
            if (strcmp(labels[j].dimension, labels[i].dimension) == 0)
                return rd_status_set(st, RD_ERR_INVALID,
                                     "scope[%zu].dimension: \"%s\" given twice", i,
                                     labels[i].dimension);
        const char *problem = value_problem(labels[i].value);
        if (problem)
            return rd_status_set(st, RD_ERR_INVALID, "scope[%zu].value: %s", i, problem);
    }
    return RD_OK;
}

int rd_scope_level_of(const rd_breaker_scope *bs, const char *tool_id, const rd_tool_error *err)
{
    for (size_t i = 0; err && i < bs->n_rules; i++)
        if (rd_match_error(&bs->rules[i].when, tool_id, err))
            return bs->rules[i].level;
    return bs->default_level;
}

static const char *value_of(const rd_scope_label *labels, size_t n, const char *dimension)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(labels[i].dimension, dimension) == 0)
            return labels[i].value;
    return NULL;
}

size_t rd_scope_depth(const rd_breaker_scope *bs, const rd_scope_label *labels, size_t n)
{
    size_t depth = 0;
    while (depth < bs->n_dimensions && value_of(labels, n, bs->dimensions[depth]))
        depth++;
    return depth;
}

static bool append(char *buf, size_t *len, const char *s)
{
    size_t n = strlen(s);
    if (*len + n > RD_ID_MAX)
        return false;
    memcpy(buf + *len, s, n);
    *len += n;
    buf[*len] = '\0';
    return true;
}

bool rd_scope_key(char *buf, const char *tool_id, const rd_breaker_scope *bs,
                  const rd_scope_label *labels, size_t n, int level)
{
    size_t len = 0;
    buf[0] = '\0';
    if (!append(buf, &len, tool_id))
        return false;
    for (int d = 0; d <= level && (size_t)d < bs->n_dimensions; d++) {
        const char *value = value_of(labels, n, bs->dimensions[d]);
        if (!value || !append(buf, &len, "|") || !append(buf, &len, bs->dimensions[d]) ||
            !append(buf, &len, "=") || !append(buf, &len, value))
            return false;
    }
    return true;
}

const char *rd_scope_level_name(const char *key, size_t *len)
{
    const char *bar = strrchr(key, '|');
    const char *eq = bar ? strchr(bar, '=') : NULL;
    if (!bar || !eq) {
        *len = 0;
        return "";
    }
    *len = (size_t)(eq - bar - 1);
    return bar + 1;
}

const rd_tool_config *rd_policy_tool_of_key(const rd_policy *p, const char *key)
{
    const char *bar = strchr(key, '|');
    if (!bar || (size_t)(bar - key) > RD_ID_MAX)
        return rd_policy_tool_or_defaults(p, key);
    char tool[RD_ID_MAX + 1];
    memcpy(tool, key, (size_t)(bar - key));
    tool[bar - key] = '\0';
    return rd_policy_tool_or_defaults(p, tool);
}
