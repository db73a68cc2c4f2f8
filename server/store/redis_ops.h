/* What the files of the Redis store's operations share: key names and
 * small helpers, and the functions one file writes and others use. They
 * stand in a line on redis_batch.h and redis_subscriber.h:
 * redis_breakers.c and redis_turns.c, then redis_fleet.c and
 * redis_evict.c, then redis.c (the operations table and the store's
 * lifetime); each calls only those before it. */
#ifndef RD_STORE_REDIS_OPS_H
#define RD_STORE_REDIS_OPS_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/redis_batch.h"
#include "store/redis_subscriber.h"

#define RD_KEY_MAX 640
#define RD_PREFIX_MAX 128
#define RD_TIME_MAX 9007199254740991LL /* 2^53 - 1: exact in Lua numbers */
#define RD_EVENTS_PER_SCRIPT 48        /* a turn_append chunk; keeps argv bounded */
#define RD_SCAN_COUNT "500"
#define RD_PIPELINE_BATCH 256

static inline redis_store *rd_redis_as_store(rd_store *s)
{
    return (redis_store *)s;
}

static inline int64_t clamp_time(int64_t v)
{
    return v < 0 ? 0 : v > RD_TIME_MAX ? RD_TIME_MAX : v;
}

/* ARGV[1] of every script: the caller's time (tests) or -1 for Redis TIME. */
static inline void time_arg(const redis_store *r, int64_t now_ms, char buf[24])
{
    if (r->use_caller_time)
        snprintf(buf, 24, "%lld", (long long)clamp_time(now_ms));
    else
        snprintf(buf, 24, "-1");
}

static inline void fmt_i64(char buf[24], int64_t v)
{
    snprintf(buf, 24, "%lld", (long long)v);
}

static inline void key_tool(const redis_store *r, const char *tool, const char *part, char *out)
{
    snprintf(out, RD_KEY_MAX, "%s{tool:%s}:%s", r->prefix, tool, part);
}

static inline void key_turn(const redis_store *r, const char *turn, const char *part, char *out)
{
    snprintf(out, RD_KEY_MAX, "%s{turn:%s}:%s", r->prefix, turn, part);
}

static inline void key_outcome(const redis_store *r, const char *id, char *out)
{
    snprintf(out, RD_KEY_MAX, "%s{outcome:%s}", r->prefix, id);
}

/* The capped indexes (P{tools}, P{turns}, P{outcomes}). In a cluster a
 * large one is split in shards, P{tools:<k>}, each on its own slot, a
 * member in shard hash(member) mod shards and each shard capped at its
 * share of the cap: no slot holds the whole index, and the total never
 * passes the cap (a shard may fill before the others: docs/REDIS.md). A
 * small cap keeps one shard, so its bound stays exact. */
#define RD_INDEX_SHARDS 16
#define RD_INDEX_SHARD_MIN 256

static inline size_t index_shards(const redis_store *r, size_t cap)
{
    if (!r->cluster)
        return 1;
    size_t n = cap / RD_INDEX_SHARD_MIN;
    return n < 1 ? 1 : n > RD_INDEX_SHARDS ? RD_INDEX_SHARDS : n;
}

/* The key of member's shard of index `name` (capped at cap), and the
 * shard's own cap. */
static inline size_t key_index(const redis_store *r, const char *name, const char *member,
                               size_t cap, char *out)
{
    size_t shards = index_shards(r, cap);
    if (shards == 1) {
        snprintf(out, RD_KEY_MAX, "%s{%s}", r->prefix, name);
        return cap;
    }
    size_t k = (size_t)(rd_redis_tool_hash(member) % shards);
    snprintf(out, RD_KEY_MAX, "%s{%s:%zu}", r->prefix, name, k);
    return cap / shards + (k < cap % shards ? 1 : 0);
}

static inline int64_t int_at(const redisReply *a, size_t i)
{
    const redisReply *e = a->element[i];
    if (e->type == REDIS_REPLY_INTEGER)
        return e->integer;
    if (e->type == REDIS_REPLY_STRING)
        return strtoll(e->str, NULL, 10);
    return 0;
}

static inline uint64_t fresh_token(rd_rng *rng)
{
    uint64_t t;
    do
        t = rd_rng_next(rng);
    while (t == 0);
    return t;
}

/* redis_breakers.c */
int rd_redis_op_admit(rd_store *s, const char *tool_id, const rd_breaker_policy *p,
                      int64_t now_ms, int64_t lease_ms, rd_store_result *out, rd_status *st);
int rd_redis_op_force(rd_store *s, const char *tool_id, rd_force_mode mode, int64_t now_ms,
                      int64_t ttl_ms, rd_store_result *out, rd_status *st);
int rd_redis_op_record_call(rd_store *s, const char *tool_id, const rd_breaker_policy *p,
                            int64_t now_ms, const rd_call_report *call, rd_store_result *out,
                            rd_status *st);
/* The batch's rd_redis_send_run_fn: a run of outcomes as one record. */
int rd_redis_send_run(redis_store *r, conn_slot *slot, const char *tool_id,
                      const rd_breaker_policy *p, const outcome_run *run, uint64_t generation,
                      rd_status *st);
int rd_redis_op_record(rd_store *s, const char *tool_id, const rd_breaker_policy *p,
                       int64_t now_ms, rd_outcome outcome, uint64_t permit_token,
                       rd_store_result *out, rd_status *st);
/* Reads one breaker on `slot`; *found false when Redis has none. */
int rd_redis_read_breaker(redis_store *r, conn_slot *slot, const char *tool, int64_t now_ms,
                          rd_breaker *out, bool *found, rd_status *st);
int rd_redis_op_get(rd_store *s, const char *tool_id, int64_t now_ms, rd_breaker *out,
                    bool *found, rd_status *st);

/* redis_tool_index.c */
/* A place for a new tool in the tools index (max_tools), made by
 * forgetting a CLOSED breaker when the index is full; RESOURCE_EXHAUSTED
 * when there is none to forget. */
int rd_redis_reserve_tool(redis_store *r, conn_slot *slot, const char *tool, int64_t now_ms,
                          rd_status *st);
int rd_redis_forget_tool(redis_store *r, conn_slot *slot, const char *tool, int64_t now_ms,
                         const char *mode, int64_t *result, rd_status *st);
/* ZREM of members from index `index` (capped at cap: its shards). */
int rd_redis_index_remove(redis_store *r, conn_slot *slot, const char *index, size_t cap,
                          char **members, size_t n, rd_status *st);

/* redis_turns.c */
/* Runs an outcome script (claim or expire) over the outcome's key with
 * the time and outcome_ttl_ms; the caller frees the reply. */
redisReply *rd_redis_eval_outcome(redis_store *r, conn_slot *slot, rd_script_id script,
                                  const char *outcome_id, int64_t now_ms, rd_status *st);
int rd_redis_op_claim_outcome(rd_store *s, const char *outcome_id, int64_t now_ms,
                              bool *duplicate, rd_status *st);
int rd_redis_op_turn_append(rd_store *s, const char *turn_id, rd_trace_event *events, size_t n,
                            int64_t now_ms, int64_t *started_at_ms, rd_status *st);
int rd_redis_op_turn_touch(rd_store *s, const char *turn_id, int64_t now_ms,
                           int64_t *started_at_ms, rd_status *st);
int rd_redis_op_turn_read(rd_store *s, const char *turn_id, int64_t now_ms,
                          rd_trace_event **events, size_t *n, int64_t *started_at_ms,
                          rd_status *st);

/* redis_fleet.c */
int rd_redis_op_quota(rd_store *s, const char *set, const char *member, size_t max,
                      int64_t now_ms, int64_t ttl_ms, rd_status *st);
int rd_redis_op_stats(rd_store *s, const char *tool_id, const rd_breaker_policy *p,
                      int64_t now_ms, rd_breaker *breaker, rd_breaker_evidence *ev, bool *found,
                      rd_status *st);
int rd_redis_op_latency(rd_store *s, const char *tool_id, int64_t window_ms, int64_t now_ms,
                        int64_t sample_ms, rd_latency_hist *out, rd_status *st);
int rd_redis_op_budget(rd_store *s, const char *tool_id, const rd_retry_budget_policy *p,
                       int64_t now_ms, rd_budget_op op, rd_budget_result *out, rd_status *st);
/* Two steps, each atomic: swap the link's pending signature (so only one
 * caller ever gets it back), then settle that signature. */
int rd_redis_op_learn_link(rd_store *s, const char *tool_id, const char *link,
                           const char *signature_id, rd_learn_settle settle, int64_t now_ms,
                           rd_status *st);
int rd_redis_op_learn_stats(rd_store *s, const char *tool_id, const char *signature_id,
                            int64_t now_ms, rd_learn_stats *out, rd_status *st);

/* redis_evict.c */
/* One SCAN walk, then one read per breaker. The visitor runs with no
 * connection held, so it may call the store. */
int rd_redis_op_list(rd_store *s, int64_t now_ms, rd_store_visit visit, void *ctx, rd_status *st);
size_t rd_redis_op_evict(rd_store *s, int64_t now_ms);

#endif
