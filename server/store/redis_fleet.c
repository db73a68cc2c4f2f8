/* The Redis store's fleet features (docs/FLEET.md): call windows, retry
 * budgets and learning. */
#include "store/redis_ops.h"

/* ---- fleet features: call windows, budgets, learning, tenants' limits ---- */

/* Runs a script over the first nkeys of argv (keys of one slot) and reads
 * an array of up to n integers. */
static int eval_ints_keys(redis_store *r, rd_script_id id, int nkeys, const char **argv,
                          int nargs, int64_t *out, size_t n, rd_status *st)
{
    conn_slot *slot = rd_redis_slot_take(r);
    redisReply *reply = rd_redis_eval(r, slot, id, nkeys, nargs, argv, NULL, st);
    rd_redis_slot_give(slot);
    if (!reply)
        return st ? st->code : RD_ERR_UNAVAILABLE;
    bool ok = reply->type == REDIS_REPLY_ARRAY && reply->elements == n;
    for (size_t i = 0; ok && i < n; i++)
        out[i] = int_at(reply, i);
    freeReplyObject(reply);
    return ok ? RD_OK : rd_status_set(st, RD_ERR_INTERNAL, "store: redis script: bad reply");
}

/* Runs a script over one key and reads an array of up to n integers. */
static int eval_ints(redis_store *r, rd_script_id id, const char **argv, int nargs,
                     int64_t *out, size_t n, rd_status *st)
{
    return eval_ints_keys(r, id, 1, argv, nargs, out, n, st);
}

/* Runs a script over one key and reads its integer reply. */
static int eval_ints_scalar(redis_store *r, rd_script_id id, const char **argv, int nargs,
                            int64_t *out, rd_status *st)
{
    conn_slot *slot = rd_redis_slot_take(r);
    redisReply *reply = rd_redis_eval(r, slot, id, 1, nargs, argv, NULL, st);
    rd_redis_slot_give(slot);
    if (!reply)
        return st ? st->code : RD_ERR_UNAVAILABLE;
    bool ok = reply->type == REDIS_REPLY_INTEGER;
    if (ok)
        *out = reply->integer;
    freeReplyObject(reply);
    return ok ? RD_OK : rd_status_set(st, RD_ERR_INTERNAL, "store: redis script: bad reply");
}

int rd_redis_op_stats(rd_store *s, const char *tool_id, const rd_breaker_policy *p,
                      int64_t now_ms, rd_breaker *breaker, rd_breaker_evidence *ev, bool *found,
                      rd_status *st)
{
    *ev = (rd_breaker_evidence){0};
    int rc = rd_redis_op_get(s, tool_id, now_ms, breaker, found, st);
    if (rc != RD_OK || p->window_ms <= 0)
        return rc;
    redis_store *r = rd_redis_as_store(s);
    char key[RD_KEY_MAX], ckey[RD_KEY_MAX], now[24], window[24];
    key_tool(r, tool_id, "breaker", key);
    key_tool(r, tool_id, "calls", ckey);
    time_arg(r, now_ms, now);
    fmt_i64(window, clamp_time(p->window_ms));
    const char *argv[] = {key, ckey, now, window};
    int64_t sum[3];
    rc = eval_ints_keys(r, RD_SCRIPT_WINDOW_READ, 2, argv, 4, sum, 3, st);
    if (rc == RD_OK)
        *ev = (rd_breaker_evidence){
            .calls = (uint64_t)sum[0], .failures = (uint64_t)sum[1], .slow = (uint64_t)sum[2]};
    return rc;
}

int rd_redis_op_budget(rd_store *s, const char *tool_id, const rd_retry_budget_policy *p,
                       int64_t now_ms, rd_budget_op op, rd_budget_result *out, rd_status *st)
{
    int rc = rd_store_check_id("tool_id", tool_id, st);
    if (rc != RD_OK)
        return rc;
    if (op < RD_BUDGET_COUNT_REQUEST || op > RD_BUDGET_PEEK)
        return rd_status_set(st, RD_ERR_INVALID, "op: unknown value %d", (int)op);
    redis_store *r = rd_redis_as_store(s);
    char key[RD_KEY_MAX], now[24], ops[24], window[24], pct[40], minr[24];
    key_tool(r, tool_id, "budget", key);
    time_arg(r, now_ms, now);
    fmt_i64(ops, op);
    fmt_i64(window, clamp_time(p->window_ms));
    snprintf(pct, sizeof pct, "%.17g", p->budget_percent); /* exact, as the C arithmetic */
    fmt_i64(minr, p->min_retries_per_window);
    const char *argv[] = {key, now, ops, window, pct, minr};
    int64_t v[3];
    rc = eval_ints(r, RD_SCRIPT_BUDGET, argv, 6, v, 3, st);
    if (rc == RD_OK)
        *out = (rd_budget_result){
            .granted = v[0] != 0, .requests = (uint64_t)v[1], .retries = (uint64_t)v[2]};
    return rc;
}

int rd_redis_op_latency(rd_store *s, const char *tool_id, int64_t window_ms, int64_t now_ms,
                        int64_t sample_ms, rd_latency_hist *out, rd_status *st)
{
    int rc = rd_store_check_id("tool_id", tool_id, st);
    if (rc != RD_OK)
        return rc;
    if (window_ms <= 0)
        return rd_status_set(st, RD_ERR_INVALID, "window_ms: must be positive");
    redis_store *r = rd_redis_as_store(s);
    char key[RD_KEY_MAX], now[24], window[24], bucket[24], n[24];
    key_tool(r, tool_id, "latency", key);
    time_arg(r, now_ms, now);
    fmt_i64(window, clamp_time(window_ms));
    fmt_i64(bucket, sample_ms < 0 ? -1 : (int64_t)rd_latency_bucket(sample_ms));
    fmt_i64(n, RD_LATENCY_BUCKETS);
    const char *argv[] = {key, now, window, bucket, n};
    int64_t counts[RD_LATENCY_BUCKETS];
    rc = eval_ints(r, RD_SCRIPT_LATENCY, argv, 5, counts, RD_LATENCY_BUCKETS, st);
    if (rc != RD_OK)
        return rc;
    for (size_t i = 0; i < RD_LATENCY_BUCKETS; i++)
        out->counts[i] = counts[i] > 0 ? (uint64_t)counts[i] : 0;
    return RD_OK;
}

static int check_signature_id(const char *id, bool required, rd_status *st)
{
    if (required && !id[0])
        return rd_status_set(st, RD_ERR_INVALID, "signature_id: empty");
    if (strlen(id) > RD_SIGNATURE_ID_LEN)
        return rd_status_set(st, RD_ERR_INVALID, "signature_id: longer than %d bytes",
                             RD_SIGNATURE_ID_LEN);
    for (const char *p = id; *p; p++)
        if (*p == ' ' || *p == '{' || *p == '}')
            return rd_status_set(st, RD_ERR_INVALID, "signature_id: bad character");
    return RD_OK;
}

/* Credits, debits (settle 1 / 2) or reads (0) one signature's record. */
static int learn_settle(redis_store *r, const char *tool_id, const char *signature_id,
                        int settle, int64_t now_ms, rd_learn_stats *out, rd_status *st)
{
    char key[RD_KEY_MAX], part[RD_KEY_MAX], now[24], how[24], ttl[24];
    snprintf(part, sizeof part, "learn:sig:%s", signature_id);
    key_tool(r, tool_id, part, key);
    time_arg(r, now_ms, now);
    fmt_i64(how, settle);
    fmt_i64(ttl, r->base.limits.signature_ttl_ms);
    const char *argv[] = {key, now, how, ttl};
    int64_t v[2];
    int rc = eval_ints(r, RD_SCRIPT_LEARN_SETTLE, argv, 4, v, 2, st);
    if (rc == RD_OK && out)
        *out = (rd_learn_stats){.successes = (uint64_t)v[0], .failures = (uint64_t)v[1]};
    return rc;
}

/* Two steps, each atomic: swap the link's pending signature (so only one
 * caller ever gets it back), then settle that signature. */
int rd_redis_op_learn_link(rd_store *s, const char *tool_id, const char *link,
                           const char *signature_id, rd_learn_settle settle, int64_t now_ms,
                           rd_status *st)
{
    int rc = rd_store_check_id("tool_id", tool_id, st);
    if (rc == RD_OK)
        rc = rd_store_check_id("link", link, st);
    if (rc == RD_OK)
        rc = check_signature_id(signature_id, false, st);
    if (rc != RD_OK)
        return rc;
    redis_store *r = rd_redis_as_store(s);
    char key[RD_KEY_MAX], part[RD_KEY_MAX], now[24], ttl[24];
    snprintf(part, sizeof part, "learn:link:%s", link);
    key_tool(r, tool_id, part, key);
    time_arg(r, now_ms, now);
    fmt_i64(ttl, r->base.limits.turn_ttl_ms);
    const char *argv[] = {key, now, signature_id, ttl};
    conn_slot *slot = rd_redis_slot_take(r);
    redisReply *reply = rd_redis_eval(r, slot, RD_SCRIPT_LEARN_SWAP, 1, 4, argv, NULL, st);
    rd_redis_slot_give(slot);
    if (!reply)
        return st ? st->code : RD_ERR_UNAVAILABLE;
    char previous[RD_SIGNATURE_ID_LEN + 1] = "";
    bool ok = reply->type == REDIS_REPLY_STRING && reply->len <= RD_SIGNATURE_ID_LEN;
    if (ok)
        memcpy(previous, reply->str, reply->len + 1);
    freeReplyObject(reply);
    if (!ok)
        return rd_status_set(st, RD_ERR_INTERNAL, "store: redis learn script: bad reply");
    if (settle == RD_LEARN_KEEP || !previous[0])
        return RD_OK;
    return learn_settle(r, tool_id, previous, settle, now_ms, NULL, st);
}

int rd_redis_op_learn_stats(rd_store *s, const char *tool_id, const char *signature_id,
                            int64_t now_ms, rd_learn_stats *out, rd_status *st)
{
    int rc = rd_store_check_id("tool_id", tool_id, st);
    if (rc == RD_OK)
        rc = check_signature_id(signature_id, true, st);
    if (rc != RD_OK)
        return rc;
    return learn_settle(rd_redis_as_store(s), tool_id, signature_id, 0, now_ms, out, st);
}

/* P{quota:<set>}: one sorted set per tenant and kind, on one slot. */
int rd_redis_op_quota(rd_store *s, const char *set, const char *member, size_t max,
                      int64_t now_ms, int64_t ttl_ms, rd_status *st)
{
    int rc = rd_store_check_id("member", member, st);
    if (rc == RD_OK && (!set || !set[0] || strlen(set) > RD_ID_MAX || strpbrk(set, "{}")))
        rc = rd_status_set(st, RD_ERR_INVALID, "set: 1..%d bytes without '{' or '}'", RD_ID_MAX);
    if (rc != RD_OK)
        return rc;
    redis_store *r = rd_redis_as_store(s);
    char key[RD_KEY_MAX], now[24], cap[24], ttl[24];
    snprintf(key, sizeof key, "%s{quota:%s}", r->prefix, set);
    time_arg(r, now_ms, now);
    fmt_i64(cap, (int64_t)(max > (size_t)RD_TIME_MAX ? (size_t)RD_TIME_MAX : max));
    fmt_i64(ttl, clamp_time(ttl_ms));
    const char *argv[] = {key, now, member, cap, ttl};
    int64_t counted;
    rc = eval_ints_scalar(r, RD_SCRIPT_QUOTA, argv, 5, &counted, st);
    if (rc == RD_OK && !counted)
        return rd_status_set(st, RD_ERR_EXHAUSTED, "set %s: %zu members in use", set, max);
    return rc;
}
