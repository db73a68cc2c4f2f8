/* Decide without an error: the admission check, and the cascade a failed
 * step leaves for the tools after it. */
#include "engine/engine_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- cascades ---- */

static bool tool_ends_failed(rd_action a)
{
    return a == RD_ACTION_ESCALATE || a == RD_ACTION_GIVE_UP || a == RD_ACTION_FAIL_FAST ||
           a == RD_ACTION_PARTIAL;
}

/* Every configured tool as a plan step (config->tools is immutable, so the
 * strings are borrowed from it). */
static rd_plan_step *manifest_plan(const rd_policy *cfg, rd_arena *a, size_t *n)
{
    *n = 0;
    if (cfg->n_tools == 0)
        return NULL;
    rd_plan_step *plan = rd_arena_alloc(a, cfg->n_tools * sizeof *plan);
    if (!plan)
        return NULL;
    for (size_t i = 0; i < cfg->n_tools; i++) {
        const rd_tool_config *t = &cfg->tools[i];
        plan[i] = (rd_plan_step){
            .tool_id = t->id,
            .depends_on = (const char *const *)t->depends_on,
            .n_depends_on = t->n_depends_on,
            .optional = t->optional,
            .has_default = t->has_default,
            .default_value = eng_safe_str(t->default_value),
        };
    }
    *n = cfg->n_tools;
    return plan;
}

static void cascade_event(decide_call *c, const rd_cascade_step *step)
{
    static const rd_event_type TYPES[] = {
        [RD_CASCADE_SKIP] = RD_EV_SKIPPED,
        [RD_CASCADE_USE_DEFAULT] = RD_EV_DEFAULT_USED,
        [RD_CASCADE_ESCALATE] = RD_EV_ESCALATED,
    };
    if (step->action < RD_CASCADE_SKIP || step->action > RD_CASCADE_ESCALATE)
        return;
    rd_trace_event *ev = eng_event_add(&c->events, TYPES[step->action], step->tool_id);
    if (!ev)
        return;
    if (step->action == RD_CASCADE_USE_DEFAULT)
        EVENT_DETAIL(&c->events, ev, txt("Used default value for "), txt(step->tool_id));
    else
        EVENT_DETAIL(&c->events, ev, txt(step->reason));
}

/* A refused admission already carries its own step (admission_cascade). */
int eng_add_cascade(decide_call *c)
{
    if (!tool_ends_failed(c->out->action) || c->out->n_cascade > 0)
        return RD_OK;
    const rd_plan_step *plan = c->in->plan;
    size_t n_plan = c->in->n_plan;
    if (n_plan == 0) {
        plan = manifest_plan(c->e->policy, c->ctx->arena, &n_plan);
        if (!plan && c->e->policy->n_tools > 0)
            return rd_status_set(c->st, RD_ERR_NOMEM, "cascade: out of memory");
    }
    int rc = rd_step_cascade(c->e->policy, plan, n_plan, c->in->tool_id, c->ctx->arena,
                             &c->out->cascade, &c->out->n_cascade);
    if (rc != RD_OK)
        return rd_status_set(c->st, rc, "cascade: out of memory");
    for (size_t i = 0; i < c->out->n_cascade; i++)
        cascade_event(c, &c->out->cascade[i]);
    return RD_OK;
}

/* ---- Decide without an error: the admission check ---- */

/* A dependent whose dependency's step failed earlier in this turn is not
 * called: the answer repeats the step the turn recorded (ESCALATE for a
 * required tool, FAIL_FAST with SKIP for an optional one). */
static int admission_cascade(decide_call *c, bool *cascaded)
{
    *cascaded = false;
    if (!c->in->turn_id || !c->in->turn_id[0])
        return RD_OK;
    rd_plan_step own;
    const rd_plan_step *step =
        rd_step_of_tool(c->e->policy, c->in->plan, c->in->n_plan, c->in->tool_id, &own);
    if (!step || step->n_depends_on == 0)
        return RD_OK;
    rd_cascade_step *out = rd_arena_alloc(c->ctx->arena, sizeof *out);
    if (!out)
        return rd_status_set(c->st, RD_ERR_NOMEM, "cascade: out of memory");
    int rc = rd_step_turn_cascade(c->e->store, c->in->turn_id, step, c->ctx->now_ms,
                                  c->ctx->arena, out, cascaded, c->st);
    if (rc != RD_OK || !*cascaded)
        return rc;
    c->out->cascade = out;
    c->out->n_cascade = 1;
    c->out->action = out->action == RD_CASCADE_ESCALATE ? RD_ACTION_ESCALATE : RD_ACTION_FAIL_FAST;
    c->out->reason = out->reason;
    return RD_OK;
}

int eng_decide_admission(decide_call *c)
{
    if (c->budget.known && c->budget.remaining_ms <= 0) {
        eng_act_partial(c, "turn deadline reached", true);
        return RD_OK;
    }
    bool cascaded;
    int rc = admission_cascade(c, &cascaded);
    if (rc != RD_OK || cascaded)
        return rc;
    rd_store_result res;
    rc = c->scoped ? eng_scope_admit(c, &res) : eng_admit(c, c->in->tool_id, c->cfg, &res);
    if (rc != RD_OK)
        return rc;
    c->breaker = res.breaker;
    if (res.admission == RD_ADMIT_NO)
        return eng_act_alternative_or_fail_fast(c);
    eng_act_proceed(c, &res);
    return eng_count_request(c, c->in->tool_id, c->cfg);
}
