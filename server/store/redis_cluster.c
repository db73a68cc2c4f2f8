/* The Redis Cluster topology of a Redis store (see redis_cluster.h).
 *
 * The map comes from CLUSTER SLOTS: each range names its primary first,
 * then its replicas (which are never used: every script writes, and
 * READONLY reads from replicas would be stale). A MOVED answer changes
 * one slot at once and asks for a fresh map; the refresher thread fetches
 * it every interval_ms, and every RD_CLUSTER_URGENT_REFRESH_MS while a
 * redirection or a failing node says the map is moving.
 *
 * Nodes are kept in a table that only grows, so an index names the same
 * address for the table's generation; when it fills up (addresses keep
 * changing) it starts over under a new generation.
 *
 * A node that fails RD_CLUSTER_DOWN_AFTER commands in a row is "down":
 * commands to its slots fail at once (the store answers them degraded,
 * redis.h) instead of each waiting for a timeout, and every down_hold_ms
 * one command is let through as a trial. The other nodes' slots are not
 * touched. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "platform/clock.h"
#include "store/redis_cluster.h"

int rd_cluster_init(rd_cluster *c, int64_t interval_ms, int64_t down_hold_ms,
                    rd_cluster_fetch_fn fetch, void *fetch_ctx)
{
    memset(c, 0, sizeof *c);
    c->interval_ms = interval_ms > 0 ? interval_ms : RD_CLUSTER_DEFAULT_REFRESH_MS;
    c->down_hold_ms = down_hold_ms > 0 ? down_hold_ms : 500;
    c->fetch = fetch;
    c->fetch_ctx = fetch_ctx;
    atomic_init(&c->generation, 1);
    atomic_init(&c->refreshed_at_ms, 0);
    atomic_init(&c->refreshes, 0);
    atomic_init(&c->redirects, 0);
    atomic_init(&c->unreachable, false);
    for (size_t i = 0; i < RD_CLUSTER_MAX_NODES; i++) {
        atomic_init(&c->nodes[i].fails_in_row, 0);
        atomic_init(&c->nodes[i].down_until_ms, 0);
    }
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&c->wake, &attr);
    pthread_condattr_destroy(&attr);
    pthread_mutex_init(&c->wake_lock, NULL);
    pthread_mutex_init(&c->refresh_lock, NULL);
    return pthread_rwlock_init(&c->lock, NULL) == 0 ? 0 : -1;
}

/* ---- the node table (callers hold the write lock) ---- */

static int find_node(const rd_cluster *c, const char *host, int port)
{
    for (size_t i = 0; i < c->n_nodes; i++)
        if (c->nodes[i].port == port && strcmp(c->nodes[i].host, host) == 0)
            return (int)i;
    return -1;
}

static void start_over(rd_cluster *c)
{
    for (size_t i = 0; i < c->n_nodes; i++) {
        c->nodes[i].host[0] = '\0';
        c->nodes[i].primary = false;
        atomic_store(&c->nodes[i].fails_in_row, 0);
        atomic_store(&c->nodes[i].down_until_ms, 0);
    }
    c->n_nodes = 0;
    memset(c->slot_node, 0, sizeof c->slot_node);
    atomic_fetch_add(&c->generation, 1);
}

static int add_node(rd_cluster *c, const char *host, int port)
{
    int i = find_node(c, host, port);
    if (i >= 0 || strlen(host) >= RD_CLUSTER_HOST_MAX)
        return i;
    if (c->n_nodes == RD_CLUSTER_MAX_NODES)
        return -1;
    rd_cluster_node *n = &c->nodes[c->n_nodes];
    snprintf(n->host, sizeof n->host, "%s", host);
    n->port = port;
    n->primary = false;
    atomic_store(&n->fails_in_row, 0);
    atomic_store(&n->down_until_ms, 0);
    return (int)c->n_nodes++;
}

/* ---- CLUSTER SLOTS ---- */

typedef struct slot_range {
    long long start, end;
    const char *host;
    int port;
} slot_range;

static bool parse_range(const redisReply *e, slot_range *out)
{
    if (e->type != REDIS_REPLY_ARRAY || e->elements < 3 ||
        e->element[0]->type != REDIS_REPLY_INTEGER || e->element[1]->type != REDIS_REPLY_INTEGER)
        return false;
    const redisReply *node = e->element[2];
    if (node->type != REDIS_REPLY_ARRAY || node->elements < 2 ||
        node->element[0]->type != REDIS_REPLY_STRING ||
        node->element[1]->type != REDIS_REPLY_INTEGER)
        return false;
    *out = (slot_range){e->element[0]->integer, e->element[1]->integer, node->element[0]->str,
                        (int)node->element[1]->integer};
    return out->start >= 0 && out->end < RD_CLUSTER_SLOTS && out->start <= out->end &&
           out->host[0] != '\0' && strcmp(out->host, "?") != 0;
}

/* Adds every range's primary; false when the table is full. */
static bool place_ranges(rd_cluster *c, const redisReply *slots)
{
    memset(c->slot_node, 0, sizeof c->slot_node);
    for (size_t i = 0; i < c->n_nodes; i++)
        c->nodes[i].primary = false;
    for (size_t i = 0; i < slots->elements; i++) {
        slot_range r;
        if (!parse_range(slots->element[i], &r))
            continue;
        int n = add_node(c, r.host, r.port);
        if (n < 0)
            return false;
        c->nodes[n].primary = true;
        memset(c->slot_node + r.start, n + 1, (size_t)(r.end - r.start + 1));
    }
    return true;
}

bool rd_cluster_apply(rd_cluster *c, const redisReply *slots)
{
    if (!slots || slots->type != REDIS_REPLY_ARRAY || slots->elements == 0)
        return false;
    pthread_rwlock_wrlock(&c->lock);
    if (!place_ranges(c, slots)) {
        start_over(c);
        (void)place_ranges(c, slots);
    }
    pthread_rwlock_unlock(&c->lock);
    atomic_store(&c->refreshed_at_ms, rd_clock_mono_ms());
    atomic_fetch_add(&c->refreshes, 1);
    return true;
}

/* ---- lookups ---- */

int rd_cluster_slot_node(rd_cluster *c, unsigned slot, unsigned *generation)
{
    pthread_rwlock_rdlock(&c->lock);
    int n = (int)c->slot_node[slot % RD_CLUSTER_SLOTS] - 1;
    *generation = atomic_load(&c->generation);
    pthread_rwlock_unlock(&c->lock);
    return n;
}

bool rd_cluster_node_addr(rd_cluster *c, int index, unsigned generation, char *host,
                          size_t cap, int *port)
{
    pthread_rwlock_rdlock(&c->lock);
    bool ok = generation == atomic_load(&c->generation) && index >= 0 &&
              (size_t)index < c->n_nodes;
    if (ok) {
        snprintf(host, cap, "%s", c->nodes[index].host);
        *port = c->nodes[index].port;
    }
    pthread_rwlock_unlock(&c->lock);
    return ok;
}

int rd_cluster_node_index(rd_cluster *c, const char *host, int port, unsigned *generation)
{
    pthread_rwlock_rdlock(&c->lock);
    int n = find_node(c, host, port);
    *generation = atomic_load(&c->generation);
    pthread_rwlock_unlock(&c->lock);
    if (n >= 0)
        return n;
    pthread_rwlock_wrlock(&c->lock);
    n = add_node(c, host, port);
    *generation = atomic_load(&c->generation);
    pthread_rwlock_unlock(&c->lock);
    return n;
}

void rd_cluster_moved(rd_cluster *c, unsigned slot, int index, unsigned generation)
{
    pthread_rwlock_wrlock(&c->lock);
    if (generation == atomic_load(&c->generation) && index >= 0 &&
        (size_t)index < c->n_nodes) {
        c->slot_node[slot % RD_CLUSTER_SLOTS] = (uint8_t)(index + 1);
        c->nodes[index].primary = true;
    }
    pthread_rwlock_unlock(&c->lock);
    atomic_fetch_add(&c->redirects, 1);
    rd_cluster_want_refresh(c);
}

size_t rd_cluster_primaries(rd_cluster *c, int *indexes, size_t max, unsigned *generation)
{
    size_t n = 0;
    pthread_rwlock_rdlock(&c->lock);
    for (size_t i = 0; i < c->n_nodes && n < max; i++)
        if (c->nodes[i].primary)
            indexes[n++] = (int)i;
    *generation = atomic_load(&c->generation);
    pthread_rwlock_unlock(&c->lock);
    return n;
}

size_t rd_cluster_addresses(rd_cluster *c, char (*hosts)[RD_CLUSTER_HOST_MAX], int *ports,
                            size_t max)
{
    size_t n = 0;
    pthread_rwlock_rdlock(&c->lock);
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < c->n_nodes && n < max; i++)
            if (c->nodes[i].primary == (pass == 0)) {
                memcpy(hosts[n], c->nodes[i].host, RD_CLUSTER_HOST_MAX);
                ports[n++] = c->nodes[i].port;
            }
    pthread_rwlock_unlock(&c->lock);
    return n;
}

/* ---- failing nodes ---- */

static bool valid_index(int index)
{
    return index >= 0 && index < RD_CLUSTER_MAX_NODES;
}

bool rd_cluster_node_usable(rd_cluster *c, int index, int64_t now_ms)
{
    if (!valid_index(index))
        return false;
    rd_cluster_node *n = &c->nodes[index];
    int_fast64_t until = atomic_load(&n->down_until_ms);
    if (until == 0)
        return true;
    if (now_ms < until)
        return false;
    /* One trial per hold: whoever moves the deadline on tries it. */
    return atomic_compare_exchange_strong(&n->down_until_ms, &until, now_ms + c->down_hold_ms);
}

void rd_cluster_node_ok(rd_cluster *c, int index)
{
    if (!valid_index(index))
        return;
    rd_cluster_node *n = &c->nodes[index];
    if (atomic_load(&n->fails_in_row) != 0)
        atomic_store(&n->fails_in_row, 0);
    if (atomic_load(&n->down_until_ms) != 0)
        atomic_store(&n->down_until_ms, 0);
}

void rd_cluster_node_failed(rd_cluster *c, int index, int64_t now_ms)
{
    if (!valid_index(index))
        return;
    rd_cluster_node *n = &c->nodes[index];
    if (atomic_fetch_add(&n->fails_in_row, 1) + 1 >= RD_CLUSTER_DOWN_AFTER)
        atomic_store(&n->down_until_ms, now_ms + c->down_hold_ms);
    rd_cluster_want_refresh(c);
}

bool rd_cluster_some_up(rd_cluster *c, int64_t now_ms)
{
    if (atomic_load(&c->unreachable))
        return false;
    bool up = false;
    pthread_rwlock_rdlock(&c->lock);
    for (size_t i = 0; i < c->n_nodes && !up; i++) {
        int_fast64_t until = atomic_load(&c->nodes[i].down_until_ms);
        up = c->nodes[i].primary && (until == 0 || until <= now_ms);
    }
    pthread_rwlock_unlock(&c->lock);
    return up;
}

static bool any_down(rd_cluster *c)
{
    bool down = false;
    pthread_rwlock_rdlock(&c->lock);
    for (size_t i = 0; i < c->n_nodes && !down; i++)
        down = c->nodes[i].primary && atomic_load(&c->nodes[i].down_until_ms) != 0;
    pthread_rwlock_unlock(&c->lock);
    return down;
}

/* ---- refreshing ---- */

void rd_cluster_want_refresh(rd_cluster *c)
{
    pthread_mutex_lock(&c->wake_lock);
    if (!c->urgent) {
        c->urgent = true;
        pthread_cond_signal(&c->wake);
    }
    pthread_mutex_unlock(&c->wake_lock);
}

bool rd_cluster_refresh(rd_cluster *c, int64_t min_age_ms)
{
    pthread_mutex_lock(&c->refresh_lock);
    int64_t at = atomic_load(&c->refreshed_at_ms);
    bool ok = at != 0 && rd_clock_mono_ms() - at < min_age_ms;
    if (!ok) {
        ok = c->fetch(c->fetch_ctx, c);
        atomic_store(&c->unreachable, !ok);
    }
    pthread_mutex_unlock(&c->refresh_lock);
    return ok;
}

static struct timespec deadline_after(int64_t ms)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_sec += (time_t)(ms / 1000);
    t.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

/* Fetches on the timer; soon after a request, and often while a node is
 * failing, so a promoted replica is found within about that long. */
static void *refresher_main(void *arg)
{
    rd_cluster *c = arg;
    pthread_mutex_lock(&c->wake_lock);
    while (!c->stopping) {
        int64_t wait = c->urgent || any_down(c) ? RD_CLUSTER_URGENT_REFRESH_MS : c->interval_ms;
        struct timespec until = deadline_after(wait);
        while (!c->stopping && pthread_cond_timedwait(&c->wake, &c->wake_lock, &until) != ETIMEDOUT)
            if (c->urgent && wait == c->interval_ms)
                break;
        if (c->stopping)
            break;
        c->urgent = false;
        pthread_mutex_unlock(&c->wake_lock);
        (void)rd_cluster_refresh(c, 0);
        pthread_mutex_lock(&c->wake_lock);
    }
    pthread_mutex_unlock(&c->wake_lock);
    return NULL;
}

int rd_cluster_start(rd_cluster *c)
{
    if (pthread_create(&c->refresher, NULL, refresher_main, c) != 0)
        return -1;
    c->started = true;
    return 0;
}

void rd_cluster_destroy(rd_cluster *c)
{
    if (c->started) {
        pthread_mutex_lock(&c->wake_lock);
        c->stopping = true;
        pthread_cond_signal(&c->wake);
        pthread_mutex_unlock(&c->wake_lock);
        pthread_join(c->refresher, NULL);
        c->started = false;
    }
    pthread_cond_destroy(&c->wake);
    pthread_mutex_destroy(&c->wake_lock);
    pthread_mutex_destroy(&c->refresh_lock);
    pthread_rwlock_destroy(&c->lock);
}
