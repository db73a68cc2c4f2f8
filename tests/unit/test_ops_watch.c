/* The breaker change bus behind WatchBreakers: filtering by tool and by
 * tenant, order, overflow into a resync, and no wake after unsubscribe. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "ops/watch.h"

static int wakes;
static void count_wake(void *arg) { (*(int *)arg)++; }

static rd_breaker_view view_of(const char *tool, rd_breaker_status status)
{
    return (rd_breaker_view){.tool_id = tool, .status = status};
}

static void test_changes_reach_only_watchers_of_the_tool(void **state)
{
    (void)state;
    rd_watch_bus *bus = rd_watch_bus_new(8);
    const char *tools[] = {"a"};
    int wakes_a = 0, wakes_all = 0;
    rd_watch_sub *only_a = rd_watch_subscribe(bus, tools, 1, count_wake, &wakes_a);
    rd_watch_sub *all = rd_watch_subscribe(bus, NULL, 0, count_wake, &wakes_all);
    rd_breaker_view a = view_of("a", RD_BREAKER_OPEN), b = view_of("b", RD_BREAKER_OPEN);
    rd_watch_publish(bus, &a, "opened", 10);
    rd_watch_publish(bus, &b, "opened", 11);
    assert_int_equal(wakes_a, 1);
    assert_int_equal(wakes_all, 2);

    rd_breaker_change c;
    bool resync;
    assert_true(rd_watch_next(only_a, &c, &resync));
    assert_string_equal(c.tool_id, "a");
    assert_string_equal(c.view.tool_id, "a");
    assert_string_equal(c.cause, "opened");
    assert_int_equal(c.at_ms, 10);
    assert_false(rd_watch_next(only_a, &c, &resync));
    assert_false(resync);

    assert_true(rd_watch_next(all, &c, &resync));
    assert_string_equal(c.tool_id, "a");
    assert_true(rd_watch_next(all, &c, &resync));
    assert_string_equal(c.tool_id, "b");
    rd_watch_unsubscribe(only_a);
    rd_watch_unsubscribe(all);
    rd_watch_bus_free(bus);
}

static void test_overflow_asks_for_a_resync(void **state)
{
    (void)state;
    rd_watch_bus *bus = rd_watch_bus_new(3);
    rd_watch_sub *sub = rd_watch_subscribe(bus, NULL, 0, NULL, NULL);
    rd_breaker_view v = view_of("t", RD_BREAKER_OPEN);
    for (int i = 0; i < 4; i++)
        rd_watch_publish(bus, &v, "opened", i);
    assert_int_equal(rd_watch_dropped(bus), 3);
    rd_breaker_change c;
    bool resync;
    assert_false(rd_watch_next(sub, &c, &resync));
    assert_true(resync);
    rd_watch_publish(bus, &v, "closed", 9);
    assert_true(rd_watch_next(sub, &c, &resync));
    assert_false(resync); /* reported once */
    assert_string_equal(c.cause, "closed");
    rd_watch_unsubscribe(sub);
    rd_watch_bus_free(bus);
}

static void test_no_wake_after_unsubscribe(void **state)
{
    (void)state;
    rd_watch_bus *bus = rd_watch_bus_new(4);
    wakes = 0;
    rd_watch_sub *sub = rd_watch_subscribe(bus, NULL, 0, count_wake, &wakes);
    rd_breaker_view v = view_of("t", RD_BREAKER_CLOSED);
    rd_watch_push(sub, &v, "snapshot", 1);
    assert_int_equal(wakes, 1);
    rd_watch_unsubscribe(sub);
    rd_watch_publish(bus, &v, "closed", 2);
    assert_int_equal(wakes, 1);
    rd_watch_bus_free(bus);
    rd_watch_unsubscribe(NULL);
    rd_watch_bus_free(NULL);
}

static void test_watched_tools_are_copied(void **state)
{
    (void)state;
    rd_watch_bus *bus = rd_watch_bus_new(4);
    char name[] = "tool";
    const char *tools[] = {name};
    rd_watch_sub *sub = rd_watch_subscribe(bus, tools, 1, NULL, NULL);
    name[0] = 'X';
    size_t n;
    const char *const *kept = rd_watch_tools(sub, &n);
    assert_int_equal(n, 1);
    assert_string_equal(kept[0], "tool");
    rd_watch_unsubscribe(sub);
    rd_watch_bus_free(bus);
}

static void test_a_tenant_sees_only_its_own_changes(void **state)
{
    (void)state;
    rd_watch_bus *bus = rd_watch_bus_new(8);
    const char *tools[] = {"search"};
    rd_watch_sub *a_all = rd_watch_subscribe_tenant(bus, "team-a", NULL, 0, NULL, NULL);
    rd_watch_sub *b_search = rd_watch_subscribe_tenant(bus, "team-b", tools, 1, NULL, NULL);
    rd_breaker_view a = view_of("team-a/search|provider=x", RD_BREAKER_OPEN);
    rd_breaker_view b = view_of("team-b/search", RD_BREAKER_OPEN);
    rd_breaker_view b_other = view_of("team-b/other", RD_BREAKER_OPEN);
    rd_breaker_view forged = view_of("team-b/team-a/search", RD_BREAKER_OPEN);
    rd_watch_publish(bus, &a, "opened", 1);
    rd_watch_publish(bus, &b, "opened", 2);
    rd_watch_publish(bus, &b_other, "opened", 3);
    rd_watch_publish(bus, &forged, "opened", 4);

    rd_breaker_change c;
    bool resync;
    assert_true(rd_watch_next(a_all, &c, &resync));
    assert_string_equal(c.view.tool_id, "search|provider=x"); /* the prefix taken off */
    assert_int_equal(c.view.scope_level_len, strlen("provider"));
    assert_int_equal(strncmp(c.view.scope_level, "provider", c.view.scope_level_len), 0);
    assert_false(rd_watch_next(a_all, &c, &resync)); /* team-b's "team-a/search" is not a's */
    assert_true(rd_watch_next(b_search, &c, &resync));
    assert_string_equal(c.view.tool_id, "search");
    assert_int_equal(c.at_ms, 2);
    assert_false(rd_watch_next(b_search, &c, &resync));
    rd_watch_unsubscribe(a_all);
    rd_watch_unsubscribe(b_search);
    rd_watch_bus_free(bus);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_changes_reach_only_watchers_of_the_tool),
        cmocka_unit_test(test_overflow_asks_for_a_resync),
        cmocka_unit_test(test_no_wake_after_unsubscribe),
        cmocka_unit_test(test_watched_tools_are_copied),
        cmocka_unit_test(test_a_tenant_sees_only_its_own_changes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
