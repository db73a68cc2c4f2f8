"""The retry-time rule (DecideRequest.elapsed_ms, retry_policy.max_total_time_ms)
under the default policy: 2 s of retry time, 30 s tool timeout.

max_total_time_ms bounds the time since the first attempt failed, without
the attempts that ended in a timeout. Attempt 1 and a timed-out attempt are
bounded by the tool timeout, max_attempts and the turn deadline instead, so
a tool that hits its 30 s timeout is retried (000 section 4.1/4.3, 003 4.1,
4.3 and 7.3) while fast failures still stop at 2 s (003 2.4)."""
import sys
import time
from pathlib import Path

import pytest

from rdtest import decide, err, events_of, expect_action, network_timeout, pb, tool_timeout, unique

STUBS_PYTHON = Path(__file__).resolve().parents[2] / "stubs" / "python" / "src"


@pytest.fixture(scope="module")
def stub(module_launcher):
    return module_launcher.start().stub


def test_readme_example_timeout_after_30s_is_retried(stub):
    """The README's call: attempt 1 ran 30 s into "Connection timeout after
    30s" -> RETRY after ~100 ms under the same 30 s hard timeout."""
    d = stub.Decide(pb.DecideRequest(
        tool_id="flight_search", attempt=1, elapsed_ms=30000, turn_id=unique("turn"),
        error=pb.ToolError(message="Connection timeout after 30s")), timeout=10)
    expect_action(d, pb.ACTION_RETRY)
    assert 90 <= d.delay_ms <= 110, d.delay_ms
    assert d.timeout_ms == 30000


def test_4_1_tool_timeout_at_30s_is_retried_with_defaults(stub):
    """4.1/4.3: the tool is terminated at its 30 s timeout; "Tool timeout
    after 30s" is transient and retried with backoff, although 30 s is far
    more than the 2 s retry-time budget."""
    resp = decide(stub, unique("flight_search"), tool_timeout(30), attempt=1, elapsed_ms=30000)
    expect_action(resp, pb.ACTION_RETRY)
    assert resp.classification.retryability == pb.RETRYABILITY_TRANSIENT


def test_7_3_timeout_during_retry_with_default_policy(stub):
    """7.3 under the default policy (no longer max_total_time_ms): attempt 1
    fails at t=25 s -> retry; attempt 2 times out at t=55 s -> transient,
    retry scheduled because one is available and fits before the 60 s turn
    deadline."""
    tool, turn = unique("flight_search"), unique("turn")
    first = decide(stub, tool, err("Connection reset by peer", code="ECONNRESET"),
                   attempt=1, elapsed_ms=25000, turn_id=turn, turn_remaining_ms=35000)
    expect_action(first, pb.ACTION_RETRY)
    second = decide(stub, tool, tool_timeout(30), attempt=2, elapsed_ms=55000,
                    turn_id=turn, turn_remaining_ms=5000)
    expect_action(second, pb.ACTION_RETRY)
    assert second.delay_ms < 5000
    assert len(events_of(second.trace, "ToolTimeout", tool)) == 1


def test_timed_out_attempt_still_bounded_by_turn_deadline(stub):
    """The turn deadline, not the retry budget, bounds a timed-out attempt:
    a retry whose delay ends after the deadline is not scheduled."""
    resp = decide(stub, unique("flight_search"), tool_timeout(30), attempt=2,
                  elapsed_ms=55000, turn_id=unique("turn"), turn_remaining_ms=50)
    expect_action(resp, pb.ACTION_PARTIAL)


def test_timed_out_attempts_still_bounded_by_max_attempts(stub):
    resp = decide(stub, unique("flight_search"), tool_timeout(30), attempt=5, elapsed_ms=0)
    expect_action(resp, pb.ACTION_GIVE_UP)
    assert "max attempts" in resp.reason


def test_2_4_fast_failures_still_stop_at_2000_ms(stub):
    """2.4 with elapsed_ms as the rule defines it (retry time since the
    first failure): attempts of 600 ms and delays of ~100/200/400 ms put
    the failures of attempts 2, 3, 4 at ~700, ~1500, ~2500 ms of retry
    time; attempt 5 is never made."""
    tool = unique("flight_search")
    retry_time = 0
    for attempt in (1, 2, 3):
        resp = decide(stub, tool, network_timeout() if attempt == 1 else
                      err("Connection reset by peer", code="ECONNRESET"),
                      attempt=attempt, elapsed_ms=retry_time)
        expect_action(resp, pb.ACTION_RETRY)
        retry_time += resp.delay_ms + 600
    resp = decide(stub, tool, err("Connection reset by peer", code="ECONNRESET"),
                  attempt=4, elapsed_ms=retry_time)
    expect_action(resp, pb.ACTION_GIVE_UP)
    assert "max total retry time (2000 ms)" in resp.reason


def test_python_helper_retries_a_tool_that_times_out(launcher):
    """The Python helper's run_tool sends the retry time the rule expects:
    a tool whose timeout (600 ms) is longer than its retry budget (500 ms)
    times out twice and succeeds on attempt 3 (the budget is spent only by
    the ~100 + ~200 ms of backoff, not by the timed-out attempts)."""
    sys.path.insert(0, str(STUBS_PYTHON))
    try:
        from recoveryd_client import SUCCEEDED, RecoveryClient
    finally:
        sys.path.remove(str(STUBS_PYTHON))
    slow = {"id": "slow_search", "timeout_ms": 600,
            "retry_policy": {"max_total_time_ms": 500}}
    server = launcher.start(tools=[slow])
    calls = []

    def tool(timeout_s):
        calls.append(timeout_s)
        if len(calls) < 3:
            time.sleep(timeout_s + 0.3)
        return "flights"

    client = RecoveryClient(server.address, rpc_timeout=5.0)
    res = client.run_tool("slow_search", {"slow_search": tool}, turn_id=unique("turn"))
    assert res.status == SUCCEEDED, (res.status, res.reason, res.decisions)
    assert res.value == "flights" and len(calls) == 3
    assert [d.action for d in res.decisions] == [pb.ACTION_PROCEED, pb.ACTION_RETRY,
                                                 pb.ACTION_RETRY]
