/* The decision engine: what the five RPCs do, in plain C.
 *
 * An rd_engine holds the policy of the loaded configuration and the store. The transport
 * validates and converts a request into the input structs below, calls one
 * function with the current time, and converts the result back. Results
 * live in the caller's arena (reset after the response is sent).
 *
 * Thread safety: every function may be called from many threads at once;
 * each thread passes its own arena and rng.
 * Errors: RD_OK or a negative rd_err with a message naming the field. */
#ifndef RD_ENGINE_DECIDE_H
#define RD_ENGINE_DECIDE_H

#include "domain/model.h"
#include "domain/arena.h"
#include "domain/breaker.h"
#include "domain/err.h"
#include "domain/retry.h"
#include "domain/scope.h"
#include "domain/trace.h"
#include "domain/types.h"
#include "domain/store.h"
#include "domain/tracectx.h"

typedef struct rd_engine {
    const rd_policy *policy;     /* borrowed (the loaded config's); outlives the engine */
    rd_store *store;             /* borrowed */
} rd_engine;

/* Per-call context handed in by the transport. */
typedef struct rd_call_ctx {
    int64_t now_ms;              /* unix ms */
    rd_arena *arena;
    rd_rng *rng;
    /* Every string of the input is valid UTF-8 without NULs (the transport
     * checked it), so texts built from them are copied unchecked. False:
     * rd_tool_error.message may hold any bytes, and every text is made
     * safe. */
    bool text_checked;
    /* The caller's W3C trace context (traceparent / tracestate), recorded
     * in every trace event of the call; NULL or !valid: none. Borrowed. */
    const rd_trace_ctx *trace;
    /* The tenant the call acts for (engine/tenant.h), "" = none. The
     * engine's store is already that tenant's; this names it in what the
     * call publishes and logs. Borrowed. */
    const char *tenant;
} rd_call_ctx;

/* A breaker as the API reports it. */
typedef struct rd_breaker_view {
    const char *tool_id;
    rd_breaker_status status;
    uint32_t consecutive_failures;
    uint32_t consecutive_successes;
    uint32_t failure_threshold;
    uint32_t success_threshold;
    int64_t opened_at_ms;
    int64_t open_until_ms;       /* 0 unless OPEN */
    bool probe_in_flight;
    uint64_t opens_total;
    uint64_t generation;
    rd_breaker_status forced;    /* UNSPECIFIED unless an operator's hold is live */
    int64_t forced_until_ms;     /* 0 = until released (or no hold) */
    /* GetBreakerState, for a tool with latency.enabled: its recent
     * latency distribution (domain/latency.h); 0 when it has none. */
    uint64_t latency_samples;
    int64_t latency_p50_ms, latency_p90_ms, latency_p99_ms;
    /* A scoped breaker (tool_id is its key): the dimension the key ends at,
     * a pointer into tool_id; length 0 for a tool's own breaker. */
    const char *scope_level;
    size_t scope_level_len;
} rd_breaker_view;

/* ---- Classify ---- */

typedef struct rd_classify_result {
    rd_classification classification;
    const char *llm_message;     /* arena */
    size_t llm_message_len;      /* its length, so the answer need not measure it */
} rd_classify_result;

int rd_engine_classify(const rd_engine *e, const char *tool_id, const rd_tool_error *err,
                       const rd_call_ctx *ctx, rd_classify_result *out, rd_status *st);

/* ---- Decide ---- */

typedef struct rd_decide_input {
    const char *tool_id;
    const rd_tool_error *error;  /* NULL: admission check before a call */
    uint32_t attempt;            /* attempts made so far, including the failed one */
    int64_t elapsed_ms;
    const char *turn_id;         /* "" = no turn */
    bool has_turn_remaining;
    int64_t turn_remaining_ms;
    const rd_plan_step *plan;    /* n_plan == 0: use the manifests' graph */
    size_t n_plan;
    const char *executor_id;
    const char *outcome_id;      /* "" = none */
    const char *permit_id;       /* "" = none */
    /* The key the executor sends with the tool call (manifest `idempotency:
     * key`); "" or NULL = none. */
    const char *idempotency_key;
    /* The call's scope (domain/scope.h): keys the tool's scoped breakers
     * when its manifest has a breaker_scope; ignored otherwise. */
    const rd_scope_label *scope;
    size_t n_scope;
} rd_decide_input;

typedef struct rd_decision {
    rd_action action;
    int64_t delay_ms;                  /* RETRY: the wait, rounded to the ms */
    int64_t delay_us;                  /* the same wait to the microsecond */
    const char *alternative_tool_id;   /* "" unless USE_ALTERNATIVE */
    int64_t timeout_ms;
    const char *permit_id;             /* "" unless a probe permit was granted */
    bool has_classification;           /* only with an error */
    rd_classify_result classification;
    rd_breaker_view breaker;
    const char *reason;
    rd_cascade_step *cascade; size_t n_cascade;
    rd_trace_event *trace;    size_t n_trace;
    bool duplicate;                    /* outcome_id seen before: nothing recorded */
    /* Shadow mode (the tool's `mode`): what enforce mode answers, recorded
     * everywhere as the decision, while `action` is the permissive answer
     * (engine/shadow.c). UNSPECIFIED / "" in enforce mode. */
    rd_action shadow_action;
    const char *shadow_reason;
    const char *verify_tool_id;        /* "" unless VERIFY names the manifest's verify_tool */
    const char *idempotency_key;       /* "" unless a retry relies on the caller's key */
} rd_decision;

int rd_engine_decide(const rd_engine *e, const rd_decide_input *in, const rd_call_ctx *ctx,
                     rd_decision *out, rd_status *st);

/* ---- RecordOutcome ---- */

typedef struct rd_outcome_input {
    const char *tool_id;
    bool success;
    const rd_tool_error *error;  /* may be NULL with success = false: a transient failure */
    int64_t latency_ms;
    uint32_t attempt;
    const char *turn_id;
    const char *outcome_id;
    const char *permit_id;
    const char *executor_id;
    const rd_scope_label *scope; /* as in rd_decide_input */
    size_t n_scope;
} rd_outcome_input;

typedef struct rd_outcome_result {
    rd_breaker_view breaker;
    bool duplicate;
    rd_breaker_transition transition;  /* what the outcome did to the breaker */
    bool has_classification;           /* a failure was classified */
    rd_classification classification;
    rd_trace_event *trace; size_t n_trace; /* the events appended (arena) */
} rd_outcome_result;

int rd_engine_record_outcome(const rd_engine *e, const rd_outcome_input *in,
                             const rd_call_ctx *ctx, rd_outcome_result *out, rd_status *st);

/* ---- GetBreakerState ---- */

/* n_tool_ids == 0: every tracked tool. Unknown tools are reported CLOSED
 * (a tool is tracked from its first call). */
int rd_engine_breakers(const rd_engine *e, const char *const *tool_ids, size_t n_tool_ids,
                       const rd_call_ctx *ctx, rd_breaker_view **out, size_t *n_out,
                       rd_status *st);

/* ---- ForceBreaker (operator control) ---- */

/* Applies an operator's hold, reset or release to one tool's breaker (see
 * rd_breaker_force). ttl_ms: 0 = until released. */
int rd_engine_force(const rd_engine *e, const char *tool_id, rd_force_mode mode, int64_t ttl_ms,
                    const rd_call_ctx *ctx, rd_breaker_view *out, rd_status *st);

/* ---- GetTurnTrace ---- */

typedef struct rd_turn_trace {
    rd_trace_event *events; size_t n_events;   /* arena */
    rd_turn_summary summary;
} rd_turn_trace;

int rd_engine_turn_trace(const rd_engine *e, const char *turn_id, const rd_call_ctx *ctx,
                         rd_turn_trace *out, rd_status *st);

/* Permit ids on the wire: "p-<generation>-<token hex>". */
void rd_permit_format(char *buf, size_t cap, uint64_t generation, uint64_t token);
bool rd_permit_parse(const char *s, uint64_t *generation, uint64_t *token);

#endif
