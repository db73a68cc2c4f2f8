/* The `server` section of the main file: the gRPC transport, its limits
 * against hostile peers (docs/SECURITY.md), TLS and the bearer tokens. */
#include <arpa/inet.h>
#include <string.h>

#include "config/config.h"
#include "config/config_tables.h"
#include "domain/err.h"

#define LISTEN_MAX 256
#define MIB (1LL << 20)
#define TIB (1LL << 40)

/* ---- tokens: server.auth, server.admin, metrics.auth ---- */

static const rd_key TOKEN_KEYS[] = {
    {.name = "token", .type = RD_KEY_SECRET, .offset = 0, .width = sizeof(char *),
     .doc = "the bearer token; never logged, error messages name the file or variable only"},
};
const rd_key_table rd_keys_token = RD_KEY_TABLE(
    "server.auth, server.admin, metrics.auth", "One of the two keys.", TOKEN_KEYS, NULL);

/* ---- server.tls ---- */

static int check_tls(const rd_yctx *c, const rd_ynode *map, const char *path, void *base)
{
    const rd_tls_config *t = base;
    char p[RD_YPATH_MAX];
    if (!t->cert_file != !t->key_file)
        return rd_yerr(c, map->line, path, "cert_file and key_file go together");
    if (t->client_ca_file && !t->cert_file)
        return rd_yerr(c, rd_ymap_key_line(map, "client_ca_file"),
                       rd_ypath(p, path, "client_ca_file"), "mutual TLS needs cert_file and key_file");
    return RD_OK;
}

static const rd_key TLS_KEYS[] = {
    RD_K_FILE(rd_tls_config, "cert_file", cert_file,
              "the server's certificate (PEM); unset = plaintext"),
    RD_K_FILE(rd_tls_config, "key_file", key_file, "its private key (PEM); with cert_file"),
    RD_K_FILE(rd_tls_config, "client_ca_file", client_ca_file,
              "set: mutual TLS, clients need a certificate signed by this CA"),
};
static const rd_key_table TLS = RD_KEY_TABLE_RESTART(
    "server.tls", "The files themselves are read again when they change.", TLS_KEYS, check_tls);

/* ---- server ---- */

/* host:port (the host may be empty: every address), or unix:/path. */
static int check_listen(const rd_yctx *c, int line, const char *path, const void *field)
{
    const char *listen = *(char *const *)field;
    if (strchr(listen, ':'))
        return RD_OK;
    return rd_yerr(c, line, path, "expected host:port, got \"%s\"", listen);
}

static const rd_key SERVER_KEYS[] = {
    {.name = "listen", .type = RD_KEY_TEXT, RD_FIELD(rd_server_config, listen), .hi = LISTEN_MAX,
     .sdef = "0.0.0.0:50051", .check = check_listen, .range_doc = "host:port",
     .doc = "where gRPC listens; without `auth`, loopback only unless "
            "`allow_unauthenticated`", RD_RESTART},
    RD_K_INT(rd_server_config, "workers", workers, 0, RD_MAX_WORKERS, 2,
             "completion-queue threads; 0 = one per core", RD_RESTART),
    RD_K_INT(rd_server_config, "shutdown_grace_ms", shutdown_grace_ms, 0, 600000, 5000,
             "in-flight calls get this long at shutdown"),
    RD_K_INT(rd_server_config, "max_receive_bytes", max_receive_bytes, 1024, 67108864, 1048576,
             "largest request accepted", RD_RESTART),
    RD_K_INT(rd_server_config, "drain_delay_ms", drain_delay_ms, 0, 600000, 0,
             "on SIGTERM, NOT_SERVING this long before refusing calls"),
    RD_K_OFF(rd_server_config, "max_connection_age_ms", max_connection_age_ms, 1000, RD_DAY_MS, 0,
             "connections get GOAWAY after this age, so clients rebalance across replicas",
             RD_RESTART),
    {.name = "max_connection_age_grace_ms", .type = RD_KEY_INT,
     RD_FIELD(rd_server_config, max_connection_age_grace_ms), .lo = 0, .hi = RD_DAY_MS,
     .default_doc = "0 (gRPC's default)",
     .doc = "time calls get to finish on an aged connection", RD_RESTART},
    {.name = "keepalive_time_ms", .type = RD_KEY_OFF_OR_INT,
     RD_FIELD(rd_server_config, keepalive_time_ms), .lo = 1000, .hi = RD_DAY_MS,
     .default_doc = "0 (gRPC's default)",
     .doc = "the server pings idle connections this often", RD_RESTART},
    {.name = "keepalive_timeout_ms", .type = RD_KEY_OFF_OR_INT,
     RD_FIELD(rd_server_config, keepalive_timeout_ms), .lo = 100, .hi = RD_DAY_MS,
     .default_doc = "0 (gRPC's default)",
     .doc = "and drops them when a ping is unanswered this long", RD_RESTART},
    RD_K_INT(rd_server_config, "max_concurrent_streams", max_concurrent_streams, 1, 100000, 100,
             "streams one connection may have open", RD_RESTART),
    RD_K_INT(rd_server_config, "memory_limit_bytes", memory_limit_bytes, 16 * MIB, TIB, 128 * MIB,
             "gRPC's resource quota: past it the transport reclaims from idle connections, "
             "then cancels streams", RD_RESTART),
    RD_K_INT(rd_server_config, "handshake_timeout_ms", handshake_timeout_ms, 100, 600000, 10000,
             "a connection that has not finished its handshake by then is closed", RD_RESTART),
    RD_K_OFF(rd_server_config, "max_connection_idle_ms", max_connection_idle_ms, 1000, RD_DAY_MS,
             0, "a connection without calls this long gets GOAWAY; off by default, as libgrpc "
                "1.51 then runs a filter on every call", RD_RESTART),
    RD_K_BOOL(rd_server_config, "accept_compressed", accept_compressed, false,
              "false: only `identity` requests, a compressed one is refused (`UNIMPLEMENTED`) "
              "before it is inflated", RD_RESTART),
    RD_K_INT(rd_server_config, "max_unsent_answer_bytes", max_unsent_answer_bytes, MIB, TIB,
             16 * MIB, "answers handed to gRPC and not yet taken by their clients; past it an "
                       "answer above 16 KiB is refused with `RESOURCE_EXHAUSTED`", RD_RESTART),
    RD_K_BOOL(rd_server_config, "reflection", reflection, true,
              "serve `grpc.reflection`; false = `UNIMPLEMENTED` (reloadable)"),
    RD_K_INT(rd_server_config, "max_watch_streams", max_watch_streams, 1, 100000, 256,
             "`WatchBreakers` streams open at once (reloadable)"),
    RD_K_BOOL(rd_server_config, "allow_unauthenticated", allow_unauthenticated, false,
              "without `auth`: true listens where `listen` says, false on `127.0.0.1:<port>` "
              "with a warning", RD_RESTART),
    RD_K_SECTION(rd_server_config, "tls", tls, &TLS, "TLS from files; absent = plaintext"),
    RD_K_SECTION(rd_server_config, "auth", auth_token, &rd_keys_token,
                 "bearer token required on every RecoveryService call (reloadable)"),
    RD_K_SECTION(rd_server_config, "admin", admin_token, &rd_keys_token,
                 "bearer token for AdminService; unset = AdminService refused (reloadable)"),
    {.name = "tenants", .type = RD_KEY_CUSTOM, .offset = RD_KEY_NO_FIELD,
     .parse = rd_config_parse_tenants, .release = rd_config_free_tenants, .sub = &rd_keys_tenant,
     .type_doc = "list", .default_doc = "none",
     .range_doc = "up to 256 entries: `server.tenants[]`",
     .doc = "teams that cannot see each other's state, each with its own token "
            "(docs/TENANTS.md); not with `auth` (reloadable)"},
};

static int check_server(const rd_yctx *c, const rd_ynode *map, const char *path, void *base)
{
    const rd_server_config *s = base;
    char p[RD_YPATH_MAX];
    if (s->n_tenants && s->auth_token)
        return rd_yerr(c, rd_ymap_key_line(map, "auth"), rd_ypath(p, path, "auth"),
                       "not with tenants: each team's calls carry its tenant's token");
    for (size_t i = 0; s->admin_token && i < s->n_tenants; i++)
        if (strcmp(s->tenants[i].token, s->admin_token) == 0)
            return rd_yerr(c, rd_ymap_key_line(map, "tenants"), rd_ypath(p, path, "tenants"),
                           "tenant '%s' has the admin token", s->tenants[i].id);
    return RD_OK;
}
const rd_key_table rd_keys_server = RD_KEY_TABLE("server", NULL, SERVER_KEYS, check_server);

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
