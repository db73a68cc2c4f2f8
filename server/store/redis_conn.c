/* Connections of the Redis store: where the master is (directly, or asked
 * of the sentinels), or in a Redis Cluster which node serves a slot
 * (redis_cluster.c keeps the map, this file connects to the nodes and
 * fetches the map for it), how a connection is set up (AUTH, SELECT,
 * timeouts), the pool the worker threads share, and how a command's
 * failure is told apart (Redis unavailable vs. a bug; in a cluster, one
 * node's failure vs. the whole cluster's).
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

static int parse_endpoint(const char *field, const char *spec, rd_redis_endpoint *out,
                          rd_status *st)
{
    const char *colon = spec ? strrchr(spec, ':') : NULL;
    if (!colon || colon == spec)
        return rd_status_set(st, RD_ERR_CONFIG, "store.redis.%s: \"%s\" is not host:port",
                             field, spec ? spec : "");
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (*end || port <= 0 || port > 65535)
        return rd_status_set(st, RD_ERR_CONFIG, "store.redis.%s: bad port in \"%s\"", field,
                             spec);
    out->host = strndup(spec, (size_t)(colon - spec));
    out->port = (int)port;
    return out->host ? RD_OK : rd_status_set(st, RD_ERR_NOMEM, "store.redis: out of memory");
}

static int init_endpoints(const char *field, const char *const *specs, size_t n,
                          rd_redis_endpoint **out, size_t *n_out, rd_status *st)
{
    if (n == 0)
        return RD_OK;
    *out = calloc(n, sizeof **out);
    if (!*out)
        return rd_status_set(st, RD_ERR_NOMEM, "store.redis: out of memory");
    for (size_t i = 0; i < n; i++) {
        int rc = parse_endpoint(field, specs[i], &(*out)[i], st);
        if (rc != RD_OK)
            return rc;
        (*n_out)++;
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
    if (o->n_cluster && t->db != 0)
        return rd_status_set(st, RD_ERR_CONFIG,
                             "store.redis.db: must be 0 with cluster (Redis Cluster has one db)");
    int rc = init_endpoints("cluster", o->cluster, o->n_cluster, &t->seeds, &t->n_seeds, st);
    if (rc != RD_OK || o->n_cluster)
        return rc;
    return init_endpoints("sentinels", o->sentinels, o->n_sentinels, &t->sentinels,
                          &t->n_sentinels, st);
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
    for (size_t i = 0; i < t->n_seeds; i++)
        free(t->seeds[i].host);
    free(t->seeds);
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

redisContext *rd_redis_connect_node(const rd_redis_target *t, const char *host, int port,
                                   rd_status *st)
{
    char why[RD_STATUS_MSG_MAX / 2] = "connection refused or timed out";
    redisContext *c = open_tcp(host, port, t->connect_timeout_ms, t->command_timeout_ms);
    if (c)
        c = prepare(c, t, false, why, sizeof why);
    if (!c)
        rd_status_set(st, RD_ERR_UNAVAILABLE, "store: redis cluster node %s:%d not reachable: %s",
                      host, port, why);
    return c;
}

/* The first seed that answers (the subscriber and the first map fetch). */
static redisContext *connect_to_a_seed(const rd_redis_target *t, rd_status *st)
{
    for (size_t i = 0; i < t->n_seeds; i++) {
        redisContext *c = rd_redis_connect_node(t, t->seeds[i].host, t->seeds[i].port, st);
        if (c)
            return c;
    }
    return NULL;
}

redisContext *rd_redis_connect(const rd_redis_target *t, rd_status *st)
{
    if (t->n_seeds)
        return connect_to_a_seed(t, st);
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

static void forget_clocks(conn_slot *slot)
{
    for (size_t i = 0; i < RD_CLUSTER_MAX_NODES; i++)
        slot->clocks[i].conn = NULL;
}

static void drop_connection(conn_slot *slot)
{
    forget_clocks(slot);
    if (slot->ctx)
        redisFree(slot->ctx);
    if (slot->node >= 0)
        slot->node_ctx[slot->node] = NULL;
    slot->ctx = NULL;
    slot->node = -1;
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

/* FUNCTION LOAD of the library. Its name carries a hash of its text, so
 * "already exists" means these very functions are there (another replica or
 * connection loaded them, or they came with replication from a primary):
 * no REPLACE, which would rewrite the library on every new connection.
 * -1 when the connection failed, 0 when the server refused (no FUNCTION
 * command: older than Redis 7, or renamed away), 1 when loaded. */
static int load_library(conn_slot *slot)
{
    const rd_script_library *lib = rd_redis_script_library();
    const char *argv[] = {"FUNCTION", "LOAD", lib->source};
    const size_t lens[] = {8, 4, lib->len};
    redisReply *rep = redisCommandArgv(slot->ctx, 3, argv, lens);
    if (!rep)
        return -1;
    int loaded = rep->type == REDIS_REPLY_STRING ||
                 (rep->type == REDIS_REPLY_ERROR && strstr(rep->str, "already exists"));
    freeReplyObject(rep);
    return loaded;
}

/* Makes the scripts runnable on this connection's server: the functions
 * library when the server takes it, else every script with SCRIPT LOAD, in
 * one round trip, keeping the name Redis gives each (what EVALSHA must send
 * is whatever Redis says, so nothing here computes it). A script Redis
 * refuses keeps "" and goes with EVAL. False when the connection failed
 * (it is unusable then). */
bool rd_redis_load_scripts(conn_slot *slot)
{
    int library = load_library(slot);
    if (library < 0)
        return false;
    slot->functions = library == 1;
    if (slot->functions)
        return true;
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
    if (r->cluster) /* a cluster connection is chosen by key (rd_redis_use_node) */
        return slot->ctx ? RD_OK
                         : rd_status_set(st, RD_ERR_INTERNAL, "store: no cluster node chosen");
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
    if (!rd_redis_load_scripts(slot))
        return rd_redis_fail(r, slot, NULL, "SCRIPT LOAD", st);
    /* We may have missed events while we were away: start the cache over. */
    rd_redis_cache_clear(&r->cache);
    return RD_OK;
}

/* ---- Redis Cluster: the connection to one node ---- */

static void drop_all_nodes(conn_slot *slot)
{
    forget_clocks(slot);
    for (size_t i = 0; i < RD_CLUSTER_MAX_NODES; i++) {
        if (slot->node_ctx[i])
            redisFree(slot->node_ctx[i]);
        slot->node_ctx[i] = NULL;
    }
    slot->ctx = NULL;
    slot->node = -1;
}

/* A command for a node that keeps failing, refused without trying it. */
static int node_down(redis_store *r, rd_status *st)
{
    atomic_fetch_add(&r->errors, 1);
    rd_status_set(st, RD_ERR_UNAVAILABLE, "store: redis cluster node serving the key is failing");
    if (st)
        st->store_partial = rd_cluster_some_up(r->cluster, rd_clock_mono_ms());
    return RD_ERR_UNAVAILABLE;
}

int rd_redis_use_node(redis_store *r, conn_slot *slot, int index, unsigned generation,
                      rd_status *st)
{
    if (slot->node_gen != generation) { /* the node table started over */
        drop_all_nodes(slot);
        slot->node_gen = generation;
    }
    if (index < 0 || index >= RD_CLUSTER_MAX_NODES)
        return rd_status_set(st, RD_ERR_UNAVAILABLE, "store: redis cluster slot not served");
    slot->node = index;
    slot->ctx = slot->node_ctx[index];
    if (slot->ctx)
        return RD_OK;
    if (!rd_cluster_node_usable(r->cluster, index, rd_clock_mono_ms()))
        return node_down(r, st);
    char host[RD_CLUSTER_HOST_MAX];
    int port;
    if (!rd_cluster_node_addr(r->cluster, index, generation, host, sizeof host, &port))
        return rd_status_set(st, RD_ERR_UNAVAILABLE, "store: redis cluster map changed");
    rd_status failed;
    rd_status_clear(&failed);
    slot->ctx = rd_redis_connect_node(&r->target, host, port, &failed);
    rd_redis_note_connect(r, slot->ctx ? NULL : failed.msg);
    if (!slot->ctx) {
        rd_cluster_node_failed(r->cluster, index, rd_clock_mono_ms());
        if (st) {
            *st = failed;
            st->store_partial = rd_cluster_some_up(r->cluster, rd_clock_mono_ms());
        }
        atomic_fetch_add(&r->errors, 1);
        return RD_ERR_UNAVAILABLE;
    }
    slot->node_ctx[index] = slot->ctx;
    atomic_fetch_add(&r->connects, 1);
    atomic_fetch_add(&r->commands, 1);
    if (!rd_redis_load_scripts(slot))
        return rd_redis_fail(r, slot, NULL, "SCRIPT LOAD", st);
    rd_redis_cache_clear(&r->cache);
    return RD_OK;
}

int rd_redis_use_slot(redis_store *r, conn_slot *slot, unsigned hash_slot, rd_status *st)
{
    unsigned generation;
    int index = rd_cluster_slot_node(r->cluster, hash_slot, &generation);
    if (index < 0 && rd_cluster_refresh(r->cluster, RD_CLUSTER_URGENT_REFRESH_MS))
        index = rd_cluster_slot_node(r->cluster, hash_slot, &generation);
    if (index < 0) {
        atomic_fetch_add(&r->errors, 1);
        rd_status_set(st, RD_ERR_UNAVAILABLE, "store: redis cluster: no node serves slot %u",
                      hash_slot);
        if (st)
            st->store_partial = rd_cluster_some_up(r->cluster, rd_clock_mono_ms());
        return RD_ERR_UNAVAILABLE;
    }
    return rd_redis_use_node(r, slot, index, generation, st);
}

/* The cluster's rd_cluster_fetch_fn: CLUSTER SLOTS from the first node
 * that answers, known primaries first, then the other known nodes, then
 * the seeds. */
bool rd_redis_fetch_slots(void *arg, rd_cluster *c)
{
    redis_store *r = arg;
    enum { MAX_TRIES = 16 };
    char hosts[MAX_TRIES][RD_CLUSTER_HOST_MAX];
    int ports[MAX_TRIES];
    size_t n = rd_cluster_addresses(c, hosts, ports, MAX_TRIES);
    for (size_t i = 0; i < r->target.n_seeds && n < MAX_TRIES; i++, n++) {
        snprintf(hosts[n], RD_CLUSTER_HOST_MAX, "%s", r->target.seeds[i].host);
        ports[n] = r->target.seeds[i].port;
    }
    for (size_t i = 0; i < n; i++) {
        rd_status st;
        redisContext *ctx = rd_redis_connect_node(&r->target, hosts[i], ports[i], &st);
        if (!ctx)
            continue;
        redisReply *reply = redisCommand(ctx, "CLUSTER SLOTS");
        bool ok = reply && rd_cluster_apply(c, reply);
        if (reply)
            freeReplyObject(reply);
        redisFree(ctx);
        if (ok)
            return true;
    }
    return false;
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

/* In a cluster, a failure of one node: counted against it (failed fast
 * once it keeps failing) and a fresh slot map asked for; the failure is a
 * partial one while other primaries answer. */
static int cluster_outage(redis_store *r, int node, bool node_fault, rd_status *st)
{
    if (!r->cluster)
        return RD_ERR_UNAVAILABLE;
    int64_t now = rd_clock_mono_ms();
    if (node_fault)
        rd_cluster_node_failed(r->cluster, node, now);
    else
        rd_cluster_want_refresh(r->cluster);
    if (st)
        st->store_partial = rd_cluster_some_up(r->cluster, now);
    return RD_ERR_UNAVAILABLE;
}

int rd_redis_fail(redis_store *r, conn_slot *slot, const redisReply *reply, const char *what,
                  rd_status *st)
{
    atomic_fetch_add(&r->errors, 1);
    int node = slot->node;
    if (!reply) {
        const char *err = slot->ctx && slot->ctx->errstr[0] ? slot->ctx->errstr : "no reply";
        rd_status_set(st, RD_ERR_UNAVAILABLE, "store: redis %s failed: %s", what, err);
        drop_connection(slot);
        return cluster_outage(r, node, true, st);
    }
    const char *msg = reply->type == REDIS_REPLY_ERROR ? reply->str : "unexpected reply";
    if (reply->type == REDIS_REPLY_ERROR && unavailable_error(msg)) {
        rd_status_set(st, RD_ERR_UNAVAILABLE, "store: redis %s: %.200s", what, msg);
        if (rediscover_error(msg))
            drop_connection(slot);
        return cluster_outage(r, node, rediscover_error(msg) || starts_with(msg, "CLUSTERDOWN"),
                              st);
    }
    return rd_status_set(st, RD_ERR_INTERNAL, "store: redis %s: %.200s", what, msg);
}
