#include "store/factory.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/redis.h"
#include "store/resilient.h"

static rd_store_limits limits_from_config(const rd_store_config *c,
                                          const rd_learning_policy *learning)
{
    return (rd_store_limits){
        .max_tools = c->max_tools,
        .tool_idle_ttl_ms = c->tool_idle_ttl_ms,
        .turn_ttl_ms = c->turn_ttl_ms,
        .max_turns = c->max_turns,
        .max_events_per_turn = c->max_events_per_turn,
        .outcome_ttl_ms = c->outcome_ttl_ms,
        .max_outcomes = c->max_outcomes,
        .max_signatures = learning->max_signatures,
        .signature_ttl_ms = learning->ttl_ms,
    };
}

static rd_store *memory_store(const rd_store_limits *limits, rd_status *st)
{
    rd_store *s = rd_store_memory_new(limits);
    if (!s)
        rd_status_set(st, RD_ERR_NOMEM, "store: out of memory");
    return s;
}

/* "host:port" or "unix:/path" into the options (host points into buf). */
/* Host and port of store.redis.address, which the configuration has
 * checked (config_store.c, with file:line): here it is only split. */
static void split_address(const char *address, char *buf, size_t cap, rd_redis_options *o)
{
    if (strncmp(address, "unix:", 5) == 0) {
        o->unix_socket = address + 5;
        return;
    }
    const char *colon = strrchr(address, ':');
    size_t host_len = colon ? (size_t)(colon - address) : strlen(address);
    if (host_len >= cap)
        host_len = cap - 1;
    memcpy(buf, address, host_len);
    buf[host_len] = '\0';
    o->host = buf;
    o->port = colon ? atoi(colon + 1) : RD_REDIS_DEFAULT_PORT;
}

/* Redis shared by every replica, wrapped so a Redis outage degrades to the
 * local memory store instead of failing calls (docs/REDIS.md). */
static rd_store *redis_store(const rd_redis_config *r, unsigned workers,
                             const rd_store_limits *limits, rd_store **shared_out, rd_status *st)
{
    char host[256];
    rd_redis_options o = {
        .password = r->password,
        .db = r->db,
        .key_prefix = r->key_prefix,
        .command_timeout_ms = (int)r->command_timeout_ms,
        .connect_timeout_ms = (int)r->connect_timeout_ms,
        .sentinels = (const char *const *)r->sentinels,
        .n_sentinels = r->n_sentinels,
        .master_name = r->master_name,
        .cluster = (const char *const *)r->cluster,
        .n_cluster = r->n_cluster,
        .cluster_refresh_ms = (int)r->cluster_refresh_ms,
        .pool_size = workers + 1,
        .closed_cache_ms = (int)r->closed_cache_ms,
        .outcome_batch_ms = (int)r->outcome_batch_ms,
        .read_cache_ms = (int)r->read_cache_ms,
        .limits = *limits,
    };
    if (r->n_sentinels == 0 && r->n_cluster == 0)
        split_address(r->address, host, sizeof host, &o);
    rd_store *shared = rd_store_redis_new(&o, st);
    if (!shared)
        return NULL;
    rd_store *local = memory_store(limits, st);
    rd_resilience_options ro = {.probe_interval_ms = r->probe_interval_ms};
    rd_store *wrapped = local ? rd_store_resilient_new(shared, local, &ro) : NULL;
    if (!wrapped) {
        rd_store_destroy(local);
        rd_store_destroy(shared);
        if (st && st->code == RD_OK)
            rd_status_set(st, RD_ERR_NOMEM, "store: cannot start the degraded-mode wrapper");
        return NULL;
    }
    if (shared_out)
        *shared_out = shared;
    return wrapped;
}

rd_store *rd_store_from_config(const rd_store_config *c, const rd_learning_policy *learning,
                               unsigned workers, rd_store **shared, rd_status *st)
{
    rd_store_limits limits = limits_from_config(c, learning);
    if (shared)
        *shared = NULL;
    switch (c->backend) {
    case RD_STORE_MEMORY:
        return memory_store(&limits, st);
    case RD_STORE_REDIS:
        return redis_store(&c->redis, workers, &limits, shared, st);
    }
    rd_status_set(st, RD_ERR_CONFIG, "store.backend: unknown backend");
    return NULL;
}
