/* The Redis store's tools index under max_tools: reserving a tool's place
 * (and making room by forgetting a CLOSED breaker), forgetting a tool, and
 * removing members from a capped index. */
#include "store/redis_ops.h"

static int index_reserve(redis_store *r, conn_slot *slot, const char *tool, int64_t now_ms,
                         bool *reserved, rd_status *st)
{
    char idx[RD_KEY_MAX], now[24], cap[24];
    size_t shard_cap = key_index(r, "tools", tool, r->base.limits.max_tools, idx);
    time_arg(r, now_ms, now);
    fmt_i64(cap, (int64_t)shard_cap);
    const char *argv[] = {idx, now, tool, cap};
    redisReply *reply = rd_redis_eval(r, slot, RD_SCRIPT_INDEX_RESERVE, 1, 4, argv, NULL, st);
    if (!reply)
        return st ? st->code : RD_ERR_UNAVAILABLE;
    *reserved = reply->type == REDIS_REPLY_INTEGER && reply->integer == 1;
    freeReplyObject(reply);
    return RD_OK;
}

/* How many of the index's oldest members are looked at to make room. */
#define RD_REDIS_DISPLACE_CANDIDATES 64

/* max_tools reached (in the shard `tool` goes to): like the memory store,
 * forgets the least recently used CLOSED breaker without probe or hold
 * among the shard's oldest members (a member whose breaker already expired
 * goes first: it holds nothing). The forget script checks again
 * atomically, so a breaker that opened meanwhile is kept. *made receives
 * whether a place was freed. */
static int tools_make_room(redis_store *r, conn_slot *slot, const char *tool, int64_t now_ms,
                           bool *made, rd_status *st)
{
    *made = false;
    char idx[RD_KEY_MAX], last[24];
    key_index(r, "tools", tool, r->base.limits.max_tools, idx);
    fmt_i64(last, RD_REDIS_DISPLACE_CANDIDATES - 1);
    const char *argv[] = {"ZRANGE", idx, "0", last};
    redisReply *some = rd_redis_command(r, slot, 4, argv, st);
    if (!some)
        return st ? st->code : RD_ERR_UNAVAILABLE;
    if (some->type != REDIS_REPLY_ARRAY) {
        freeReplyObject(some);
        return rd_status_set(st, RD_ERR_INTERNAL, "store: redis ZRANGE: unexpected reply");
    }
    char *victim = NULL;
    int64_t victim_seen = INT64_MAX;
    int rc = RD_OK;
    for (size_t i = 0; rc == RD_OK && i < some->elements; i++) {
        rd_breaker b;
        bool found;
        char *member = some->element[i]->str;
        rc = rd_redis_read_breaker(r, slot, member, now_ms, &b, &found, st);
        if (rc != RD_OK)
            break;
        if (!found) { /* expired on its own: only the index entry is left */
            victim = member;
            break;
        }
        bool displaceable = rd_breaker_status_at(&b, now_ms) == RD_BREAKER_CLOSED &&
                            !rd_breaker_probe_live(&b, now_ms) &&
                            !rd_breaker_hold_live(&b, now_ms);
        if (displaceable && b.last_seen_ms < victim_seen) {
            victim = member;
            victim_seen = b.last_seen_ms;
        }
    }
    int64_t res = 0;
    if (rc == RD_OK && victim)
        rc = rd_redis_forget_tool(r, slot, victim, now_ms, "closed", &res, st);
    if (rc == RD_OK && victim && res != 0)
        rc = rd_redis_index_remove(r, slot, "tools", r->base.limits.max_tools, &victim, 1, st);
    if (rc == RD_OK && victim && res != 0) {
        *made = true;
        rd_store_count_displaced(res == 1);
    }
    freeReplyObject(some);
    return rc;
}

int rd_redis_reserve_tool(redis_store *r, conn_slot *slot, const char *tool, int64_t now_ms,
                        rd_status *st)
{
    bool reserved, made = false;
    int rc = index_reserve(r, slot, tool, now_ms, &reserved, st);
    if (rc == RD_OK && !reserved)
        rc = tools_make_room(r, slot, tool, now_ms, &made, st);
    if (rc == RD_OK && !reserved && made)
        rc = index_reserve(r, slot, tool, now_ms, &reserved, st);
    if (rc == RD_OK && !reserved)
        return rd_status_set(st, RD_ERR_EXHAUSTED, "tool_id: tracked tool limit (%zu) reached",
                             r->base.limits.max_tools);
    return rc;
}

int rd_redis_forget_tool(redis_store *r, conn_slot *slot, const char *tool, int64_t now_ms,
                         const char *mode, int64_t *result, rd_status *st)
{
    char bkey[RD_KEY_MAX], pkey[RD_KEY_MAX], ckey[RD_KEY_MAX], now[24], idle[24];
    key_tool(r, tool, "breaker", bkey);
    key_tool(r, tool, "probe", pkey);
    key_tool(r, tool, "calls", ckey);
    time_arg(r, now_ms, now);
    fmt_i64(idle, r->base.limits.tool_idle_ttl_ms);
    const char *argv[] = {bkey, pkey, ckey, now, tool, idle, mode, r->channel};
    redisReply *reply = rd_redis_eval(r, slot, RD_SCRIPT_FORGET_TOOL, 3, 8, argv, NULL, st);
    if (!reply)
        return st ? st->code : RD_ERR_UNAVAILABLE;
    *result = reply->type == REDIS_REPLY_INTEGER ? reply->integer : 0;
    freeReplyObject(reply);
    return RD_OK;
}

/* ZREM of members from index `index`: in chunks from one key, or one
 * member at a time when the index is sharded. */
int rd_redis_index_remove(redis_store *r, conn_slot *slot, const char *index, size_t cap,
                          char **members, size_t n, rd_status *st)
{
    bool sharded = index_shards(r, cap) > 1;
    for (size_t done = 0; done < n;) {
        size_t chunk = sharded ? 1 : n - done < RD_PIPELINE_BATCH ? n - done : RD_PIPELINE_BATCH;
        char idx[RD_KEY_MAX];
        key_index(r, index, members[done], cap, idx);
        const char *argv[RD_PIPELINE_BATCH + 2] = {"ZREM", idx};
        for (size_t i = 0; i < chunk; i++)
            argv[2 + i] = members[done + i];
        redisReply *reply = rd_redis_command(r, slot, (int)chunk + 2, argv, st);
        if (!reply)
            return st ? st->code : RD_ERR_UNAVAILABLE;
        freeReplyObject(reply);
        done += chunk;
    }
    return RD_OK;
}
