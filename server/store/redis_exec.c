/* Running commands and scripts (see redis_exec.h).
 *
 * Scripts go as functions of the library the connection loaded (FCALL), or,
 * on a server without Redis Functions, by the name SCRIPT LOAD gave them
 * (EVALSHA). "Function not found" (FUNCTION FLUSH, a restart behind the
 * same connection, a cluster node that joined empty) or NOSCRIPT (SCRIPT
 * FLUSH) loads them all again on that connection's server and runs the
 * script once more.
 *
 * In a Redis Cluster a command goes to the primary the slot map names for
 * its key's slot. The answers that move it elsewhere:
 *   MOVED <slot> <host:port>  the slot lives there now: the map is changed
 *                             for that slot, a fresh map is asked for, and
 *                             the command is sent there;
 *   ASK <slot> <host:port>    the slot is being migrated and this key is
 *                             already at the target: ASKING, then the
 *                             command, there (the map is left alone);
 *   TRYAGAIN                  a multi-key command during a migration found
 *                             its keys split between the two nodes: sent
 *                             again after a short pause, within the
 *                             command's time budget (a reshard moves a
 *                             slot's few keys in milliseconds).
 * At most RD_REDIRECTS_MAX moves per command. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/redis_exec.h"

#define RD_EVAL_MAX_ARGS 64
#define RD_REDIRECTS_MAX 8
#define RD_TRYAGAIN_PAUSE_MS 5

static bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* ---- sending one script ---- */

/* FCALL of the script's function when this connection's server holds the
 * library, else EVALSHA with the name the connection loaded the script
 * under, or EVAL with its text when it has neither (or `text`). */
static redisReply *send_script(conn_slot *slot, rd_script_id id, bool text, int nkeys,
                               int nargs, const char **argv, const size_t *lens)
{
    const rd_script *sc = &rd_redis_scripts()[id];
    bool by_function = !text && slot->functions;
    bool by_sha = !text && !by_function && slot->sha[id][0] != '\0';
    const char *full[RD_EVAL_MAX_ARGS + 3];
    size_t full_lens[RD_EVAL_MAX_ARGS + 3];
    char nkeys_text[16];
    snprintf(nkeys_text, sizeof nkeys_text, "%d", nkeys);
    full[0] = by_function ? "FCALL" : by_sha ? "EVALSHA" : "EVAL";
    full[1] = by_function ? sc->function : by_sha ? slot->sha[id] : sc->source;
    full[2] = nkeys_text;
    full_lens[0] = strlen(full[0]);
    full_lens[1] = by_function ? strlen(sc->function) : by_sha ? 40 : sc->len;
    full_lens[2] = strlen(full[2]);
    for (int i = 0; i < nargs; i++) {
        full[3 + i] = argv[i];
        full_lens[3 + i] = lens ? lens[i] : strlen(argv[i]);
    }
    return redisCommandArgv(slot->ctx, 3 + nargs, full, full_lens);
}

/* The server lost the scripts: NOSCRIPT after SCRIPT FLUSH, "ERR Function
 * not found" after FUNCTION FLUSH (or on a node that never had them). */
static bool is_noscript(const redisReply *reply)
{
    return reply && reply->type == REDIS_REPLY_ERROR &&
           (starts_with(reply->str, "NOSCRIPT") ||
            strstr(reply->str, "Function not found") != NULL);
}

/* What one routed attempt sends: a script or a plain command. */
typedef struct request {
    bool script;
    rd_script_id id;
    int nkeys, argc;
    const char **argv;
    const size_t *lens;
} request;

/* ASKING holds for the next command only, so it goes before every send
 * of an attempt that was redirected by ASK. */
static bool send_asking(conn_slot *slot, bool asking)
{
    if (!asking)
        return true;
    redisReply *ok = redisCommand(slot->ctx, "ASKING");
    bool sent = ok && ok->type != REDIS_REPLY_ERROR;
    if (ok)
        freeReplyObject(ok);
    return sent;
}

static redisReply *send_once(redis_store *r, conn_slot *slot, const request *q, bool asking,
                             bool text)
{
    atomic_fetch_add(&r->commands, 1);
    if (!send_asking(slot, asking))
        return NULL;
    if (q->script)
        return send_script(slot, q->id, text, q->nkeys, q->argc, q->argv, q->lens);
    return redisCommandArgv(slot->ctx, q->argc, q->argv, q->lens);
}

static redisReply *send_request(redis_store *r, conn_slot *slot, const request *q, bool asking)
{
    redisReply *reply = send_once(r, slot, q, asking, false);
    if (!q->script || !is_noscript(reply))
        return reply;
    /* The other scripts are gone too: load them all again and run. */
    freeReplyObject(reply);
    atomic_fetch_add(&r->script_reloads, 1);
    if (!rd_redis_load_scripts(slot))
        return NULL;
    reply = send_once(r, slot, q, asking, false);
    if (is_noscript(reply)) { /* flushed again in between: send the text */
        freeReplyObject(reply);
        reply = send_once(r, slot, q, asking, true);
    }
    return reply;
}

/* ---- redirections ---- */

/* "MOVED 3999 127.0.0.1:6381" / "ASK ...": the target node's index. An
 * empty host means the node answering (Redis 7 when it knows no name). */
static int redirect_target(redis_store *r, const conn_slot *slot, const char *msg,
                           unsigned *generation)
{
    const char *addr = strchr(msg, ' ');
    addr = addr ? strchr(addr + 1, ' ') : NULL;
    const char *colon = addr ? strrchr(addr, ':') : NULL;
    if (!colon)
        return -1;
    char host[RD_CLUSTER_HOST_MAX];
    size_t len = (size_t)(colon - addr - 1);
    if (len == 0 && slot->ctx && slot->ctx->tcp.host)
        snprintf(host, sizeof host, "%s", slot->ctx->tcp.host);
    else if (len < sizeof host)
        snprintf(host, sizeof host, "%.*s", (int)len, addr + 1);
    else
        return -1;
    return rd_cluster_node_index(r->cluster, host, atoi(colon + 1), generation);
}

static void pause_ms(int ms)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)ms * 1000000L};
    nanosleep(&ts, NULL);
}

/* Sends q in a cluster, following redirections; returns the final reply
 * (maybe an error reply) or NULL after rd_redis_fail. */
static redisReply *cluster_send(redis_store *r, conn_slot *slot, const request *q,
                                const char *what, rd_status *st)
{
    const char *key = q->argv[q->script ? 0 : 1];
    size_t key_len = q->lens ? q->lens[q->script ? 0 : 1] : strlen(key);
    unsigned hash_slot = rd_redis_key_slot(key, key_len), generation = 0;
    int target = -1, moves = 0;
    bool asking = false;
    int64_t give_up = rd_clock_mono_ms() + r->target.command_timeout_ms;
    for (;;) {
        int rc = target < 0 ? rd_redis_use_slot(r, slot, hash_slot, st)
                            : rd_redis_use_node(r, slot, target, generation, st);
        if (rc != RD_OK)
            return NULL;
        redisReply *reply = send_request(r, slot, q, asking);
        if (!reply) {
            rd_redis_fail(r, slot, NULL, what, st);
            return NULL;
        }
        if (reply->type != REDIS_REPLY_ERROR) {
            rd_cluster_node_ok(r->cluster, slot->node);
            return reply;
        }
        bool moved = starts_with(reply->str, "MOVED "), ask = starts_with(reply->str, "ASK ");
        bool again = starts_with(reply->str, "TRYAGAIN");
        if (!(moved || ask || again) || (!again && ++moves > RD_REDIRECTS_MAX) ||
            (again && rd_clock_mono_ms() >= give_up))
            return reply;
        if (again) {
            pause_ms(RD_TRYAGAIN_PAUSE_MS);
        } else {
            atomic_fetch_add(&r->cluster->redirects, 1);
            target = redirect_target(r, slot, reply->str, &generation);
            asking = ask;
            if (moved)
                rd_cluster_moved(r->cluster, hash_slot, target, generation);
            if (target < 0) {
                target = -1;
                asking = false;
            }
        }
        freeReplyObject(reply);
    }
}

/* ---- the entry points ---- */

static redisReply *run(redis_store *r, conn_slot *slot, const request *q, const char *what,
                       rd_status *st)
{
    redisReply *reply;
    if (r->cluster) {
        reply = cluster_send(r, slot, q, what, st);
        if (!reply)
            return NULL;
    } else {
        if (rd_redis_slot_ready(r, slot, st) != RD_OK)
            return NULL;
        reply = send_request(r, slot, q, false);
    }
    if (reply && reply->type != REDIS_REPLY_ERROR)
        return reply;
    rd_redis_fail(r, slot, reply, what, st);
    if (reply)
        freeReplyObject(reply);
    return NULL;
}

redisReply *rd_redis_eval(redis_store *r, conn_slot *slot, rd_script_id id, int nkeys,
                          int nargs, const char **argv, const size_t *lens, rd_status *st)
{
    if (nargs > RD_EVAL_MAX_ARGS || nkeys < 1 || nkeys > nargs) {
        rd_status_set(st, RD_ERR_INTERNAL, "store: bad script arguments (%d, %d)", nkeys, nargs);
        return NULL;
    }
    request q = {.script = true, .id = id, .nkeys = nkeys, .argc = nargs, .argv = argv,
                 .lens = lens};
    return run(r, slot, &q, rd_redis_scripts()[id].name, st);
}

redisReply *rd_redis_command(redis_store *r, conn_slot *slot, int argc, const char **argv,
                             rd_status *st)
{
    request q = {.argc = argc, .argv = argv};
    return run(r, slot, &q, argv[0], st);
}

static int route(redis_store *r, conn_slot *slot, const char *key, rd_status *st)
{
    return r->cluster ? rd_redis_use_slot(r, slot, rd_redis_key_slot(key, strlen(key)), st)
                      : rd_redis_slot_ready(r, slot, st);
}

/* rd_redis_pipeline on the connection routing chose. */
static int send_pipeline(redis_store *r, conn_slot *slot, size_t n, const int *argcs,
                         const char *const *const *argvs, redisReply **replies, rd_status *st)
{
    atomic_fetch_add(&r->commands, n);
    size_t sent = 0, got = 0;
    while (sent < n &&
           redisAppendCommandArgv(slot->ctx, argcs[sent], (const char **)argvs[sent], NULL) ==
               REDIS_OK)
        sent++;
    while (sent == n && got < n) {
        void *reply = NULL;
        if (redisGetReply(slot->ctx, &reply) != REDIS_OK || !reply)
            break;
        replies[got++] = reply;
    }
    if (sent < n || got < n) { /* the stream is out of step: the connection goes */
        for (size_t i = 0; i < got; i++)
            freeReplyObject(replies[i]);
        return rd_redis_fail(r, slot, NULL, argvs[0][0], st);
    }
    bool answered = true;
    for (size_t i = 0; i < n; i++)
        answered = answered && replies[i]->type != REDIS_REPLY_ERROR;
    if (r->cluster && answered)
        rd_cluster_node_ok(r->cluster, slot->node);
    return RD_OK;
}

int rd_redis_pipeline(redis_store *r, conn_slot *slot, const char *key, size_t n,
                      const int *argcs, const char *const *const *argvs, redisReply **replies,
                      rd_status *st)
{
    int rc = route(r, slot, key, st);
    return rc != RD_OK ? rc : send_pipeline(r, slot, n, argcs, argvs, replies, st);
}

/* TIME's reply in µs; false when it is not one. */
static bool time_us(const redisReply *t, int64_t *us)
{
    if (t->type != REDIS_REPLY_ARRAY || t->elements != 2)
        return false;
    int64_t part[2];
    for (int i = 0; i < 2; i++) {
        const redisReply *e = t->element[i];
        if (e->type != REDIS_REPLY_STRING || e->len == 0 || e->len > 18)
            return false;
        char *end;
        errno = 0;
        long long v = strtoll(e->str, &end, 10);
        if (errno || *end != '\0' || v < 0)
            return false;
        part[i] = v;
    }
    if (part[0] > INT64_MAX / 1000000 - 1)
        return false;
    *us = part[0] * 1000000 + part[1];
    return true;
}

int rd_redis_pipeline_timed(redis_store *r, conn_slot *slot, const char *key, size_t n,
                            const int *argcs, const char *const *const *argvs,
                            redisReply **replies, rd_redis_when *when, rd_status *st)
{
    when->known = false;
    if (n + 1 > RD_TIMED_PIPELINE_MAX)
        return rd_status_set(st, RD_ERR_INTERNAL, "store: %zu commands in one timed round trip",
                             n);
    int rc = route(r, slot, key, st);
    if (rc != RD_OK)
        return rc;
    rd_clock_reading *clock = &slot->clocks[r->cluster ? slot->node : 0];
    int64_t sent_us = rd_clock_mono_us();
    size_t ask = rd_clock_reading_fresh(clock, slot->ctx, sent_us) ? 0 : 1;
    const char *time_cmd[] = {"TIME"};
    const char *const *all_argvs[RD_TIMED_PIPELINE_MAX] = {time_cmd};
    int all_argcs[RD_TIMED_PIPELINE_MAX] = {1};
    redisReply *all[RD_TIMED_PIPELINE_MAX];
    for (size_t i = 0; i < n; i++) {
        all_argvs[ask + i] = argvs[i];
        all_argcs[ask + i] = argcs[i];
    }
    const void *conn = slot->ctx;
    rc = send_pipeline(r, slot, n + ask, all_argcs, all_argvs, all, st);
    int64_t answered_us = rd_clock_mono_us();
    if (rc != RD_OK)
        return rc;
    for (size_t i = 0; i < n; i++)
        replies[i] = all[ask + i];
    if (!ask) {
        rd_clock_window(clock, sent_us, answered_us, &when->lo_ms, &when->hi_ms);
        when->known = true;
        return RD_OK;
    }
    int64_t server_us;
    if (time_us(all[0], &server_us)) {
        *clock = (rd_clock_reading){.conn = conn, .server_us = server_us, .sent_us = sent_us,
                                    .answered_us = answered_us};
        when->lo_ms = when->hi_ms = server_us / 1000;
        when->known = true;
    }
    freeReplyObject(all[0]);
    return RD_OK;
}

size_t rd_redis_walk_nodes(redis_store *r, int *indexes, size_t max, unsigned *generation)
{
    if (!r->cluster) {
        indexes[0] = -1;
        *generation = 0;
        return max ? 1 : 0;
    }
    size_t n = rd_cluster_primaries(r->cluster, indexes, max, generation);
    if (n == 0 && rd_cluster_refresh(r->cluster, RD_CLUSTER_URGENT_REFRESH_MS))
        n = rd_cluster_primaries(r->cluster, indexes, max, generation);
    return n;
}

int rd_redis_use_walk_node(redis_store *r, conn_slot *slot, int index, unsigned generation,
                           rd_status *st)
{
    if (!r->cluster)
        return rd_redis_slot_ready(r, slot, st);
    return rd_redis_use_node(r, slot, index, generation, st);
}
