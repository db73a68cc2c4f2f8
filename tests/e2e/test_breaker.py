"""003 section 3: the per-tool circuit breaker, driven through Decide and
RecordOutcome and observed through GetBreakerState and the turn trace.

The breaker's open timeout is 1000 ms here instead of 30000 ms (issue 3
allows short configured timeouts where a scenario waits 30 s); the
scenario's t=15s becomes t=500ms and t=30s becomes t=1000ms."""
import time

import pytest

from rdtest import (admit, auth_failure, breaker, connection_reset, decide, events_of,
                    expect_action, expect_state, invalid_input, network_timeout, not_found,
                    now_ms, pb, rate_limit, record, turn_trace, unique)

OPEN_TIMEOUT_MS = 1000


@pytest.fixture(scope="module")
def stub(module_launcher):
    return module_launcher.start(
        defaults={"circuit_breaker": {"timeout_ms": OPEN_TIMEOUT_MS}}).stub


def open_breaker(stub, tool, turn_id=""):
    """Five transient failures of one call (attempts 1-5): the default
    threshold opens the breaker on the fifth."""
    for attempt in range(1, 6):
        decide(stub, tool, network_timeout(), attempt=attempt, turn_id=turn_id)
    state = breaker(stub, tool)
    expect_state(state, pb.BREAKER_STATUS_OPEN)
    return state


def sleep_until_ms(unix_ms):
    remaining = unix_ms / 1000.0 - time.time()
    if remaining > 0:
        time.sleep(remaining)


def wait_for_half_open(stub, tool, opened_at_ms):
    """Polls GetBreakerState every few ms; returns the unix ms at which
    HALF_OPEN was first seen (midpoint of that call)."""
    deadline = opened_at_ms + OPEN_TIMEOUT_MS + 1000
    while now_ms() < deadline:
        before = time.time() * 1000
        state = breaker(stub, tool)
        after = time.time() * 1000
        if state.state == pb.BREAKER_STATUS_HALF_OPEN:
            return (before + after) / 2
        expect_state(state, pb.BREAKER_STATUS_OPEN)
        assert after < opened_at_ms + OPEN_TIMEOUT_MS + 100, \
            f"still OPEN {after - opened_at_ms:.0f} ms after opening"
        time.sleep(0.003)
    pytest.fail(f"{tool} never became HALF_OPEN")


def test_3_1_circuit_opens_after_n_failures(stub):
    """3.1: threshold 5, circuit CLOSED. Failures 1-4: stays CLOSED;
    failure 5: OPEN. Attempt 6 returns an error immediately (no retry). The
    turn trace records "Circuit breaker opened for flight_search"."""
    tool, turn = unique("flight_search"), unique("turn")
    for attempt in range(1, 5):
        resp = decide(stub, tool, network_timeout(), attempt=attempt, turn_id=turn)
        expect_action(resp, pb.ACTION_RETRY)
        state = breaker(stub, tool)
        expect_state(state, pb.BREAKER_STATUS_CLOSED)
        assert state.consecutive_failures == attempt
        assert state.failure_threshold == 5
    resp = decide(stub, tool, network_timeout(), attempt=5, turn_id=turn)
    expect_state(resp.breaker, pb.BREAKER_STATUS_OPEN)
    assert resp.action != pb.ACTION_RETRY
    expect_state(breaker(stub, tool), pb.BREAKER_STATUS_OPEN)

    sixth = admit(stub, tool, turn_id=turn)
    expect_action(sixth, pb.ACTION_FAIL_FAST)
    assert sixth.delay_ms == 0 and not sixth.permit_id

    opened = events_of(turn_trace(stub, turn).events, "CircuitOpened", tool)
    assert [e.detail for e in opened] == [f"Circuit breaker opened for {tool}"]


def test_3_1_failures_reported_by_record_outcome_count_too(stub):
    """3.1 when the executor reports failures through RecordOutcome (no
    decision wanted): the fifth transient failure opens the breaker."""
    tool = unique("flight_search")
    for i in range(1, 6):
        resp = record(stub, tool, success=False, error=rate_limit(), attempt=1)
        expected = pb.BREAKER_STATUS_OPEN if i == 5 else pb.BREAKER_STATUS_CLOSED
        expect_state(resp.breaker, expected)
    expect_action(admit(stub, tool), pb.ACTION_FAIL_FAST)


def test_3_2_circuit_half_opens_after_timeout(stub):
    """3.2: OPEN at t=0 and at t=timeout/2 (errors returned immediately);
    HALF_OPEN at t=timeout ±100 ms by state query; exactly one retry allowed
    (later requests blocked until it completes); it succeeds -> CLOSED
    within 50 ms."""
    tool = unique("flight_search")
    state = open_breaker(stub, tool)
    t0 = state.opened_at_ms
    assert state.open_until_ms == t0 + OPEN_TIMEOUT_MS
    assert abs(now_ms() - t0) < 1000, "opened_at_ms is unix ms of the opening"

    expect_action(admit(stub, tool), pb.ACTION_FAIL_FAST)           # t = 0
    sleep_until_ms(t0 + OPEN_TIMEOUT_MS // 2)                        # t = half
    expect_state(breaker(stub, tool), pb.BREAKER_STATUS_OPEN)
    expect_action(admit(stub, tool), pb.ACTION_FAIL_FAST)

    seen = wait_for_half_open(stub, tool, t0)                        # t = timeout
    assert abs(seen - (t0 + OPEN_TIMEOUT_MS)) <= 100, \
        f"HALF_OPEN seen at t={seen - t0:.0f} ms, expected {OPEN_TIMEOUT_MS}±100"

    probe = admit(stub, tool)
    expect_action(probe, pb.ACTION_PROCEED)
    assert probe.permit_id, "the half-open retry carries a probe permit"
    for _ in range(3):
        other = admit(stub, tool)
        expect_action(other, pb.ACTION_FAIL_FAST)
        assert not other.permit_id
    state = breaker(stub, tool)
    expect_state(state, pb.BREAKER_STATUS_HALF_OPEN)
    assert state.probe_in_flight

    sent = time.perf_counter()
    done = record(stub, tool, success=True, permit_id=probe.permit_id, attempt=1)
    expect_state(done.breaker, pb.BREAKER_STATUS_CLOSED)
    expect_state(breaker(stub, tool), pb.BREAKER_STATUS_CLOSED)
    assert (time.perf_counter() - sent) * 1000 <= 50


def test_3_2_failed_probe_reopens_and_restarts_timer(stub):
    """3.2, failing branch: the half-open retry fails -> OPEN within 50 ms
    and the timeout timer restarts at that moment (HALF_OPEN again one
    timeout later, not earlier)."""
    tool, turn = unique("flight_search"), unique("turn")
    first = open_breaker(stub, tool)
    wait_for_half_open(stub, tool, first.opened_at_ms)
    probe = admit(stub, tool)
    expect_action(probe, pb.ACTION_PROCEED)
    assert probe.permit_id

    failed_at = now_ms()
    sent = time.perf_counter()
    resp = decide(stub, tool, network_timeout(), attempt=1, permit_id=probe.permit_id,
                  turn_id=turn)
    assert resp.action != pb.ACTION_RETRY
    state = breaker(stub, tool)
    assert (time.perf_counter() - sent) * 1000 <= 50
    expect_state(state, pb.BREAKER_STATUS_OPEN)
    assert state.opens_total == first.opens_total + 1
    assert state.generation > first.generation
    assert abs(state.opened_at_ms - failed_at) <= 50, "timer restarted at the failure"
    assert state.open_until_ms == state.opened_at_ms + OPEN_TIMEOUT_MS
    assert events_of(turn_trace(stub, turn).events, "CircuitOpened", tool)

    sleep_until_ms(state.opened_at_ms + OPEN_TIMEOUT_MS // 2)
    expect_state(breaker(stub, tool), pb.BREAKER_STATUS_OPEN)
    seen = wait_for_half_open(stub, tool, state.opened_at_ms)
    assert abs(seen - (state.opened_at_ms + OPEN_TIMEOUT_MS)) <= 100


def test_3_3_circuit_closes_after_success_in_half_open(stub):
    """3.3: HALF_OPEN, the one retry succeeds -> CLOSED, failure counter 0,
    normal operation resumes (admission without a permit, failures counted
    from zero and retried again)."""
    tool, turn = unique("flight_search"), unique("turn")
    state = open_breaker(stub, tool, turn_id=turn)
    wait_for_half_open(stub, tool, state.opened_at_ms)
    probe = admit(stub, tool, turn_id=turn)
    expect_action(probe, pb.ACTION_PROCEED)
    record(stub, tool, success=True, permit_id=probe.permit_id, attempt=1, turn_id=turn)

    state = breaker(stub, tool)
    expect_state(state, pb.BREAKER_STATUS_CLOSED)
    assert state.consecutive_failures == 0
    assert not state.probe_in_flight
    normal = admit(stub, tool)
    expect_action(normal, pb.ACTION_PROCEED)
    assert not normal.permit_id
    retry = decide(stub, tool, rate_limit(), attempt=1)
    expect_action(retry, pb.ACTION_RETRY)
    assert breaker(stub, tool).consecutive_failures == 1

    closed = events_of(turn_trace(stub, turn).events, "CircuitClosed", tool)
    assert [e.detail for e in closed] == [f"Circuit breaker closed for {tool}"]


def test_3_4_permanent_errors_dont_increment_counter(stub):
    """3.4: threshold 5, CLOSED; five permanent errors (invalid input, auth
    failure, not found, invalid input, auth failure) -> still CLOSED,
    failure counter 0 (permanent errors don't indicate service issues)."""
    tool = unique("flight_search")
    errors = [invalid_input, auth_failure, not_found, invalid_input, auth_failure]
    for attempt, make in enumerate(errors, start=1):
        resp = decide(stub, tool, make(), attempt=1)
        assert resp.classification.retryability == pb.RETRYABILITY_PERMANENT, \
            f"error {attempt} ({make().message!r}) was not classified permanent"
        expect_action(resp, pb.ACTION_ESCALATE)
        state = breaker(stub, tool)
        expect_state(state, pb.BREAKER_STATUS_CLOSED)
        assert state.consecutive_failures == 0
    assert breaker(stub, tool).opens_total == 0


def test_3_5_transient_errors_increment_counter(stub):
    """3.5: threshold 5, CLOSED; transient errors timeout, rate limit,
    connection reset, timeout, rate limit -> after the fifth the circuit is
    OPEN with failure counter 5."""
    tool = unique("flight_search")
    errors = [network_timeout, rate_limit, connection_reset, network_timeout, rate_limit]
    for attempt, make in enumerate(errors, start=1):
        resp = decide(stub, tool, make(), attempt=attempt)
        assert resp.classification.retryability == pb.RETRYABILITY_TRANSIENT, \
            f"error {attempt} ({make().message!r}) was not classified transient"
        if attempt < 5:
            assert breaker(stub, tool).consecutive_failures == attempt
    state = breaker(stub, tool)
    expect_state(state, pb.BREAKER_STATUS_OPEN)
    assert state.consecutive_failures == 5
    assert state.opens_total == 1
