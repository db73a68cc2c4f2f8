#include "store/factory.h"

static rd_store_limits limits_from_config(const rd_store_config *c)
{
    return (rd_store_limits){
        .max_tools = c->max_tools,
        .tool_idle_ttl_ms = c->tool_idle_ttl_ms,
        .turn_ttl_ms = c->turn_ttl_ms,
        .max_turns = c->max_turns,
        .max_events_per_turn = c->max_events_per_turn,
        .outcome_ttl_ms = c->outcome_ttl_ms,
        .max_outcomes = c->max_outcomes,
    };
}

rd_store *rd_store_from_config(const rd_config *cfg, rd_status *st)
{
    rd_store_limits limits = limits_from_config(&cfg->store);
    switch (cfg->store.backend) {
    case RD_STORE_MEMORY: {
        rd_store *s = rd_store_memory_new(&limits);
        if (!s)
            rd_status_set(st, RD_ERR_NOMEM, "store: out of memory");
        return s;
    }
    case RD_STORE_REDIS:
        break;
    }
    rd_status_set(st, RD_ERR_CONFIG, "store.backend: not supported by this build");
    return NULL;
}
