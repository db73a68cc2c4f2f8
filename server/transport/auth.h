/* Bearer tokens on incoming calls: `authorization: Bearer <token>`.
 * Tokens are compared in constant time; nothing here logs a token. */
#ifndef RD_TRANSPORT_AUTH_H
#define RD_TRANSPORT_AUTH_H

#include <grpc/grpc.h>
#include <grpc/status.h>

#include "config/config.h"
#include "transport/methods.h"

/* The header the admin token names the tenant it acts for with. */
#define RD_TENANT_HEADER "x-recoveryd-tenant"

/* GRPC_STATUS_OK when the call may go ahead; otherwise the status to end
 * it with (UNAUTHENTICATED, or PERMISSION_DENIED for AdminService without a
 * configured admin token or with a tenant's token) and *why, a static
 * message. With server.tenants, `tenant` (RD_TENANT_ID_MAX + 1 bytes)
 * receives the tenant the call acts for: its token's, or for the admin
 * token the one RD_TENANT_HEADER names (INVALID_ARGUMENT without it,
 * NOT_FOUND for an unknown one); "" otherwise. */
grpc_status_code rd_auth_check(rd_auth_kind kind, const rd_config *cfg,
                               const grpc_metadata_array *md, char *tenant, const char **why);

/* Logs a refused call at warn level with the client's address, the method
 * and why (never the token): at most one line a second, the next one
 * counting the failures not logged in between. */
void rd_auth_log_failure(grpc_call *call, const char *method, grpc_status_code code,
                         const char *why);

#endif
