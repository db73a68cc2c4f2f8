/* The rule and manifest model: what the classifier matches, what a tool's
 * manifest says, and the policy the engine decides by. Built by the config
 * loader (config/), read by the classifier and the engine; plain structs.
 *
 * Ownership: whoever builds these owns every string and array they point to
 * (the config loader frees them with its rd_config). Never modified once
 * built, so many threads may read them at once. */
#ifndef RD_DOMAIN_MODEL_H
#define RD_DOMAIN_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "domain/budget.h"
#include "domain/latency.h"
#include "domain/signature.h"
#include "domain/types.h"

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
    /* The category is the one the message's words name, when they name
     * one clearly (domain/word_weights.h), the one above otherwise: for
     * rules whose errors spread over categories (a bare 400, "invalid";
     * docs/CLASSIFICATION.md, "Word weights"). */
    bool category_from_words;
    /* The retryability above stands unless the message's words make the
     * other one likely and name its category (domain/word_weights.h):
     * then the answer is theirs, for rules whose word carries its
     * retryability less surely ("retry", "canceled"; docs/CLASSIFICATION.md,
     * "Word weights"). */
    bool retryability_from_words;
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
    /* The words tier (domain/words.h) for errors no rule decides, from the
     * file's `words:` section; NULL without one (the unknown default then
     * answers them). Owned, freed with the ruleset. */
    struct rd_word_model *words;
    /* The words' weights (domain/word_weights.h): the category of rules
     * marked category_from_words, and the answer for a message no rule
     * and no word count decided; from the file's `word_weights:` section,
     * NULL without one (the rules' own categories and the unknown default
     * stand). Owned, freed with the ruleset. */
    struct rd_word_weights *word_weights;
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

/* Whether a tool's refusals are acted on or only reported (docs/OPERATIONS.md,
 * "Shadow mode"): in shadow mode every decision is computed and recorded as
 * in enforce mode, and the answer is the permissive one. */
typedef enum {
    RD_MODE_ENFORCE = 0,
    RD_MODE_SHADOW = 1,
} rd_decision_mode;
/* A breaker keyed by the call's scope (domain/scope.h, docs/SCOPES.md):
 * the dimensions, broadest first, and which failures count at which
 * level. A level is an index into dimensions, or one of: */
#define RD_SCOPE_LEVEL_TOOL (-1)   /* the tool's own breaker, shared by every scope */
#define RD_SCOPE_LEVEL_NONE (-2)   /* counted against no breaker */
typedef struct rd_scope_rule {
    rd_match when;
    int level;
    int line;
} rd_scope_rule;

typedef struct rd_breaker_scope {
    char **dimensions;        size_t n_dimensions; /* 0 = the tool has no scoped breakers */
    rd_scope_rule *rules;     size_t n_rules;      /* first match wins */
    int default_level;                             /* no rule matched (default: the narrowest) */
} rd_breaker_scope;

typedef struct rd_tool_config {
    char *id;
    int64_t timeout_ms;          /* per-call hard timeout handed to the executor */
    rd_retry_policy retry;
    rd_breaker_policy breaker;
    rd_retry_budget_policy retry_budget;
    rd_alternatives_ranking alternatives_ranking;
    rd_decision_mode mode;       /* a manifest without `mode` takes the defaults' */
    rd_latency_policy latency;   /* latency-aware retries (engine/latency.c) */
    rd_override *overrides;   size_t n_overrides;
    char **alternatives;      size_t n_alternatives; /* in order of preference */
    char **depends_on;        size_t n_depends_on;
    bool optional;
    bool has_default;
    char *default_value;
    /* Side effects (domain/effects.h, docs/EFFECTS.md). UNSPECIFIED: the
     * tool is retried as any tool, as when effects did not exist. */
    rd_effects effects;
    bool idempotency_key;        /* `idempotency: key`: the tool honours the executor's key */
    char *verify_tool;           /* read-only tool telling whether the effect happened; NULL */
    int verify_tool_line;
    rd_breaker_scope scope;
    char *file;                  /* manifest path; NULL for the built-in defaults */
    int line;
    int alternatives_line;       /* of the keys: where a reference error points */
    int depends_on_line;
} rd_tool_config;

/* ---- the policy the engine decides by ---- */

/* The part of the loaded configuration that decisions read: the rules, the
 * manifests and the defaults. config/config.h's rd_config holds one as
 * `policy` (its fields are members of rd_config too). */
typedef struct rd_policy {
    rd_tool_config defaults;     /* id = "*": what a tool without a manifest gets */
    int64_t turn_timeout_ms;     /* per-turn budget when the caller sends none */
    bool reject_unknown_tools;   /* true: a tool without a manifest is NOT_FOUND */
    rd_learning_policy learning; /* learning from outcomes (docs/FLEET.md) */
    rd_ruleset rules;
    rd_tool_config *tools;       /* sorted by id for bsearch */
    size_t n_tools;
} rd_policy;

/* The manifest for tool_id, or NULL when the tool has none. */
const rd_tool_config *rd_policy_find_tool(const rd_policy *p, const char *tool_id);
/* The manifest, or the defaults when there is none. Never NULL. */
const rd_tool_config *rd_policy_tool_or_defaults(const rd_policy *p, const char *tool_id);

#endif
