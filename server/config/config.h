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

#include "core/types.h"

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
    bool structured;             /* no message patterns: decided without parsing text */
    char *file;                  /* where it was defined, for explanations */
    int line;
} rd_rule;

typedef struct rd_ruleset {
    rd_rule *rules;              /* in file order: the first matching rule wins */
    size_t n_rules;
    char *category_suggestion[RD_CAT_COUNT]; /* by rd_category; never NULL after load */
    rd_retryability unknown_retryability;    /* for errors no rule matches */
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

typedef struct rd_tool_config {
    char *id;
    int64_t timeout_ms;          /* per-call hard timeout handed to the executor */
    rd_retry_policy retry;
    rd_breaker_policy breaker;
    rd_override *overrides;   size_t n_overrides;
    char **alternatives;      size_t n_alternatives; /* in order of preference */
    char **depends_on;        size_t n_depends_on;
    bool optional;
    bool has_default;
    char *default_value;
    char *file;                  /* manifest path; NULL for the built-in defaults */
    int line;
} rd_tool_config;

/* ---- the whole config ---- */

typedef enum { RD_STORE_MEMORY = 1, RD_STORE_REDIS = 2 } rd_store_backend;

typedef struct rd_server_config {
    char *listen;                /* host:port, default 0.0.0.0:50051 */
    unsigned workers;            /* completion-queue threads, default = cores */
    int64_t shutdown_grace_ms;   /* in-flight calls get this long on SIGTERM */
    size_t max_receive_bytes;    /* gRPC max receive message size */
} rd_server_config;

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
} rd_store_config;

typedef struct rd_config {
    char *path;                  /* the main file as given */
    rd_server_config server;
    rd_store_config store;
    rd_tool_config defaults;     /* id = "*": what a tool without a manifest gets */
    int64_t turn_timeout_ms;     /* per-turn budget when the caller sends none */
    bool reject_unknown_tools;   /* true: a tool without a manifest is NOT_FOUND */
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
