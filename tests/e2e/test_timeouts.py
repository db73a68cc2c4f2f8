"""003 section 4: per-tool and per-turn timeouts.

flight_search's manifest sets its per-tool timeout to 30000 ms while the
defaults say 20000 ms, so a reported 30000 is visibly the tool's own limit.
Where a scenario waits (4.1, 4.2) it runs scaled down: a 300 ms tool
timeout, a 1500 ms turn timeout."""
import threading
import time
from datetime import datetime, timezone

import pytest

from rdtest import (admit, classify, decide, err, events_of, expect_action,
                    parse_rfc3339, pb, record, tool_timeout, turn_trace, unique)

FLIGHT = {"id": "flight_search", "timeout_ms": 30000}
SCALED = {"id": "flight_search_scaled", "timeout_ms": 300}


@pytest.fixture(scope="module")
def stub(module_launcher):
    return module_launcher.start(defaults={"timeout_ms": 20000}, tools=[FLIGHT, SCALED]).stub


def run_with_timeout(timeout_ms, runs_for_s=5.0):
    """Runs a fake tool that would take runs_for_s and stops it at the hard
    timeout; returns (finished, seconds until the executor stopped it)."""
    stop = threading.Event()
    finished = threading.Event()

    def tool():
        if not stop.wait(runs_for_s):
            finished.set()

    started = time.perf_counter()
    worker = threading.Thread(target=tool)
    worker.start()
    worker.join(timeout_ms / 1000.0)
    stop.set()  # terminate it: the hard stop
    stopped_after = time.perf_counter() - started
    worker.join()
    return finished.is_set(), stopped_after


def test_4_1_per_tool_timeout_terminates_tool(stub):
    """4.1: flight_search has a 30 s timeout; the executor is told that
    limit and terminates the tool when it is reached; the error "Tool
    timeout after 30s" is transient and retried with backoff. The waiting
    part runs on a tool configured with 300 ms."""
    assert admit(stub, "flight_search").timeout_ms == 30000
    assert admit(stub, unique("other_tool")).timeout_ms == 20000

    go = admit(stub, "flight_search_scaled")
    expect_action(go, pb.ACTION_PROCEED)
    assert go.timeout_ms == 300
    finished, stopped_after = run_with_timeout(go.timeout_ms)
    assert not finished
    assert 0.3 <= stopped_after < 0.4, f"terminated after {stopped_after * 1000:.0f} ms"

    resp = decide(stub, "flight_search_scaled",
                  err("Tool timeout after 0.3s", kind=pb.ERROR_KIND_TIMEOUT), attempt=1,
                  elapsed_ms=int(stopped_after * 1000))
    assert resp.classification.retryability == pb.RETRYABILITY_TRANSIENT
    expect_action(resp, pb.ACTION_RETRY)
    assert resp.delay_ms > 0
    assert resp.timeout_ms == 300, "the retry runs under the same hard timeout"
    timeouts = events_of(resp.trace, "ToolTimeout", "flight_search_scaled")
    assert len(timeouts) == 1 and timeouts[0].timeout_ms == 300


def assert_partial_summary(summary):
    assert list(summary.completed) == ["flight_search"], summary
    assert sorted(summary.timed_out) == ["activity_search", "hotel_search"], summary
    assert "hotel_search" not in summary.completed
    assert summary.partial_result in (
        "Completed flight search, but hotel search and activity search timed out",
        "Completed flight search, but activity search and hotel search timed out",
    ), summary.partial_result
    assert not summary.turn_failed, "flight_search ran, so the turn did not fail"


def test_4_2_per_turn_timeout_collects_partial_results(launcher):
    """4.2 with the executor's own turn budget (turn_remaining_ms): flight
    search completed, hotel and activity search still running when the
    300 s budget is gone -> PARTIAL for them; the turn keeps flight search's
    result; "Completed flight search, but hotel search ... timed out"."""
    stub = launcher.start().stub
    turn = unique("turn")
    for tool in ("flight_search", "hotel_search", "activity_search"):
        expect_action(admit(stub, tool, turn_id=turn, turn_remaining_ms=300000),
                      pb.ACTION_PROCEED)
    record(stub, "flight_search", success=True, latency_ms=50000, turn_id=turn)

    for tool in ("hotel_search", "activity_search"):
        resp = admit(stub, tool, turn_id=turn, turn_remaining_ms=0)
        expect_action(resp, pb.ACTION_PARTIAL)
        assert events_of(resp.trace, "TurnTimeout"), resp.trace

    trace = turn_trace(stub, turn)
    assert_partial_summary(trace.summary)


def test_4_2_per_turn_timeout_from_configured_turn_clock(launcher):
    """4.2 with the service's own turn clock (turn.timeout_ms 1500, scaled
    from 300 s): after the deadline the still-running tools' reports get
    PARTIAL instead of a retry, and the summary keeps flight search."""
    stub = launcher.start(turn_timeout_ms=1500).stub
    turn = unique("turn")
    started = time.monotonic()
    for tool in ("flight_search", "hotel_search", "activity_search"):
        expect_action(admit(stub, tool, turn_id=turn), pb.ACTION_PROCEED)
    time.sleep(0.05)
    record(stub, "flight_search", success=True, latency_ms=50, turn_id=turn)

    time.sleep(max(0.0, 1.6 - (time.monotonic() - started)))
    for tool in ("hotel_search", "activity_search"):
        resp = decide(stub, tool, err("interrupted at the turn deadline",
                                      kind=pb.ERROR_KIND_TIMEOUT), attempt=1, turn_id=turn,
                      elapsed_ms=1600)
        expect_action(resp, pb.ACTION_PARTIAL)
    assert_partial_summary(turn_trace(stub, turn).summary)


def test_4_3_timeout_treated_as_transient(stub):
    """4.3: flight_search exceeds its timeout; the timeout error is
    classified Transient, retry: yes (a timeout is temporary)."""
    for error in (tool_timeout(), err("Tool timeout after 30s")):
        c = classify(stub, "flight_search", error)
        assert c.retryability == pb.RETRYABILITY_TRANSIENT, (error, c)
    c = classify(stub, "flight_search", tool_timeout())
    assert c.kind == pb.ERROR_KIND_TIMEOUT and c.executed
    resp = decide(stub, "flight_search", tool_timeout(), attempt=1)
    expect_action(resp, pb.ACTION_RETRY)


def assert_timeout_event(event, turn):
    assert event.tool_id == "flight_search"
    assert event.timeout_ms == 30000
    assert event.turn_id == turn
    stamp = parse_rfc3339(event.timestamp)
    drift = abs((stamp - datetime.now(timezone.utc)).total_seconds())
    assert drift < 10, f"timestamp {event.timestamp} is {drift:.1f}s from now"


def test_4_4_timeouts_recorded_in_turn_trace(stub):
    """4.4: the turn trace holds {event_type: "ToolTimeout", tool_id:
    "flight_search", timeout_ms: 30000, timestamp: RFC 3339}."""
    turn = unique("turn")
    decide(stub, "flight_search", tool_timeout(), attempt=1, turn_id=turn)
    events = turn_trace(stub, turn).events
    timeouts = events_of(events, "ToolTimeout")
    assert len(timeouts) == 1, events
    assert_timeout_event(timeouts[0], turn)


def test_4_4_timeout_reported_by_record_outcome_is_traced(stub):
    """4.4 when the timeout is reported through RecordOutcome: the same
    ToolTimeout entry appears in the turn trace."""
    turn = unique("turn")
    record(stub, "flight_search", success=False, error=tool_timeout(), turn_id=turn)
    timeouts = events_of(turn_trace(stub, turn).events, "ToolTimeout")
    assert len(timeouts) == 1
    assert_timeout_event(timeouts[0], turn)
    # A success later in the turn clears it (last decisive event wins).
    record(stub, "flight_search", success=True, attempt=2, turn_id=turn)
    summary = turn_trace(stub, turn).summary
    assert list(summary.completed) == ["flight_search"] and not summary.timed_out
