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

#include "domain/budget.h"
#include "domain/signature.h"
#include "domain/types.h"

#define RD_CONFIG_ERR_MAX 1024

/* ---- classification rules ---- */

typedef struct rd_int_range {
    int32_t lo, hi;              /* inclusive; a single value has lo == hi */
} rd_int_range;

/* A message pattern: a literal, matched case-insensitively. A boundary flag
 * means the neighbouring byte must not be a letter, digit or '_' (written
 * "\b" at that end in the rules file; implied at both ends of a pattern that
 * is all digits, so "429" never matches "4290"). */
typedef struct rd_pattern {
    char *text;                  /* lower-cased, without the \b markers */
    size_t len;
    bool boundary_start;
    bool boundary_end;
} rd_pattern;

/* A rule's conditions. Every non-empty list must match (AND across fields);
 * within one list any entry may match (OR). An empty list matches all. */
typedef struct rd_match {
    rd_int_range *http_status; size_t n_http_status;
    rd_int_range *grpc_code;   size_t n_grpc_code;
    char **codes;              size_t n_codes;           /* exact, case-insensitive */
    char **exception_types;    size_t n_exception_types; /* exact or as the last dotted part */
    rd_error_kind *kinds;      size_t n_kinds;
    rd_error_source *sources;  size_t n_sources;
    char **tools;              size_t n_tools;           /* tool ids; "prefix*" allowed */
    rd_pattern *patterns;      size_t n_patterns;        /* message contains any */
} rd_match;

typedef struct rd_rule {
    char *id;
    rd_match when;
    rd_retryability retryability;
    rd_category category;
    rd_error_kind kind;          /* UNSPECIFIED = keep the given kind */
    char *suggestion;            /* NULL = the category's default suggestion */
    /* No message patterns: decided from the error's fields alone, the
     * message never read. Rules are evaluated in two passes (domain/matcher.h):
     * the structured pass takes these rules AND "mixed" rules, which have a
     * structured condition (http_status, grpc_code, code, exception_type,
     * kind) besides patterns (structured == false); a mixed rule's patterns
     * are only looked for once its structured conditions hold, so a message
     * refines a structured signal. rd_match_is_structured() says which pass
     * a rule belongs to; tool and source alone do not make a rule structured. */
    bool structured;
    char *file;                  /* where it was defined, for explanations */
    int line;
} rd_rule;

typedef struct rd_ruleset {
    rd_rule *rules;              /* in file order: the first matching rule wins */
    size_t n_rules;
    char *category_suggestion[RD_CAT_COUNT]; /* by rd_category; never NULL after load */
    rd_retryability unknown_retryability;    /* for errors no rule matches */
    /* The rules compiled for rd_classify (domain/matcher.h), built by the
     * loader and freed with the ruleset; NULL (hand-built rulesets) means
     * the rules are evaluated one by one, with the same result. */
    struct rd_matcher *matcher;
} rd_ruleset;

/* ---- tools ---- */

/* A manifest override: when `when` matches, the listed fields replace the
 * base classification and `overridden` is set. UNSPECIFIED = keep. */
typedef struct rd_override {
    rd_match when;
    rd_retryability retryability;
    rd_category category;
    char *suggestion;
    int line;
} rd_override;

/* How USE_ALTERNATIVE picks among a tool's alternatives (docs/FLEET.md). */
typedef enum {
    RD_RANKING_LIVE = 0,         /* CLOSED before HALF_OPEN, then recent success rate,
                                    then manifest order */
    RD_RANKING_MANIFEST = 1,     /* the first admitted in manifest order */
} rd_alternatives_ranking;

typedef struct rd_tool_config {
    char *id;
    int64_t timeout_ms;          /* per-call hard timeout handed to the executor */
    rd_retry_policy retry;
    rd_breaker_policy breaker;
    rd_retry_budget_policy retry_budget;
    rd_alternatives_ranking alternatives_ranking;
    rd_override *overrides;   size_t n_overrides;
    char **alternatives;      size_t n_alternatives; /* in order of preference */
    char **depends_on;        size_t n_depends_on;
    bool optional;
    bool has_default;
    char *default_value;
    char *file;                  /* manifest path; NULL for the built-in defaults */
    int line;
    int alternatives_line;       /* of the keys: where a reference error points */
    int depends_on_line;
} rd_tool_config;

/* ---- the whole config ---- */

typedef enum { RD_STORE_MEMORY = 1, RD_STORE_REDIS = 2 } rd_store_backend;

/* TLS from files (paths resolved against the main file's directory).
 * cert_file NULL = plaintext; client_ca_file set = mutual TLS. */
typedef struct rd_tls_config {
    char *cert_file;
    char *key_file;
    char *client_ca_file;
} rd_tls_config;

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
} rd_server_config;

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

/* The shared store of issue 5 (used with backend: redis). */
typedef struct rd_redis_config {
    char *address;               /* "host:port" or "unix:/path" */
    char *password;              /* resolved secret; NULL = none; never logged */
    int db;                      /* 0..15 */
    char *key_prefix;
    int64_t command_timeout_ms;
    int64_t connect_timeout_ms;
    char **sentinels;            /* "host:port" each */
    size_t n_sentinels;
    char *master_name;           /* NULL unless sentinels are given */
    int64_t probe_interval_ms;
    int64_t closed_cache_ms;     /* 0 = every admission check asks Redis */
    int64_t outcome_batch_ms;    /* 0 = every success is recorded at once */
    int64_t read_cache_ms;       /* 0 = every read of a named tool asks Redis */
} rd_redis_config;

typedef struct rd_store_config {
    rd_store_backend backend;
    size_t max_tools;
    int64_t tool_idle_ttl_ms;
    int64_t turn_ttl_ms;
    size_t max_turns;
    size_t max_events_per_turn;
    int64_t outcome_ttl_ms;
    size_t max_outcomes;
    int64_t evict_interval_ms;
    rd_redis_config redis;
} rd_store_config;

typedef enum {
    RD_CONFIG_LOG_DEBUG = 0,     /* same order as domain/log.h's levels */
    RD_CONFIG_LOG_INFO,
    RD_CONFIG_LOG_WARN,
    RD_CONFIG_LOG_ERROR,
} rd_config_log_level;

typedef struct rd_config {
    char *path;                  /* the main file as given */
    char *tools_dir;             /* the tools directory, resolved */
    rd_server_config server;
    rd_store_config store;
    rd_metrics_config metrics;
    rd_config_log_level log_level;
    bool reload_watch;           /* reload when the config directory changes */
    rd_tool_config defaults;     /* id = "*": what a tool without a manifest gets */
    int64_t turn_timeout_ms;     /* per-turn budget when the caller sends none */
    bool reject_unknown_tools;   /* true: a tool without a manifest is NOT_FOUND */
    /* tools.external: tools that exist without a manifest, by id or by
     * "prefix*"; alternatives and depends_on may name only these and the
     * tools with a manifest (config_refs.h). */
    char **external_tools;       size_t n_external_tools;
    rd_learning_policy learning; /* learning from outcomes (docs/FLEET.md) */
    rd_ruleset rules;
    rd_tool_config *tools;       /* sorted by id for bsearch */
    size_t n_tools;
} rd_config;

/* Loads `path` and whatever it references (rules file, tools directory,
 * both relative to the file's own directory). NULL on error, with `err`
 * (RD_CONFIG_ERR_MAX bytes) holding "file:line: key: problem". */
rd_config *rd_config_load(const char *path, char *err, size_t err_cap);
void rd_config_free(rd_config *cfg);

/* The manifest for tool_id, or NULL when the tool has none. */
const rd_tool_config *rd_config_find_tool(const rd_config *cfg, const char *tool_id);
/* The manifest, or the defaults when there is none. Never NULL. */
const rd_tool_config *rd_config_tool_or_defaults(const rd_config *cfg, const char *tool_id);

#endif
