/* The subscriber thread of the Redis store: it listens on
 * <prefix>breaker-events, drops the cache entry of every tool an event
 * names (redis_cache.c says why the cache needs it) and passes the change on
 * to the store's change listener. While it is not connected the cache is
 * not used. */
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "store/redis_subscriber.h"

#define RD_SUB_POLL_MS 100
#define RD_SUB_RETRY_MS 200

/* "<version> <generation> <tool_id>" */
static void handle_event(redis_store *r, const char *payload, size_t len)
{
    char buf[RD_ID_MAX + 64];
    if (len >= sizeof buf)
        return;
    memcpy(buf, payload, len);
    buf[len] = '\0';
    char *end;
    long long version = strtoll(buf, &end, 10);
    if (*end != ' ')
        return;
    char *tool = strchr(end + 1, ' ');
    if (!tool)
        return;
    rd_redis_cache_forget(r, tool + 1, version);
    rd_redis_notify_listener(r, tool + 1);
}

static void handle_reply(redis_store *r, const redisReply *reply)
{
    if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 3 &&
        reply->element[0]->type == REDIS_REPLY_STRING &&
        strcmp(reply->element[0]->str, "message") == 0 &&
        reply->element[2]->type == REDIS_REPLY_STRING)
        handle_event(r, reply->element[2]->str, reply->element[2]->len);
}

/* A connection to the master, or in a cluster to any node (a PUBLISH
 * reaches every node of a cluster): the known primaries first, then the
 * seeds. */
static redisContext *connect_for_events(redis_store *r)
{
    rd_status st;
    if (r->cluster) {
        enum { MAX_TRIES = 8 };
        char hosts[MAX_TRIES][RD_CLUSTER_HOST_MAX];
        int ports[MAX_TRIES];
        size_t n = rd_cluster_addresses(r->cluster, hosts, ports, MAX_TRIES);
        for (size_t i = 0; i < n; i++) {
            redisContext *c = rd_redis_connect_node(&r->target, hosts[i], ports[i], &st);
            if (c)
                return c;
        }
    }
    return rd_redis_connect(&r->target, &st);
}

static redisContext *subscribe(redis_store *r)
{
    redisContext *c = connect_for_events(r);
    if (!c)
        return NULL;
    const char *argv[] = {"SUBSCRIBE", r->channel};
    redisReply *reply = redisCommandArgv(c, 2, argv, NULL);
    bool ok = reply && reply->type == REDIS_REPLY_ARRAY;
    if (reply)
        freeReplyObject(reply);
    if (!ok) {
        redisFree(c);
        return NULL;
    }
    atomic_fetch_add(&r->connects, 1);
    return c;
}

#define RD_SENTINEL_CHECK_MS 500

/* Sentinel only: true when the sentinels name a master other than the one
 * c is connected to. A manual failover leaves the old master writable for
 * several seconds before Sentinel demotes it, so waiting for READONLY is
 * not enough to follow it. */
static bool master_moved(redis_store *r, const redisContext *c)
{
    char *host;
    int port;
    if (!r->target.n_sentinels || !rd_redis_sentinel_master(&r->target, &host, &port))
        return false;
    bool moved = port != c->tcp.port || !c->tcp.host || strcmp(host, c->tcp.host) != 0;
    free(host);
    if (moved)
        atomic_fetch_add(&r->master_epoch, 1);
    return moved;
}

/* Reads messages until the connection fails, the master moves or the
 * store stops. poll() rather than a socket timeout: hiredis treats a
 * timed-out read as a dead connection. */
static void listen_until_lost(redis_store *r, redisContext *c)
{
    int64_t next_check = rd_clock_mono_ms() + RD_SENTINEL_CHECK_MS;
    while (!atomic_load(&r->stopping)) {
        if (rd_clock_mono_ms() >= next_check) {
            if (master_moved(r, c))
                return;
            next_check = rd_clock_mono_ms() + RD_SENTINEL_CHECK_MS;
        }
        void *reply = NULL;
        if (redisGetReplyFromReader(c, &reply) != REDIS_OK)
            return;
        if (reply) {
            handle_reply(r, reply);
            freeReplyObject(reply);
            continue;
        }
        struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
        int ready = poll(&pfd, 1, RD_SUB_POLL_MS);
        if (ready < 0 || (ready > 0 && redisBufferRead(c) != REDIS_OK))
            return;
    }
}

static void pause_unless_stopping(redis_store *r, int ms)
{
    for (int waited = 0; waited < ms && !atomic_load(&r->stopping); waited += 20)
        usleep(20 * 1000);
}

static void *subscriber_main(void *arg)
{
    redis_store *r = arg;
    while (!atomic_load(&r->stopping)) {
        redisContext *c = subscribe(r);
        if (!c) {
            pause_unless_stopping(r, RD_SUB_RETRY_MS);
            continue;
        }
        /* Events published while we were away are lost: start over. */
        rd_redis_cache_clear(&r->cache);
        atomic_store(&r->cache.usable, r->local_cache);
        listen_until_lost(r, c);
        atomic_store(&r->cache.usable, false);
        rd_redis_cache_clear(&r->cache);
        redisFree(c);
    }
    return NULL;
}

int rd_redis_subscriber_start(redis_store *r, rd_status *st)
{
    if (pthread_create(&r->subscriber, NULL, subscriber_main, r) != 0)
        return rd_status_set(st, RD_ERR_INTERNAL, "store: cannot start the redis subscriber");
    r->subscriber_started = true;
    return RD_OK;
}

void rd_redis_subscriber_stop(redis_store *r)
{
    atomic_store(&r->stopping, true);
    if (r->subscriber_started)
        pthread_join(r->subscriber, NULL);
    r->subscriber_started = false;
}

void rd_redis_notify_listener(redis_store *r, const char *tool_id)
{
    pthread_mutex_lock(&r->listener_lock);
    if (r->listener)
        r->listener(r->listener_ctx, tool_id); /* under the lock: unset waits for it */
    pthread_mutex_unlock(&r->listener_lock);
}
