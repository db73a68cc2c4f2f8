/* server.tenants: the teams one deployment serves, each with its own token
 * and limits (docs/TENANTS.md). */
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config/config_tables.h"
#include "domain/err.h"

static int check_tenant_id(const rd_yctx *c, int line, const char *path, const void *field)
{
    const char *id = *(char *const *)field;
    if (strspn(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") !=
        strlen(id))
        return rd_yerr(c, line, path, "\"%s\": only letters, digits, '_', '.' and '-'", id);
    return RD_OK;
}

static const rd_key TENANT_KEYS[] = {
    {.name = "id", .type = RD_KEY_TEXT, RD_FIELD(rd_tenant_config, id), .hi = RD_TENANT_ID_MAX,
     .required = true, .check = check_tenant_id, .range_doc = "letters, digits, _ . -",
     .doc = "the tenant's name: its namespace in the store, and what admin calls name"},
    RD_K_SECRET(rd_tenant_config, "token", token,
                "its bearer token (`token_file` or `token_env`); never logged", .required = true),
    RD_K_INT(rd_tenant_config, "max_tools", max_tools, 0, 10000000, 0,
             "breakers it may track, scoped keys included; past it a call for a new one is "
             "refused with `RESOURCE_EXHAUSTED`; 0 = only the store's limit"),
    RD_K_INT(rd_tenant_config, "max_turns", max_turns, 0, 10000000, 0,
             "live turn traces it may keep; past it a new turn is refused with "
             "`RESOURCE_EXHAUSTED`; 0 = only the store's limit"),
};
/* A secret row reads whichever of its two keys is there: that one of them
 * is, is checked here. */
static int check_tenant(const rd_yctx *c, const rd_ynode *map, const char *path, void *base)
{
    const rd_tenant_config *t = base;
    char p[RD_YPATH_MAX];
    if (!t->token)
        return rd_yerr(c, map->line, rd_ypath(p, path, "token_file"),
                       "missing (required: token_file or token_env)");
    return RD_OK;
}
const rd_key_table rd_keys_tenant = RD_KEY_TABLE(
    "server.tenants[]", "Limits are counted by each replica over the keys it saw within the "
                        "store's idle times (docs/TENANTS.md).", TENANT_KEYS, check_tenant);

void rd_config_free_tenants(void *base)
{
    rd_server_config *s = base;
    for (size_t i = 0; i < s->n_tenants; i++)
        rd_keys_free(&rd_keys_tenant, &s->tenants[i]);
    free(s->tenants);
    s->tenants = NULL;
    s->n_tenants = 0;
}

int rd_config_parse_tenants(const rd_yctx *c, const rd_ynode *map, const rd_ynode *list,
                            const char *path, void *base)
{
    (void)map;
    rd_server_config *s = base;
    int rc = rd_yexpect(c, list, path, RD_YSEQ);
    if (rc == RD_OK && list->n > RD_TENANTS_MAX)
        rc = rd_yerr(c, list->line, path, "more than %d entries", RD_TENANTS_MAX);
    if (rc != RD_OK || list->n == 0)
        return rc;
    if (!(s->tenants = calloc(list->n, sizeof *s->tenants)))
        return rd_yerr(c, list->line, path, "out of memory");
    for (size_t i = 0; i < list->n && rc == RD_OK; i++) {
        char p[RD_YPATH_MAX];
        rd_tenant_config *t = &s->tenants[i];
        int line = list->items[i]->line;
        s->n_tenants = i + 1;
        if ((rc = rd_keys_defaults(&rd_keys_tenant, t)) != RD_OK)
            return rd_yerr(c, line, path, "out of memory");
        rc = rd_keys_parse(c, list->items[i], line, rd_ypath_index(p, path, i), &rd_keys_tenant, t);
        for (size_t j = 0; j < i && rc == RD_OK; j++) {
            if (strcmp(s->tenants[j].id, t->id) == 0)
                rc = rd_yerr(c, line, p, "id '%s' given twice", t->id);
            else if (strcmp(s->tenants[j].token, t->token) == 0)
                rc = rd_yerr(c, line, p, "tenant '%s' has the token of tenant '%s'", t->id,
                             s->tenants[j].id);
        }
    }
    return rc;
}

bool rd_secret_equal(const char *expected, const unsigned char *given, size_t given_len)
{
    size_t expected_len = strlen(expected);
    unsigned char diff = expected_len != given_len;
    for (size_t i = 0; i < given_len; i++)
        diff |= given[i] ^ (unsigned char)expected[i < expected_len ? i : 0];
    return diff == 0;
}

const rd_tenant_config *rd_config_tenant_by_token(const rd_server_config *s,
                                                  const unsigned char *token, size_t len)
{
    const rd_tenant_config *found = NULL;
    for (size_t i = 0; i < s->n_tenants; i++) /* every one compared: no early exit */
        if (rd_secret_equal(s->tenants[i].token, token, len))
            found = &s->tenants[i];
    return found;
}

const rd_tenant_config *rd_config_tenant_by_id(const rd_server_config *s, const char *id,
                                               size_t len)
{
    for (size_t i = 0; i < s->n_tenants; i++)
        if (strlen(s->tenants[i].id) == len && memcmp(s->tenants[i].id, id, len) == 0)
            return &s->tenants[i];
    return NULL;
}
