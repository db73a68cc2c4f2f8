/* The Redis store on a Redis Cluster: the key-slot function against its
 * reference vector and against the server's own CLUSTER KEYSLOT, the store
 * conformance suite on a six-node cluster, keys and capped indexes spread
 * over the primaries, list() over every primary, MOVED and ASK followed
 * during a slot migration, scripts reloaded on every node, one half-open
 * probe across replicas, and the faults: one primary killed (only its
 * slots degraded, its replica's promotion followed without a restart) and
 * the whole cluster gone (the whole store degraded).
 *
 * Skipped (with a message) when redis-server or redis-cli is missing,
 * failed instead under RD_NO_SKIP=1. */
#include "store_conformance.h"

#include <pthread.h>
#include <stdatomic.h>

#include "redis_cluster_harness.h"
#include "store/redis.h"
#include "store/redis_crc16.h"
#include "store/redis_scripts.h"
#include "store/resilient.h"

static rd_redis_cluster shared_cluster;
static bool have_cluster;
static atomic_int prefix_seq;

static void skip_without_cluster(void)
{
    if (!have_cluster) {
        const char *strict = getenv("RD_NO_SKIP");
        if (strict && strcmp(strict, "1") == 0)
            fail_msg("redis-server / redis-cli missing (scripts/install-deps.sh --test)");
        print_message("redis-server or redis-cli missing: Redis Cluster tests skipped\n");
        skip();
    }
}

static void fresh_prefix(char *buf, size_t size, const char *what)
{
    snprintf(buf, size, "%s%d:", what, atomic_fetch_add(&prefix_seq, 1));
}

static rd_store_limits test_limits(void)
{
    return (rd_store_limits){.tool_idle_ttl_ms = 60000, .turn_ttl_ms = 60000,
                             .max_events_per_turn = 1000, .outcome_ttl_ms = 60000};
}

/* Not about timeouts: a shared machine may hold a reply up now and then. */
#define CALM_COMMAND_TIMEOUT_MS 2000

static rd_store *cluster_store(const rd_redis_cluster *c, const char *prefix,
                               const rd_store_limits *limits, bool caller_time,
                               int command_timeout_ms)
{
    const char *seeds[] = {c->seed};
    rd_redis_options o = {.cluster = seeds, .n_cluster = 1, .key_prefix = prefix,
                          .use_caller_time = caller_time, .evict_sweep = caller_time,
                          .command_timeout_ms = command_timeout_ms, .limits = *limits};
    rd_status st = {0};
    rd_store *s = rd_store_redis_new(&o, &st);
    if (!s)
        fail_msg("rd_store_redis_new: %s", st.msg);
    return s;
}

/* ---- the conformance suite: caller's time, sweeping evict ---- */

static rd_store *conformance_make(const rd_store_limits *limits)
{
    skip_without_cluster();
    char prefix[32];
    fresh_prefix(prefix, sizeof prefix, "conf");
    return cluster_store(&shared_cluster, prefix, limits, true, CALM_COMMAND_TIMEOUT_MS);
}

static rd_store_conformance cluster_backend = {.make = conformance_make};

/* ---- key slots ---- */

static void test_crc16_reference_and_hash_tags(void **state)
{
    /* The check value of CRC16/XMODEM, given by the Redis Cluster spec. */
    assert_int_equal(rd_redis_crc16("123456789", 9), 0x31C3);
    assert_int_equal(rd_redis_crc16("", 0), 0);
    assert_int_equal(rd_redis_key_slot("foo", 3), 12182);
    assert_int_equal(rd_redis_key_slot("{user1000}.following", 20),
                     rd_redis_key_slot("{user1000}.followers", 20));
    assert_int_equal(rd_redis_key_slot("foo{}{bar}", 10), rd_redis_crc16("foo{}{bar}", 10) & 16383);
    assert_int_equal(rd_redis_key_slot("foo{{bar}}zap", 13), rd_redis_crc16("{bar", 4) & 16383);
    assert_int_equal(rd_redis_key_slot("foo{bar}{zap}", 13), rd_redis_crc16("bar", 3) & 16383);
}

/* The store's slot of every key shape it writes is the server's. */
static void test_key_slots_match_the_server(void **state)
{
    skip_without_cluster();
    const char *shapes[] = {"rd:{tool:%d}:breaker", "rd:{turn:t%d}:meta", "rd:{outcome:o-%d}",
                            "rd:{tools:%d}", "plain-key-%d", "{}x%d", "a{b%d"};
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++)
        for (int i = 0; i < 40; i++) {
            char key[64];
            int len = snprintf(key, sizeof key, shapes[k], i * 7919);
            redisReply *r = rd_harness_cmd(shared_cluster.nodes[0].port, "CLUSTER KEYSLOT %s", key);
            assert_non_null(r);
            assert_int_equal(r->type, REDIS_REPLY_INTEGER);
            assert_int_equal(rd_redis_key_slot(key, (size_t)len), (unsigned)r->integer);
            freeReplyObject(r);
        }
}

/* ---- spreading over the primaries ---- */

static const rd_breaker_policy three_strikes = {
    .failure_threshold = 3, .success_threshold = 1, .open_timeout_ms = 60000};

static rd_store_result must_record(rd_store *s, const char *tool, rd_outcome o)
{
    rd_store_result r;
    rd_status st;
    rd_status_clear(&st);
    int rc = s->ops->record(s, tool, &three_strikes, 0, o, 0, &r, &st);
    if (rc != RD_OK)
        fail_msg("record %s: %s", tool, st.msg);
    return r;
}

static unsigned tool_slot(const char *prefix, const char *tool)
{
    char key[256];
    int len = snprintf(key, sizeof key, "%s{tool:%s}:breaker", prefix, tool);
    return rd_redis_key_slot(key, (size_t)len);
}

static int count_visit(void *ctx, const char *tool_id, const rd_breaker *b)
{
    (void)tool_id;
    (void)b;
    (*(size_t *)ctx)++;
    return 0;
}

#define SPREAD_TOOLS 60

/* Tools land on every primary, and list() finds each of them. */
static void test_list_visits_every_primary(void **state)
{
    skip_without_cluster();
    char prefix[32];
    fresh_prefix(prefix, sizeof prefix, "spread");
    rd_store_limits lim = test_limits();
    rd_store *s = cluster_store(&shared_cluster, prefix, &lim, false, CALM_COMMAND_TIMEOUT_MS);
    bool primary_used[RD_CLUSTER_NODES] = {false};
    for (int i = 0; i < SPREAD_TOOLS; i++) {
        char tool[32];
        snprintf(tool, sizeof tool, "tool-%d", i);
        must_record(s, tool, RD_OUTCOME_TRANSIENT_FAILURE);
        int owner = rd_redis_cluster_primary_of(&shared_cluster, tool_slot(prefix, tool));
        assert_true(owner >= 0);
        primary_used[owner] = true;
    }
    int used = 0;
    for (int i = 0; i < RD_CLUSTER_NODES; i++)
        used += primary_used[i];
    assert_int_equal(used, 3);
    size_t listed = 0;
    rd_status st = {0};
    assert_int_equal(s->ops->list(s, 0, count_visit, &listed, &st), RD_OK);
    assert_int_equal(listed, SPREAD_TOOLS);
    rd_store_destroy(s);
}

/* A large max_tools index is split over shards on several primaries, and
 * together they count every tool once. */
static void test_capped_index_is_sharded(void **state)
{
    skip_without_cluster();
    char prefix[32];
    fresh_prefix(prefix, sizeof prefix, "shard");
    rd_store_limits lim = test_limits();
    lim.max_tools = 4096; /* 16 shards of 256 */
    rd_store *s = cluster_store(&shared_cluster, prefix, &lim, false, CALM_COMMAND_TIMEOUT_MS);
    for (int i = 0; i < 64; i++) {
        char tool[32];
        snprintf(tool, sizeof tool, "t%d", i);
        must_record(s, tool, RD_OUTCOME_SUCCESS);
    }
    long long members = 0;
    bool holds[RD_CLUSTER_NODES] = {false};
    for (int k = 0; k < 16; k++) {
        char key[64];
        int len = snprintf(key, sizeof key, "%s{tools:%d}", prefix, k);
        int owner = rd_redis_cluster_primary_of(&shared_cluster, rd_redis_key_slot(key, (size_t)len));
        assert_true(owner >= 0);
        redisReply *r = rd_harness_cmd(shared_cluster.nodes[owner].port, "ZCARD %s", key);
        assert_non_null(r);
        assert_int_equal(r->type, REDIS_REPLY_INTEGER);
        members += r->integer;
        holds[owner] |= r->integer > 0;
        freeReplyObject(r);
    }
    assert_int_equal(members, 64);
    int nodes = 0;
    for (int i = 0; i < RD_CLUSTER_NODES; i++)
        nodes += holds[i];
    assert_true(nodes >= 2);
    rd_store_destroy(s);
}

/* ---- redirections ---- */

static void node_id(int port, char out[64])
{
    redisReply *r = rd_harness_cmd(port, "CLUSTER MYID");
    assert_non_null(r);
    snprintf(out, 64, "%s", r->str);
    freeReplyObject(r);
}

static void must_ok(int port, const char *fmt, const char *a, const char *b, unsigned slot)
{
    redisReply *r = rd_harness_cmd(port, fmt, slot, a, b);
    if (!r || r->type == REDIS_REPLY_ERROR)
        fail_msg("port %d: %s", port, r ? r->str : "no reply");
    freeReplyObject(r);
}

/* Moves the keys of slot from node src to node dst (MIGRATE), leaving the
 * slot in the MIGRATING/IMPORTING state: src then answers ASK. */
static void migrate_keys(int src, int dst, unsigned slot)
{
    redisReply *keys = rd_harness_cmd(src, "CLUSTER GETKEYSINSLOT %u 100", slot);
    assert_non_null(keys);
    for (size_t i = 0; i < keys->elements; i++) {
        redisReply *r = rd_harness_cmd(src, "MIGRATE 127.0.0.1 %d %s 0 5000", dst,
                                       keys->element[i]->str);
        assert_non_null(r);
        freeReplyObject(r);
    }
    freeReplyObject(keys);
}

/* The two primaries of a slot move: its owner and another one. */
typedef struct slot_move {
    unsigned slot;
    int src, dst;            /* ports */
    char src_id[64], dst_id[64];
} slot_move;

static slot_move plan_move(unsigned slot)
{
    slot_move m = {.slot = slot};
    int src_i = rd_redis_cluster_primary_of(&shared_cluster, slot), dst_i = -1;
    for (unsigned other = 0; other < 16384 && dst_i < 0; other += 1000) {
        int p = rd_redis_cluster_primary_of(&shared_cluster, other);
        if (p >= 0 && p != src_i)
            dst_i = p;
    }
    assert_true(src_i >= 0 && dst_i >= 0);
    m.src = shared_cluster.nodes[src_i].port;
    m.dst = shared_cluster.nodes[dst_i].port;
    node_id(m.src, m.src_id);
    node_id(m.dst, m.dst_id);
    return m;
}

/* The steps of redis-cli --cluster reshard for one slot. */
static void move_begin(const slot_move *m)
{
    must_ok(m->dst, "CLUSTER SETSLOT %u %s %s", "IMPORTING", m->src_id, m->slot);
    must_ok(m->src, "CLUSTER SETSLOT %u %s %s", "MIGRATING", m->dst_id, m->slot);
}

static void move_finish(const slot_move *m)
{
    migrate_keys(m->src, m->dst, m->slot);
    must_ok(m->dst, "CLUSTER SETSLOT %u %s %s", "NODE", m->dst_id, m->slot);
    must_ok(m->src, "CLUSTER SETSLOT %u %s %s", "NODE", m->dst_id, m->slot);
}

static slot_move reversed(const slot_move *m)
{
    slot_move back = *m;
    back.src = m->dst;
    back.dst = m->src;
    memcpy(back.src_id, m->dst_id, sizeof back.src_id);
    memcpy(back.dst_id, m->src_id, sizeof back.dst_id);
    return back;
}

static void *finish_later(void *arg)
{
    rd_harness_sleep_ms(150);
    move_finish(arg);
    return NULL;
}

static bool claim(rd_store *s, const char *id)
{
    bool duplicate = false;
    rd_status st = {0};
    if (s->ops->claim_outcome(s, id, 0, &duplicate, &st) != RD_OK)
        fail_msg("claim %s: %s", id, st.msg);
    return duplicate;
}

/* A slot migrated under the store, as a reshard does it. A one-key command
 * for a key not yet at the source is sent to the target with ASKING; a
 * script over several keys gets TRYAGAIN until the slot has moved, and is
 * sent again; once the slot is the target's, MOVED is followed and the map
 * remembers it. */
static void test_moved_and_ask_are_followed(void **state)
{
    skip_without_cluster();
    char prefix[32];
    fresh_prefix(prefix, sizeof prefix, "move");
    rd_store_limits lim = test_limits();
    rd_store *s = cluster_store(&shared_cluster, prefix, &lim, false, CALM_COMMAND_TIMEOUT_MS);
    rd_redis_stats before, after;
    assert_true(rd_store_redis_stats(s, &before));

    /* ASK: an outcome id claimed while its slot is migrating. */
    char key[64];
    int len = snprintf(key, sizeof key, "%s{outcome:asked}", prefix);
    slot_move m = plan_move(rd_redis_key_slot(key, (size_t)len));
    move_begin(&m);
    assert_false(claim(s, "asked"));
    assert_true(claim(s, "asked")); /* found at the target, through ASK again */
    move_finish(&m);
    assert_true(claim(s, "asked")); /* MOVED */
    slot_move back = reversed(&m);
    move_begin(&back);
    move_finish(&back);

    /* TRYAGAIN, then MOVED: a breaker whose slot moves during the call. */
    const char *tool = "migrating";
    assert_int_equal(must_record(s, tool, RD_OUTCOME_TRANSIENT_FAILURE).breaker.consecutive_failures, 1);
    m = plan_move(tool_slot(prefix, tool));
    move_begin(&m);
    pthread_t mover;
    assert_int_equal(pthread_create(&mover, NULL, finish_later, &m), 0);
    assert_int_equal(must_record(s, tool, RD_OUTCOME_TRANSIENT_FAILURE).breaker.consecutive_failures, 2);
    pthread_join(mover, NULL);
    rd_store_result r = must_record(s, tool, RD_OUTCOME_TRANSIENT_FAILURE);
    assert_int_equal(r.breaker.stored, RD_BREAKER_OPEN);
    char dst_key[128];
    snprintf(dst_key, sizeof dst_key, "%s{tool:%s}:breaker", prefix, tool);
    int64_t cf;
    assert_true(rd_harness_record_field(m.dst, dst_key, RD_REC_CF, &cf));
    assert_true(rd_store_redis_stats(s, &after));
    assert_true(after.cluster_redirects >= before.cluster_redirects + 3);

    back = reversed(&m);
    move_begin(&back);
    move_finish(&back);
    assert_true(rd_cluster_wait_agreed(&shared_cluster, 10000));
    assert_int_equal(must_record(s, tool, RD_OUTCOME_SUCCESS).breaker.stored, RD_BREAKER_OPEN);
    rd_store_destroy(s);
}

/* Waits until the node lists `want` functions in the library (replication
 * to a replica is asynchronous). */
static bool wait_library_functions(int port, const char *library, long want)
{
    int64_t until = rd_harness_now_ms() + 5000;
    while (rd_harness_library_functions(port, library) != want) {
        if (rd_harness_now_ms() >= until)
            return false;
        rd_harness_sleep_ms(20);
    }
    return true;
}

/* FUNCTION FLUSH on every node: each primary finds its functions gone
 * ("Function not found") and gets the library again. */
static void test_functions_reload_on_every_node(void **state)
{
    skip_without_cluster();
    char prefix[32];
    fresh_prefix(prefix, sizeof prefix, "flush");
    rd_store_limits lim = test_limits();
    rd_store *s = cluster_store(&shared_cluster, prefix, &lim, false, CALM_COMMAND_TIMEOUT_MS);
    /* four tools on each of the three primaries */
    char tools[12][32];
    int per_node[RD_CLUSTER_NODES] = {0}, n = 0;
    for (int i = 0; n < 12 && i < 10000; i++) {
        char tool[32];
        snprintf(tool, sizeof tool, "f%d", i);
        int owner = rd_redis_cluster_primary_of(&shared_cluster, tool_slot(prefix, tool));
        if (owner < 0 || per_node[owner] >= 4)
            continue;
        per_node[owner]++;
        snprintf(tools[n++], sizeof tools[0], "%s", tool);
    }
    assert_int_equal(n, 12);
    for (int i = 0; i < n; i++)
        must_record(s, tools[i], RD_OUTCOME_TRANSIENT_FAILURE);
    for (int i = 0; i < RD_CLUSTER_NODES; i++) {
        redisReply *r = rd_harness_cmd(shared_cluster.nodes[i].port, "FUNCTION FLUSH");
        if (r)
            freeReplyObject(r);
    }
    const char *library = rd_redis_script_library()->name;
    for (int i = 0; i < RD_CLUSTER_NODES; i++) /* a replica follows its primary's flush */
        assert_true(wait_library_functions(shared_cluster.nodes[i].port, library, 0));
    for (int i = 0; i < n; i++)
        assert_int_equal(must_record(s, tools[i], RD_OUTCOME_TRANSIENT_FAILURE)
                             .breaker.consecutive_failures, 2);
    rd_redis_stats stats;
    assert_true(rd_store_redis_stats(s, &stats));
    assert_true(stats.script_reloads >= 3);
    /* each primary loaded the library again, and its replica has it too */
    for (int i = 0; i < RD_CLUSTER_NODES; i++)
        assert_true(wait_library_functions(shared_cluster.nodes[i].port, library,
                                           RD_SCRIPT_COUNT));
    rd_store_destroy(s);
}

/* ---- one half-open probe across replicas ---- */

#define RACE_STORES 3
#define RACE_THREADS 12
#define RACE_TRIALS 20

static const rd_breaker_policy half_open_at_once = {
    .failure_threshold = 1, .success_threshold = 1, .open_timeout_ms = 0};

typedef struct race {
    rd_store *stores[RACE_STORES];
    char tool[32];
    pthread_barrier_t start, done;
    atomic_int probes, refused, errors;
} race;

typedef struct racer {
    race *shared;
    int index;
} racer;

static void *racer_main(void *arg)
{
    racer *me = arg;
    race *rc = me->shared;
    for (int trial = 0; trial < RACE_TRIALS; trial++) {
        pthread_barrier_wait(&rc->start);
        rd_store *s = rc->stores[me->index % RACE_STORES];
        rd_store_result r;
        rd_status st;
        rd_status_clear(&st);
        if (s->ops->admit(s, rc->tool, &half_open_at_once, 0, 60000, &r, &st) != RD_OK)
            atomic_fetch_add(&rc->errors, 1);
        else if (r.admission == RD_ADMIT_PROBE)
            atomic_fetch_add(&rc->probes, 1);
        else
            atomic_fetch_add(&rc->refused, 1);
        pthread_barrier_wait(&rc->done);
    }
    return NULL;
}

/* Tools on every primary; each trial, many callers on three stores race
 * for the half-open probe of one tool: exactly one gets it. */
static void test_one_probe_across_replicas(void **state)
{
    skip_without_cluster();
    char prefix[32];
    fresh_prefix(prefix, sizeof prefix, "race");
    race *rc = calloc(1, sizeof *rc);
    rd_store_limits lim = test_limits();
    for (int i = 0; i < RACE_STORES; i++)
        rc->stores[i] = cluster_store(&shared_cluster, prefix, &lim, false,
                                      CALM_COMMAND_TIMEOUT_MS);
    pthread_barrier_init(&rc->start, NULL, RACE_THREADS + 1);
    pthread_barrier_init(&rc->done, NULL, RACE_THREADS + 1);
    pthread_t threads[RACE_THREADS];
    racer racers[RACE_THREADS];
    for (int i = 0; i < RACE_THREADS; i++) {
        racers[i] = (racer){.shared = rc, .index = i};
        assert_int_equal(pthread_create(&threads[i], NULL, racer_main, &racers[i]), 0);
    }
    int bad = 0;
    for (int trial = 0; trial < RACE_TRIALS; trial++) {
        snprintf(rc->tool, sizeof rc->tool, "probe_%d", trial);
        rd_store_result r;
        rd_status st = {0};
        assert_int_equal(rc->stores[trial % RACE_STORES]->ops->record(
                             rc->stores[trial % RACE_STORES], rc->tool, &half_open_at_once, 0,
                             RD_OUTCOME_TRANSIENT_FAILURE, 0, &r, &st),
                         RD_OK);
        assert_int_equal(r.transition, RD_TRANSITION_OPENED);
        atomic_store(&rc->probes, 0);
        atomic_store(&rc->refused, 0);
        atomic_store(&rc->errors, 0);
        pthread_barrier_wait(&rc->start);
        pthread_barrier_wait(&rc->done);
        bad += atomic_load(&rc->probes) != 1 || atomic_load(&rc->errors) != 0 ||
               atomic_load(&rc->refused) != RACE_THREADS - 1;
    }
    for (int i = 0; i < RACE_THREADS; i++)
        pthread_join(threads[i], NULL);
    pthread_barrier_destroy(&rc->start);
    pthread_barrier_destroy(&rc->done);
    for (int i = 0; i < RACE_STORES; i++)
        rd_store_destroy(rc->stores[i]);
    free(rc);
    assert_int_equal(bad, 0);
}

/* ---- faults: one primary down, then all ---- */

/* Answered without error; *degraded = whether from the local fallback. */
static void record_on(rd_store *s, const char *tool, bool *degraded)
{
    rd_store_result r;
    rd_status st;
    rd_status_clear(&st);
    assert_int_equal(s->ops->record(s, tool, &three_strikes, 0, RD_OUTCOME_SUCCESS, 0, &r, &st),
                     RD_OK);
    *degraded = st.store_degraded;
    if (getenv("RD_TEST_VERBOSE"))
        print_message("%s: %s\n", tool, st.msg);
}

/* A tool whose breaker lives on primary `want` (or anywhere else when
 * `other`). */
static void tool_on(const rd_redis_cluster *c, const char *prefix, int want, bool other,
                    char out[32])
{
    for (int i = 0; i < 10000; i++) {
        snprintf(out, 32, "k%d", i);
        int owner = rd_redis_cluster_primary_of(c, tool_slot(prefix, out));
        if (other ? owner != want : owner == want)
            return;
    }
    fail_msg("no tool found on the wanted primary");
}

/* A killed node refuses at once: the budget plays no part in noticing it,
 * and a long one keeps a stall of a loaded machine from passing for an
 * outage of the other primaries. */
#define FAULT_TIMEOUT_MS 1000

static void test_primary_down_degrades_only_its_slots(void **state)
{
    skip_without_cluster();
    rd_redis_cluster c;
    assert_int_equal(rd_redis_cluster_start(&c), 0);
    rd_store_limits lim = test_limits();
    const char *prefix = "fault:";
    rd_store *redis = cluster_store(&c, prefix, &lim, false, FAULT_TIMEOUT_MS);
    rd_resilience_options ro = {.failure_threshold = 2, .probe_interval_ms = 100};
    rd_store *s = rd_store_resilient_new(redis, rd_store_memory_new(&lim), &ro);
    int victim = rd_redis_cluster_primary_of(&c, 0);
    assert_true(victim >= 0);
    char lost[32], kept[32];
    tool_on(&c, prefix, victim, false, lost);
    tool_on(&c, prefix, victim, true, kept);
    bool degraded;
    record_on(s, lost, &degraded);
    assert_false(degraded);
    record_on(s, kept, &degraded);
    assert_false(degraded);

    rd_redis_proc_kill(&c.nodes[victim]);
    /* The lost slots answer degraded, the others stay shared, and the
     * store as a whole never trips. */
    int lost_degraded = 0, kept_degraded = 0;
    for (int i = 0; i < 20; i++) {
        record_on(s, lost, &degraded);
        lost_degraded += degraded;
        record_on(s, kept, &degraded);
        kept_degraded += degraded;
        assert_false(rd_store_degraded(s));
    }
    assert_true(lost_degraded >= 18);
    assert_int_equal(kept_degraded, 0);

    /* The cluster promotes the replica; the store follows it. */
    int64_t until = rd_harness_now_ms() + 20000;
    do {
        rd_harness_sleep_ms(100);
        record_on(s, lost, &degraded);
    } while (degraded && rd_harness_now_ms() < until);
    assert_false(degraded);
    int promoted = rd_redis_cluster_primary_of(&c, 0);
    assert_true(promoted >= 0 && promoted != victim);

    /* Then the whole cluster goes: once the map cannot be fetched from any
     * node, the whole store degrades (meanwhile every call is answered
     * degraded already). */
    for (int i = 0; i < RD_CLUSTER_NODES; i++)
        rd_redis_proc_kill(&c.nodes[i]);
    for (int i = 0; i < 200 && !rd_store_degraded(s); i++) {
        record_on(s, i % 2 ? lost : kept, &degraded);
        assert_true(degraded);
        rd_harness_sleep_ms(10);
    }
    assert_true(rd_store_degraded(s));
    rd_store_destroy(s);
    rd_redis_cluster_stop(&c);
}

static int start_shared_cluster(void **state)
{
    have_cluster = rd_harness_have_redis() && rd_cluster_have_cli();
    if (have_cluster && rd_redis_cluster_start(&shared_cluster) != 0) {
        print_error("redis-server is installed but the cluster did not form\n");
        return -1;
    }
    return 0;
}

static int stop_shared_cluster(void **state)
{
    rd_redis_cluster_stop(&shared_cluster);
    return 0;
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const char *filter = getenv("RD_TEST_FILTER"); /* one test by name, when debugging */
    if (filter)
        cmocka_set_test_filter(filter);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc16_reference_and_hash_tags),
        cmocka_unit_test(test_key_slots_match_the_server),
        RD_STORE_CONFORMANCE_TESTS(&cluster_backend),
        cmocka_unit_test(test_list_visits_every_primary),
        cmocka_unit_test(test_capped_index_is_sharded),
        cmocka_unit_test(test_moved_and_ask_are_followed),
        cmocka_unit_test(test_functions_reload_on_every_node),
        cmocka_unit_test(test_one_probe_across_replicas),
        cmocka_unit_test(test_primary_down_degrades_only_its_slots),
    };
    return cmocka_run_group_tests_name("store_redis_cluster", tests, start_shared_cluster,
                                       stop_shared_cluster);
}
