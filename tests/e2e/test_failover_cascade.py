"""A tool and its alternatives are one step of the plan: when the failover
chain fails too, the dependents of the primary cascade (003 section 5:
optional -> skip, default -> use it, required -> escalate), the turn
summary lists them, and a skipped or escalated dependent's admission later
in that turn says so (one given its default still runs). In both stores."""
import pytest

from cluster_support import RedisTopology, require_redis
from rdtest import (admit, auth_failure, decide, expect_action, invalid_input, pb, record, step,
                    turn_trace, unique)

TOOLS = [
    {"id": "flight_search", "alternatives": ["flight_search_backup"]},
    {"id": "flight_search_backup"},
    {"id": "hotel_search"},
    {"id": "compare_prices", "depends_on": ["flight_search"], "optional": True},
    {"id": "create_itinerary", "depends_on": ["compare_prices", "hotel_search"]},
    {"id": "price_alert", "depends_on": ["flight_search"], "default": "no alert"},
]


@pytest.fixture(params=["memory", "redis"], scope="module")
def stub(request, module_launcher, tmp_path_factory):
    if request.param == "memory":
        yield module_launcher.start(tools=TOOLS).stub
        return
    require_redis()
    topo = RedisTopology(tmp_path_factory.mktemp("redis-failover"))
    topo.start()
    try:
        yield module_launcher.start(tools=TOOLS,
                                    store=topo.store_config(key_prefix=unique("fo"))).stub
    finally:
        topo.stop()


def fail_over_and_fail(stub, turn):
    first = decide(stub, "flight_search", invalid_input(), attempt=1, turn_id=turn)
    expect_action(first, pb.ACTION_USE_ALTERNATIVE)
    assert first.alternative_tool_id == "flight_search_backup"
    assert not first.cascade, "the step is not over while an alternative remains"
    second = decide(stub, "flight_search_backup", auth_failure(), attempt=1, turn_id=turn)
    expect_action(second, pb.ACTION_ESCALATE)
    return second


def test_failed_failover_cascades_the_primarys_dependents(stub):
    turn = unique("turn")
    last = fail_over_and_fail(stub, turn)
    steps = {s.tool_id: s for s in last.cascade}
    assert set(steps) == {"compare_prices", "create_itinerary", "price_alert"}, last.cascade
    assert steps["compare_prices"].action == pb.CASCADE_ACTION_SKIP
    assert steps["create_itinerary"].action == pb.CASCADE_ACTION_ESCALATE
    assert steps["price_alert"].action == pb.CASCADE_ACTION_USE_DEFAULT
    assert steps["price_alert"].default_value == "no alert"
    assert "flight_search" in steps["compare_prices"].reason

    summary = turn_trace(stub, turn).summary
    assert "compare_prices" in summary.skipped, summary
    assert "create_itinerary" in summary.skipped, summary


def test_admission_in_the_same_turn_repeats_the_step(stub):
    turn = unique("turn")
    fail_over_and_fail(stub, turn)

    skipped = admit(stub, "compare_prices", turn_id=turn)
    expect_action(skipped, pb.ACTION_FAIL_FAST)
    assert [s.action for s in skipped.cascade] == [pb.CASCADE_ACTION_SKIP]
    assert "flight_search" in skipped.reason

    # 5.3: a tool given its default runs, with the default as its input.
    expect_action(admit(stub, "price_alert", turn_id=turn), pb.ACTION_PROCEED)

    escalated = admit(stub, "create_itinerary", turn_id=turn)
    expect_action(escalated, pb.ACTION_ESCALATE)
    assert escalated.cascade[0].action == pb.CASCADE_ACTION_ESCALATE

    # Independent tools, and the same tools in another turn, still proceed.
    expect_action(admit(stub, "hotel_search", turn_id=turn), pb.ACTION_PROCEED)
    expect_action(admit(stub, "compare_prices", turn_id=unique("turn")), pb.ACTION_PROCEED)


def test_a_later_success_of_the_dependency_lifts_the_step(stub):
    turn = unique("turn")
    fail_over_and_fail(stub, turn)
    record(stub, "flight_search", success=True, turn_id=turn)
    expect_action(admit(stub, "compare_prices", turn_id=turn), pb.ACTION_PROCEED)


def test_executor_plan_is_followed_too(stub):
    """With the executor's own plan the primary's dependents come from it."""
    turn = unique("turn")
    plan = [step("flight_search"), step("summary_writer", ["flight_search"], optional=True)]
    decide(stub, "flight_search", invalid_input(), attempt=1, turn_id=turn, plan=plan)
    last = decide(stub, "flight_search_backup", auth_failure(), attempt=1, turn_id=turn,
                  plan=plan)
    assert [(s.tool_id, s.action) for s in last.cascade] == [
        ("summary_writer", pb.CASCADE_ACTION_SKIP)]
    again = admit(stub, "summary_writer", turn_id=turn, plan=plan)
    expect_action(again, pb.ACTION_FAIL_FAST)


CHAIN = [
    {"id": "weather", "alternatives": ["weather_mirror", "weather_archive"]},
    {"id": "weather_mirror"},
    {"id": "weather_archive"},
    {"id": "packing_list", "depends_on": ["weather"], "optional": True},
]


def test_the_step_goes_down_the_primarys_list_before_it_fails(launcher):
    """weather: [weather_mirror, weather_archive]. The mirror failing too is
    answered with the archive (no cascade yet); the archive failing ends the
    step and cascades weather's dependents."""
    stub = launcher.start(tools=CHAIN).stub
    turn = unique("turn")
    first = decide(stub, "weather", invalid_input(), attempt=1, turn_id=turn)
    assert first.alternative_tool_id == "weather_mirror"
    second = decide(stub, "weather_mirror", auth_failure(), attempt=1, turn_id=turn)
    expect_action(second, pb.ACTION_USE_ALTERNATIVE)
    assert second.alternative_tool_id == "weather_archive"
    assert not second.cascade
    last = decide(stub, "weather_archive", auth_failure(), attempt=1, turn_id=turn)
    expect_action(last, pb.ACTION_ESCALATE)
    assert [(s.tool_id, s.action) for s in last.cascade] == [
        ("packing_list", pb.CASCADE_ACTION_SKIP)]
