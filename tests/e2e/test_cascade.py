"""003 section 5: cascading failures. Each scenario runs twice: with the
turn's plan sent in the Decide request, and with the dependency graph
taken from the tool manifests (no plan in the request)."""
import pytest

from rdtest import (admit, decide, events_of, expect_action, invalid_input, network_timeout,
                    pb, record, step, turn_trace, unique)

# (tool_id, depends_on, optional, default)
GRAPH_5_1 = [("flight_search", [], False, None),
             ("compare_prices", ["flight_search"], True, None),
             ("create_itinerary", ["compare_prices"], True, None),
             ("hotel_search", [], False, None)]
GRAPH_5_2 = [("flight_search", [], False, None),
             ("compare_prices", ["flight_search"], True, None),
             ("create_itinerary", ["flight_search"], False, None)]
GRAPH_5_3 = [("flight_search", [], False, None),
             ("compare_prices", ["flight_search"], False, "[]")]
GRAPH_5_4 = [("flight_search", [], False, None),
             ("hotel_search", [], False, None),
             ("activity_search", [], False, None)]


def plan_of(graph):
    return [step(t, deps, optional, default) for t, deps, optional, default in graph]


def manifests_of(graph):
    out = []
    for tool, deps, optional, default in graph:
        m = {"id": tool, "depends_on": deps, "optional": optional}
        if default is not None:
            m["default"] = default
        out.append(m)
    return out


@pytest.fixture(scope="module")
def plan_stub(module_launcher):
    return module_launcher.start().stub


@pytest.fixture(params=["plan", "manifests"])
def setup(request, launcher, plan_stub):
    """Returns run(graph) -> (stub, plan to send): the plan variant shares
    one server and sends the plan; the manifest variant starts a server
    whose tools.d holds the graph and sends no plan."""
    def run(graph):
        if request.param == "plan":
            return plan_stub, plan_of(graph)
        return launcher.start(tools=manifests_of(graph)).stub, []
    return run


def cascade_map(resp):
    return {s.tool_id: s for s in resp.cascade}


def fail_permanently(stub, plan, turn):
    resp = decide(stub, "flight_search", invalid_input(), attempt=1, turn_id=turn, plan=plan)
    expect_action(resp, pb.ACTION_ESCALATE)
    return resp


def test_5_1_dependents_skipped_when_dependency_fails(setup):
    """5.1: flight_search fails permanently; compare_prices (needs its
    output) and create_itinerary (needs compare_prices) are Skipped
    (dependency failed); the turn continues with independent tools."""
    stub, plan = setup(GRAPH_5_1)
    turn = unique("turn")
    resp = fail_permanently(stub, plan, turn)
    steps = cascade_map(resp)
    assert set(steps) == {"compare_prices", "create_itinerary"}, resp.cascade
    assert all(s.action == pb.CASCADE_ACTION_SKIP for s in steps.values()), resp.cascade
    skipped = {e.tool_id for e in events_of(resp.trace, "Skipped")}
    assert skipped == {"compare_prices", "create_itinerary"}
    assert any("flight_search" in e.detail for e in events_of(resp.trace, "Skipped"))

    expect_action(admit(stub, "hotel_search", turn_id=turn), pb.ACTION_PROCEED)
    record(stub, "hotel_search", success=True, turn_id=turn)
    summary = turn_trace(stub, turn).summary
    assert "flight_search" in summary.failed, summary
    assert sorted(summary.skipped) == ["compare_prices", "create_itinerary"], summary
    assert list(summary.completed) == ["hotel_search"], summary
    assert not summary.turn_failed


def test_5_2_optional_skipped_required_escalates(setup):
    """5.2: flight_search fails; compare_prices (optional) is Skipped,
    create_itinerary (required, no default) Escalates; the trace records
    "Required tool skipped due to dependency failure"."""
    stub, plan = setup(GRAPH_5_2)
    turn = unique("turn")
    steps = cascade_map(fail_permanently(stub, plan, turn))
    assert steps["compare_prices"].action == pb.CASCADE_ACTION_SKIP
    assert steps["create_itinerary"].action == pb.CASCADE_ACTION_ESCALATE
    escalated = events_of(turn_trace(stub, turn).events, "Escalated", "create_itinerary")
    assert len(escalated) == 1
    assert escalated[0].detail.startswith("Required tool skipped due to dependency failure"), \
        escalated[0].detail
    assert "flight_search" in escalated[0].detail


def test_5_3_default_value_used_when_available(setup):
    """5.3: flight_search fails; compare_prices needs its output but has a
    default value: it executes with the default and the turn continues;
    the trace records "Used default value for compare_prices"."""
    stub, plan = setup(GRAPH_5_3)
    turn = unique("turn")
    steps = cascade_map(fail_permanently(stub, plan, turn))
    assert steps["compare_prices"].action == pb.CASCADE_ACTION_USE_DEFAULT
    assert steps["compare_prices"].default_value == "[]"
    used = events_of(turn_trace(stub, turn).events, "DefaultUsed", "compare_prices")
    assert [e.detail for e in used] == ["Used default value for compare_prices"]

    expect_action(admit(stub, "compare_prices", turn_id=turn), pb.ACTION_PROCEED)
    record(stub, "compare_prices", success=True, turn_id=turn)
    summary = turn_trace(stub, turn).summary
    assert "compare_prices" in summary.completed
    assert "compare_prices" not in summary.skipped


def test_5_4_independent_tools_continue(setup):
    """5.4: flight_search fails; hotel_search and activity_search are
    independent: untouched by the cascade, they execute and succeed; the
    turn continues with their results."""
    stub, plan = setup(GRAPH_5_4)
    turn = unique("turn")
    resp = fail_permanently(stub, plan, turn)
    assert not resp.cascade, resp.cascade
    for tool in ("hotel_search", "activity_search"):
        expect_action(admit(stub, tool, turn_id=turn), pb.ACTION_PROCEED)
        record(stub, tool, success=True, turn_id=turn)
    summary = turn_trace(stub, turn).summary
    assert sorted(summary.completed) == ["activity_search", "hotel_search"]
    assert list(summary.failed) == ["flight_search"]
    assert summary.partial_result.startswith("Completed "), summary.partial_result
    assert not summary.turn_failed


def test_5_cascade_waits_until_the_tool_ends_failed(plan_stub):
    """A transient failure that is still being retried cascades nothing;
    when the retries run out (GIVE_UP) the dependents are skipped."""
    plan = plan_of(GRAPH_5_1)
    tool = "flight_search"
    first = decide(plan_stub, tool, network_timeout(), attempt=1, plan=plan)
    expect_action(first, pb.ACTION_RETRY)
    assert not first.cascade
    exhausted = decide(plan_stub, tool, network_timeout(), attempt=5, plan=plan)
    expect_action(exhausted, pb.ACTION_GIVE_UP, pb.ACTION_FAIL_FAST)
    assert {s.tool_id for s in exhausted.cascade} == {"compare_prices", "create_itinerary"}
