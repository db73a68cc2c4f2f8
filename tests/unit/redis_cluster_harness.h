/* Starts a Redis Cluster for tests: six redis-server --cluster-enabled yes
 * on free 127.0.0.1 ports, joined with redis-cli --cluster create (three
 * primaries with a replica each), ready once every node reports
 * cluster_state:ok and the same full slot map.
 *
 *     rd_redis_cluster c;
 *     assert_int_equal(rd_redis_cluster_start(&c), 0);
 *     ... c.nodes[i].port, rd_redis_cluster_primary_of(&c, slot) ...
 *     rd_redis_cluster_stop(&c);
 *
 * Replicas sync at once (no diskless-sync delay) and the cluster is ready
 * only when they have. The nodes fail a primary over after
 * cluster-node-timeout 1000 ms and
 * keep serving the slots they have when another primary is down
 * (cluster-require-full-coverage no). Builds on redis_harness.h. */
#ifndef RD_TESTS_REDIS_CLUSTER_HARNESS_H
#define RD_TESTS_REDIS_CLUSTER_HARNESS_H

#include "redis_harness.h"

#define RD_CLUSTER_NODES 6
#define RD_CLUSTER_NODE_TIMEOUT_MS 1000

typedef struct rd_redis_cluster {
    rd_redis_proc nodes[RD_CLUSTER_NODES];
    char seed[32];           /* "127.0.0.1:<port of node 0>" */
} rd_redis_cluster;

static bool rd_cluster_have_cli(void)
{
    return system("command -v redis-cli >/dev/null 2>&1") == 0;
}

/* Whether the node on port says cluster_state:ok and knows every slot. */
static bool rd_cluster_node_ready(int port)
{
    redisReply *r = rd_harness_cmd(port, "CLUSTER INFO");
    bool ok = r && r->type == REDIS_REPLY_STRING && strstr(r->str, "cluster_state:ok") &&
              strstr(r->str, "cluster_slots_assigned:16384") &&
              strstr(r->str, "cluster_slots_ok:16384");
    if (r)
        freeReplyObject(r);
    return ok;
}

/* The port of the primary serving slot as the node on port sees it (0
 * when unknown). */
static int rd_cluster_slot_port(int port, unsigned slot)
{
    redisReply *r = rd_harness_cmd(port, "CLUSTER SLOTS");
    int found = 0;
    for (size_t i = 0; r && r->type == REDIS_REPLY_ARRAY && i < r->elements; i++) {
        const redisReply *e = r->element[i];
        if (e->type == REDIS_REPLY_ARRAY && e->elements >= 3 &&
            (unsigned)e->element[0]->integer <= slot && slot <= (unsigned)e->element[1]->integer)
            found = (int)e->element[2]->element[1]->integer;
    }
    if (r)
        freeReplyObject(r);
    return found;
}

/* A replica that has not finished its first sync cannot be promoted. */
static bool rd_cluster_replica_synced(int port)
{
    redisReply *r = rd_harness_cmd(port, "INFO replication");
    bool ok = r && r->type == REDIS_REPLY_STRING &&
              (strstr(r->str, "role:master") || strstr(r->str, "master_link_status:up"));
    if (r)
        freeReplyObject(r);
    return ok;
}

/* Every running node ready, synced, and agreeing on the primary of a few
 * slots. */
static bool rd_cluster_agrees(const rd_redis_cluster *c)
{
    for (int i = 0; i < RD_CLUSTER_NODES; i++)
        if (c->nodes[i].pid > 0 && !rd_cluster_replica_synced(c->nodes[i].port))
            return false;
    for (unsigned slot = 0; slot < 16384; slot += 4096) {
        int want = -1;
        for (int i = 0; i < RD_CLUSTER_NODES; i++) {
            if (c->nodes[i].pid <= 0)
                continue;
            if (!rd_cluster_node_ready(c->nodes[i].port))
                return false;
            int p = rd_cluster_slot_port(c->nodes[i].port, slot);
            if (p == 0 || (want >= 0 && p != want))
                return false;
            want = p;
        }
    }
    return true;
}

static bool rd_cluster_wait_agreed(const rd_redis_cluster *c, int timeout_ms)
{
    int64_t until = rd_harness_now_ms() + timeout_ms;
    while (rd_harness_now_ms() < until) {
        if (rd_cluster_agrees(c))
            return true;
        rd_harness_sleep_ms(100);
    }
    return false;
}

static int rd_redis_cluster_start(rd_redis_cluster *c)
{
    memset(c, 0, sizeof *c);
    char timeout[16];
    snprintf(timeout, sizeof timeout, "%d", RD_CLUSTER_NODE_TIMEOUT_MS);
    for (int i = 0; i < RD_CLUSTER_NODES; i++) {
        /* The bus port is given too: port + 10000 may be taken or past 65535. */
        char bus[16];
        snprintf(bus, sizeof bus, "%d", rd_harness_free_port());
        const char *extra[] = {"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                               "--cluster-port", bus, "--cluster-node-timeout", timeout,
                               "--cluster-require-full-coverage", "no",
                               "--repl-diskless-sync-delay", "0", NULL};
        if (rd_redis_proc_start(&c->nodes[i], 0, extra) != 0)
            return -1;
    }
    char cmd[1024];
    int o = snprintf(cmd, sizeof cmd, "redis-cli --cluster create");
    for (int i = 0; i < RD_CLUSTER_NODES; i++)
        o += snprintf(cmd + o, sizeof cmd - (size_t)o, " 127.0.0.1:%d", c->nodes[i].port);
    snprintf(cmd + o, sizeof cmd - (size_t)o,
             " --cluster-replicas 1 --cluster-yes >%s/create.log 2>&1", c->nodes[0].dir);
    if (system(cmd) != 0)
        return -1;
    snprintf(c->seed, sizeof c->seed, "127.0.0.1:%d", c->nodes[0].port);
    return rd_cluster_wait_agreed(c, 30000) ? 0 : -1;
}

static void rd_redis_cluster_stop(rd_redis_cluster *c)
{
    for (int i = 0; i < RD_CLUSTER_NODES; i++)
        rd_redis_proc_stop(&c->nodes[i]);
}

/* The index of the node serving slot as a primary now (-1 when none). */
static int rd_redis_cluster_primary_of(const rd_redis_cluster *c, unsigned slot)
{
    for (int i = 0; i < RD_CLUSTER_NODES; i++) {
        if (c->nodes[i].pid <= 0)
            continue;
        int port = rd_cluster_slot_port(c->nodes[i].port, slot);
        for (int k = 0; port && k < RD_CLUSTER_NODES; k++)
            if (c->nodes[k].port == port)
                return k;
    }
    return -1;
}

#endif
