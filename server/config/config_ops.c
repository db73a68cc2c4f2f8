/* Operational keys of recovery.yaml (see config_ops.h and the
 * configuration section of docs/OPERATIONS.md). */
#include "config/config_ops.h"
#include "config/config_tracing.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "domain/err.h"

#define DAY_MS 86400000LL
#define PATH_TEXT_MAX 4096
#define SECRET_MAX 4096
#define MAX_SENTINELS 16

int rd_config_ops_defaults(rd_config *cfg)
{
    rd_config_tracing_defaults(cfg);
    rd_server_config *s = &cfg->server;
    s->max_concurrent_streams = 100;
    s->memory_limit_bytes = 128u << 20;
    s->handshake_timeout_ms = 10000;
    s->max_connection_idle_ms = 0; /* off: libgrpc 1.51 then adds a filter to every call */
    s->accept_compressed = false;
    s->max_unsent_answer_bytes = 16u << 20;
    s->reflection = true;
    s->allow_unauthenticated = false;
    s->max_watch_streams = 256;
    /* loopback unless the configuration says otherwise, as gRPC */
    cfg->metrics.listen = strdup("127.0.0.1:9464");
    cfg->metrics.max_tools = 1000;
    cfg->metrics.max_connections = 128;
    cfg->metrics.max_connections_per_ip = 8;
    cfg->metrics.threads = 2;
    cfg->metrics.connection_timeout_ms = 5000;
    cfg->metrics.breaker_refresh_ms = 0;
    cfg->log_level = RD_CONFIG_LOG_INFO;
    cfg->reload_watch = true;
    rd_redis_config *r = &cfg->store.redis;
    r->address = strdup("127.0.0.1:6379");
    r->key_prefix = strdup("recoveryd:");
    r->command_timeout_ms = 50;
    r->connect_timeout_ms = 200;
    r->probe_interval_ms = 500;
    r->closed_cache_ms = 250;
    r->outcome_batch_ms = 5;
    r->read_cache_ms = 100;
    return cfg->metrics.listen && r->address && r->key_prefix ? RD_OK : RD_ERR_NOMEM;
}

/* ---- small helpers ---- */

/* An optional text key where "" means "not set" (*out becomes NULL). */
static int get_optional_str(const rd_yctx *c, const rd_ynode *map, const char *path,
                            const char *key, size_t max_len, char **out)
{
    const rd_ynode *v = rd_ymap_get(map, key);
    if (v && v->type == RD_YSCALAR && (rd_yis_null(v) || v->len == 0)) {
        free(*out);
        *out = NULL;
        return RD_OK;
    }
    return rd_yget_str(c, map, path, key, max_len, out);
}

/* `rel` against the directory of the main file; malloc'd (NULL: no memory). */
static char *resolve_against(const char *main_file, const char *rel)
{
    const char *slash = strrchr(main_file, '/');
    if (rel[0] == '/' || !slash)
        return strdup(rel);
    size_t n = (size_t)(slash - main_file) + 1 + strlen(rel) + 1;
    char *out = malloc(n);
    if (out)
        snprintf(out, n, "%.*s/%s", (int)(slash - main_file), main_file, rel);
    return out;
}

/* A file path key, resolved and checked to be readable. */
static int get_file(const rd_yctx *c, const rd_ynode *map, const char *path, const char *key,
                    char **out)
{
    char *written = NULL;
    int rc = get_optional_str(c, map, path, key, PATH_TEXT_MAX, &written);
    if (rc != RD_OK || !written)
        return rc;
    char p[RD_YPATH_MAX];
    rd_ypath(p, path, key);
    char *resolved = resolve_against(c->file, written);
    free(written);
    if (!resolved)
        return rd_yerr(c, rd_ymap_key_line(map, key), p, "out of memory");
    if (access(resolved, R_OK) != 0) {
        rc = rd_yerr(c, rd_ymap_key_line(map, key), p, "cannot read \"%s\": %s", resolved,
                     strerror(errno));
        free(resolved);
        return rc;
    }
    free(*out);
    *out = resolved;
    return RD_OK;
}

/* A secret's first line without the blanks around it, in place: a file or
 * a Kubernetes Secret mounted as an environment variable usually ends with
 * a newline that is not part of the token. */
static char *trim_secret(char *text)
{
    text[strcspn(text, "\r\n")] = '\0';
    char *start = text + strspn(text, " \t");
    size_t n = strlen(start);
    while (n > 0 && (start[n - 1] == ' ' || start[n - 1] == '\t'))
        start[--n] = '\0';
    return start;
}

/* The first line of a secret file, without trailing whitespace. */
static int read_secret_file(const rd_yctx *c, int line, const char *p, const char *file,
                            char **out)
{
    FILE *f = fopen(file, "r");
    if (!f)
        return rd_yerr(c, line, p, "cannot read \"%s\": %s", file, strerror(errno));
    char buf[SECRET_MAX + 2];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *start = trim_secret(buf);
    n = strlen(start);
    if (n == 0 || n > SECRET_MAX)
        return rd_yerr(c, line, p, "\"%s\" holds no usable secret (1..%d bytes on its first line)",
                       file, SECRET_MAX);
    *out = strdup(start);
    memset(buf, 0, sizeof buf);
    return *out ? RD_OK : rd_yerr(c, line, p, "out of memory");
}

static int read_secret_env(const rd_yctx *c, int line, const char *p, const char *name,
                           char **out)
{
    const char *value = getenv(name);
    if (!value || !value[0])
        return rd_yerr(c, line, p, "environment variable %s is not set or empty", name);
    if (strlen(value) > SECRET_MAX + 2)
        return rd_yerr(c, line, p, "environment variable %s is longer than %d bytes", name,
                       SECRET_MAX);
    char buf[SECRET_MAX + 3];
    snprintf(buf, sizeof buf, "%s", value);
    char *start = trim_secret(buf);
    size_t n = strlen(start);
    if (n == 0 || n > SECRET_MAX) {
        memset(buf, 0, sizeof buf);
        return rd_yerr(c, line, p, "environment variable %s holds no usable secret "
                       "(1..%d bytes on its first line)", name, SECRET_MAX);
    }
    *out = strdup(start);
    memset(buf, 0, sizeof buf);
    return *out ? RD_OK : rd_yerr(c, line, p, "out of memory");
}

/* A secret given as <prefix>_file or <prefix>_env (at most one of them);
 * *out stays NULL when neither is set. */
static int get_secret(const rd_yctx *c, const rd_ynode *map, const char *path,
                      const char *prefix, char **out)
{
    char file_key[64], env_key[64], p[RD_YPATH_MAX];
    snprintf(file_key, sizeof file_key, "%s_file", prefix);
    snprintf(env_key, sizeof env_key, "%s_env", prefix);
    char *file = NULL, *env = NULL;
    int rc = get_file(c, map, path, file_key, &file);
    if (rc == RD_OK)
        rc = get_optional_str(c, map, path, env_key, 256, &env);
    if (rc == RD_OK && file && env)
        rc = rd_yerr(c, rd_ymap_key_line(map, env_key), rd_ypath(p, path, env_key),
                     "give %s or %s, not both", file_key, env_key);
    if (rc == RD_OK && file)
        rc = read_secret_file(c, rd_ymap_key_line(map, file_key), rd_ypath(p, path, file_key),
                              file, out);
    else if (rc == RD_OK && env)
        rc = read_secret_env(c, rd_ymap_key_line(map, env_key), rd_ypath(p, path, env_key), env,
                             out);
    free(file);
    free(env);
    return rc;
}

/* 0 (off) or lo..hi. */
static int get_off_or_range(const rd_yctx *c, const rd_ynode *map, const char *path,
                            const char *key, int64_t lo, int64_t hi, int64_t *out)
{
    int64_t v = *out;
    int rc = rd_yget_int(c, map, path, key, 0, hi, &v);
    if (rc != RD_OK)
        return rc;
    if (v != 0 && v < lo) {
        char p[RD_YPATH_MAX];
        return rd_yerr(c, rd_ymap_key_line(map, key), rd_ypath(p, path, key),
                       "must be 0 (off) or %lld..%lld", (long long)lo, (long long)hi);
    }
    *out = v;
    return RD_OK;
}

/* ---- server ---- */

static const char *const TLS_KEYS[] = {"cert_file", "key_file", "client_ca_file", NULL};

static int parse_tls(const rd_yctx *c, const rd_ynode *map, rd_tls_config *t)
{
    const char *path = "server.tls";
    int rc = rd_yexpect(c, map, path, RD_YMAP);
    if (rc == RD_OK)
        rc = rd_ymap_check(c, map, path, TLS_KEYS);
    if (rc == RD_OK)
        rc = get_file(c, map, path, "cert_file", &t->cert_file);
    if (rc == RD_OK)
        rc = get_file(c, map, path, "key_file", &t->key_file);
    if (rc == RD_OK)
        rc = get_file(c, map, path, "client_ca_file", &t->client_ca_file);
    if (rc != RD_OK)
        return rc;
    if (!t->cert_file != !t->key_file)
        return rd_yerr(c, map->line, path, "cert_file and key_file go together");
    if (t->client_ca_file && !t->cert_file)
        return rd_yerr(c, rd_ymap_key_line(map, "client_ca_file"), "server.tls.client_ca_file",
                       "mutual TLS needs cert_file and key_file");
    return RD_OK;
}

static const char *const TOKEN_KEYS[] = {"token_file", "token_env", NULL};

/* parent.key: {token_file | token_env}. */
static int parse_token(const rd_yctx *c, const rd_ynode *parent, const char *parent_path,
                       const char *key, char **out)
{
    const rd_ynode *map = rd_ymap_get(parent, key);
    if (!map)
        return RD_OK;
    char path[64];
    snprintf(path, sizeof path, "%s.%s", parent_path, key);
    int rc = rd_yexpect(c, map, path, RD_YMAP);
    if (rc == RD_OK)
        rc = rd_ymap_check(c, map, path, TOKEN_KEYS);
    return rc == RD_OK ? get_secret(c, map, path, "token", out) : rc;
}

int rd_config_parse_server_ops(const rd_yctx *c, const rd_ynode *map, rd_config *cfg)
{
    const char *path = "server";
    rd_server_config *s = &cfg->server;
    int rc = rd_yget_int(c, map, path, "drain_delay_ms", 0, 600000, &s->drain_delay_ms);
    if (rc == RD_OK)
        rc = get_off_or_range(c, map, path, "max_connection_age_ms", 1000, DAY_MS,
                              &s->max_connection_age_ms);
    if (rc == RD_OK)
        rc = rd_yget_int(c, map, path, "max_connection_age_grace_ms", 0, DAY_MS,
                         &s->max_connection_age_grace_ms);
    if (rc == RD_OK)
        rc = get_off_or_range(c, map, path, "keepalive_time_ms", 1000, DAY_MS,
                              &s->keepalive_time_ms);
    if (rc == RD_OK)
        rc = get_off_or_range(c, map, path, "keepalive_timeout_ms", 100, DAY_MS,
                              &s->keepalive_timeout_ms);
    int64_t streams = s->max_concurrent_streams;
    if (rc == RD_OK)
        rc = rd_yget_int(c, map, path, "max_concurrent_streams", 1, 100000, &streams);
    s->max_concurrent_streams = (unsigned)streams;
    if (rc == RD_OK)
        rc = rd_yget_size(c, map, path, "memory_limit_bytes", 16u << 20, (size_t)1 << 40,
                          &s->memory_limit_bytes);
    if (rc == RD_OK)
        rc = rd_yget_int(c, map, path, "handshake_timeout_ms", 100, 600000,
                         &s->handshake_timeout_ms);
    if (rc == RD_OK)
        rc = get_off_or_range(c, map, path, "max_connection_idle_ms", 1000, DAY_MS,
                              &s->max_connection_idle_ms);
    if (rc == RD_OK)
        rc = rd_yget_bool(c, map, path, "accept_compressed", &s->accept_compressed);
    if (rc == RD_OK)
        rc = rd_yget_size(c, map, path, "max_unsent_answer_bytes", 1u << 20, (size_t)1 << 40,
                          &s->max_unsent_answer_bytes);
    if (rc == RD_OK)
        rc = rd_yget_bool(c, map, path, "reflection", &s->reflection);
    if (rc == RD_OK)
        rc = rd_yget_bool(c, map, path, "allow_unauthenticated", &s->allow_unauthenticated);
    if (rc == RD_OK)
        rc = rd_yget_size(c, map, path, "max_watch_streams", 1, 100000, &s->max_watch_streams);
    const rd_ynode *tls = rd_ymap_get(map, "tls");
    if (rc == RD_OK && tls)
        rc = parse_tls(c, tls, &s->tls);
    if (rc == RD_OK)
        rc = parse_token(c, map, "server", "auth", &s->auth_token);
    if (rc == RD_OK)
        rc = parse_token(c, map, "server", "admin", &s->admin_token);
    return rc;
}

bool rd_config_listen_is_local(const char *listen)
{
    if (strncmp(listen, "unix:", 5) == 0 || strncmp(listen, "unix-abstract:", 14) == 0)
        return true;
    const char *colon = strrchr(listen, ':');
    size_t n = colon ? (size_t)(colon - listen) : strlen(listen);
    if (n >= 2 && listen[0] == '[' && listen[n - 1] == ']') {
        listen++;
        n -= 2;
    }
    char host[64];
    if (n == 0 || n >= sizeof host)
        return false; /* "" or ":port" is every address */
    memcpy(host, listen, n);
    host[n] = '\0';
    if (strcmp(host, "localhost") == 0 || strcmp(host, "::1") == 0)
        return true;
    struct in_addr a4;
    return inet_pton(AF_INET, host, &a4) == 1 && (ntohl(a4.s_addr) >> 24) == 127;
}

/* ---- store.redis ---- */

static bool prefix_char_ok(char ch)
{
    return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
           ch == '_' || ch == ':' || ch == '.' || ch == '-';
}

static int check_key_prefix(const rd_yctx *c, const rd_ynode *map, const char *prefix)
{
    size_t n = strlen(prefix);
    bool ok = n >= 1 && n <= 64;
    for (size_t i = 0; ok && i < n; i++)
        ok = prefix_char_ok(prefix[i]);
    if (ok)
        return RD_OK;
    return rd_yerr(c, rd_ymap_key_line(map, "key_prefix"), "store.redis.key_prefix",
                   "\"%s\" is not 1..64 bytes of [A-Za-z0-9_:.-]", prefix);
}

/* "host:port" with a port 1..65535, or "unix:/path". */
static bool address_ok(const char *a)
{
    if (strncmp(a, "unix:", 5) == 0)
        return a[5] == '/';
    const char *colon = strrchr(a, ':');
    if (!colon || colon == a || !colon[1])
        return false;
    char *end;
    long port = strtol(colon + 1, &end, 10);
    return *end == '\0' && port >= 1 && port <= 65535;
}

static int parse_sentinels(const rd_yctx *c, const rd_ynode *map, rd_redis_config *r)
{
    const rd_ynode *list = rd_ymap_get(map, "sentinels");
    const char *path = "store.redis.sentinels";
    if (!list)
        return RD_OK;
    int rc = rd_yexpect(c, list, path, RD_YSEQ);
    if (rc != RD_OK)
        return rc;
    if (list->n > MAX_SENTINELS)
        return rd_yerr(c, list->line, path, "more than %d entries", MAX_SENTINELS);
    if (list->n && !(r->sentinels = calloc(list->n, sizeof *r->sentinels)))
        return rd_yerr(c, list->line, path, "out of memory");
    for (size_t i = 0; i < list->n; i++) {
        char p[RD_YPATH_MAX];
        const char *text;
        rc = rd_yscalar_str(c, list->items[i], rd_ypath_index(p, path, i), 256, &text);
        if (rc == RD_OK && (!address_ok(text) || strncmp(text, "unix:", 5) == 0))
            rc = rd_yerr(c, list->items[i]->line, p, "expected host:port, got \"%s\"", text);
        if (rc != RD_OK)
            return rc;
        if (!(r->sentinels[i] = strdup(text)))
            return rd_yerr(c, list->items[i]->line, p, "out of memory");
        r->n_sentinels = i + 1;
    }
    return RD_OK;
}

static const char *const REDIS_KEYS[] = {
    "address", "password_file", "password_env", "db", "key_prefix", "command_timeout_ms",
    "connect_timeout_ms", "sentinels", "master_name", "probe_interval_ms", "closed_cache_ms",
    "outcome_batch_ms", "read_cache_ms", NULL};

/* The millisecond settings of store.redis and their ranges. */
typedef struct redis_time {
    const char *key;
    int64_t min, max;
    size_t offset;               /* of the int64_t field in rd_redis_config */
} redis_time;

static const redis_time REDIS_TIMES[] = {
    {"command_timeout_ms", 1, 10000, offsetof(rd_redis_config, command_timeout_ms)},
    {"connect_timeout_ms", 1, 60000, offsetof(rd_redis_config, connect_timeout_ms)},
    {"probe_interval_ms", 10, 600000, offsetof(rd_redis_config, probe_interval_ms)},
    {"closed_cache_ms", 0, 10000, offsetof(rd_redis_config, closed_cache_ms)},
    {"outcome_batch_ms", 0, 1000, offsetof(rd_redis_config, outcome_batch_ms)},
    {"read_cache_ms", 0, 10000, offsetof(rd_redis_config, read_cache_ms)},
};

static int parse_redis_values(const rd_yctx *c, const rd_ynode *map, rd_redis_config *r)
{
    const char *path = "store.redis";
    int64_t db = r->db;
    int rc = rd_yget_str(c, map, path, "address", 4096, &r->address);
    if (rc == RD_OK && !address_ok(r->address))
        rc = rd_yerr(c, rd_ymap_key_line(map, "address"), "store.redis.address",
                     "expected host:port or unix:/path, got \"%s\"", r->address);
    if (rc == RD_OK)
        rc = get_secret(c, map, path, "password", &r->password);
    if (rc == RD_OK)
        rc = rd_yget_int(c, map, path, "db", 0, 15, &db);
    r->db = (int)db;
    if (rc == RD_OK)
        rc = rd_yget_str(c, map, path, "key_prefix", 64, &r->key_prefix);
    if (rc == RD_OK)
        rc = check_key_prefix(c, map, r->key_prefix);
    for (size_t i = 0; rc == RD_OK && i < sizeof REDIS_TIMES / sizeof REDIS_TIMES[0]; i++) {
        const redis_time *t = &REDIS_TIMES[i];
        rc = rd_yget_int(c, map, path, t->key, t->min, t->max,
                         (int64_t *)(void *)((char *)r + t->offset));
    }
    return rc;
}

int rd_config_parse_redis(const rd_yctx *c, const rd_ynode *store, rd_redis_config *r)
{
    const rd_ynode *map = rd_ymap_get(store, "redis");
    const char *path = "store.redis";
    if (!map)
        return RD_OK;
    int rc = rd_yexpect(c, map, path, RD_YMAP);
    if (rc == RD_OK)
        rc = rd_ymap_check(c, map, path, REDIS_KEYS);
    if (rc == RD_OK)
        rc = parse_redis_values(c, map, r);
    if (rc == RD_OK)
        rc = parse_sentinels(c, map, r);
    if (rc == RD_OK)
        rc = get_optional_str(c, map, path, "master_name", 256, &r->master_name);
    if (rc == RD_OK && r->n_sentinels && !r->master_name)
        rc = rd_yerr(c, rd_ymap_key_line(map, "sentinels"), "store.redis.master_name",
                     "required with sentinels");
    return rc;
}

/* ---- metrics, log, reload ---- */

static const char *const METRICS_KEYS[] = {
    "listen", "max_tools", "max_connections", "max_connections_per_ip", "threads",
    "connection_timeout_ms", "breaker_refresh_ms", "auth", NULL};
static const char *const LOG_KEYS[] = {"level", NULL};
static const char *const RELOAD_KEYS[] = {"watch", NULL};

static int parse_metrics(const rd_yctx *c, const rd_ynode *map, rd_metrics_config *m)
{
    int64_t max_tools = (int64_t)m->max_tools;
    int rc = rd_yexpect(c, map, "metrics", RD_YMAP);
    if (rc == RD_OK)
        rc = rd_ymap_check(c, map, "metrics", METRICS_KEYS);
    if (rc == RD_OK)
        rc = get_optional_str(c, map, "metrics", "listen", 256, &m->listen);
    if (rc == RD_OK && m->listen && !strchr(m->listen, ':'))
        rc = rd_yerr(c, rd_ymap_key_line(map, "listen"), "metrics.listen",
                     "expected host:port or \"\" (off), got \"%s\"", m->listen);
    if (rc == RD_OK)
        rc = rd_yget_int(c, map, "metrics", "max_tools", 1, 100000, &max_tools);
    m->max_tools = (size_t)max_tools;
    int64_t conns = m->max_connections, per_ip = m->max_connections_per_ip, threads = m->threads;
    if (rc == RD_OK)
        rc = rd_yget_int(c, map, "metrics", "max_connections", 1, 10000, &conns);
    if (rc == RD_OK)
        rc = rd_yget_int(c, map, "metrics", "max_connections_per_ip", 1, 10000, &per_ip);
    if (rc == RD_OK)
        rc = rd_yget_int(c, map, "metrics", "threads", 1, 16, &threads);
    if (rc == RD_OK)
        rc = rd_yget_int(c, map, "metrics", "connection_timeout_ms", 1000, 600000,
                         &m->connection_timeout_ms);
    if (rc == RD_OK)
        rc = get_off_or_range(c, map, "metrics", "breaker_refresh_ms", 1000, 600000,
                              &m->breaker_refresh_ms);
    m->max_connections = (unsigned)conns;
    m->max_connections_per_ip = (unsigned)per_ip;
    m->threads = (unsigned)threads;
    if (rc == RD_OK)
        rc = parse_token(c, map, "metrics", "auth", &m->token);
    return rc;
}

static int parse_log(const rd_yctx *c, const rd_ynode *map, rd_config_log_level *level)
{
    static const char *const NAMES[] = {"debug", "info", "warn", "error"};
    int rc = rd_yexpect(c, map, "log", RD_YMAP);
    if (rc == RD_OK)
        rc = rd_ymap_check(c, map, "log", LOG_KEYS);
    const rd_ynode *v = rd_ymap_get(map, "level");
    if (rc != RD_OK || !v)
        return rc;
    const char *text;
    if ((rc = rd_yscalar_str(c, v, "log.level", 16, &text)) != RD_OK)
        return rc;
    for (int i = 0; i < 4; i++) {
        if (strcmp(text, NAMES[i]) == 0) {
            *level = (rd_config_log_level)i;
            return RD_OK;
        }
    }
    return rd_yerr(c, v->line, "log.level", "unknown level \"%s\" (debug | info | warn | error)",
                   text);
}

int rd_config_parse_ops_sections(const rd_yctx *c, const rd_ynode *root, rd_config *cfg)
{
    int rc = RD_OK;
    const rd_ynode *v;
    if ((v = rd_ymap_get(root, "metrics")))
        rc = parse_metrics(c, v, &cfg->metrics);
    if (rc == RD_OK && (v = rd_ymap_get(root, "log")))
        rc = parse_log(c, v, &cfg->log_level);
    if (rc == RD_OK && (v = rd_ymap_get(root, "reload"))) {
        rc = rd_yexpect(c, v, "reload", RD_YMAP);
        if (rc == RD_OK)
            rc = rd_ymap_check(c, v, "reload", RELOAD_KEYS);
        if (rc == RD_OK)
            rc = rd_yget_bool(c, v, "reload", "watch", &cfg->reload_watch);
    }
    if (rc == RD_OK && (v = rd_ymap_get(root, "tracing")))
        rc = rd_config_parse_tracing(c, v, cfg);
    return rc;
}

/* ---- release ---- */

static void free_secret(char *s)
{
    if (s)
        memset(s, 0, strlen(s)); /* do not leave tokens in freed memory */
    free(s);
}

void rd_config_ops_free(rd_config *cfg)
{
    rd_config_tracing_free(cfg);
    rd_server_config *s = &cfg->server;
    free(s->tls.cert_file);
    free(s->tls.key_file);
    free(s->tls.client_ca_file);
    free_secret(s->auth_token);
    free_secret(s->admin_token);
    free(cfg->metrics.listen);
    free_secret(cfg->metrics.token);
    rd_redis_config *r = &cfg->store.redis;
    free(r->address);
    free_secret(r->password);
    free(r->key_prefix);
    for (size_t i = 0; i < r->n_sentinels; i++)
        free(r->sentinels[i]);
    free(r->sentinels);
    free(r->master_name);
    free(cfg->tools_dir);
}
