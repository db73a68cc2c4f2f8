/* The Redis store's scans (list, evict) and eviction of idle breakers,
 * old turns and old outcome ids. */
#include "store/redis_ops.h"

/* ---- scanning (list, evict) ---- */

typedef struct key_list {
    char **keys;             /* owned, sorted and unique after key_list_finish */
    size_t n, cap;
} key_list;

static void key_list_free(key_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->keys[i]);
    free(l->keys);
    memset(l, 0, sizeof *l);
}

static int key_list_add(key_list *l, const char *key)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        char **grown = realloc(l->keys, cap * sizeof *grown);
        if (!grown)
            return RD_ERR_NOMEM;
        l->keys = grown;
        l->cap = cap;
    }
    l->keys[l->n] = strdup(key);
    return l->keys[l->n++] ? RD_OK : RD_ERR_NOMEM;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* SCAN may return a key twice (a rehash during the walk): sort and unique. */
static void key_list_finish(key_list *l)
{
    if (l->n == 0)
        return;
    qsort(l->keys, l->n, sizeof *l->keys, cmp_str);
    size_t out = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (out > 0 && strcmp(l->keys[out - 1], l->keys[i]) == 0)
            free(l->keys[i]);
        else
            l->keys[out++] = l->keys[i];
    }
    l->n = out;
}

/* The prefix as a SCAN MATCH pattern: glob characters escaped. */
static void glob_escape(const char *in, char *out, size_t out_size)
{
    size_t o = 0;
    for (const char *p = in; *p && o + 3 < out_size; p++) {
        if (strchr("*?[]\\", *p))
            out[o++] = '\\';
        out[o++] = *p;
    }
    out[o] = '\0';
}

/* One node's keys matching pattern, with SCAN. */
static int scan_node(redis_store *r, conn_slot *slot, int node, unsigned generation,
                     const char *pattern, key_list *out, rd_status *st)
{
    char cursor[32] = "0";
    int rc = rd_redis_use_walk_node(r, slot, node, generation, st);
    do {
        if (rc != RD_OK)
            break;
        const char *argv[] = {"SCAN", cursor, "MATCH", pattern, "COUNT", RD_SCAN_COUNT};
        atomic_fetch_add(&r->commands, 1);
        redisReply *reply = redisCommandArgv(slot->ctx, 6, argv, NULL);
        if (!reply || reply->type != REDIS_REPLY_ARRAY || reply->elements != 2) {
            rc = rd_redis_fail(r, slot, reply, "SCAN", st);
            if (reply)
                freeReplyObject(reply);
            break;
        }
        snprintf(cursor, sizeof cursor, "%s", reply->element[0]->str);
        const redisReply *keys = reply->element[1];
        for (size_t i = 0; rc == RD_OK && i < keys->elements; i++)
            if (key_list_add(out, keys->element[i]->str) != RD_OK)
                rc = rd_status_set(st, RD_ERR_NOMEM, "store: out of memory scanning keys");
        freeReplyObject(reply);
    } while (strcmp(cursor, "0") != 0);
    return rc;
}

/* Every key matching P<suffix_pattern>, collected with SCAN on the master
 * or on every primary of a cluster (O(keys in the db) per call: see
 * docs/REDIS.md). */
static int scan_keys(redis_store *r, conn_slot *slot, const char *suffix_pattern, key_list *out,
                     rd_status *st)
{
    char pattern[RD_KEY_MAX];
    glob_escape(r->prefix, pattern, sizeof pattern);
    strncat(pattern, suffix_pattern, sizeof pattern - strlen(pattern) - 1);
    int nodes[RD_CLUSTER_MAX_NODES];
    unsigned generation;
    size_t n = rd_redis_walk_nodes(r, nodes, RD_CLUSTER_MAX_NODES, &generation);
    if (n == 0)
        return rd_status_set(st, RD_ERR_UNAVAILABLE, "store: redis cluster map unknown");
    int rc = RD_OK;
    for (size_t i = 0; rc == RD_OK && i < n; i++)
        rc = scan_node(r, slot, nodes[i], generation, pattern, out, st);
    if (rc == RD_OK)
        key_list_finish(out);
    return rc;
}

/* The id inside P{<family>:<id>}<tail>, copied to out; false if the key
 * is not of that shape. */
static bool id_from_key(const redis_store *r, const char *key, const char *family,
                        const char *tail, char out[RD_ID_MAX + 1])
{
    size_t plen = strlen(r->prefix), flen = strlen(family), tlen = strlen(tail),
           klen = strlen(key);
    if (klen < plen + 1 + flen + 1 + tlen || strncmp(key, r->prefix, plen) != 0 ||
        key[plen] != '{' || strncmp(key + plen + 1, family, flen) != 0 ||
        key[plen + 1 + flen] != ':' || strcmp(key + klen - tlen, tail) != 0)
        return false;
    size_t start = plen + flen + 2, len = klen - tlen - start;
    if (len == 0 || len > RD_ID_MAX)
        return false;
    memcpy(out, key + start, len);
    out[len] = '\0';
    return true;
}

/* One SCAN walk, then one read per breaker. The visitor runs with no
 * connection held, so it may call the store. */
int rd_redis_op_list(rd_store *s, int64_t now_ms, rd_store_visit visit, void *ctx, rd_status *st)
{
    redis_store *r = rd_redis_as_store(s);
    key_list keys = {0};
    conn_slot *slot = rd_redis_slot_take(r);
    int rc = scan_keys(r, slot, "{tool:*}:breaker", &keys, st);
    rd_redis_slot_give(slot);
    for (size_t i = 0; rc == RD_OK && i < keys.n; i++) {
        char tool[RD_ID_MAX + 1];
        rd_breaker b;
        bool found;
        if (!id_from_key(r, keys.keys[i], "tool", "}:breaker", tool))
            continue;
        slot = rd_redis_slot_take(r);
        rc = rd_redis_read_breaker(r, slot, tool, now_ms, &b, &found, st);
        rd_redis_slot_give(slot);
        if (rc == RD_OK && found && visit(ctx, tool, &b))
            break;
    }
    key_list_free(&keys);
    return rc;
}

/* ---- eviction ---- */

/* Runs a one-key-family expiry script; *dropped = whether it dropped. */
static int expire_turn(redis_store *r, conn_slot *slot, const char *id, int64_t now_ms,
                       bool *dropped, rd_status *st)
{
    char meta[RD_KEY_MAX], list[RD_KEY_MAX], now[24], ttl[24];
    key_turn(r, id, "meta", meta);
    key_turn(r, id, "events", list);
    time_arg(r, now_ms, now);
    fmt_i64(ttl, r->base.limits.turn_ttl_ms);
    const char *argv[] = {meta, list, now, ttl};
    redisReply *reply = rd_redis_eval(r, slot, RD_SCRIPT_TURN_EXPIRE, 2, 4, argv, NULL, st);
    if (!reply)
        return st ? st->code : RD_ERR_UNAVAILABLE;
    *dropped = reply->type == REDIS_REPLY_INTEGER && reply->integer == 1;
    freeReplyObject(reply);
    return RD_OK;
}

static int expire_outcome(redis_store *r, conn_slot *slot, const char *id, int64_t now_ms,
                          bool *dropped, rd_status *st)
{
    redisReply *reply = rd_redis_eval_outcome(r, slot, RD_SCRIPT_OUTCOME_EXPIRE, id, now_ms, st);
    if (!reply)
        return st ? st->code : RD_ERR_UNAVAILABLE;
    *dropped = reply->type == REDIS_REPLY_INTEGER && reply->integer == 1;
    freeReplyObject(reply);
    return RD_OK;
}

static int expire_tool(redis_store *r, conn_slot *slot, const char *id, int64_t now_ms,
                       bool *dropped, rd_status *st)
{
    int64_t res;
    int rc = rd_redis_forget_tool(r, slot, id, now_ms, "idle", &res, st);
    *dropped = rc == RD_OK && res == 1;
    return rc;
}

typedef int (*expire_fn)(redis_store *r, conn_slot *slot, const char *id, int64_t now_ms,
                         bool *dropped, rd_status *st);

typedef struct key_family {
    const char *pattern;     /* after the prefix, for SCAN MATCH */
    const char *name;        /* tool, turn, outcome */
    const char *tail;        /* after the id */
    const char *index;       /* the capped index it may be in */
    size_t cap;              /* 0: no index kept */
    expire_fn expire;
} key_family;

/* Applies a family's eviction rule to each of its keys; returns how many
 * entries were dropped (and takes them out of the capped index). */
static size_t sweep_family(redis_store *r, conn_slot *slot, const key_family *f,
                           int64_t now_ms)
{
    rd_status st;
    key_list keys = {0};
    if (scan_keys(r, slot, f->pattern, &keys, &st) != RD_OK) {
        key_list_free(&keys);
        return 0;
    }
    size_t dropped = 0;
    for (size_t i = 0; i < keys.n; i++) {
        char id[RD_ID_MAX + 1];
        bool gone;
        if (!id_from_key(r, keys.keys[i], f->name, f->tail, id))
            continue;
        if (f->expire(r, slot, id, now_ms, &gone, &st) != RD_OK)
            break;
        if (!gone)
            continue;
        dropped++;
        char *member = id;
        if (f->cap)
            rd_redis_index_remove(r, slot, f->index, f->cap, &member, 1, &st);
    }
    key_list_free(&keys);
    return dropped;
}

size_t rd_redis_op_evict(rd_store *s, int64_t now_ms)
{
    redis_store *r = rd_redis_as_store(s);
    if (!r->evict_sweep)
        return 0; /* Redis TTLs do the work */
    const rd_store_limits *l = &r->base.limits;
    const key_family families[] = {
        {"{tool:*}:breaker", "tool", "}:breaker", "tools", l->max_tools, expire_tool},
        {"{turn:*}:meta", "turn", "}:meta", "turns", l->max_turns, expire_turn},
        {"{outcome:*}", "outcome", "}", "outcomes", l->max_outcomes, expire_outcome},
    };
    size_t dropped = 0;
    for (size_t i = 0; i < sizeof families / sizeof *families; i++) {
        conn_slot *slot = rd_redis_slot_take(r);
        dropped += sweep_family(r, slot, &families[i], now_ms);
        rd_redis_slot_give(slot);
    }
    return dropped;
}
