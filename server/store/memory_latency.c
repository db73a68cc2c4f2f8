/* The embedded store's latency distributions (rd_store_ops.latency): per
 * tool, the bucket counts of the current and the previous window. */
#include "store/memory_internal.h"

#include <string.h>

typedef struct latency_node {
    node n;                          /* n.age_ms = last sample */
    int64_t window;                  /* index of the window `current` counts */
    int64_t window_ms;               /* as last used, for eviction */
    uint32_t current[RD_LATENCY_BUCKETS];
    uint32_t previous[RD_LATENCY_BUCKETS];
} latency_node;

/* A cache of evidence, like the budgets: when full, the least recently
 * sampled tool goes. */
static bool latencies_make_room(memory_store *m, int64_t now_ms)
{
    return rd_mem_drop_oldest_keep_slot(&m->latencies);
}

bool rd_mem_latency_idle(const memory_store *m, const node *n, int64_t now_ms)
{
    const latency_node *l = (const latency_node *)n;
    return rd_mem_aged_out(n->age_ms, 2 * l->window_ms, now_ms);
}

const node_kind rd_mem_latency_kind = {
    .size = sizeof(latency_node), .make_room = latencies_make_room, .room_retries = 8};

/* Moves the windows on to the one holding now_ms. */
static void roll(latency_node *l, int64_t window)
{
    if (window == l->window)
        return;
    if (window == l->window + 1)
        memcpy(l->previous, l->current, sizeof l->previous);
    else
        memset(l->previous, 0, sizeof l->previous);
    memset(l->current, 0, sizeof l->current);
    l->window = window;
}

static void read_out(const latency_node *l, int64_t window, rd_latency_hist *out)
{
    *out = (rd_latency_hist){0};
    if (!l || window > l->window + 1)
        return; /* both windows are older than the previous one */
    for (size_t i = 0; i < RD_LATENCY_BUCKETS; i++)
        out->counts[i] = window == l->window ? (uint64_t)l->current[i] + l->previous[i]
                                             : l->current[i];
}

int rd_mem_latency(rd_store *s, const char *tool_id, int64_t window_ms, int64_t now_ms,
                   int64_t sample_ms, rd_latency_hist *out, rd_status *st)
{
    int rc = rd_store_check_id("tool_id", tool_id, st);
    if (rc != RD_OK)
        return rc;
    if (window_ms <= 0)
        return rd_status_set(st, RD_ERR_INVALID, "window_ms: must be positive");
    memory_store *m = rd_mem_as_memory(s);
    int64_t window = rd_latency_window_index(now_ms, window_ms);
    if (sample_ms < 0) {
        uint64_t hash = rd_mem_hash_key(m, tool_id);
        shard *sh = rd_mem_shard_for(&m->latencies, hash);
        pthread_mutex_lock(&sh->lock);
        read_out((const latency_node *)rd_mem_table_find(&sh->map, tool_id, hash), window, out);
        pthread_mutex_unlock(&sh->lock);
        return RD_OK;
    }
    shard *sh;
    node *n;
    bool created;
    rc = rd_mem_find_or_create(m, &m->latencies, tool_id, now_ms, &sh, &n, &created);
    if (rc != RD_OK) {
        *out = (rd_latency_hist){0};
        return RD_OK; /* cannot track it: an empty distribution, as documented */
    }
    latency_node *l = (latency_node *)n;
    if (created || l->window_ms != window_ms) {
        memset(l->current, 0, sizeof l->current);
        memset(l->previous, 0, sizeof l->previous);
        l->window = window;
        l->window_ms = window_ms;
    }
    roll(l, window);
    uint32_t *slot = &l->current[rd_latency_bucket(sample_ms)];
    if (*slot < UINT32_MAX)
        (*slot)++;
    rd_mem_table_touch(&sh->map, n, now_ms);
    read_out(l, window, out);
    pthread_mutex_unlock(&sh->lock);
    return RD_OK;
}
