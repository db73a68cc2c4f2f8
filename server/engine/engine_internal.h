/* What the files of the engine share (engine internal; the API is
 * decide.h): one Decide call's state, the event list, and the helpers one
 * file writes and others use, each under its file's name. */
#ifndef RD_ENGINE_ENGINE_INTERNAL_H
#define RD_ENGINE_ENGINE_INTERNAL_H

#include "domain/budget.h"
#include "domain/cascade.h"
#include "domain/effects.h"
#include "domain/classify.h"
#include "domain/hash.h"
#include "domain/signature.h"
#include "domain/textcut.h"
#include "engine/decide.h"
#include "engine/refusal.h"
#include "engine/step.h"
#include "engine/text.h"

/* ---- trace events (events.c) ---- */

/* Events of one call, in order. Grows in the arena; never hold a pointer to
 * an event across event_add. */
typedef struct event_list {
    rd_trace_event *items;
    size_t n, cap;
    rd_arena *arena;
    bool out_of_memory;
    bool text_checked;           /* the call's texts are valid UTF-8 (rd_call_ctx) */
    const rd_trace_ctx *trace;   /* the call's W3C trace context, stamped on every event */
} event_list;

/* ---- the turn budget, one Decide call ---- */

typedef struct turn_budget {
    bool known;
    int64_t remaining_ms;
} turn_budget;

typedef struct decide_call {
    const rd_engine *e;
    const rd_decide_input *in;
    const rd_call_ctx *ctx;
    rd_status *st;
    rd_text tool;                /* in->tool_id, measured once */
    const rd_tool_config *cfg;   /* the tool's policy (manifest or defaults) */
    rd_decision *out;
    event_list events;
    rd_breaker breaker;          /* the tool's breaker as last seen */
    turn_budget budget;
    uint32_t attempt;
    uint64_t permit_token;       /* the probe the caller holds, 0 = none */
    bool held_by_quorum;         /* the breaker stayed closed for want of a quorum */
    bool opened_now;             /* this failure opened (or reopened) the breaker */
    bool breaker_refused;        /* the answer is the breaker's refusal (alternative or fail fast) */
    rd_signature *signature;     /* of the error; written and read only when tracked */
    bool signature_tracked;
    /* The breaker this call's failure counts against or its admission
     * checked: the tool's (in->tool_id) unless its scope keys one
     * (scope_breakers.c). */
    const char *breaker_key;
    bool scoped;                 /* the manifest has a breaker_scope and the request a scope */
    bool breaker_untouched;      /* the failure's level is none: no breaker counts it */
    int scope_level;             /* the level breaker_key is at (RD_SCOPE_LEVEL_TOOL when not scoped) */
} decide_call;

/* The wait before the next attempt, in both units the answer carries. */
typedef struct retry_wait {
    int64_t ms;
    int64_t us;
} retry_wait;


/* permits.c */
/* An empty permit_id means the caller holds no probe (token 0). */
int eng_parse_permit(const char *permit_id, uint64_t *token, rd_status *st);
const char *eng_format_permit(rd_arena *a, uint64_t generation, uint64_t token);

/* ids.c */
int eng_check_id(const char *field, const char *value, bool required, rd_status *st);
int eng_check_tool(const rd_engine *e, const char *tool_id, size_t *len, rd_status *st);
const char *eng_safe_str(const char *s);

/* views.c */
/* A breaker as the API reports it. */
void eng_fill_view(rd_breaker_view *v, const char *tool_id, const rd_breaker *b,
                   const rd_tool_config *cfg, int64_t now_ms);

/* classification.c */
/* The tool's manifest, or NULL, from its settings (a manifest's own or the
 * defaults): the caller has looked the tool up once already. */
const rd_tool_config *eng_manifest_of(const rd_engine *e, const rd_tool_config *settings);
/* Classifies err (manifest: the tool's, or NULL) into *c; *sig (when not
 * NULL) receives the error's signature and *tracked whether learning
 * follows it. A long message is read as its head and tail
 * (RD_CLASSIFY_HEAD/TAIL): the cost stays bounded whatever the request
 * size, and a traceback's cause, on its last lines, is still read. */
int eng_classify_error(const rd_engine *e, const rd_tool_config *manifest, const char *tool_id,
                       const rd_tool_error *err, const rd_call_ctx *ctx, rd_classification *c,
                       rd_signature *sig, bool *tracked, rd_status *st);
/* The text for the model beside a classification the caller answers with
 * (RecordOutcome keeps only the classification, so it never writes one). */
int eng_add_llm_message(rd_text tool, const rd_tool_error *err, const rd_call_ctx *ctx,
                        rd_classify_result *out, rd_status *st);
/* A failure reported without any error detail. */
void eng_unspecified_failure(const rd_policy *cfg, rd_classification *c);

/* events.c */
/* An event about `tool`, whose length the caller knows. */
rd_trace_event *eng_event_add_text(event_list *l, rd_event_type type, rd_text tool);
rd_trace_event *eng_event_add(event_list *l, rd_event_type type, const char *tool_id);
/* A ToolTimeout event's detail. */
void eng_timeout_detail(const event_list *l, rd_trace_event *ev, const char *tool_id,
                        int64_t timeout_ms);
/* An event about a failed attempt: the error text and what it means. */
void eng_event_error(const event_list *l, rd_trace_event *ev, const rd_tool_error *err,
                     const rd_classification *c);
/* Stamps what every event of a call shares (its trace context included). */
void eng_events_finish(event_list *l, rd_action action, rd_breaker_status breaker,
                       int64_t now_ms);
int eng_events_to_turn(const rd_engine *e, const char *turn_id, event_list *l,
                       int64_t now_ms, rd_status *st);
/* The breaker transitions worth a trace event when recording an outcome. */
void eng_note_transition(event_list *l, const char *tool_id, rd_breaker_transition t);

/* actions.c */
/* The caller's figure wins; otherwise the configured per-turn budget counted
 * from the turn's first appearance; no turn, no limit. */
int eng_turn_budget_get(const rd_engine *e, const rd_decide_input *in, int64_t now_ms,
                        turn_budget *out, rd_status *st);
rd_trace_event *eng_call_event(decide_call *c, rd_event_type type);
int eng_admit_after(decide_call *c, const char *tool_id, const rd_tool_config *cfg,
                    int64_t delay_ms, rd_store_result *res);
int eng_admit(decide_call *c, const char *tool_id, const rd_tool_config *cfg,
              rd_store_result *res);
/* The tool's retry budget (domain/budget.h), through the store. */
int eng_budget_op(decide_call *c, const char *tool_id, const rd_tool_config *cfg,
                  rd_budget_op op, rd_budget_result *res);
int eng_count_request(decide_call *c, const char *tool_id, const rd_tool_config *cfg);
/* The first alternative (in ranking order) whose own breaker admits a
 * call; then, for a tool that is itself an alternative, the ones its
 * primary lists after it (engine/step.h: the step goes on down its list).
 * *found = false when there is none. */
int eng_try_alternative(decide_call *c, const char *why, bool *found);
/* Offers that one alternative if its own breaker admits a call. */
int eng_offer_alternative(decide_call *c, const char *why, const char *alt, bool *found);
int eng_act_alternative_or_fail_fast(decide_call *c);
void eng_act_partial(decide_call *c, const char *reason, bool skipped);
void eng_act_give_up(decide_call *c, const char *reason);
void eng_act_escalate(decide_call *c, const char *reason);
void eng_act_proceed(decide_call *c, const rd_store_result *res);
void eng_act_retry(decide_call *c, retry_wait wait);

/* admission.c */
/* A refused admission already carries its own step (admission_cascade). */
int eng_add_cascade(decide_call *c);
int eng_decide_admission(decide_call *c);

/* failure.c */
/* The text for the model goes with every answer that stops using the
 * tool. A RETRY answer leaves it out: the executor tries again, so the
 * model does not hear of this failure, and the text's "cannot be used for
 * this request" would be false. */
int eng_decide_failure(decide_call *c);

/* failure.c: the wait before the next attempt of the failed call. */
retry_wait eng_retry_delay(decide_call *c, const rd_classification *cl);

/* latency.c: latency-aware retries (the tool's `latency` setting). */
/* Adds a call's latency to the tool's distribution (latency_ms 0: none). */
int eng_latency_record(const rd_engine *e, const rd_tool_config *cfg, const char *tool_id,
                       int64_t latency_ms, int64_t now_ms, rd_status *st);
/* The tool's distribution; *enough when it has min_samples. Zeros when the
 * tool's latency setting is off. */
int eng_latency_read(const rd_engine *e, const rd_tool_config *cfg, const char *tool_id,
                     int64_t now_ms, rd_latency_hist *h, bool *enough, rd_status *st);
/* Before a RETRY: when the wait and the tool's p90 pass the turn's
 * remaining time, answers USE_ALTERNATIVE (an alternative whose p90 fits)
 * or PARTIAL instead, and sets *decided. */
int eng_latency_deadline(decide_call *c, retry_wait wait, bool *decided);
/* A PROCEED or RETRY answer's timeout_ms from the measured p99, when the
 * tool's latency.timeout_factor asks for it. */
int eng_latency_timeout(decide_call *c);

/* shadow.c */
/* In shadow mode, turns the decision just made (recorded as it is) into the
 * permissive answer, keeping the decision in shadow_action/shadow_reason. */
int eng_apply_shadow(decide_call *c);
/* effect_decision.c (domain/effects.h) */
/* Whether the tool's effects are declared, by its manifest or the error's
 * hints: only then is a failure judged for retry safety. */
static inline bool eng_effects_declared(const rd_tool_config *cfg, const rd_tool_error *err)
{
    return cfg->effects != RD_EFFECTS_UNSPECIFIED ||
           (err && (err->read_only_hint | err->destructive_hint | err->idempotent_hint) != 0);
}
/* Judges the failure into c's effect fields (has_key: the caller sent an
 * idempotency key). */
void eng_effect_classify(const rd_tool_config *cfg, const rd_tool_error *err, bool has_key,
                         rd_classification *c);
/* Decide's step before retrying or handing the call to an alternative: the
 * verdict written into the answer's classification, the EffectChecked
 * event, and, when the effect may have happened, the answer VERIFY (the
 * manifest names a verify_tool) or ESCALATE. *stopped = true when that
 * answer was given. */
int eng_effect_gate(decide_call *c, bool *stopped);
/* The text for the model of an answer the gate gave: the failure text
 * with its ending replaced by what the model must not do. */
int eng_effect_llm_message(decide_call *c);

/* scope_breakers.c (domain/scope.h) */
/* Whether the call's breakers are scoped: the manifest names dimensions
 * and the request carries labels. */
static inline bool eng_scoped(const rd_tool_config *cfg, size_t n_scope)
{
    return cfg->scope.n_dimensions != 0 && n_scope != 0;
}
/* The key a failure counts against (c->breaker_key; breaker_untouched for
 * level none). */
int eng_scope_failure_key(decide_call *c);
/* Admission through the key's parents, the tool's own breaker first,
 * then each level down to the narrowest the scope reaches: the first that
 * refuses (or grants its probe) answers, and c->breaker_key names it. */
int eng_scope_admit(decide_call *c, rd_store_result *res);
/* The same through another tool's keys at the call's scope (an
 * alternative whose manifest has a breaker_scope); *key receives the key
 * that answered (arena). */
int eng_scope_admit_tool(decide_call *c, const char *tool_id, const rd_tool_config *cfg,
                         rd_store_result *res, const char **key);
/* The worst state among a tool's scoped keys at the call's scope (its own
 * breaker not included): how the live ranking of alternatives sees a
 * scoped alternative. */
int eng_scope_worst_state(decide_call *c, const char *tool_id, const rd_tool_config *cfg,
                          rd_breaker_status *worst);
/* Before a scoped failure is retried: whether a parent of its key (the
 * tool's own breaker, then each broader level) is open; the first open
 * one becomes c->breaker_key and c->breaker, so the answer names it. */
int eng_scope_parent_open(decide_call *c, bool *open);
/* RecordOutcome of a scoped call: a failure counts at its level; a success
 * at every level (so a parent's probe closes it). *key: the breaker the
 * view reports (arena). */
int eng_scope_record(const rd_engine *e, const rd_outcome_input *in, const rd_tool_config *cfg,
                     const rd_call_report *call,
                     const rd_call_ctx *ctx, rd_store_result *res, const char **key,
                     rd_status *st);

/* decide.c */
/* Whose retry this is: the turn, else the executor; "" = nobody to follow. */
const char *eng_learning_link(const char *turn_id, const char *executor_id);

/* The detail of ev from the pieces, made valid UTF-8 (events.c). */
void eng_event_detail_made_safe(rd_trace_event *ev, const piece *pieces, size_t n_pieces);

static inline __attribute__((always_inline)) void event_detail_of(const event_list *l,
                                                                  rd_trace_event *ev,
                                                                  const piece *pieces,
                                                                  size_t n_pieces)
{
    size_t len = join_pieces(ev->detail, sizeof ev->detail, pieces, n_pieces);
    ev->detail_len = (uint16_t)len;
    if (!l->text_checked || len >= sizeof ev->detail - 1)
        eng_event_detail_made_safe(ev, pieces, n_pieces);
}

#define EVENT_DETAIL(l, ev, ...) event_detail_of((l), (ev), PIECES(__VA_ARGS__))

#endif
