/* The Redis Cluster topology of a Redis store (redis_cluster.c): which
 * primary serves each of the 16384 slots, the primaries' addresses, which
 * of them are failing, and the thread that refreshes the map. No I/O of
 * its own: the store hands it a function that fetches CLUSTER SLOTS. */
#ifndef RD_STORE_REDIS_CLUSTER_H
#define RD_STORE_REDIS_CLUSTER_H

#include <hiredis/hiredis.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "store/redis_crc16.h"

#define RD_CLUSTER_MAX_NODES 64
#define RD_CLUSTER_HOST_MAX 256
#define RD_CLUSTER_DEFAULT_REFRESH_MS 1000
/* While a node is failing (or after a redirection), the map is fetched
 * again this often. */
#define RD_CLUSTER_URGENT_REFRESH_MS 100
/* A node failing this many commands in a row is failed fast (its slots
 * answered degraded) until a trial command to it succeeds. */
#define RD_CLUSTER_DOWN_AFTER 2

typedef struct rd_cluster_node {
    char host[RD_CLUSTER_HOST_MAX];
    int port;
    bool primary;                 /* serves slots in the current map */
    atomic_uint fails_in_row;
    atomic_int_fast64_t down_until_ms; /* monotonic; 0 = not failing */
} rd_cluster_node;

typedef struct rd_cluster rd_cluster;
/* Fetches CLUSTER SLOTS from some node and applies it with
 * rd_cluster_apply; false when no node answered. */
typedef bool (*rd_cluster_fetch_fn)(void *ctx, rd_cluster *c);

struct rd_cluster {
    pthread_rwlock_t lock;        /* guards the map and the node table */
    uint8_t slot_node[RD_CLUSTER_SLOTS]; /* node index + 1; 0 = not known */
    rd_cluster_node nodes[RD_CLUSTER_MAX_NODES];
    size_t n_nodes;
    /* Bumped when the node table starts over (it filled up): connections
     * made to nodes of an older generation are dropped. */
    atomic_uint generation;
    int64_t down_hold_ms;         /* how long a failing node is failed fast */
    int64_t interval_ms;          /* the refresh timer */
    rd_cluster_fetch_fn fetch;
    void *fetch_ctx;
    pthread_mutex_t refresh_lock; /* one fetch at a time */
    atomic_int_fast64_t refreshed_at_ms; /* monotonic time of the last good fetch */
    atomic_uint_fast64_t refreshes, redirects;
    atomic_bool unreachable;      /* the last fetch found no node answering */
    pthread_mutex_t wake_lock;
    pthread_cond_t wake;          /* CLOCK_MONOTONIC */
    bool urgent, stopping, started;
    pthread_t refresher;
};

int rd_cluster_init(rd_cluster *c, int64_t interval_ms, int64_t down_hold_ms,
                    rd_cluster_fetch_fn fetch, void *fetch_ctx);
/* Starts the refresher thread (after the first fetch was tried). */
int rd_cluster_start(rd_cluster *c);
void rd_cluster_destroy(rd_cluster *c);

/* Replaces the map with a CLUSTER SLOTS reply; false when it is not one. */
bool rd_cluster_apply(rd_cluster *c, const redisReply *slots);

/* The node serving `slot` now (index into nodes, -1 when not known) and
 * the table's generation it belongs to. */
int rd_cluster_slot_node(rd_cluster *c, unsigned slot, unsigned *generation);
/* A node's address; false when index is not one of generation's nodes. */
bool rd_cluster_node_addr(rd_cluster *c, int index, unsigned generation, char *host,
                          size_t cap, int *port);
/* The index of the node at host:port, added when new (-1: table full). */
int rd_cluster_node_index(rd_cluster *c, const char *host, int port, unsigned *generation);
/* A MOVED answer: slot is served by node index from now on. */
void rd_cluster_moved(rd_cluster *c, unsigned slot, int index, unsigned generation);
/* The primaries of the current map (at most max), for walks over every one. */
size_t rd_cluster_primaries(rd_cluster *c, int *indexes, size_t max, unsigned *generation);
/* Up to max known addresses, primaries first ("host" copied into hosts[i],
 * RD_CLUSTER_HOST_MAX bytes each). */
size_t rd_cluster_addresses(rd_cluster *c, char (*hosts)[RD_CLUSTER_HOST_MAX], int *ports,
                            size_t max);

/* Whether a command may go to node index now: true unless the node is
 * failing and another caller is already trying it. */
bool rd_cluster_node_usable(rd_cluster *c, int index, int64_t now_ms);
void rd_cluster_node_ok(rd_cluster *c, int index);
void rd_cluster_node_failed(rd_cluster *c, int index, int64_t now_ms);
/* True while at least one primary is not failing and the last fetch of
 * the map found a node answering: a failure is then one of part of the
 * keyspace only. */
bool rd_cluster_some_up(rd_cluster *c, int64_t now_ms);

/* Asks the refresher to fetch the map soon. */
void rd_cluster_want_refresh(rd_cluster *c);
/* Fetches the map now on this thread unless a fetch succeeded within
 * min_age_ms (another thread did it). */
bool rd_cluster_refresh(rd_cluster *c, int64_t min_age_ms);

#endif
