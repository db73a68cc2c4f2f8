/* Cascading failure handling over a plan (see cascade.h).
 *
 * The walk is breadth-first from the failed tool: level 1 holds the tools
 * that depend on it directly, level 2 those that depend on a level-1 tool
 * that could not run, and so on. Within a level, steps come in plan order,
 * so the same plan always yields the same list. A USE_DEFAULT step does not
 * spread (its default output stands in for the missing one); SKIP and
 * ESCALATE steps do (the tool produces nothing). */
#include "domain/cascade.h"

#include "domain/err.h"

#include <string.h>

/* Per plan step: not reached yet, or already given a step (or excluded). */
typedef struct walk {
    const rd_plan_step *plan;
    size_t n_plan;
    bool *done;                 /* per plan index */
    const char **frontier;      /* tools that failed to produce output, this level */
    size_t n_frontier;
    const char **next;          /* ... and the next level */
    size_t n_next;
    rd_cascade_step *steps;
    size_t n_steps;
    rd_arena *arena;
} walk;

static bool same_id(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

/* The first dependency of `step` (in its own order) that is in the frontier,
 * or NULL when the step does not depend on this level. */
static const char *failed_dependency(const walk *w, const rd_plan_step *step)
{
    for (size_t d = 0; d < step->n_depends_on; d++)
        for (size_t f = 0; f < w->n_frontier; f++)
            if (same_id(step->depends_on[d], w->frontier[f]))
                return w->frontier[f];
    return NULL;
}

/* A tool listed twice in a plan still gets one step: mark every copy. */
static void mark_tool_done(walk *w, const char *tool_id)
{
    for (size_t i = 0; i < w->n_plan; i++)
        if (same_id(w->plan[i].tool_id, tool_id))
            w->done[i] = true;
}

static rd_cascade_action action_for(const rd_plan_step *step)
{
    if (step->optional)
        return RD_CASCADE_SKIP;
    if (step->has_default)
        return RD_CASCADE_USE_DEFAULT;
    return RD_CASCADE_ESCALATE;
}

/* The reason doubles as the trace detail, so it names the dependency that
 * failed (the direct one, which may itself have been skipped). */
static const char *reason_for(rd_arena *a, rd_cascade_action action, const char *tool_id,
                              const char *dependency)
{
    switch (action) {
    case RD_CASCADE_SKIP:
        return rd_arena_printf(a, RD_CASCADE_SKIP_PREFIX "%s failed", dependency);
    case RD_CASCADE_USE_DEFAULT:
        return rd_arena_printf(a, "dependency %s failed: default value used for %s",
                               dependency, tool_id);
    default:
        return rd_arena_printf(a, RD_CASCADE_ESCALATE_PREFIX ": %s needs %s", tool_id,
                               dependency);
    }
}

static int add_step(walk *w, const rd_plan_step *step, const char *dependency)
{
    rd_cascade_step *out = &w->steps[w->n_steps];
    out->action = action_for(step);
    out->tool_id = rd_arena_strdup(w->arena, step->tool_id);
    out->default_value = rd_arena_strdup(
        w->arena, out->action == RD_CASCADE_USE_DEFAULT && step->default_value
                      ? step->default_value : "");
    out->reason = reason_for(w->arena, out->action, step->tool_id, dependency);
    if (!out->tool_id || !out->default_value || !out->reason)
        return RD_ERR_NOMEM;
    w->n_steps++;
    mark_tool_done(w, step->tool_id);
    if (out->action != RD_CASCADE_USE_DEFAULT)
        w->next[w->n_next++] = out->tool_id;
    return RD_OK;
}

/* One BFS level: every not-yet-reached step, in plan order, that depends on
 * a tool of the frontier. */
static int walk_level(walk *w)
{
    w->n_next = 0;
    for (size_t i = 0; i < w->n_plan && w->n_steps < RD_PLAN_MAX; i++) {
        if (w->done[i] || !w->plan[i].tool_id)
            continue;
        const char *dependency = failed_dependency(w, &w->plan[i]);
        if (!dependency)
            continue;
        int rc = add_step(w, &w->plan[i], dependency);
        if (rc != RD_OK)
            return rc;
    }
    return RD_OK;
}

static void swap_levels(walk *w)
{
    const char **t = w->frontier;
    w->frontier = w->next;
    w->n_frontier = w->n_next;
    w->next = t;
    w->n_next = 0;
}

int rd_cascade(const rd_plan_step *plan, size_t n_plan, const char *failed_tool_id,
               rd_arena *arena, rd_cascade_step **steps, size_t *n_steps)
{
    *steps = NULL;
    *n_steps = 0;
    if (n_plan == 0 || !failed_tool_id)
        return RD_OK;

    size_t cap = n_plan < RD_PLAN_MAX ? n_plan : RD_PLAN_MAX;
    walk w = {
        .plan = plan,
        .n_plan = n_plan,
        .done = rd_arena_alloc(arena, n_plan * sizeof(bool)),
        .frontier = rd_arena_alloc(arena, (cap + 1) * sizeof(char *)),
        .next = rd_arena_alloc(arena, (cap + 1) * sizeof(char *)),
        .steps = rd_arena_alloc(arena, cap * sizeof(rd_cascade_step)),
        .arena = arena,
    };
    if (!w.done || !w.frontier || !w.next || !w.steps)
        return RD_ERR_NOMEM;

    /* The failed tool itself never gets a step, even through a cycle. */
    mark_tool_done(&w, failed_tool_id);
    w.frontier[0] = failed_tool_id;
    w.n_frontier = 1;

    while (w.n_frontier > 0 && w.n_steps < RD_PLAN_MAX) {
        int rc = walk_level(&w);
        if (rc != RD_OK)
            return rc;
        swap_levels(&w);
    }
    *steps = w.n_steps ? w.steps : NULL;
    *n_steps = w.n_steps;
    return RD_OK;
}
