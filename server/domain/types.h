/* Plain data of the decision core. No gRPC or protobuf type appears here or
 * anywhere under server/core: the transport converts at its edge.
 *
 * Enum values equal the proto enum values of recovery.v1 (the codec checks
 * this at compile time), and 0 always means "not given".
 *
 * Strings in input structs are borrowed from the caller for the duration of
 * the call and are never NULL ("" when absent). */
#ifndef RD_DOMAIN_TYPES_H
#define RD_DOMAIN_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A text with its length, so a writer need not measure it again. */
typedef struct rd_text {
    const char *s;
    size_t len;
} rd_text;
#define RD_TEXT_INIT(lit) {(lit), sizeof(lit) - 1}
#define RD_TEXT(lit) ((rd_text)RD_TEXT_INIT(lit))

/* Limits on request fields. */
#define RD_ID_MAX 256               /* tool_id, turn_id, outcome_id, executor_id */
#define RD_TENANT_ID_MAX 64         /* server.tenants[].id; its keys are "<id>/<key>" */
/* ToolError.message has no limit of its own: the gRPC receive limit
 * (server.max_receive_bytes) bounds it. What is read of a longer one: */
#define RD_CLASSIFY_HEAD 8192       /* classification: the first bytes ... */
#define RD_CLASSIFY_TAIL 8192       /* ... and the last (a traceback ends with its cause) */
#define RD_LLM_ERROR_HEAD 2048      /* llm_message: the error's first bytes ... */
#define RD_LLM_ERROR_TAIL 2048      /* ... and its last */
#define RD_SHORT_FIELD_MAX 256      /* code, exception_type, permit_id */
#define RD_PLAN_MAX 256             /* steps in one plan */
#define RD_DEPENDS_MAX 64           /* depends_on entries of one step */
#define RD_DEFAULT_VALUE_MAX 65536  /* PlanStep.default_value */
#define RD_TRACE_TEXT_MAX 256       /* error/detail text kept in a trace event */
#define RD_PERMIT_ID_MAX 64

typedef enum {
    RD_KIND_UNSPECIFIED = 0,
    RD_KIND_UNKNOWN_TOOL = 1,
    RD_KIND_NOT_PERMITTED = 2,
    RD_KIND_INVALID_PARAMETERS = 3,
    RD_KIND_LIMIT_EXCEEDED = 4,
    RD_KIND_CANCELED = 5,
    RD_KIND_TIMEOUT = 6,
    RD_KIND_TRANSPORT_ERROR = 7,
    RD_KIND_EXECUTION_ERROR = 8,
    RD_KIND_INTERNAL_ERROR = 9,
} rd_error_kind;
#define RD_KIND_COUNT 10

typedef enum {
    RD_SOURCE_UNSPECIFIED = 0,
    RD_SOURCE_TOOL = 1,
    RD_SOURCE_LLM = 2,
    RD_SOURCE_MCP = 3,
} rd_error_source;
#define RD_SOURCE_COUNT 4

typedef enum {
    RD_RETRYABILITY_UNSPECIFIED = 0,
    RD_TRANSIENT = 1,
    RD_PERMANENT = 2,
} rd_retryability;

typedef enum {
    RD_CAT_UNSPECIFIED = 0,
    RD_CAT_TRANSIENT = 1,
    RD_CAT_INPUT_VALIDATION = 2,
    RD_CAT_EXTERNAL_SERVICE = 3,
    RD_CAT_PERMISSION = 4,
    RD_CAT_LOGIC = 5,
    RD_CAT_RESOURCE = 6,
    RD_CAT_UNKNOWN = 7,
} rd_category;
#define RD_CAT_COUNT 8

typedef enum {
    RD_ACTION_UNSPECIFIED = 0,
    RD_ACTION_PROCEED = 1,
    RD_ACTION_RETRY = 2,
    RD_ACTION_USE_ALTERNATIVE = 3,
    RD_ACTION_FAIL_FAST = 4,
    RD_ACTION_ESCALATE = 5,
    RD_ACTION_GIVE_UP = 6,
    RD_ACTION_PARTIAL = 7,
    RD_ACTION_VERIFY = 8,        /* effect unknown: call the verify tool, never retry blind */
} rd_action;

typedef enum {
    RD_BREAKER_UNSPECIFIED = 0,
    RD_BREAKER_CLOSED = 1,
    RD_BREAKER_OPEN = 2,
    RD_BREAKER_HALF_OPEN = 3,
} rd_breaker_status;

typedef enum {
    RD_CASCADE_UNSPECIFIED = 0,
    RD_CASCADE_SKIP = 1,
    RD_CASCADE_USE_DEFAULT = 2,
    RD_CASCADE_ESCALATE = 3,
} rd_cascade_action;

/* ---- side effects (domain/effects.h) ---- */

typedef enum {
    RD_HINT_UNSPECIFIED = 0,
    RD_HINT_TRUE = 1,
    RD_HINT_FALSE = 2,
} rd_hint;
#define RD_HINT_COUNT 3

typedef enum {
    RD_EFFECTS_UNSPECIFIED = 0,  /* not declared: retried as any tool */
    RD_EFFECTS_NONE = 1,
    RD_EFFECTS_IDEMPOTENT = 2,
    RD_EFFECTS_NON_IDEMPOTENT = 3,
} rd_effects;

typedef enum {
    RD_EFFECT_SAFETY_UNSPECIFIED = 0,
    RD_EFFECT_SAFETY_DECLARED_SAFE = 1,
    RD_EFFECT_SAFETY_NOT_EXECUTED = 2,
    RD_EFFECT_SAFETY_IDEMPOTENCY_KEY = 3,
    RD_EFFECT_SAFETY_UNKNOWN = 4,
} rd_effect_safety;

/* ---- errors and their classification ---- */

typedef struct rd_tool_error {
    const char *message;
    size_t message_len;          /* bytes; message may contain any bytes */
    int32_t http_status;         /* 0 = not given */
    int32_t grpc_code;           /* 0 = not given */
    const char *code;            /* "" = not given */
    const char *exception_type;  /* "" = not given */
    rd_error_kind kind;
    rd_error_source source;
    int64_t retry_after_ms;      /* 0 = not given */
    /* MCP tool annotations sent with the error; UNSPECIFIED = not said. */
    rd_hint read_only_hint, destructive_hint, idempotent_hint;
} rd_tool_error;

/* Which tier of the classifier decided (docs/CLASSIFICATION.md,
 * "Confidence"), confidence falling in this order; the values are the
 * proto's ClassificationTier. UNSPECIFIED: no error was classified. */
typedef enum rd_tier {
    RD_TIER_UNSPECIFIED = 0,
    RD_TIER_STRUCTURED = 1,  /* code, HTTP status, gRPC code, errno, SQLSTATE, JSON-RPC code, kind */
    RD_TIER_EXCEPTION = 2,   /* a specific exception type */
    RD_TIER_MESSAGE = 3,     /* a message pattern */
    RD_TIER_GENERIC = 4,     /* a generic exception type, the text saying nothing known */
    RD_TIER_LEARNED = 5,     /* a learned signature */
    RD_TIER_DEFAULT = 6,     /* nothing decided: the unknown default */
    RD_TIER_WORDS = 7,       /* no rule decided; the message's words did (domain/words.h) */
    RD_TIER_COUNT
} rd_tier;

typedef struct rd_classification {
    rd_retryability retryability;
    rd_category category;
    rd_error_kind kind;          /* given kind, else the rule's, else UNSPECIFIED */
    bool executed;               /* from the kind's fixed meaning (rd_kind_executed) */
    int64_t retry_after_ms;      /* given, else found in the text, else 0 */
    const char *suggestion;      /* borrowed from the loaded config; never NULL */
    const char *rule_id;         /* borrowed from the loaded config; never NULL */
    bool overridden;             /* a tool manifest override applied */
    rd_tier decided_by;          /* the tier of rule_id (an override leaves it) */
    /* Whether another call could repeat an effect (domain/effects.h); all
     * zero (reason NULL) when the tool's effects are not declared. */
    rd_effects effects;
    rd_effect_safety effect_safety;
    const char *effect_reason;   /* static text; NULL = none */
} rd_classification;

/* ---- policies (resolved per tool from defaults + manifest) ---- */

typedef struct rd_retry_policy {
    int64_t initial_delay_ms;
    double multiplier;
    int64_t max_delay_ms;
    double jitter_percent;       /* 10 means +-10 % */
    uint32_t max_attempts;
    int64_t max_total_time_ms;
} rd_retry_policy;

/* What opens a CLOSED breaker (docs/FLEET.md). */
typedef enum {
    RD_BREAKER_MODE_CONSECUTIVE = 0,  /* failure_threshold transient failures in a row */
    RD_BREAKER_MODE_FAILURE_RATE = 1, /* failure (or slow-call) percentage over a window */
} rd_breaker_mode;

typedef struct rd_breaker_policy {
    uint32_t failure_threshold;  /* consecutive transient failures that open it */
    uint32_t success_threshold;  /* successful half-open probes that close it */
    int64_t open_timeout_ms;     /* OPEN -> HALF_OPEN after this long */
    /* Failure-rate mode; all zero (a zeroed policy) = consecutive mode. */
    rd_breaker_mode mode;
    uint32_t failure_rate_threshold;   /* percent of calls in the window, 1..100 */
    uint32_t minimum_calls;            /* calls in the window before a rate counts */
    int64_t window_ms;                 /* the call window (also feeds live ranking); 0 = none */
    int64_t slow_call_ms;              /* a call this slow or slower is slow; 0 = off */
    uint32_t slow_call_rate_threshold; /* percent of slow calls that opens it */
    /* Quorum tripping: failures from at least this many distinct executors
     * within quorum_window_ms before the breaker may open; <= 1 = off. */
    uint32_t quorum_min_executors;
    int64_t quorum_window_ms;
} rd_breaker_policy;

/* ---- breaker ---- */

/* Stored breaker record. `stored` is CLOSED or OPEN; HALF_OPEN is derived
 * (OPEN and now >= open_until_ms), so no timer is ever needed. */
typedef struct rd_breaker {
    rd_breaker_status stored;
    uint32_t consecutive_failures;
    uint32_t consecutive_successes; /* successful probes in this half-open period */
    int64_t opened_at_ms;           /* 0 = never opened */
    int64_t open_until_ms;
    uint64_t generation;            /* epoch: bumped each time it opens */
    uint64_t opens_total;
    uint64_t probe_token;           /* 0 = no probe in flight */
    int64_t probe_lease_until_ms;
    int64_t last_seen_ms;           /* for idle eviction */
    /* An operator's hold (rd_breaker_force): OPEN or CLOSED overrides the
     * state above while it lasts; UNSPECIFIED = no hold. */
    rd_breaker_status forced;
    int64_t forced_until_ms;        /* 0 = until released */
} rd_breaker;

/* ---- plans and cascades ---- */

typedef struct rd_plan_step {
    const char *tool_id;
    const char *const *depends_on;
    size_t n_depends_on;
    bool optional;
    bool has_default;
    const char *default_value;
} rd_plan_step;

typedef struct rd_cascade_step {
    const char *tool_id;
    rd_cascade_action action;
    const char *default_value;   /* with USE_DEFAULT, else "" */
    const char *reason;
} rd_cascade_step;

/* ---- trace ---- */

typedef enum {
    RD_EV_TOOL_ERROR = 0,
    RD_EV_TOOL_TIMEOUT,
    RD_EV_CIRCUIT_OPENED,
    RD_EV_CIRCUIT_HALF_OPENED,  /* a probe permit was granted */
    RD_EV_CIRCUIT_CLOSED,
    RD_EV_RETRY,
    RD_EV_RETRY_SUCCEEDED,
    RD_EV_TOOL_SUCCEEDED,
    RD_EV_TOOL_FAILED,
    RD_EV_ALTERNATIVE_USED,
    RD_EV_DEFAULT_USED,
    RD_EV_SKIPPED,
    RD_EV_ESCALATED,
    RD_EV_GAVE_UP,
    RD_EV_FAIL_FAST,
    RD_EV_TURN_TIMEOUT,
    RD_EV_EFFECT_CHECKED,       /* a failure of a tool with declared effects was judged */
    RD_EV_COUNT
} rd_event_type;

/* A W3C trace context's ids as lower-case hex (domain/tracectx.h). */
#define RD_TRACE_ID_HEX 32
#define RD_SPAN_ID_HEX 16

/* Fixed-size so a turn's events live in one array and copy with memcpy.
 * The three texts carry their lengths (strlen of each), so an answer need
 * not measure them: whoever writes a text sets its length. */
typedef struct rd_trace_event {
    rd_event_type type;
    char tool_id[RD_ID_MAX + 1];
    char error[RD_TRACE_TEXT_MAX];   /* truncated on a UTF-8 boundary */
    char detail[RD_TRACE_TEXT_MAX];
    uint16_t tool_id_len, error_len, detail_len;
    rd_retryability retryability;    /* UNSPECIFIED when not about an error */
    rd_breaker_status breaker;
    uint32_t retry_count;
    rd_action decision;
    int64_t timestamp_ms;            /* unix ms */
    int64_t timeout_ms;              /* ToolTimeout: the limit hit */
    bool executed;                   /* the tool actually ran (for turn_failed) */
    uint64_t sequence;               /* set by the store on append */
    /* The W3C trace context of the call that made the event ("" when it
     * carried none): its trace and the caller's span (traceparent). */
    char trace_id[RD_TRACE_ID_HEX + 1];
    char span_id[RD_SPAN_ID_HEX + 1];
} rd_trace_event;

#endif
