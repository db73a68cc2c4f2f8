#include "transport/auth.h"

#include <grpc/support/alloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "domain/log.h"

#define BEARER "Bearer "

/* The token of the authorization header, or NULL when there is none. */
static const unsigned char *bearer_token(const grpc_metadata_array *md, size_t *len)
{
    for (size_t i = 0; i < md->count; i++) {
        const grpc_metadata *m = &md->metadata[i];
        if (!grpc_slice_str_cmp(m->key, "authorization")) {
            size_t n = GRPC_SLICE_LENGTH(m->value);
            const unsigned char *v = GRPC_SLICE_START_PTR(m->value);
            size_t prefix = strlen(BEARER);
            if (n <= prefix || strncasecmp((const char *)v, BEARER, prefix) != 0)
                return NULL;
            *len = n - prefix;
            return v + prefix;
        }
    }
    return NULL;
}

/* The value of the x-recoveryd-tenant header, or NULL. */
static const char *tenant_header(const grpc_metadata_array *md, size_t *len)
{
    for (size_t i = 0; i < md->count; i++) {
        const grpc_metadata *m = &md->metadata[i];
        if (!grpc_slice_str_cmp(m->key, RD_TENANT_HEADER)) {
            *len = GRPC_SLICE_LENGTH(m->value);
            return (const char *)GRPC_SLICE_START_PTR(m->value);
        }
    }
    return NULL;
}

/* The admin token acts for the tenant its call names. */
static grpc_status_code admin_tenant(const rd_config *cfg, const grpc_metadata_array *md,
                                     char *tenant, const char **why)
{
    size_t len = 0;
    const char *id = tenant_header(md, &len);
    if (!id) {
        *why = RD_TENANT_HEADER ": required with the admin token (server.tenants is set)";
        return GRPC_STATUS_INVALID_ARGUMENT;
    }
    const rd_tenant_config *t = rd_config_tenant_by_id(&cfg->server, id, len);
    if (!t) {
        *why = RD_TENANT_HEADER ": not a configured tenant";
        return GRPC_STATUS_NOT_FOUND;
    }
    memcpy(tenant, t->id, strlen(t->id) + 1);
    return GRPC_STATUS_OK;
}

/* With server.tenants: a tenant's token is its tenant; the admin token
 * names one. */
static grpc_status_code tenant_check(rd_auth_kind kind, const rd_config *cfg,
                                     const grpc_metadata_array *md, char *tenant,
                                     const char **why)
{
    size_t len = 0;
    const unsigned char *token = bearer_token(md, &len);
    if (!token) {
        *why = "missing bearer token (authorization: Bearer <token>)";
        return GRPC_STATUS_UNAUTHENTICATED;
    }
    const rd_tenant_config *t = rd_config_tenant_by_token(&cfg->server, token, len);
    const char *admin = cfg->server.admin_token;
    bool is_admin = admin && rd_secret_equal(admin, token, len);
    if (kind == RD_AUTH_ADMIN && t) {
        *why = "a tenant's token may not act on AdminService (it takes the admin token)";
        return GRPC_STATUS_PERMISSION_DENIED;
    }
    if (is_admin)
        return admin_tenant(cfg, md, tenant, why);
    if (kind == RD_AUTH_ADMIN && !admin) {
        *why = "admin token not configured";
        return GRPC_STATUS_PERMISSION_DENIED;
    }
    if (!t) {
        *why = "invalid bearer token";
        return GRPC_STATUS_UNAUTHENTICATED;
    }
    memcpy(tenant, t->id, strlen(t->id) + 1);
    return GRPC_STATUS_OK;
}

grpc_status_code rd_auth_check(rd_auth_kind kind, const rd_config *cfg,
                               const grpc_metadata_array *md, char *tenant, const char **why)
{
    const char *expected = NULL;
    tenant[0] = '\0';
    if (kind == RD_AUTH_NONE)
        return GRPC_STATUS_OK;
    if (kind == RD_AUTH_REFLECTION) {
        if (cfg->server.reflection)
            return GRPC_STATUS_OK;
        *why = "reflection is switched off (server.reflection: false)";
        return GRPC_STATUS_UNIMPLEMENTED;
    }
    if (cfg->server.n_tenants)
        return tenant_check(kind, cfg, md, tenant, why);
    if (kind == RD_AUTH_ADMIN) {
        expected = cfg->server.admin_token;
        if (!expected) {
            *why = "admin token not configured";
            return GRPC_STATUS_PERMISSION_DENIED;
        }
    } else {
        expected = cfg->server.auth_token;
        if (!expected)
            return GRPC_STATUS_OK;
    }
    size_t len = 0;
    const unsigned char *token = bearer_token(md, &len);
    if (!token) {
        *why = "missing bearer token (authorization: Bearer <token>)";
        return GRPC_STATUS_UNAUTHENTICATED;
    }
    if (!rd_secret_equal(expected, token, len)) {
        *why = "invalid bearer token";
        return GRPC_STATUS_UNAUTHENTICATED;
    }
    return GRPC_STATUS_OK;
}

/* One line per second at most: a client hammering with a wrong token would
 * otherwise write the log full. The next line says how many were not
 * written. */
#define FAILURE_LOG_INTERVAL_MS 1000

static pthread_mutex_t failure_lock = PTHREAD_MUTEX_INITIALIZER;
static int64_t failure_next_ms;
static unsigned long long failure_unlogged;

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void rd_auth_log_failure(grpc_call *call, const char *method, grpc_status_code code,
                         const char *why)
{
    int64_t now = mono_ms();
    unsigned long long unlogged;
    pthread_mutex_lock(&failure_lock);
    bool write_now = now >= failure_next_ms;
    if (write_now) {
        failure_next_ms = now + FAILURE_LOG_INTERVAL_MS;
        unlogged = failure_unlogged;
        failure_unlogged = 0;
    } else {
        failure_unlogged++;
    }
    pthread_mutex_unlock(&failure_lock);
    if (!write_now)
        return;
    char *peer = grpc_call_get_peer(call);
    char fields[1024] = "", count[32];
    rd_log_kv(fields, sizeof fields, "peer", peer ? peer : "");
    rd_log_kv(fields, sizeof fields, "method", method);
    rd_log_kv(fields, sizeof fields, "code", code == GRPC_STATUS_PERMISSION_DENIED ? "PERMISSION_DENIED" : "UNAUTHENTICATED");
    rd_log_kv(fields, sizeof fields, "reason", why);
    snprintf(count, sizeof count, "%llu", unlogged);
    rd_log_kv(fields, sizeof fields, "not_logged_before", count);
    gpr_free(peer);
    rd_log(RD_LOG_WARN, "authentication failed", fields);
}
