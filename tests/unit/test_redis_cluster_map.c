/* The Redis Cluster topology of the Redis store (store/redis_cluster.c),
 * without a server: CLUSTER SLOTS replies built by hand, MOVED, the node
 * table starting over when it fills, and failing nodes (failed fast after
 * two failures in a row, one trial per hold, "some up" for partial
 * failures). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/redis_cluster.h"

/* ---- building CLUSTER SLOTS replies ---- */

static redisReply *reply_new(int type)
{
    redisReply *r = calloc(1, sizeof *r);
    r->type = type;
    return r;
}

static redisReply *integer(long long v)
{
    redisReply *r = reply_new(REDIS_REPLY_INTEGER);
    r->integer = v;
    return r;
}

static redisReply *string(const char *s)
{
    redisReply *r = reply_new(REDIS_REPLY_STRING);
    r->str = strdup(s);
    r->len = strlen(s);
    return r;
}

static redisReply *array(size_t n)
{
    redisReply *r = reply_new(REDIS_REPLY_ARRAY);
    r->elements = n;
    r->element = calloc(n, sizeof *r->element);
    return r;
}

/* [start, end, [host, port, id], [replica host, port, id]] */
static redisReply *range(long long start, long long end, const char *host, int port)
{
    redisReply *r = array(4);
    r->element[0] = integer(start);
    r->element[1] = integer(end);
    r->element[2] = array(3);
    r->element[2]->element[0] = string(host);
    r->element[2]->element[1] = integer(port);
    r->element[2]->element[2] = string("0123456789abcdef");
    r->element[3] = array(3);
    r->element[3]->element[0] = string(host);
    r->element[3]->element[1] = integer(port + 1000);
    r->element[3]->element[2] = string("fedcba9876543210");
    return r;
}

/* Three primaries on ports base, base+1, base+2 splitting the slots. */
static redisReply *three_primaries(const char *host, int base)
{
    redisReply *r = array(3);
    r->element[0] = range(0, 5460, host, base);
    r->element[1] = range(5461, 10922, host, base + 1);
    r->element[2] = range(10923, 16383, host, base + 2);
    return r;
}

static bool no_fetch(void *ctx, rd_cluster *c)
{
    (void)ctx;
    (void)c;
    return false;
}

static int port_of_slot(rd_cluster *c, unsigned slot)
{
    unsigned gen;
    int n = rd_cluster_slot_node(c, slot, &gen);
    char host[RD_CLUSTER_HOST_MAX];
    int port = 0;
    if (n < 0 || !rd_cluster_node_addr(c, n, gen, host, sizeof host, &port))
        return 0;
    return port;
}

static void test_slot_map_from_cluster_slots(void **state)
{
    (void)state;
    rd_cluster c;
    assert_int_equal(rd_cluster_init(&c, 0, 100, no_fetch, NULL), 0);
    unsigned gen;
    assert_int_equal(rd_cluster_slot_node(&c, 0, &gen), -1); /* nothing known yet */
    redisReply *slots = three_primaries("10.0.0.1", 7000);
    assert_true(rd_cluster_apply(&c, slots));
    freeReplyObject(slots);
    assert_int_equal(port_of_slot(&c, 0), 7000);
    assert_int_equal(port_of_slot(&c, 5460), 7000);
    assert_int_equal(port_of_slot(&c, 5461), 7001);
    assert_int_equal(port_of_slot(&c, 16383), 7002);
    int primaries[RD_CLUSTER_MAX_NODES];
    assert_int_equal(rd_cluster_primaries(&c, primaries, RD_CLUSTER_MAX_NODES, &gen), 3);
    /* replicas are never nodes of the map */
    char hosts[8][RD_CLUSTER_HOST_MAX];
    int ports[8];
    assert_int_equal(rd_cluster_addresses(&c, hosts, ports, 8), 3);
    /* not a CLUSTER SLOTS reply: the map stays */
    redisReply *bad = string("ERR");
    assert_false(rd_cluster_apply(&c, bad));
    freeReplyObject(bad);
    assert_int_equal(port_of_slot(&c, 0), 7000);
    rd_cluster_destroy(&c);
}

static void test_moved_changes_one_slot(void **state)
{
    (void)state;
    rd_cluster c;
    assert_int_equal(rd_cluster_init(&c, 0, 100, no_fetch, NULL), 0);
    redisReply *slots = three_primaries("10.0.0.1", 7000);
    rd_cluster_apply(&c, slots);
    freeReplyObject(slots);
    unsigned gen;
    int target = rd_cluster_node_index(&c, "10.0.0.1", 7002, &gen);
    assert_true(target >= 0);
    rd_cluster_moved(&c, 42, target, gen);
    assert_int_equal(port_of_slot(&c, 42), 7002);
    assert_int_equal(port_of_slot(&c, 41), 7000);
    assert_int_equal(port_of_slot(&c, 43), 7000);
    /* a node never seen (a new primary) joins the table */
    int fresh = rd_cluster_node_index(&c, "10.0.0.9", 7100, &gen);
    assert_true(fresh >= 3);
    rd_cluster_moved(&c, 43, fresh, gen);
    assert_int_equal(port_of_slot(&c, 43), 7100);
    assert_true(atomic_load(&c.redirects) == 2);
    rd_cluster_destroy(&c);
}

/* Addresses that keep changing fill the table: it starts over under a new
 * generation, and indexes of the old one no longer name an address. */
static void test_full_table_starts_over(void **state)
{
    (void)state;
    rd_cluster c;
    assert_int_equal(rd_cluster_init(&c, 0, 100, no_fetch, NULL), 0);
    unsigned first_gen, gen;
    int old = rd_cluster_node_index(&c, "10.0.0.1", 6000, &first_gen);
    for (int i = 1; i < RD_CLUSTER_MAX_NODES; i++) {
        char host[32];
        snprintf(host, sizeof host, "10.0.1.%d", i);
        assert_true(rd_cluster_node_index(&c, host, 6000, &gen) >= 0);
    }
    assert_int_equal(rd_cluster_node_index(&c, "10.9.9.9", 6000, &gen), -1); /* full */
    redisReply *slots = three_primaries("10.0.2.1", 8000);
    assert_true(rd_cluster_apply(&c, slots));
    freeReplyObject(slots);
    assert_int_equal(port_of_slot(&c, 0), 8000);
    assert_int_equal(port_of_slot(&c, 16383), 8002);
    rd_cluster_slot_node(&c, 0, &gen);
    assert_true(gen != first_gen);
    char host[RD_CLUSTER_HOST_MAX];
    int port;
    assert_false(rd_cluster_node_addr(&c, old, first_gen, host, sizeof host, &port));
    rd_cluster_destroy(&c);
}

static void test_failing_nodes_and_partial_outages(void **state)
{
    (void)state;
    rd_cluster c;
    assert_int_equal(rd_cluster_init(&c, 0, 100, no_fetch, NULL), 0);
    redisReply *slots = three_primaries("10.0.0.1", 7000);
    rd_cluster_apply(&c, slots);
    freeReplyObject(slots);
    unsigned gen;
    int a = rd_cluster_slot_node(&c, 0, &gen), b = rd_cluster_slot_node(&c, 6000, &gen),
        d = rd_cluster_slot_node(&c, 12000, &gen);
    int64_t now = 1000;
    rd_cluster_node_failed(&c, a, now);
    assert_true(rd_cluster_node_usable(&c, a, now)); /* one failure is not an outage */
    rd_cluster_node_failed(&c, a, now);
    assert_false(rd_cluster_node_usable(&c, a, now + 1)); /* failed fast now */
    assert_true(rd_cluster_node_usable(&c, b, now + 1));
    assert_true(rd_cluster_some_up(&c, now + 1));
    /* after the hold, exactly one caller gets the trial */
    assert_true(rd_cluster_node_usable(&c, a, now + 100));
    assert_false(rd_cluster_node_usable(&c, a, now + 100));
    rd_cluster_node_ok(&c, a); /* the trial worked */
    assert_true(rd_cluster_node_usable(&c, a, now + 101));
    /* every primary failing: no longer a partial outage */
    for (int i = 0; i < 2; i++) {
        rd_cluster_node_failed(&c, a, now + 200);
        rd_cluster_node_failed(&c, b, now + 200);
        rd_cluster_node_failed(&c, d, now + 200);
    }
    assert_false(rd_cluster_some_up(&c, now + 201));
    rd_cluster_node_ok(&c, d);
    assert_true(rd_cluster_some_up(&c, now + 201));
    /* no node answering CLUSTER SLOTS: nothing counts as up */
    assert_false(rd_cluster_refresh(&c, 0));
    assert_false(rd_cluster_some_up(&c, now + 201));
    rd_cluster_destroy(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slot_map_from_cluster_slots),
        cmocka_unit_test(test_moved_changes_one_slot),
        cmocka_unit_test(test_full_table_starts_over),
        cmocka_unit_test(test_failing_nodes_and_partial_outages),
    };
    return cmocka_run_group_tests_name("redis_cluster_map", tests, NULL, NULL);
}
