/* Plan steps with their alternatives, and cascades read back from a turn
 * (see step.h). */
#include "engine/step.h"

#include <stdlib.h>
#include <string.h>

#include "domain/cascade.h"
#include "domain/trace.h"

/* The tools whose manifest lists an alternative, at most this many primaries
 * are followed for one failed tool. */
#define PRIMARIES_MAX 16

static size_t primaries_of(const rd_policy *cfg, const char *tool_id, const char **out)
{
    size_t n = 0;
    for (size_t i = 0; i < cfg->n_tools && n < PRIMARIES_MAX; i++) {
        const rd_tool_config *t = &cfg->tools[i];
        for (size_t j = 0; j < t->n_alternatives; j++)
            if (strcmp(t->alternatives[j], tool_id) == 0 && strcmp(t->id, tool_id) != 0) {
                out[n++] = t->id;
                break;
            }
    }
    return n;
}

static bool in_steps(const rd_cascade_step *steps, size_t n, const char *tool_id)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(steps[i].tool_id, tool_id) == 0)
            return true;
    return false;
}

int rd_step_cascade(const rd_policy *cfg, const rd_plan_step *plan, size_t n_plan,
                    const char *failed_tool_id, rd_arena *arena, rd_cascade_step **steps,
                    size_t *n_steps)
{
    int rc = rd_cascade(plan, n_plan, failed_tool_id, arena, steps, n_steps);
    const char *primaries[PRIMARIES_MAX];
    size_t n_primaries = rc == RD_OK ? primaries_of(cfg, failed_tool_id, primaries) : 0;
    for (size_t p = 0; p < n_primaries && rc == RD_OK; p++) {
        rd_cascade_step *more;
        size_t n_more;
        if ((rc = rd_cascade(plan, n_plan, primaries[p], arena, &more, &n_more)) != RD_OK ||
            n_more == 0)
            continue;
        rd_cascade_step *all = rd_arena_alloc(arena, (*n_steps + n_more) * sizeof *all);
        if (!all)
            return RD_ERR_NOMEM;
        if (*n_steps)
            memcpy(all, *steps, *n_steps * sizeof *all);
        size_t n = *n_steps;
        for (size_t i = 0; i < n_more; i++)
            if (strcmp(more[i].tool_id, failed_tool_id) != 0 &&
                !in_steps(all, n, more[i].tool_id))
                all[n++] = more[i];
        *steps = all;
        *n_steps = n;
    }
    return rc;
}

size_t rd_step_successors(const rd_policy *cfg, const char *tool_id, const char **out,
                          size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < cfg->n_tools && n < max; i++) {
        const rd_tool_config *t = &cfg->tools[i];
        size_t j = 0;
        while (j < t->n_alternatives && strcmp(t->alternatives[j], tool_id) != 0)
            j++;
        for (j++; j < t->n_alternatives && n < max; j++)
            if (strcmp(t->alternatives[j], tool_id) != 0 && strcmp(t->alternatives[j], t->id) != 0)
                out[n++] = t->alternatives[j];
    }
    return n;
}

const rd_plan_step *rd_plan_step_of(const rd_plan_step *plan, size_t n_plan,
                                    const char *tool_id)
{
    for (size_t i = 0; i < n_plan; i++)
        if (plan[i].tool_id && strcmp(plan[i].tool_id, tool_id) == 0)
            return &plan[i];
    return NULL;
}

const rd_plan_step *rd_step_of_tool(const rd_policy *cfg, const rd_plan_step *plan,
                                    size_t n_plan, const char *tool_id, rd_plan_step *own)
{
    if (n_plan > 0)
        return rd_plan_step_of(plan, n_plan, tool_id);
    const rd_tool_config *t = rd_policy_find_tool(cfg, tool_id);
    if (!t)
        return NULL;
    *own = (rd_plan_step){.tool_id = t->id, .depends_on = (const char *const *)t->depends_on,
                          .n_depends_on = t->n_depends_on, .optional = t->optional,
                          .has_default = t->has_default,
                          .default_value = t->default_value ? t->default_value : ""};
    return own;
}

static bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The cascade action an event records about its tool (UNSPECIFIED: none).
 * A DefaultUsed tool is not among them: it runs, with the default standing
 * in for its dependency's output (003 5.3). */
static rd_cascade_action cascade_action_of(const rd_trace_event *ev)
{
    switch (ev->type) {
    case RD_EV_SKIPPED:
        return starts_with(ev->detail, RD_CASCADE_SKIP_PREFIX) ? RD_CASCADE_SKIP
                                                              : RD_CASCADE_UNSPECIFIED;
    case RD_EV_ESCALATED:
        return starts_with(ev->detail, RD_CASCADE_ESCALATE_PREFIX) ? RD_CASCADE_ESCALATE
                                                                  : RD_CASCADE_UNSPECIFIED;
    default:
        return RD_CASCADE_UNSPECIFIED;
    }
}

static bool is_success(const rd_trace_event *ev)
{
    return ev->type == RD_EV_TOOL_SUCCEEDED || ev->type == RD_EV_RETRY_SUCCEEDED;
}

static bool undoes(const rd_trace_event *ev, const rd_plan_step *step)
{
    if (!is_success(ev))
        return false;
    if (strcmp(ev->tool_id, step->tool_id) == 0)
        return true;
    for (size_t i = 0; i < step->n_depends_on; i++)
        if (strcmp(ev->tool_id, step->depends_on[i]) == 0)
            return true;
    return false;
}

bool rd_turn_cascaded(const rd_trace_event *events, size_t n, const rd_plan_step *step,
                      rd_cascade_step *out)
{
    const rd_trace_event *last = NULL;
    rd_cascade_action action = RD_CASCADE_UNSPECIFIED;
    for (size_t i = 0; i < n; i++) {
        const rd_trace_event *ev = &events[i];
        if (last && undoes(ev, step)) {
            last = NULL;
            continue;
        }
        rd_cascade_action a = strcmp(ev->tool_id, step->tool_id) == 0 ? cascade_action_of(ev)
                                                                      : RD_CASCADE_UNSPECIFIED;
        if (a != RD_CASCADE_UNSPECIFIED) {
            last = ev;
            action = a;
        }
    }
    if (!last)
        return false;
    *out = (rd_cascade_step){
        .tool_id = step->tool_id,
        .action = action,
        .default_value = "",
        .reason = last->detail,
    };
    return true;
}

int rd_step_turn_cascade(rd_store *s, const char *turn_id, const rd_plan_step *step,
                         int64_t now_ms, rd_arena *arena, rd_cascade_step *out, bool *found,
                         rd_status *st)
{
    *found = false;
    rd_trace_event *events = NULL; /* malloc'd by the store; freed here */
    size_t n = 0;
    int64_t started_at_ms;
    int rc = s->ops->turn_read(s, turn_id, now_ms, &events, &n, &started_at_ms, st);
    if (rc == RD_ERR_NOT_FOUND) {
        rd_status_clear(st);
        return RD_OK;
    }
    if (rc != RD_OK)
        return rc;
    if (rd_turn_cascaded(events, n, step, out)) {
        out->reason = rd_arena_strdup(arena, out->reason);
        *found = out->reason != NULL;
        if (!out->reason)
            rc = rd_status_set(st, RD_ERR_NOMEM, "cascade: out of memory");
    }
    free(events);
    return rc;
}
