/* Connections of the Redis store: where the master is (directly, or asked
 * of the sentinels), how a connection is set up (AUTH, SELECT, timeouts),
 * the pool the worker threads share, and how a command's failure is told
 * apart (Redis unavailable vs. a bug).
 *
 * hiredis 0.14 knows nothing of Sentinel, so discovery is done here: each
 * sentinel in turn is asked SENTINEL get-master-addr-by-name; the address
 * it gives is connected and must answer ROLE with "master" (a sentinel may
 * lag behind a failover). A connection that fails or answers READONLY is
 * dropped, and the next use discovers the master again: that is how a
 * failover is followed.
 *
 * Every new connection loads the scripts with SCRIPT LOAD and runs them by
 * the names Redis gives back; a NOSCRIPT (SCRIPT FLUSH, a restart behind
 * the same connection) loads them again.
 *
 * The password is sent with AUTH and appears in no message. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/redis_conn.h"

static char *dup_or_null(const char *s)
{
    return s && s[0] ? strdup(s) : NULL;
}

static int parse_endpoint(const char *spec, rd_redis_endpoint *out, rd_status *st)
{
    const char *colon = spec ? strrchr(spec, ':') : NULL;
    if (!colon || colon == spec)
        return rd_status_set(st, RD_ERR_CONFIG, "store.redis.sentinels: \"%s\" is not host:port",
                             spec ? spec : "");
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (*end || port <= 0 || port > 65535)
        return rd_status_set(st, RD_ERR_CONFIG, "store.redis.sentinels: bad port in \"%s\"",
                             spec);
    out->host = strndup(spec, (size_t)(colon - spec));
    out->port = (int)port;
    return out->host ? RD_OK : rd_status_set(st, RD_ERR_NOMEM, "store.redis: out of memory");
}

static int init_sentinels(rd_redis_target *t, const rd_redis_options *o, rd_status *st)
{
    if (o->n_sentinels == 0)
        return RD_OK;
    t->sentinels = calloc(o->n_sentinels, sizeof *t->sentinels);
    if (!t->sentinels)
        return rd_status_set(st, RD_ERR_NOMEM, "store.redis: out of memory");
    for (size_t i = 0; i < o->n_sentinels; i++) {
        int rc = parse_endpoint(o->sentinels[i], &t->sentinels[i], st);
        if (rc != RD_OK)
            return rc;
        t->n_sentinels++;
    }
    return RD_OK;
}

int rd_redis_target_init(rd_redis_target *t, const rd_redis_options *o, rd_status *st)
{
    memset(t, 0, sizeof *t);
    t->host = strdup(o->host && o->host[0] ? o->host : "127.0.0.1");
    t->port = o->port ? o->port : RD_REDIS_DEFAULT_PORT;
    t->unix_socket = dup_or_null(o->unix_socket);
    t->password = dup_or_null(o->password);
    t->sentinel_password = dup_or_null(o->sentinel_password);
    t->master_name = strdup(o->master_name && o->master_name[0] ? o->master_name
                                                                 : RD_REDIS_DEFAULT_MASTER_NAME);
    t->db = o->db;
    t->command_timeout_ms =
        o->command_timeout_ms > 0 ? o->command_timeout_ms : RD_REDIS_DEFAULT_COMMAND_TIMEOUT_MS;
    t->connect_timeout_ms =
        o->connect_timeout_ms > 0 ? o->connect_timeout_ms : RD_REDIS_DEFAULT_CONNECT_TIMEOUT_MS;
    if (!t->host || !t->master_name || (o->unix_socket && o->unix_socket[0] && !t->unix_socket) ||
        (o->password && o->password[0] && !t->password))
        return rd_status_set(st, RD_ERR_NOMEM, "store.redis: out of memory");
    if (t->port <= 0 || t->port > 65535)
        return rd_status_set(st, RD_ERR_CONFIG, "store.redis.port: %d is out of range", t->port);
    if (t->db < 0)
        return rd_status_set(st, RD_ERR_CONFIG, "store.redis.db: %d is negative", t->db);
    return init_sentinels(t, o, st);
}

void rd_redis_target_free(rd_redis_target *t)
{
    free(t->host);
    free(t->unix_socket);
    free(t->password);
    free(t->sentinel_password);
    free(t->master_name);
    for (size_t i = 0; i < t->n_sentinels; i++)
        free(t->sentinels[i].host);
    free(t->sentinels);
    memset(t, 0, sizeof *t);
}

static struct timeval ms_to_tv(int ms)
{
    return (struct timeval){.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
}

static redisContext *open_tcp(const char *host, int port, int connect_timeout_ms,
                              int command_timeout_ms)
{
    redisContext *c = redisConnectWithTimeout(host, port, ms_to_tv(connect_timeout_ms));
    if (c && !c->err && redisSetTimeout(c, ms_to_tv(command_timeout_ms)) == REDIS_OK)
        return c;
    if (c)
        redisFree(c);
    return NULL;
}

/* Runs one command expecting a status/any non-error reply; false on error. */
static bool command_ok(redisContext *c, int argc, const char **argv)
{
    redisReply *r = redisCommandArgv(c, argc, argv, NULL);
    bool ok = r && r->type != REDIS_REPLY_ERROR;
    if (r)
        freeReplyObject(r);
    return ok;
}

/* AUTH; on refusal, why holds Redis's own answer (WRONGPASS ..., which
 * never repeats the password) so the log says what is wrong. */
static bool authenticate(redisContext *c, const char *password, char *why, size_t cap)
{
    if (!password)
        return true;
    const char *argv[] = {"AUTH", password};
    redisReply *r = redisCommandArgv(c, 2, argv, NULL);
    bool ok = r && r->type != REDIS_REPLY_ERROR;
    if (!ok && why)
        snprintf(why, cap, "AUTH refused: %s",
                 r && r->type == REDIS_REPLY_ERROR ? r->str : "no answer");
    if (r)
        freeReplyObject(r);
    return ok;
}

static bool select_db(redisContext *c, int db)
{
    if (db == 0)
        return true;
    char num[16];
    snprintf(num, sizeof num, "%d", db);
    const char *argv[] = {"SELECT", num};
    return command_ok(c, 2, argv);
}

static bool is_master(redisContext *c)
{
    redisReply *r = redisCommand(c, "ROLE");
    bool master = r && r->type == REDIS_REPLY_ARRAY && r->elements > 0 &&
                  r->element[0]->type == REDIS_REPLY_STRING &&
                  strcmp(r->element[0]->str, "master") == 0;
    if (r)
        freeReplyObject(r);
    return master;
}

/* Sets up a fresh connection; frees it and returns NULL on any failure,
 * with why (cap bytes) saying which. */
static redisContext *prepare(redisContext *c, const rd_redis_target *t, bool check_role,
                             char *why, size_t cap)
{
    if (!authenticate(c, t->password, why, cap))
        ; /* why is set */
    else if (!select_db(c, t->db))
        snprintf(why, cap, "SELECT failed");
    else if (check_role && !is_master(c))
        snprintf(why, cap, "the address given is not a master (yet)");
    else
        return c;
    redisFree(c);
    return NULL;
}

/* Asks one sentinel where the master is; *host is malloc'd. */
static bool ask_sentinel(const rd_redis_target *t, const rd_redis_endpoint *s, char **host,
                         int *port)
{
    redisContext *c = open_tcp(s->host, s->port, t->connect_timeout_ms, t->command_timeout_ms);
    if (!c)
        return false;
    bool found = false;
    if (authenticate(c, t->sentinel_password, NULL, 0)) {
        redisReply *r = redisCommand(c, "SENTINEL get-master-addr-by-name %s", t->master_name);
        if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
            r->element[0]->type == REDIS_REPLY_STRING &&
            r->element[1]->type == REDIS_REPLY_STRING) {
            *host = strdup(r->element[0]->str);
            *port = atoi(r->element[1]->str);
            found = *host != NULL;
        }
        if (r)
            freeReplyObject(r);
    }
    redisFree(c);
    return found;
}

bool rd_redis_sentinel_master(const rd_redis_target *t, char **host, int *port)
{
    for (size_t i = 0; i < t->n_sentinels; i++)
        if (ask_sentinel(t, &t->sentinels[i], host, port))
            return true;
    return false;
}

static redisContext *connect_via_sentinels(const rd_redis_target *t, rd_status *st)
{
    char why[RD_STATUS_MSG_MAX / 2] = "no sentinel answered";
    for (size_t i = 0; i < t->n_sentinels; i++) {
        char *host;
        int port;
        if (!ask_sentinel(t, &t->sentinels[i], &host, &port))
            continue;
        redisContext *c = open_tcp(host, port, t->connect_timeout_ms, t->command_timeout_ms);
        free(host);
        if (!c) {
            snprintf(why, sizeof why, "the master the sentinels name refuses connections");
            continue;
        }
        c = prepare(c, t, true, why, sizeof why);
        if (c)
            return c;
    }
    rd_status_set(st, RD_ERR_UNAVAILABLE, "store: redis master \"%s\" not reachable: %s",
                  t->master_name, why);
    return NULL;
}

redisContext *rd_redis_connect(const rd_redis_target *t, rd_status *st)
{
    if (t->n_sentinels)
        return connect_via_sentinels(t, st);
    redisContext *c;
    if (t->unix_socket) {
        c = redisConnectUnixWithTimeout(t->unix_socket, ms_to_tv(t->connect_timeout_ms));
        if (c && (c->err || redisSetTimeout(c, ms_to_tv(t->command_timeout_ms)) != REDIS_OK)) {
            redisFree(c);
            c = NULL;
        }
    } else {
        c = open_tcp(t->host, t->port, t->connect_timeout_ms, t->command_timeout_ms);
    }
    char why[RD_STATUS_MSG_MAX / 2] = "connection refused or timed out";
    if (c)
        c = prepare(c, t, false, why, sizeof why);
    if (!c)
        rd_status_set(st, RD_ERR_UNAVAILABLE, "store: redis at %s:%d not reachable: %s",
                      t->unix_socket ? t->unix_socket : t->host,
                      t->unix_socket ? 0 : t->port, why);
    return c;
}

/* ---- the pool ---- */

static void drop_connection(conn_slot *slot)
{
    if (slot->ctx)
        redisFree(slot->ctx);
    slot->ctx = NULL;
}

static __thread unsigned thread_slot_hint;
static __thread bool thread_slot_hinted;

/* A free connection if there is one (starting at this thread's own), else
 * this thread's own, waited for. */
conn_slot *rd_redis_slot_take(redis_store *r)
{
    if (!thread_slot_hinted) {
        thread_slot_hint = atomic_fetch_add(&r->next_slot, 1);
        thread_slot_hinted = true;
    }
    size_t start = thread_slot_hint % r->pool_size;
    for (size_t i = 0; i < r->pool_size; i++) {
        conn_slot *s = &r->pool[(start + i) % r->pool_size];
        if (pthread_mutex_trylock(&s->lock) == 0)
            return s;
    }
    conn_slot *s = &r->pool[start];
    pthread_mutex_lock(&s->lock);
    return s;
}

void rd_redis_slot_give(conn_slot *slot)
{
    pthread_mutex_unlock(&slot->lock);
}

void rd_redis_note_connect(redis_store *r, const char *error)
{
    atomic_store(&r->auth_refused, error && strstr(error, "AUTH refused") != NULL);
    if (!error)
        return;
    pthread_mutex_lock(&r->error_lock);
    snprintf(r->last_error, sizeof r->last_error, "%s", error);
    pthread_mutex_unlock(&r->error_lock);
}

/* Loads every script with SCRIPT LOAD, in one round trip, and keeps the
 * name Redis gives each: what EVALSHA must send is whatever Redis says, so
 * nothing here computes it. A script Redis refuses keeps "" and goes with
 * EVAL. False when the connection failed (it is unusable then). */
static bool load_scripts(conn_slot *slot)
{
    const rd_script *sc = rd_redis_scripts();
    for (size_t i = 0; i < RD_SCRIPT_COUNT; i++) {
        const char *argv[] = {"SCRIPT", "LOAD", sc[i].source};
        const size_t lens[] = {6, 4, sc[i].len};
        slot->sha[i][0] = '\0';
        if (redisAppendCommandArgv(slot->ctx, 3, argv, lens) != REDIS_OK)
            return false;
    }
    for (size_t i = 0; i < RD_SCRIPT_COUNT; i++) {
        void *reply = NULL;
        if (redisGetReply(slot->ctx, &reply) != REDIS_OK)
            return false;
        const redisReply *rep = reply;
        if (rep->type == REDIS_REPLY_STRING && rep->len == 40)
            memcpy(slot->sha[i], rep->str, 41);
        freeReplyObject(reply);
    }
    return true;
}

int rd_redis_slot_ready(redis_store *r, conn_slot *slot, rd_status *st)
{
    unsigned epoch = atomic_load(&r->master_epoch);
    if (slot->ctx && slot->master_epoch == epoch)
        return RD_OK;
    drop_connection(slot); /* the sentinels name another master now */
    slot->master_epoch = epoch;
    rd_status failed;
    rd_status_clear(&failed);
    slot->ctx = rd_redis_connect(&r->target, &failed);
    rd_redis_note_connect(r, slot->ctx ? NULL : failed.msg);
    if (!slot->ctx) {
        if (st)
            *st = failed;
        atomic_fetch_add(&r->errors, 1);
        return RD_ERR_UNAVAILABLE;
    }
    atomic_fetch_add(&r->connects, 1);
    /* A new server, or one restarted empty, may not know our scripts. */
    atomic_fetch_add(&r->commands, 1);
    if (!load_scripts(slot))
        return rd_redis_fail(r, slot, NULL, "SCRIPT LOAD", st);
    /* We may have missed events while we were away: start the cache over. */
    rd_redis_cache_clear(&r->cache);
    return RD_OK;
}

static bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Error replies that mean "Redis cannot serve now", not "the request is
 * wrong". Inside a script, a failing call keeps its error code (Redis 7),
 * and READONLY may also arrive wrapped, hence the search for it. */
static bool unavailable_error(const char *msg)
{
    static const char *const transient[] = {"LOADING", "READONLY", "MASTERDOWN", "BUSY",
                                            "TRYAGAIN", "CLUSTERDOWN", "NOREPLICAS", "MISCONF",
                                            "NOAUTH"};
    for (size_t i = 0; i < sizeof transient / sizeof *transient; i++)
        if (starts_with(msg, transient[i]))
            return true;
    return strstr(msg, "READONLY") != NULL;
}

/* After these the connection points at the wrong server (a demoted master,
 * a failed-over one): drop it so the next use discovers the master again. */
static bool rediscover_error(const char *msg)
{
    return strstr(msg, "READONLY") || strstr(msg, "MASTERDOWN") || strstr(msg, "NOAUTH") ||
           strstr(msg, "LOADING");
}

int rd_redis_fail(redis_store *r, conn_slot *slot, const redisReply *reply, const char *what,
                  rd_status *st)
{
    atomic_fetch_add(&r->errors, 1);
    if (!reply) {
        const char *err = slot->ctx && slot->ctx->errstr[0] ? slot->ctx->errstr : "no reply";
        rd_status_set(st, RD_ERR_UNAVAILABLE, "store: redis %s failed: %s", what, err);
        drop_connection(slot);
        return RD_ERR_UNAVAILABLE;
    }
    const char *msg = reply->type == REDIS_REPLY_ERROR ? reply->str : "unexpected reply";
    if (reply->type == REDIS_REPLY_ERROR && unavailable_error(msg)) {
        rd_status_set(st, RD_ERR_UNAVAILABLE, "store: redis %s: %.200s", what, msg);
        if (rediscover_error(msg))
            drop_connection(slot);
        return RD_ERR_UNAVAILABLE;
    }
    return rd_status_set(st, RD_ERR_INTERNAL, "store: redis %s: %.200s", what, msg);
}

/* ---- running scripts ---- */

#define RD_EVAL_MAX_ARGS 64

/* EVALSHA with the name this connection loaded the script under, or EVAL
 * with its text when it has none (or `text`). */
static redisReply *send_script(conn_slot *slot, rd_script_id id, bool text, int nkeys,
                               int nargs, const char **argv, const size_t *lens)
{
    const rd_script *sc = &rd_redis_scripts()[id];
    bool by_sha = !text && slot->sha[id][0] != '\0';
    const char *full[RD_EVAL_MAX_ARGS + 3];
    size_t full_lens[RD_EVAL_MAX_ARGS + 3];
    char nkeys_text[16];
    snprintf(nkeys_text, sizeof nkeys_text, "%d", nkeys);
    full[0] = by_sha ? "EVALSHA" : "EVAL";
    full[1] = by_sha ? slot->sha[id] : sc->source;
    full[2] = nkeys_text;
    full_lens[0] = strlen(full[0]);
    full_lens[1] = by_sha ? 40 : sc->len;
    full_lens[2] = strlen(full[2]);
    for (int i = 0; i < nargs; i++) {
        full[3 + i] = argv[i];
        full_lens[3 + i] = lens ? lens[i] : strlen(argv[i]);
    }
    return redisCommandArgv(slot->ctx, 3 + nargs, full, full_lens);
}

static bool is_noscript(const redisReply *reply)
{
    return reply && reply->type == REDIS_REPLY_ERROR && starts_with(reply->str, "NOSCRIPT");
}

redisReply *rd_redis_eval(redis_store *r, conn_slot *slot, rd_script_id id, int nkeys,
                          int nargs, const char **argv, const size_t *lens, rd_status *st)
{
    if (nargs > RD_EVAL_MAX_ARGS) {
        rd_status_set(st, RD_ERR_INTERNAL, "store: too many script arguments (%d)", nargs);
        return NULL;
    }
    if (rd_redis_slot_ready(r, slot, st) != RD_OK)
        return NULL;
    const char *name = rd_redis_scripts()[id].name;
    atomic_fetch_add(&r->commands, 1);
    redisReply *reply = send_script(slot, id, false, nkeys, nargs, argv, lens);
    if (is_noscript(reply)) {
        /* SCRIPT FLUSH, or a restarted server behind the same connection:
         * load them all again (the other scripts are gone too) and run. */
        freeReplyObject(reply);
        atomic_fetch_add(&r->script_reloads, 1);
        if (!load_scripts(slot)) {
            rd_redis_fail(r, slot, NULL, "SCRIPT LOAD", st);
            return NULL;
        }
        reply = send_script(slot, id, false, nkeys, nargs, argv, lens);
        if (is_noscript(reply)) { /* flushed again in between: send the text */
            freeReplyObject(reply);
            reply = send_script(slot, id, true, nkeys, nargs, argv, lens);
        }
    }
    if (reply && reply->type != REDIS_REPLY_ERROR)
        return reply;
    rd_redis_fail(r, slot, reply, name, st);
    if (reply)
        freeReplyObject(reply);
    return NULL;
}

int rd_redis_pipeline(redis_store *r, conn_slot *slot, size_t n, const int *argcs,
                      const char ***argvs, const size_t **lens, redisReply **replies,
                      rd_status *st)
{
    memset(replies, 0, n * sizeof *replies);
    int rc = rd_redis_slot_ready(r, slot, st);
    if (rc != RD_OK)
        return rc;
    atomic_fetch_add(&r->commands, 1);
    for (size_t i = 0; i < n; i++)
        if (redisAppendCommandArgv(slot->ctx, argcs[i], argvs[i], lens ? lens[i] : NULL) !=
            REDIS_OK)
            return rd_redis_fail(r, slot, NULL, "pipeline", st);
    for (size_t i = 0; i < n; i++) {
        void *reply = NULL;
        if (redisGetReply(slot->ctx, &reply) != REDIS_OK) {
            for (size_t j = 0; j < i; j++) {
                freeReplyObject(replies[j]);
                replies[j] = NULL;
            }
            return rd_redis_fail(r, slot, NULL, "pipeline", st);
        }
        replies[i] = reply;
    }
    return RD_OK;
}
