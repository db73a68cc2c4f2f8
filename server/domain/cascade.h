/* Cascading failure handling (000 section 5): when a tool ends failed, every
 * tool that depends on it, directly or through other tools, gets a step:
 *   optional              -> SKIP
 *   required with default -> USE_DEFAULT (its output stands in; the walk stops there)
 *   required, no default  -> ESCALATE
 * Independent tools get nothing. Cycles are tolerated (each tool once). */
#ifndef RD_DOMAIN_CASCADE_H
#define RD_DOMAIN_CASCADE_H

#include "domain/arena.h"
#include "domain/types.h"

/* How the trace details of cascade steps begin (cascade.c writes them; the
 * turn summary and a later admission read them back). A USE_DEFAULT step
 * has its own event type. */
#define RD_CASCADE_SKIP_PREFIX "skipped: dependency "
#define RD_CASCADE_ESCALATE_PREFIX "Required tool skipped due to dependency failure"

/* Steps for the dependents of failed_tool_id over `plan`. Results and their
 * strings live in the arena. Returns RD_OK or RD_ERR_NOMEM. */
int rd_cascade(const rd_plan_step *plan, size_t n_plan, const char *failed_tool_id,
               rd_arena *arena, rd_cascade_step **steps, size_t *n_steps);

#endif
