"""003 section 7: edge cases.

7.3 and 7.4 involve tool calls of 25-55 s; the executor reports its own
clock (elapsed_ms, turn_remaining_ms) instead of sleeping, and flight_search's
manifest raises max_total_time_ms to 120 s so that the scenario's
timeouts, not the 2 s default retry-time budget, decide. One variant of 7.4
runs on the service's own (short, 1500 ms) turn clock."""
import time

import pytest

from rdtest import (admit, breaker, decide, err, events_of, expect_action, expect_state,
                    invalid_input, network_timeout, pb, rate_limit, record, tool_timeout,
                    turn_trace, unique)

LONG_CALLS = {"id": "flight_search", "retry_policy": {"max_total_time_ms": 120000}}


@pytest.fixture(scope="module")
def stub(module_launcher):
    return module_launcher.start().stub


def test_7_1_rapid_sequential_failures(stub):
    """7.1: ten rapid transient failures of flight_search. The first ones
    are retried with backoff; the circuit opens after 5 (the fifth failure
    opens it, so it is not retried); failures 6-10 meet an open circuit: no
    retry. Final state OPEN, opened once."""
    tool = unique("flight_search")
    delays, elapsed = [], 0
    for attempt in range(1, 5):
        resp = decide(stub, tool, network_timeout(), attempt=attempt, elapsed_ms=elapsed)
        expect_action(resp, pb.ACTION_RETRY)
        delays.append(resp.delay_ms)
        elapsed += resp.delay_ms
    assert delays == sorted(delays) and delays[0] < delays[-1], f"backoff grows: {delays}"

    fifth = decide(stub, tool, network_timeout(), attempt=5, elapsed_ms=elapsed)
    expect_state(fifth.breaker, pb.BREAKER_STATUS_OPEN)
    expect_action(fifth, pb.ACTION_FAIL_FAST)
    assert events_of(fifth.trace, "CircuitOpened", tool)

    # Failures 6-10: calls already under way report their failure (each its
    # first attempt); the open circuit stops every retry.
    for _ in range(5):
        resp = decide(stub, tool, network_timeout(), attempt=1)
        expect_action(resp, pb.ACTION_FAIL_FAST)
        assert resp.delay_ms == 0
        assert not events_of(resp.trace, "CircuitOpened")
    expect_action(admit(stub, tool), pb.ACTION_FAIL_FAST)
    state = breaker(stub, tool)
    expect_state(state, pb.BREAKER_STATUS_OPEN)
    assert state.opens_total == 1


def test_7_2_mixed_transient_and_permanent_errors(stub):
    """7.2: timeout (transient) -> retried; invalid input (permanent) ->
    escalated, not retried; rate limit (transient) -> retried. Circuit
    counter 1: only transient errors count, and the permanent one ended the
    streak (the service answered)."""
    tool = unique("flight_search")
    first = decide(stub, tool, network_timeout(), attempt=1)
    expect_action(first, pb.ACTION_RETRY)
    second = decide(stub, tool, invalid_input(), attempt=2)
    expect_action(second, pb.ACTION_ESCALATE)
    third = decide(stub, tool, rate_limit(), attempt=1)
    expect_action(third, pb.ACTION_RETRY)
    state = breaker(stub, tool)
    expect_state(state, pb.BREAKER_STATUS_CLOSED)
    assert state.consecutive_failures == 1


def test_7_3_timeout_during_retry(launcher):
    """7.3: per-tool timeout 30 s, per-turn 60 s. Attempt 1 fails at
    t=25 s (transient) -> retry; attempt 2 starts at 25 s and exceeds its
    30 s timeout at t=55 s -> treated as transient, retry scheduled (one is
    available and fits before the turn deadline); the per-turn timeout is
    still active."""
    stub = launcher.start(tools=[LONG_CALLS]).stub
    turn = unique("turn")
    first = decide(stub, "flight_search", err("Connection reset by peer", code="ECONNRESET"),
                   attempt=1, elapsed_ms=25000, turn_id=turn, turn_remaining_ms=35000)
    expect_action(first, pb.ACTION_RETRY)
    assert first.timeout_ms == 30000

    second = decide(stub, "flight_search", tool_timeout(30), attempt=2, elapsed_ms=55000,
                    turn_id=turn, turn_remaining_ms=5000)
    assert second.classification.retryability == pb.RETRYABILITY_TRANSIENT
    expect_action(second, pb.ACTION_RETRY)
    assert second.delay_ms < 5000
    timeouts = events_of(second.trace, "ToolTimeout", "flight_search")
    assert len(timeouts) == 1 and timeouts[0].timeout_ms == 30000

    third = admit(stub, "flight_search", turn_id=turn,
                  turn_remaining_ms=5000 - second.delay_ms)
    expect_action(third, pb.ACTION_PROCEED)
    assert not events_of(turn_trace(stub, turn).events, "TurnTimeout")


def test_7_4_per_turn_timeout_during_retry(launcher):
    """7.4: per-tool 30 s, per-turn 60 s. Attempt 1 fails at t=25 s ->
    retry; attempt 2 starts at 25 s and is interrupted by the turn deadline
    at t=60 s -> collect partial results, do not retry, continue with what
    is available (hotel_search finished earlier)."""
    stub = launcher.start(tools=[LONG_CALLS]).stub
    turn = unique("turn")
    expect_action(admit(stub, "hotel_search", turn_id=turn, turn_remaining_ms=60000),
                  pb.ACTION_PROCEED)
    record(stub, "hotel_search", success=True, latency_ms=8000, turn_id=turn)
    first = decide(stub, "flight_search", network_timeout(), attempt=1, elapsed_ms=25000,
                   turn_id=turn, turn_remaining_ms=35000)
    expect_action(first, pb.ACTION_RETRY)

    interrupted = decide(stub, "flight_search",
                         err("interrupted by the turn deadline", kind=pb.ERROR_KIND_TIMEOUT),
                         attempt=2, elapsed_ms=60000, turn_id=turn, turn_remaining_ms=0)
    expect_action(interrupted, pb.ACTION_PARTIAL)
    assert interrupted.delay_ms == 0
    assert events_of(interrupted.trace, "TurnTimeout")

    summary = turn_trace(stub, turn).summary
    assert list(summary.completed) == ["hotel_search"]
    assert "flight_search" in summary.timed_out, summary
    assert summary.partial_result.startswith("Completed hotel search"), summary.partial_result
    assert "flight search" in summary.partial_result


def test_7_4_no_retry_that_would_end_after_the_turn_deadline(launcher):
    """7.4, the same rule one step earlier: a retry whose backoff delay
    would end after the turn deadline is not scheduled (PARTIAL)."""
    stub = launcher.start(tools=[LONG_CALLS]).stub
    resp = decide(stub, "flight_search", network_timeout(), attempt=1, elapsed_ms=59950,
                  turn_id=unique("turn"), turn_remaining_ms=50)
    expect_action(resp, pb.ACTION_PARTIAL)
    assert resp.delay_ms == 0


def test_7_4_per_turn_timeout_on_service_turn_clock(launcher):
    """7.4 on the service's turn clock (turn.timeout_ms 1500, scaled from
    60 s): a retry is granted while time remains; after the deadline the
    interrupted attempt gets PARTIAL, not another retry."""
    stub = launcher.start(tools=[LONG_CALLS], turn_timeout_ms=1500).stub
    turn = unique("turn")
    started = time.monotonic()
    expect_action(admit(stub, "hotel_search", turn_id=turn), pb.ACTION_PROCEED)
    record(stub, "hotel_search", success=True, turn_id=turn)
    first = decide(stub, "flight_search", network_timeout(), attempt=1, elapsed_ms=10,
                   turn_id=turn)
    expect_action(first, pb.ACTION_RETRY)

    time.sleep(max(0.0, 1.6 - (time.monotonic() - started)))
    second = decide(stub, "flight_search", network_timeout(), attempt=2, elapsed_ms=1600,
                    turn_id=turn)
    expect_action(second, pb.ACTION_PARTIAL)
    summary = turn_trace(stub, turn).summary
    assert list(summary.completed) == ["hotel_search"]
    assert "flight_search" in summary.timed_out
