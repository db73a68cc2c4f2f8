/* The `store` section of the main file: where breakers, turns and outcome
 * ids live, their limits, and the Redis connection (docs/REDIS.md). */
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config/config_tables.h"
#include "domain/err.h"

#define TTL_MAX (30 * RD_DAY_MS)
#define MAX_ADDRESSES 16
#define HOST_MAX 255

/* ---- store.redis ---- */

/* "host:port" (host 1..255 bytes, port 1..65535), or with unix_ok
 * "unix:/path". The store connects with what this accepts, unchecked. */
static bool address_ok(const char *a, bool unix_ok)
{
    if (strncmp(a, "unix:", 5) == 0)
        return unix_ok && a[5] == '/';
    const char *colon = strrchr(a, ':');
    if (!colon || colon == a || (size_t)(colon - a) > HOST_MAX || !colon[1])
        return false;
    char *end;
    long port = strtol(colon + 1, &end, 10);
    return *end == '\0' && port >= 1 && port <= 65535;
}

static int check_address(const rd_yctx *c, int line, const char *path, const void *field)
{
    const char *a = *(char *const *)field;
    if (address_ok(a, true))
        return RD_OK;
    return rd_yerr(c, line, path, "expected host:port or unix:/path, got \"%s\"", a);
}

static bool prefix_char_ok(char ch)
{
    return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
           ch == '_' || ch == ':' || ch == '.' || ch == '-';
}

static int check_key_prefix(const rd_yctx *c, int line, const char *path, const void *field)
{
    const char *prefix = *(char *const *)field;
    size_t n = strlen(prefix);
    bool ok = n >= 1 && n <= 64;
    for (size_t i = 0; ok && i < n; i++)
        ok = prefix_char_ok(prefix[i]);
    if (ok)
        return RD_OK;
    return rd_yerr(c, line, path, "\"%s\" is not 1..64 bytes of [A-Za-z0-9_:.-]", prefix);
}

/* A list of host:port into *out / *n_out (store.redis.sentinels,
 * store.redis.cluster). */
static int parse_address_list(const rd_yctx *c, const rd_ynode *list, const char *path,
                              char ***out, size_t *n_out)
{
    int rc = rd_yexpect(c, list, path, RD_YSEQ);
    if (rc != RD_OK)
        return rc;
    if (list->n > MAX_ADDRESSES)
        return rd_yerr(c, list->line, path, "more than %d entries", MAX_ADDRESSES);
    if (list->n && !(*out = calloc(list->n, sizeof **out)))
        return rd_yerr(c, list->line, path, "out of memory");
    for (size_t i = 0; i < list->n; i++) {
        char p[RD_YPATH_MAX];
        const char *text;
        rc = rd_yscalar_str(c, list->items[i], rd_ypath_index(p, path, i), 256, &text);
        if (rc == RD_OK && !address_ok(text, false))
            rc = rd_yerr(c, list->items[i]->line, p, "expected host:port, got \"%s\"", text);
        if (rc != RD_OK)
            return rc;
        if (!((*out)[i] = strdup(text)))
            return rd_yerr(c, list->items[i]->line, p, "out of memory");
        *n_out = i + 1;
    }
    return RD_OK;
}

static void free_address_list(char ***list, size_t *n)
{
    for (size_t i = 0; i < *n; i++)
        free((*list)[i]);
    free(*list);
    *list = NULL;
    *n = 0;
}

static bool lists_differ(char *const *a, size_t na, char *const *b, size_t nb)
{
    if (na != nb)
        return true;
    for (size_t i = 0; i < na; i++)
        if (strcmp(a[i], b[i]) != 0)
            return true;
    return false;
}

static bool sentinels_differ(const void *a_base, const void *b_base)
{
    const rd_redis_config *a = a_base, *b = b_base;
    return lists_differ(a->sentinels, a->n_sentinels, b->sentinels, b->n_sentinels);
}

static bool cluster_differs(const void *a_base, const void *b_base)
{
    const rd_redis_config *a = a_base, *b = b_base;
    return lists_differ(a->cluster, a->n_cluster, b->cluster, b->n_cluster);
}

static int parse_sentinels(const rd_yctx *c, const rd_ynode *map, const rd_ynode *list,
                           const char *path, void *base)
{
    (void)map;
    rd_redis_config *r = base;
    return parse_address_list(c, list, path, &r->sentinels, &r->n_sentinels);
}

static void free_sentinels(void *base)
{
    rd_redis_config *r = base;
    free_address_list(&r->sentinels, &r->n_sentinels);
}

static int parse_cluster(const rd_yctx *c, const rd_ynode *map, const rd_ynode *list,
                         const char *path, void *base)
{
    (void)map;
    rd_redis_config *r = base;
    return parse_address_list(c, list, path, &r->cluster, &r->n_cluster);
}

static void free_cluster(void *base)
{
    rd_redis_config *r = base;
    free_address_list(&r->cluster, &r->n_cluster);
}

static int check_redis(const rd_yctx *c, const rd_ynode *map, const char *path, void *base)
{
    const rd_redis_config *r = base;
    char p[RD_YPATH_MAX];
    if (r->n_sentinels && !r->master_name)
        return rd_yerr(c, rd_ymap_key_line(map, "sentinels"), rd_ypath(p, path, "master_name"),
                       "required with sentinels");
    if (r->n_cluster && r->n_sentinels)
        return rd_yerr(c, rd_ymap_key_line(map, "cluster"), rd_ypath(p, path, "cluster"),
                       "not with sentinels (a Redis Cluster fails over by itself)");
    if (r->n_cluster && r->db != 0)
        return rd_yerr(c, rd_ymap_key_line(map, "db"), rd_ypath(p, path, "db"),
                       "must be 0 with cluster (Redis Cluster has one db)");
    return RD_OK;
}

static const rd_key REDIS_KEYS[] = {
    {.name = "address", .type = RD_KEY_TEXT, RD_FIELD(rd_redis_config, address), .hi = 4096,
     .sdef = "127.0.0.1:6379", .check = check_address, .range_doc = "host:port or unix:/path",
     .doc = "the Redis server (without sentinels)"},
    RD_K_SECRET(rd_redis_config, "password", password, "Redis AUTH password; never logged"),
    RD_K_INT(rd_redis_config, "db", db, 0, 15, 0, "database number"),
    {.name = "key_prefix", .type = RD_KEY_TEXT, RD_FIELD(rd_redis_config, key_prefix), .hi = 64,
     .sdef = "recoveryd:", .check = check_key_prefix, .range_doc = "1..64 bytes of [A-Za-z0-9_:.-]",
     .doc = "prefix of every key: one namespace per deployment sharing a Redis"},
    RD_K_INT(rd_redis_config, "command_timeout_ms", command_timeout_ms, 1, 10000, 50,
             "budget per Redis command; past it the call is answered from local state"),
    RD_K_INT(rd_redis_config, "connect_timeout_ms", connect_timeout_ms, 1, 60000, 200,
             "budget per connection attempt"),
    {.name = "sentinels", .type = RD_KEY_CUSTOM, .offset = RD_KEY_NO_FIELD,
     .parse = parse_sentinels, .release = free_sentinels, .differs = sentinels_differ,
     .type_doc = "list",
     .range_doc = "up to 16 host:port", .default_doc = "none",
     .doc = "Sentinels to ask for the master (instead of `address`); needs `master_name`"},
    {.name = "master_name", .type = RD_KEY_OPT_TEXT, RD_FIELD(rd_redis_config, master_name),
     .hi = 256, .doc = "the master's name at the sentinels"},
    RD_K_INT(rd_redis_config, "probe_interval_ms", probe_interval_ms, 10, 600000, 500,
             "while degraded, how often Redis is tried again"),
    RD_K_INT(rd_redis_config, "closed_cache_ms", closed_cache_ms, 0, 10000, 250,
             "admit on a CLOSED breaker from the last reply this long; 0 = ask every time"),
    RD_K_INT(rd_redis_config, "outcome_batch_ms", outcome_batch_ms, 0, 1000, 5,
             "successes on CLOSED breakers reach Redis in batches this often; 0 = at once"),
    RD_K_INT(rd_redis_config, "read_cache_ms", read_cache_ms, 0, 10000, 100,
             "GetBreakerState of a named tool from the last reply this long; 0 = ask every time"),
    {.name = "cluster", .type = RD_KEY_CUSTOM, .offset = RD_KEY_NO_FIELD,
     .parse = parse_cluster, .release = free_cluster, .differs = cluster_differs,
     .type_doc = "list",
     .range_doc = "up to 16 host:port", .default_doc = "none",
     .doc = "seed nodes of a Redis Cluster (instead of `address`; docs/REDIS.md)"},
    RD_K_INT(rd_redis_config, "cluster_refresh_ms", cluster_refresh_ms, 100, 600000, 1000,
             "with cluster: how often the slot map is read again (also after a redirection)"),
};
static const rd_key_table REDIS = RD_KEY_TABLE("store.redis", NULL, REDIS_KEYS, check_redis);

/* ---- store ---- */

static const char *const BACKENDS[] = {"memory", "redis", NULL};
static const int BACKEND_VALUES[] = {RD_STORE_MEMORY, RD_STORE_REDIS};

static const rd_key STORE_KEYS[] = {
    RD_K_ENUM(rd_store_config, "backend", backend, BACKENDS, BACKEND_VALUES, 0,
              "memory: per replica; redis: shared by every replica (docs/REDIS.md)"),
    RD_K_INT(rd_store_config, "max_tools", max_tools, 1, 10000000, 100000,
             "breakers tracked at once; when full, the least recently used CLOSED one makes room"),
    RD_K_INT(rd_store_config, "tool_idle_ttl_ms", tool_idle_ttl_ms, 1000, TTL_MAX, 3600000,
             "a CLOSED breaker without a hold (a failure streak or not) unseen this long is dropped"),
    RD_K_INT(rd_store_config, "turn_ttl_ms", turn_ttl_ms, 1000, TTL_MAX, 900000,
             "a turn trace untouched this long is dropped"),
    RD_K_INT(rd_store_config, "max_turns", max_turns, 1, 10000000, 10000,
             "live turn traces; the oldest go first"),
    RD_K_INT(rd_store_config, "max_events_per_turn", max_events_per_turn, 1, 100000, 200,
             "further events of a turn are counted, not kept"),
    RD_K_INT(rd_store_config, "outcome_ttl_ms", outcome_ttl_ms, 1000, TTL_MAX, 600000,
             "how long an outcome_id is remembered (duplicates are ignored)"),
    RD_K_INT(rd_store_config, "max_outcomes", max_outcomes, 1, 100000000, 1000000,
             "outcome ids remembered at once"),
    RD_K_INT(rd_store_config, "evict_interval_ms", evict_interval_ms, 100, 3600000, 10000,
             "how often the expiry sweep runs"),
    RD_K_SECTION(rd_store_config, "redis", redis, &REDIS, "with `backend: redis`"),
};
const rd_key_table rd_keys_store = RD_KEY_TABLE_RESTART("store", NULL, STORE_KEYS, NULL);
