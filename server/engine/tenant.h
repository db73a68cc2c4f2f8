/* Tenants: one namespace of the store per team (docs/TENANTS.md).
 *
 * A tenant store stands in front of the shared store for one call: every
 * key the engine hands it (a tool's or scoped breaker's, with its budget,
 * latencies and learned signatures; a turn; an outcome id) becomes
 * "<tenant>/<key>", and a listing shows only the tenant's keys, with the
 * prefix taken off. The engine above it sees the ids of the request, and
 * every backend (memory, Redis, Redis Cluster: the prefix is inside the
 * key's hash tag) keeps tenants apart with no code of its own. A tenant
 * cannot name another's key: whatever its id, its own prefix comes first.
 *
 * Per-tenant limits (max_tools, max_turns) count the keys used within the
 * store's idle times (tool_idle_ttl_ms, turn_ttl_ms): past the limit a new
 * key is refused with RD_ERR_EXHAUSTED naming it, before the call changes
 * anything (the store's precheck). A shared store counts them for every
 * replica at once (its quota operation), asked again for a key only after
 * an eighth of its idle time; a store of one process, or a shared one in
 * an outage, is counted by this process. */
#ifndef RD_ENGINE_TENANT_H
#define RD_ENGINE_TENANT_H

#include "domain/err.h"
#include "domain/store.h"
#include "domain/types.h"

typedef struct rd_tenant_quota rd_tenant_quota;

typedef struct rd_tenant_store {
    rd_store base;               /* first, so rd_store * converts */
    rd_store *inner;             /* borrowed */
    char prefix[RD_TENANT_ID_MAX + 2]; /* "<tenant>/" */
    size_t prefix_len;
    size_t max_tools, max_turns; /* 0 = no limit of the tenant's own */
    rd_tenant_quota *quota;      /* the process's counts for this tenant, looked up when a
                                  * limit is first checked (never freed) */
} rd_tenant_store;

/* Sets t up in front of inner for `tenant` (1..RD_TENANT_ID_MAX bytes, no
 * '/'): RD_ERR_INVALID otherwise. t lives as long as the call; it owns
 * nothing. An operation a limit counts answers RD_ERR_NOMEM when the
 * tenant's counts cannot be allocated. */
int rd_tenant_store_init(rd_tenant_store *t, rd_store *inner, const char *tenant,
                         size_t max_tools, size_t max_turns, rd_status *st);

/* Calls fn with each tenant's count of calls refused at its limits
 * (max_tools, max_turns) since the process started, for the tenants with
 * a limit that were seen. */
typedef void (*rd_tenant_refusals_fn)(void *ctx, const char *tenant, uint64_t tools_refused,
                                      uint64_t turns_refused);
void rd_tenant_refusals_visit(rd_tenant_refusals_fn fn, void *ctx);

/* Splits a namespaced key: *rest points after "<tenant>/" and the tenant
 * is copied to tenant (RD_TENANT_ID_MAX + 1 bytes). False when key has no
 * tenant prefix. */
bool rd_tenant_split(const char *key, char *tenant, const char **rest);

#endif
