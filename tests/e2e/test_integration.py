"""003 section 6: the executor and the error handler (recoveryd) working
together over gRPC, as the executor would use it."""
import time

import pytest

from rdtest import (admit, breaker, decide, events_of, expect_action, expect_state,
                    invalid_input, network_timeout, parse_rfc3339, pb, rate_limit, record,
                    tool_timeout, turn_trace, unique)


@pytest.fixture(scope="module")
def stub(module_launcher):
    return module_launcher.start().stub


def decision_name(action):
    """The trace's spelling of an action: ACTION_FAIL_FAST -> "fail_fast"."""
    return pb.Action.Name(action)[len("ACTION_"):].lower()


def test_6_1_error_handler_receives_error_notifications(stub):
    """6.1: flight_search fails transiently and the executor notifies the
    error handler, which then has the error details, the tool id, the
    attempt count and the turn context."""
    tool, turn = unique("flight_search"), unique("turn")
    resp = decide(stub, tool, network_timeout(), attempt=2, elapsed_ms=150, turn_id=turn,
                  executor_id="executor-7")
    expect_action(resp, pb.ACTION_RETRY)
    for events in (resp.trace, turn_trace(stub, turn).events):
        errors = events_of(events, "ToolError", tool)
        assert len(errors) == 1, events
        e = errors[0]
        assert "Connection timeout after 30s" in e.error
        assert e.turn_id == turn
        assert e.retry_count == 1, "attempt 2 = one retry made so far"
        assert e.classification == "transient"


def test_6_2_error_handler_decides_recovery_strategy(stub):
    """6.2: transient (timeout) error, circuit CLOSED, retry count 0 ->
    decision Retry (transient + circuit closed + retries available)."""
    tool = unique("flight_search")
    resp = decide(stub, tool, tool_timeout(), attempt=1)
    expect_action(resp, pb.ACTION_RETRY)
    assert resp.reason
    expect_state(resp.breaker, pb.BREAKER_STATUS_CLOSED)
    assert 90 <= resp.delay_ms <= 110
    assert resp.timeout_ms == 30000


def test_6_3_retry_succeeds_after_transient_error(stub):
    """6.3: attempt 1 times out, the handler says retry, attempt 2
    succeeds: final result success; the trace records the success on retry
    ("flight_search succeeded on retry (attempt 2)")."""
    tool, turn = "flight_search", unique("turn")
    resp = decide(stub, tool, tool_timeout(), attempt=1, turn_id=turn)
    expect_action(resp, pb.ACTION_RETRY)
    time.sleep(resp.delay_ms / 1000.0)
    expect_action(admit(stub, tool, turn_id=turn), pb.ACTION_PROCEED)
    done = record(stub, tool, success=True, attempt=2, latency_ms=40, turn_id=turn)
    assert done.breaker.consecutive_failures == 0

    trace = turn_trace(stub, turn)
    retried = events_of(trace.events, "RetrySucceeded", tool)
    assert [e.detail for e in retried] == [f"{tool} succeeded on retry (attempt 2)"]
    assert list(trace.summary.completed) == [tool]
    assert not trace.summary.failed and not trace.summary.timed_out


@pytest.fixture
def alt_stub(launcher):
    return launcher.start(tools=[
        {"id": "flight_search", "alternatives": ["flight_search_backup"]},
        {"id": "flight_search_backup", "timeout_ms": 20000},
    ]).stub


def test_6_4_alternative_tool_used_when_primary_fails(alt_stub):
    """6.4: flight_search fails permanently, flight_search_backup is
    available: the handler decides Use alternative, the backup executes and
    succeeds; the trace records "Used alternative tool"."""
    stub, turn = alt_stub, unique("turn")
    expect_action(admit(stub, "flight_search", turn_id=turn), pb.ACTION_PROCEED)
    resp = decide(stub, "flight_search", invalid_input(), attempt=1, turn_id=turn)
    expect_action(resp, pb.ACTION_USE_ALTERNATIVE)
    assert resp.alternative_tool_id == "flight_search_backup"
    assert resp.timeout_ms == 20000, "the alternative's own hard timeout"
    record(stub, "flight_search_backup", success=True, turn_id=turn)

    trace = turn_trace(stub, turn)
    used = events_of(trace.events, "AlternativeUsed", "flight_search")
    assert [e.detail for e in used] == ["Used alternative tool flight_search_backup for "
                                        "flight_search"]
    assert "flight_search_backup" in trace.summary.completed
    assert "flight_search" not in trace.summary.completed


def test_6_4_open_breaker_routes_to_alternative(alt_stub):
    """6.4 with an open breaker: once flight_search's circuit opens, the
    executor is sent to flight_search_backup instead of failing fast."""
    stub = alt_stub
    for attempt in range(1, 6):
        resp = decide(stub, "flight_search", rate_limit(), attempt=attempt)
    expect_state(breaker(stub, "flight_search"), pb.BREAKER_STATUS_OPEN)
    expect_action(resp, pb.ACTION_USE_ALTERNATIVE)
    go = admit(stub, "flight_search")
    expect_action(go, pb.ACTION_USE_ALTERNATIVE)
    assert go.alternative_tool_id == "flight_search_backup"
    assert go.timeout_ms == 20000


def test_6_5_escalation_for_permanent_errors(stub):
    """6.5: permanent (invalid input) error, circuit CLOSED -> decision
    Escalate (no retry) and the user/model is told, through the "Tool
    Execution Failed" message."""
    tool, turn = unique("flight_search"), unique("turn")
    resp = decide(stub, tool, invalid_input(), attempt=1, turn_id=turn)
    expect_action(resp, pb.ACTION_ESCALATE)
    assert "permanent" in resp.reason.lower(), resp.reason
    assert resp.delay_ms == 0
    expect_state(resp.breaker, pb.BREAKER_STATUS_CLOSED)
    lines = resp.classification.llm_message.splitlines()
    assert lines[0] == "Tool Execution Failed", lines
    assert f"Tool: {tool}" in lines
    assert any(l.startswith("Error Type: ") and len(l) > len("Error Type: ") for l in lines)
    assert "Message: Invalid airport code: XYZ" in lines
    assert lines[-1] == "The tool failed and cannot be used for this request."
    assert events_of(turn_trace(stub, turn).events, "Escalated", tool)


def test_6_6_turn_trace_records_all_decisions(stub):
    """6.6: several tools fail in different ways in one turn; the trace has
    an entry for each error with its classification, the circuit breaker
    state and the recovery decision, plus the outcomes."""
    turn = unique("turn")
    flight, hotel, weather = unique("flight_search"), unique("hotel_search"), unique("weather")
    decisions = {}
    decisions[flight] = [decide(stub, flight, tool_timeout(), attempt=1, turn_id=turn)]
    record(stub, flight, success=True, attempt=2, turn_id=turn)
    decisions[hotel] = [decide(stub, hotel, invalid_input(), attempt=1, turn_id=turn)]
    decisions[weather] = [decide(stub, weather, rate_limit(), attempt=a, turn_id=turn)
                          for a in range(1, 6)]

    trace = turn_trace(stub, turn)
    events = trace.events
    assert trace.turn_id == turn
    for tool, answers in decisions.items():
        errors = events_of(events, "ToolError", tool)
        assert len(errors) == len(answers), f"{tool}: {errors}"
        for event, answer in zip(errors, answers):
            assert event.error, "the error itself"
            expected = "transient" if answer.classification.retryability == \
                pb.RETRYABILITY_TRANSIENT else "permanent"
            assert event.classification == expected
            assert event.circuit_breaker_state in ("closed", "open", "half_open")
            assert event.decision == decision_name(answer.action)
    assert [e.decision for e in events_of(events, "ToolError", flight)] == ["retry"]
    assert [e.decision for e in events_of(events, "ToolError", hotel)] == ["escalate"]
    assert events_of(events, "ToolError", weather)[-1].circuit_breaker_state == "open"
    assert events_of(events, "CircuitOpened", weather)
    assert events_of(events, "RetrySucceeded", flight), "the outcome: success"

    assert all(e.turn_id == turn for e in events)
    sequences = [e.sequence for e in events]
    assert sequences == sorted(sequences) and len(set(sequences)) == len(sequences)
    stamps = [parse_rfc3339(e.timestamp) for e in events]
    assert stamps == sorted(stamps)
    assert flight in trace.summary.completed
    assert hotel in trace.summary.failed and weather in trace.summary.failed
