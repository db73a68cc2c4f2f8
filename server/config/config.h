/* Configuration: recovery.yaml, the classification rules file and the
 * directory of per-tool manifests, parsed with libyaml into the validated,
 * immutable structs below.
 *
 * Errors: rd_config_load returns NULL and fills `err` with
 * "FILE:LINE: KEY: what is wrong". Nothing partially loaded escapes.
 * Ownership: an rd_config owns every string and array it points to;
 * rd_config_free(NULL) is a no-op. A loaded config is never modified, so
 * several threads may read it at once. */
#ifndef RD_CONFIG_CONFIG_H
#define RD_CONFIG_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "domain/model.h"
#include "domain/store.h"

#define RD_CONFIG_ERR_MAX 1024

/* ---- the whole config ---- */

/* TLS from files (paths resolved against the main file's directory).
 * cert_file NULL = plaintext; client_ca_file set = mutual TLS. */
typedef struct rd_tls_config {
    char *cert_file;
    char *key_file;
    char *client_ca_file;
} rd_tls_config;

/* server.tenants[]: one team's namespace (docs/TENANTS.md). */
#define RD_TENANTS_MAX 256
typedef struct rd_tenant_config {
    char *id;                    /* [A-Za-z0-9_.-], at most RD_TENANT_ID_MAX bytes */
    char *token;                 /* its bearer token. Secret. */
    size_t max_tools;            /* breakers it may track (scoped keys count); 0 = unlimited */
    size_t max_turns;            /* live turn traces; 0 = unlimited */
} rd_tenant_config;

typedef struct rd_server_config {
    char *listen;                /* host:port, default 0.0.0.0:50051 */
    unsigned workers;            /* completion-queue threads, default = cores */
    int64_t shutdown_grace_ms;   /* in-flight calls get this long on SIGTERM */
    size_t max_receive_bytes;    /* gRPC max receive message size */
    int64_t drain_delay_ms;      /* NOT_SERVING this long before refusing calls */
    int64_t max_connection_age_ms;       /* 0 = unlimited */
    int64_t max_connection_age_grace_ms; /* 0 = gRPC default */
    int64_t keepalive_time_ms;           /* 0 = gRPC default */
    int64_t keepalive_timeout_ms;        /* 0 = gRPC default */
    /* Limits against hostile peers (docs/SECURITY.md). */
    unsigned max_concurrent_streams;     /* per connection */
    size_t memory_limit_bytes;           /* gRPC resource quota; 0 = none */
    int64_t handshake_timeout_ms;
    int64_t max_connection_idle_ms;      /* 0 = off */
    bool accept_compressed;              /* false = identity requests only */
    size_t max_unsent_answer_bytes;      /* answers held for clients that do not read */
    bool reflection;                     /* serve grpc.reflection (reloadable) */
    bool allow_unauthenticated;          /* without auth, listen beyond loopback */
    size_t max_watch_streams;            /* WatchBreakers streams open at once (reloadable) */
    rd_tls_config tls;
    /* Bearer tokens, resolved at load time from token_file / token_env.
     * NULL = none configured. Secrets: never logged or printed. */
    char *auth_token;            /* required on every RecoveryService call */
    char *admin_token;           /* required on AdminService; NULL = admin refused */
    /* n_tenants > 0: every RecoveryService call names its tenant by its
     * token (or the admin token and x-recoveryd-tenant); auth_token unset. */
    rd_tenant_config *tenants;
    size_t n_tenants;
} rd_server_config;

/* Whether the presented secret (given_len bytes) equals expected, without
 * revealing through timing where the first difference is: the loop always
 * runs over the whole presented value. */
bool rd_secret_equal(const char *expected, const unsigned char *given, size_t given_len);

/* The configured tenant whose token `token` (len bytes) is, compared in
 * constant time against every tenant's; NULL when none. */
const rd_tenant_config *rd_config_tenant_by_token(const rd_server_config *s,
                                                  const unsigned char *token, size_t len);
/* The configured tenant named id (len bytes); NULL when none. */
const rd_tenant_config *rd_config_tenant_by_id(const rd_server_config *s, const char *id,
                                               size_t len);

/* Whether a listen address ("host:port", "unix:/path") is reachable from
 * this host only: loopback addresses, localhost and Unix sockets. */
bool rd_config_listen_is_local(const char *listen);

typedef struct rd_metrics_config {
    char *listen;                /* host:port; NULL = endpoint disabled */
    size_t max_tools;            /* per-tool series cap */
    /* A client that cannot blind the endpoint (docs/SECURITY.md). */
    unsigned max_connections;
    unsigned max_connections_per_ip;
    unsigned threads;
    int64_t connection_timeout_ms;
    int64_t breaker_refresh_ms;  /* shared store: breaker states listed this often; 0 = per scrape */
    char *token;                 /* bearer token for /metrics; NULL = none. Secret. */
} rd_metrics_config;

/* tracing.otlp: every decision exported as an OpenTelemetry span to a
 * collector (ops/otlp.h). Needs a restart. */
typedef struct rd_otlp_config {
    char *endpoint;              /* http://host:port/path; NULL = no export */
    char *service_name;          /* NULL = "recoveryd" */
    size_t queue_spans;          /* spans waiting at most; further ones are dropped */
    size_t batch_spans;          /* spans per request at most */
    int64_t flush_interval_ms;   /* a partial batch waits at most this long */
    int64_t timeout_ms;          /* connect + send + answer, per request */
} rd_otlp_config;

typedef enum {
    RD_CONFIG_LOG_DEBUG = 0,     /* same order as domain/log.h's levels */
    RD_CONFIG_LOG_INFO,
    RD_CONFIG_LOG_WARN,
    RD_CONFIG_LOG_ERROR,
} rd_config_log_level;

typedef struct rd_config {
    char *path;                  /* the main file as given */
    char *tools_dir;             /* the tools directory, resolved */
    char *rules_file;            /* classification.rules_file, resolved */
    rd_server_config server;
    rd_store_config store;
    rd_metrics_config metrics;
    rd_otlp_config otlp;         /* tracing.otlp */
    rd_config_log_level log_level;
    bool reload_watch;           /* reload when the config directory changes */
    /* tools.external: tools that exist without a manifest, by id or by
     * "prefix*"; alternatives and depends_on may name only these and the
     * tools with a manifest (config_refs.h). */
    char **external_tools;       size_t n_external_tools;
    /* What the engine decides by (domain/model.h), whole as `policy`; its
     * fields are members of rd_config as well (same storage, checked below). */
    union {
        rd_policy policy;
        struct {
            rd_tool_config defaults;
            int64_t turn_timeout_ms;
            bool reject_unknown_tools;
            rd_learning_policy learning;
            rd_ruleset rules;
            rd_tool_config *tools;
            size_t n_tools;
        };
    };
} rd_config;

/* Loads `path` and whatever it references (rules file, tools directory,
 * both relative to the file's own directory). NULL on error, with `err`
 * (RD_CONFIG_ERR_MAX bytes) holding "file:line: key: problem". */
rd_config *rd_config_load(const char *path, char *err, size_t err_cap);
void rd_config_free(rd_config *cfg);

/* Every key of the main file and of a tool manifest, as the Markdown
 * tables of docs/OPERATIONS.md (one per section: key, type, range,
 * default, what it does). */
void rd_config_keys_markdown(FILE *out);

/* Calls report(key, ctx) with the dotted name of every key that takes
 * effect only after a restart and differs between old and next (the rows
 * marked so in the key tables), e.g. "server.workers". */
typedef void (*rd_config_change_fn)(const char *key, void *ctx);
void rd_config_restart_changes(const rd_config *old, const rd_config *next,
                               rd_config_change_fn report, void *ctx);

/* The manifest for tool_id, or NULL when the tool has none. */
const rd_tool_config *rd_config_find_tool(const rd_config *cfg, const char *tool_id);
/* The manifest, or the defaults when there is none. Never NULL. */
const rd_tool_config *rd_config_tool_or_defaults(const rd_config *cfg, const char *tool_id);

/* rd_config's own members and its `policy` are one storage. */
#define RD_CONFIG_SAME_(f)                                                                    \
    _Static_assert(offsetof(rd_config, f) == offsetof(rd_config, policy) + offsetof(rd_policy, f), \
                   "rd_config." #f " is rd_config.policy." #f)
RD_CONFIG_SAME_(defaults);
RD_CONFIG_SAME_(turn_timeout_ms);
RD_CONFIG_SAME_(reject_unknown_tools);
RD_CONFIG_SAME_(learning);
RD_CONFIG_SAME_(rules);
RD_CONFIG_SAME_(tools);
RD_CONFIG_SAME_(n_tools);
#undef RD_CONFIG_SAME_

#endif
