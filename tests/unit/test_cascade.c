/* Cascading failure handling over plans (003 section 5, 000 section 5). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "domain/arena.h"
#include "domain/cascade.h"
#include "domain/err.h"

/* Plan steps are written with up to four dependencies, NULL-terminated. */
typedef struct step_spec {
    const char *tool_id;
    const char *deps[4];
    bool optional;
    const char *default_value; /* NULL = no default */
} step_spec;

typedef struct fixture {
    rd_arena arena;
    rd_plan_step plan[RD_PLAN_MAX + 8];
    rd_cascade_step *steps;
    size_t n_steps;
} fixture;

static int setup(void **state)
{
    static fixture f;
    memset(&f, 0, sizeof f);
    rd_arena_init(&f.arena, 4096);
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    rd_arena_free(&f->arena);
    return 0;
}

static size_t build_plan(fixture *f, const step_spec *specs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t n_deps = 0;
        while (n_deps < 4 && specs[i].deps[n_deps])
            n_deps++;
        f->plan[i] = (rd_plan_step){
            .tool_id = specs[i].tool_id,
            .depends_on = specs[i].deps,
            .n_depends_on = n_deps,
            .optional = specs[i].optional,
            .has_default = specs[i].default_value != NULL,
            .default_value = specs[i].default_value ? specs[i].default_value : "",
        };
    }
    return n;
}

static void run(fixture *f, const step_spec *specs, size_t n, const char *failed)
{
    size_t n_plan = build_plan(f, specs, n);
    assert_int_equal(rd_cascade(f->plan, n_plan, failed, &f->arena, &f->steps, &f->n_steps),
                     RD_OK);
}

static void assert_step(const fixture *f, size_t i, const char *tool_id,
                        rd_cascade_action action)
{
    assert_true(i < f->n_steps);
    assert_string_equal(f->steps[i].tool_id, tool_id);
    assert_int_equal(f->steps[i].action, action);
    assert_non_null(f->steps[i].reason);
}

/* 003 5.1: A fails; B (optional) needs A; C (optional) needs B. */
static void test_chain_of_optional_tools_is_skipped(void **state)
{
    fixture *f = *state;
    const step_spec plan[] = {
        {"flight_search", {NULL}, false, NULL},
        {"compare_prices", {"flight_search", NULL}, true, NULL},
        {"create_itinerary", {"compare_prices", NULL}, true, NULL},
    };
    run(f, plan, 3, "flight_search");
    assert_int_equal(f->n_steps, 2);
    assert_step(f, 0, "compare_prices", RD_CASCADE_SKIP);
    assert_step(f, 1, "create_itinerary", RD_CASCADE_SKIP);
    assert_string_equal(f->steps[0].reason, "skipped: dependency flight_search failed");
    assert_string_equal(f->steps[1].reason, "skipped: dependency compare_prices failed");
    assert_string_equal(f->steps[0].default_value, "");
}

/* 003 5.2: B optional -> SKIP; C required without default -> ESCALATE. */
static void test_optional_skipped_required_escalates(void **state)
{
    fixture *f = *state;
    const step_spec plan[] = {
        {"flight_search", {NULL}, false, NULL},
        {"compare_prices", {"flight_search", NULL}, true, NULL},
        {"create_itinerary", {"flight_search", NULL}, false, NULL},
    };
    run(f, plan, 3, "flight_search");
    assert_int_equal(f->n_steps, 2);
    assert_step(f, 0, "compare_prices", RD_CASCADE_SKIP);
    assert_step(f, 1, "create_itinerary", RD_CASCADE_ESCALATE);
    assert_string_equal(f->steps[1].reason,
                        "Required tool skipped due to dependency failure: "
                        "create_itinerary needs flight_search");
}

/* 003 5.3: a required tool with a default runs on the default. */
static void test_default_value_used(void **state)
{
    fixture *f = *state;
    const step_spec plan[] = {
        {"flight_search", {NULL}, false, NULL},
        {"compare_prices", {"flight_search", NULL}, false, "[]"},
    };
    run(f, plan, 2, "flight_search");
    assert_int_equal(f->n_steps, 1);
    assert_step(f, 0, "compare_prices", RD_CASCADE_USE_DEFAULT);
    assert_string_equal(f->steps[0].default_value, "[]");
}

/* An optional tool is skipped even when it has a default. */
static void test_optional_wins_over_default(void **state)
{
    fixture *f = *state;
    const step_spec plan[] = {
        {"compare_prices", {"flight_search", NULL}, true, "[]"},
    };
    run(f, plan, 1, "flight_search");
    assert_int_equal(f->n_steps, 1);
    assert_step(f, 0, "compare_prices", RD_CASCADE_SKIP);
    assert_string_equal(f->steps[0].default_value, "");
}

/* 003 5.4: tools that do not depend on the failed one get nothing. */
static void test_independent_tools_untouched(void **state)
{
    fixture *f = *state;
    const step_spec plan[] = {
        {"flight_search", {NULL}, false, NULL},
        {"hotel_search", {NULL}, false, NULL},
        {"activity_search", {NULL}, false, NULL},
        {"book_hotel", {"hotel_search", NULL}, false, NULL},
    };
    run(f, plan, 4, "flight_search");
    assert_int_equal(f->n_steps, 0);
    assert_null(f->steps);
}

/* A tool whose dependency was escalated cannot run either. */
static void test_chain_through_escalate(void **state)
{
    fixture *f = *state;
    const step_spec plan[] = {
        {"b", {"a", NULL}, false, NULL},
        {"c", {"b", NULL}, true, NULL},
        {"d", {"c", NULL}, false, NULL},
    };
    run(f, plan, 3, "a");
    assert_int_equal(f->n_steps, 3);
    assert_step(f, 0, "b", RD_CASCADE_ESCALATE);
    assert_step(f, 1, "c", RD_CASCADE_SKIP);
    assert_step(f, 2, "d", RD_CASCADE_ESCALATE);
    assert_string_equal(f->steps[2].reason,
                        "Required tool skipped due to dependency failure: d needs c");
}

/* A default stands in for the missing output, so its dependents run. */
static void test_default_stops_the_walk(void **state)
{
    fixture *f = *state;
    const step_spec plan[] = {
        {"b", {"a", NULL}, false, "0"},
        {"c", {"b", NULL}, false, NULL},
        {"d", {"c", NULL}, true, NULL},
    };
    run(f, plan, 3, "a");
    assert_int_equal(f->n_steps, 1);
    assert_step(f, 0, "b", RD_CASCADE_USE_DEFAULT);
}

/* Cycles terminate, and the failed tool never appears in its own cascade. */
static void test_cycle_tolerated(void **state)
{
    fixture *f = *state;
    const step_spec plan[] = {
        {"a", {"c", NULL}, false, NULL},
        {"b", {"a", NULL}, true, NULL},
        {"c", {"b", NULL}, true, NULL},
    };
    run(f, plan, 3, "a");
    assert_int_equal(f->n_steps, 2);
    assert_step(f, 0, "b", RD_CASCADE_SKIP);
    assert_step(f, 1, "c", RD_CASCADE_SKIP);
}

static void test_self_dependency_tolerated(void **state)
{
    fixture *f = *state;
    const step_spec plan[] = {
        {"b", {"b", "a", NULL}, true, NULL},
    };
    run(f, plan, 1, "a");
    assert_int_equal(f->n_steps, 1);
    assert_step(f, 0, "b", RD_CASCADE_SKIP);
}

/* Diamond: a -> b, a -> c, {b, c} -> d; d is reached twice but listed once,
 * and the order is BFS level by level, plan order inside a level. */
static void test_diamond_each_tool_once(void **state)
{
    fixture *f = *state;
    const step_spec plan[] = {
        {"d", {"b", "c", NULL}, false, NULL},
        {"c", {"a", NULL}, true, NULL},
        {"b", {"a", NULL}, true, NULL},
    };
    run(f, plan, 3, "a");
    assert_int_equal(f->n_steps, 3);
    assert_step(f, 0, "c", RD_CASCADE_SKIP);
    assert_step(f, 1, "b", RD_CASCADE_SKIP);
    assert_step(f, 2, "d", RD_CASCADE_ESCALATE);
    /* the first listed dependency that failed is named */
    assert_string_equal(f->steps[2].reason,
                        "Required tool skipped due to dependency failure: d needs b");
}

/* A tool listed twice in a plan gets one step. */
static void test_duplicate_plan_entries_once(void **state)
{
    fixture *f = *state;
    const step_spec plan[] = {
        {"b", {"a", NULL}, true, NULL},
        {"b", {"a", NULL}, true, NULL},
    };
    run(f, plan, 2, "a");
    assert_int_equal(f->n_steps, 1);
}

static void test_empty_plan_and_unknown_failed_tool(void **state)
{
    fixture *f = *state;
    assert_int_equal(rd_cascade(NULL, 0, "a", &f->arena, &f->steps, &f->n_steps), RD_OK);
    assert_int_equal(f->n_steps, 0);
    const step_spec plan[] = {{"b", {"a", NULL}, true, NULL}};
    run(f, plan, 1, "zzz");
    assert_int_equal(f->n_steps, 0);
}

/* A long chain: every tool gets exactly one step and the walk ends. */
static void test_long_chain_bounded(void **state)
{
    fixture *f = *state;
    static char names[RD_PLAN_MAX + 1][16];
    static const char *deps[RD_PLAN_MAX][1];
    for (int i = 0; i <= RD_PLAN_MAX; i++)
        snprintf(names[i], sizeof names[i], "t%d", i);
    for (int i = 0; i < RD_PLAN_MAX; i++) {
        deps[i][0] = names[i];
        f->plan[i] = (rd_plan_step){.tool_id = names[i + 1], .depends_on = deps[i],
                                    .n_depends_on = 1, .optional = true,
                                    .default_value = ""};
    }
    assert_int_equal(rd_cascade(f->plan, RD_PLAN_MAX, "t0", &f->arena, &f->steps,
                                &f->n_steps),
                     RD_OK);
    assert_int_equal(f->n_steps, RD_PLAN_MAX);
    assert_string_equal(f->steps[RD_PLAN_MAX - 1].tool_id, names[RD_PLAN_MAX]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_chain_of_optional_tools_is_skipped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_optional_skipped_required_escalates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_default_value_used, setup, teardown),
        cmocka_unit_test_setup_teardown(test_optional_wins_over_default, setup, teardown),
        cmocka_unit_test_setup_teardown(test_independent_tools_untouched, setup, teardown),
        cmocka_unit_test_setup_teardown(test_chain_through_escalate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_default_stops_the_walk, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cycle_tolerated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_self_dependency_tolerated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_diamond_each_tool_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duplicate_plan_entries_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty_plan_and_unknown_failed_tool, setup, teardown),
        cmocka_unit_test_setup_teardown(test_long_chain_bounded, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
