/* A step of the plan: a tool together with the alternatives that stand in
 * for it (its manifest's `alternatives`, tried in order). The step fails
 * only when the last tool of it gives up, and then the dependents of the
 * *primary* cascade (000 section 5, 003 section 5): a failover to
 * flight_search_backup that fails too still skips, defaults or escalates
 * what needed flight_search.
 *
 * The cascade is written into the turn's trace (Skipped, DefaultUsed,
 * Escalated events about the dependents); a skipped or escalated
 * dependent's admission later in that turn reads it back and refuses the
 * call with the same step. A dependent given its default still runs. */
#ifndef RD_ENGINE_STEP_H
#define RD_ENGINE_STEP_H

#include "domain/model.h"
#include "domain/arena.h"
#include "domain/types.h"
#include "domain/store.h"

/* Cascade steps for the dependents of failed_tool_id and of every tool it
 * is an alternative of, over `plan`, each dependent once (the first cascade
 * that reaches it wins; the tools of the failed step are not among them).
 * Results live in the arena. RD_OK or RD_ERR_NOMEM. */
int rd_step_cascade(const rd_policy *cfg, const rd_plan_step *plan, size_t n_plan,
                    const char *failed_tool_id, rd_arena *arena, rd_cascade_step **steps,
                    size_t *n_steps);

/* tool_id's step: from the executor's plan when one was sent (NULL when
 * the tool is not in it), else from its manifest, written into *own (NULL
 * without a manifest). Strings are borrowed from the plan or the config. */
const rd_plan_step *rd_step_of_tool(const rd_policy *cfg, const rd_plan_step *plan,
                                    size_t n_plan, const char *tool_id, rd_plan_step *own);

/* The alternatives that follow tool_id in the lists of the tools it is an
 * alternative of (flight_search: [a, b] makes b follow a), at most max,
 * into out (borrowed from the config). When a failed over to fails too, the
 * step goes on with b before it counts as failed. Returns how many. */
#define RD_STEP_SUCCESSORS_MAX 16
size_t rd_step_successors(const rd_policy *cfg, const char *tool_id, const char **out,
                          size_t max);

/* The plan's step for tool_id, or NULL. */
const rd_plan_step *rd_plan_step_of(const rd_plan_step *plan, size_t n_plan,
                                    const char *tool_id);

/* Whether the turn's events (in order) keep `step`'s tool from running:
 * the last dependency Skipped or Escalated event about it, unless a later
 * success of the tool or of one of its dependencies undid it. On true *out
 * is that step (reason borrowed from the event, tool id from `step`). */
bool rd_turn_cascaded(const rd_trace_event *events, size_t n, const rd_plan_step *step,
                      rd_cascade_step *out);

/* rd_turn_cascaded() over the stored events of turn_id (none: *found
 * false). The reason is copied into the arena. RD_OK or the store's error. */
int rd_step_turn_cascade(rd_store *s, const char *turn_id, const rd_plan_step *step,
                         int64_t now_ms, rd_arena *arena, rd_cascade_step *out, bool *found,
                         rd_status *st);

#endif
