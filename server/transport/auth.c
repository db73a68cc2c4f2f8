#include "transport/auth.h"

#include <stdbool.h>
#include <string.h>

#define BEARER "Bearer "

/* Equal without revealing, through timing, where the first difference is
 * (the loop always runs over the whole presented value). */
static bool same_secret(const char *expected, const unsigned char *given, size_t given_len)
{
    size_t expected_len = strlen(expected);
    unsigned char diff = expected_len != given_len;
    for (size_t i = 0; i < given_len; i++)
        diff |= given[i] ^ (unsigned char)expected[i < expected_len ? i : 0];
    return diff == 0;
}

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

grpc_status_code rd_auth_check(rd_auth_kind kind, const rd_config *cfg,
                               const grpc_metadata_array *md, const char **why)
{
    const char *expected = NULL;
    if (kind == RD_AUTH_NONE)
        return GRPC_STATUS_OK;
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
    if (!same_secret(expected, token, len)) {
        *why = "invalid bearer token";
        return GRPC_STATUS_UNAUTHENTICATED;
    }
    return GRPC_STATUS_OK;
}
