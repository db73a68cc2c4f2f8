/* The Redis store: rd_store_ops on Redis (see redis.h and docs/REDIS.md).
 *
 * Keys (P = key_prefix; every key of one tool or turn shares a hash tag so
 * a script only ever touches one Cluster slot):
 *   P{tool:<id>}:breaker   string the breaker record and its call window (breaker_read.lua)
 *   P{tool:<id>}:probe     string "<token> <generation> <lease_until>", PX lease
 *   P{outcome:<id>}        string claim time, PX outcome_ttl
 *   P{turn:<id>}:meta      hash  s = started_at, t = last touch, n = events, d = dropped
 *   P{turn:<id>}:events    list  one serialised rd_trace_event per element
 *   P{tools} P{turns} P{outcomes}  sorted sets, only when the matching cap is set
 *                          (in a cluster, large ones in shards P{tools:<k>}: redis_ops.h)
 *
 * Ownership: every string the store keeps is copied; replies are freed
 * here; turn_read's array is malloc'd for the caller. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/redis_ops.h"

static void rs_report(rd_store *s, rd_store_report *out);

static const rd_store_ops redis_ops;

/* ---- lifetime ---- */

static void rs_set_change_listener(rd_store *s, rd_store_change_fn fn, void *ctx)
{
    redis_store *r = rd_redis_as_store(s);
    pthread_mutex_lock(&r->listener_lock);
    r->listener = fn;
    r->listener_ctx = ctx;
    pthread_mutex_unlock(&r->listener_lock);
}

static void rs_destroy(rd_store *s)
{
    redis_store *r = rd_redis_as_store(s);
    rd_redis_batch_stop(r); /* its last flush needs the pool */
    rd_redis_subscriber_stop(r);
    pthread_mutex_destroy(&r->listener_lock);
    pthread_mutex_destroy(&r->error_lock);
    for (size_t i = 0; r->pool && i < r->pool_size; i++) {
        conn_slot *slot = &r->pool[i];
        for (size_t k = 0; k < RD_CLUSTER_MAX_NODES; k++)
            if (slot->node_ctx[k] && slot->node_ctx[k] != slot->ctx)
                redisFree(slot->node_ctx[k]);
        if (slot->ctx)
            redisFree(slot->ctx);
        pthread_mutex_destroy(&slot->lock);
    }
    free(r->pool);
    if (r->cluster) {
        rd_cluster_destroy(r->cluster);
        free(r->cluster);
    }
    rd_redis_cache_destroy(&r->cache);
    rd_redis_target_free(&r->target);
    free(r->prefix);
    free(r->channel);
    free(r);
}

static const rd_store_ops redis_ops = {
    .name = "redis",
    .admit = rd_redis_op_admit,
    .record = rd_redis_op_record,
    .record_call = rd_redis_op_record_call,
    .stats = rd_redis_op_stats,
    .budget = rd_redis_op_budget,
    .latency = rd_redis_op_latency,
    .learn_link = rd_redis_op_learn_link,
    .learn_stats = rd_redis_op_learn_stats,
    .force = rd_redis_op_force,
    .get = rd_redis_op_get,
    .list = rd_redis_op_list,
    .claim_outcome = rd_redis_op_claim_outcome,
    .turn_append = rd_redis_op_turn_append,
    .turn_touch = rd_redis_op_turn_touch,
    .turn_read = rd_redis_op_turn_read,
    .quota = rd_redis_op_quota,
    .evict = rd_redis_op_evict,
    .destroy = rs_destroy,
    .set_change_listener = rs_set_change_listener,
    .report = rs_report,
};

static int check_prefix(const char *prefix, rd_status *st)
{
    if (strpbrk(prefix, "{}"))
        return rd_status_set(st, RD_ERR_CONFIG,
                             "store.redis.key_prefix: must not contain '{' or '}' "
                             "(they would replace the per-tool hash tag)");
    if (strlen(prefix) > RD_PREFIX_MAX)
        return rd_status_set(st, RD_ERR_CONFIG, "store.redis.key_prefix: longer than %d bytes",
                             RD_PREFIX_MAX);
    return RD_OK;
}

static int init_pool(redis_store *r, size_t size, rd_status *st)
{
    r->pool = calloc(size, sizeof *r->pool);
    if (!r->pool)
        return rd_status_set(st, RD_ERR_NOMEM, "store.redis: out of memory");
    r->pool_size = size;
    for (size_t i = 0; i < size; i++) {
        pthread_mutex_init(&r->pool[i].lock, NULL);
        rd_rng_seed_os(&r->pool[i].rng);
        r->pool[i].node = -1;
    }
    return RD_OK;
}

/* Redis Cluster: the topology, a first fetch of the slot map (a cluster
 * that is down at start is not an error) and its refresher. */
static int init_cluster(redis_store *r, const rd_redis_options *opt, rd_status *st)
{
    if (r->target.n_seeds == 0)
        return RD_OK;
    r->cluster = calloc(1, sizeof *r->cluster);
    if (!r->cluster)
        return rd_status_set(st, RD_ERR_NOMEM, "store.redis: out of memory");
    if (rd_cluster_init(r->cluster, opt->cluster_refresh_ms, 0, rd_redis_fetch_slots, r) != 0) {
        free(r->cluster);
        r->cluster = NULL;
        return rd_status_set(st, RD_ERR_INTERNAL, "store.redis: cannot set up the cluster map");
    }
    (void)rd_cluster_refresh(r->cluster, 0);
    if (rd_cluster_start(r->cluster) != 0)
        return rd_status_set(st, RD_ERR_INTERNAL, "store: cannot start the cluster refresher");
    return RD_OK;
}

static int init_store(redis_store *r, const rd_redis_options *opt, rd_status *st)
{
    const char *prefix = opt->key_prefix && opt->key_prefix[0] ? opt->key_prefix
                                                                : RD_REDIS_DEFAULT_PREFIX;
    int rc = check_prefix(prefix, st);
    if (rc != RD_OK)
        return rc;
    r->prefix = strdup(prefix);
    size_t channel_len = strlen(prefix) + sizeof "breaker-events";
    r->channel = malloc(channel_len);
    if (!r->prefix || !r->channel)
        return rd_status_set(st, RD_ERR_NOMEM, "store.redis: out of memory");
    snprintf(r->channel, channel_len, "%sbreaker-events", prefix);
    rc = rd_redis_target_init(&r->target, opt, st);
    if (rc != RD_OK)
        return rc;
    rc = init_pool(r, opt->pool_size ? opt->pool_size : RD_REDIS_DEFAULT_POOL_SIZE, st);
    if (rc == RD_OK)
        rc = init_cluster(r, opt, st);
    if (rc != RD_OK)
        return rc;
    /* The subscriber thread also watches the sentinels for a failover. */
    if (r->local_cache || r->target.n_sentinels)
        rc = rd_redis_subscriber_start(r, st);
    if (rc == RD_OK)
        rc = rd_redis_batch_start(r, rd_redis_send_run, st);
    return rc;
}

/* hiredis writes with plain write(): a connection Redis closed would kill
 * the process with SIGPIPE. Ignored unless the program set its own handler. */
static void ignore_sigpipe(void)
{
    struct sigaction current;
    if (sigaction(SIGPIPE, NULL, &current) == 0 && current.sa_handler == SIG_DFL)
        signal(SIGPIPE, SIG_IGN);
}

rd_store *rd_store_redis_new(const rd_redis_options *opt, rd_status *st)
{
    ignore_sigpipe();
    redis_store *r = calloc(1, sizeof *r);
    if (!r) {
        rd_status_set(st, RD_ERR_NOMEM, "store.redis: out of memory");
        return NULL;
    }
    r->base.ops = &redis_ops;
    r->base.limits = opt->limits;
    r->use_caller_time = opt->use_caller_time;
    r->evict_sweep = opt->evict_sweep;
    r->local_cache = !opt->no_local_cache;
    r->closed_cache_ms = r->local_cache && !opt->use_caller_time && opt->closed_cache_ms > 0
                             ? opt->closed_cache_ms
                             : 0;
    r->read_cache_ms = r->local_cache && !opt->use_caller_time && opt->read_cache_ms > 0
                           ? opt->read_cache_ms
                           : 0;
    /* Batching needs the cache's word that the breaker is CLOSED. */
    r->batch_ms = r->closed_cache_ms > 0 && opt->outcome_batch_ms > 0
                              ? opt->outcome_batch_ms
                              : 0;
    rd_redis_cache_init(&r->cache);
    pthread_mutex_init(&r->listener_lock, NULL);
    pthread_mutex_init(&r->error_lock, NULL);
    atomic_init(&r->auth_refused, false);
    atomic_init(&r->stopping, false);
    atomic_init(&r->master_epoch, 0);
    if (init_store(r, opt, st) != RD_OK) {
        rs_destroy(&r->base);
        return NULL;
    }
    return &r->base;
}

bool rd_store_redis_stats(rd_store *s, rd_redis_stats *out)
{
    if (!s || s->ops != &redis_ops)
        return false;
    redis_store *r = rd_redis_as_store(s);
    *out = (rd_redis_stats){
        .commands = atomic_load(&r->commands),
        .errors = atomic_load(&r->errors),
        .cache_hits = atomic_load(&r->cache_hits),
        .read_hits = atomic_load(&r->read_hits),
        .script_reloads = atomic_load(&r->script_reloads),
        .connects = atomic_load(&r->connects),
        .invalidations = atomic_load(&r->invalidations),
        .deferred = atomic_load(&r->deferred),
        .deferred_dropped = atomic_load(&r->deferred_dropped),
        .subscribed = atomic_load(&r->cache.usable),
        .auth_refused = atomic_load(&r->auth_refused),
        .cluster_refreshes = r->cluster ? atomic_load(&r->cluster->refreshes) : 0,
        .cluster_redirects = r->cluster ? atomic_load(&r->cluster->redirects) : 0,
    };
    pthread_mutex_lock(&r->error_lock);
    snprintf(out->last_error, sizeof out->last_error, "%s", r->last_error);
    pthread_mutex_unlock(&r->error_lock);
    return true;
}

static void rs_report(rd_store *s, rd_store_report *out)
{
    rd_redis_stats r;
    if (!rd_store_redis_stats(s, &r))
        return;
    out->shared = true;
    out->errors = r.errors;
    out->cache_answers = r.cache_hits;
    out->cache_reads = r.read_hits;
    out->outcomes_batched = r.deferred;
    out->outcomes_dropped = r.deferred_dropped;
    out->auth_refused = r.auth_refused;
    snprintf(out->last_error, sizeof out->last_error, "%s", r.last_error);
}
