"""Latency-aware retries (docs/OPERATIONS.md, "Latency-aware retries"):
a tool whose measured p90 does not fit in what is left of the turn is not
retried; the executor is pointed at an alternative whose p90 fits, or told
to keep its partial results. GetBreakerState shows the percentiles. The
distribution is the store's: with Redis, every replica sees the same."""
import pytest

from ops_support import ops_launcher  # noqa: F401
from rdtest import breaker, decide, expect_action, network_timeout, pb, record, unique

LATENCY = {"enabled": True, "window_ms": 60000, "min_samples": 5}


def report(server, tool, latency_ms, times):
    for _ in range(times):
        record(server.stub, tool, success=True, attempt=1, latency_ms=latency_ms)


@pytest.fixture
def server(ops_launcher):
    return ops_launcher.start(tools=[
        {"id": "slow_search", "latency": LATENCY, "alternatives": ["quick_search"]},
        {"id": "quick_search", "latency": LATENCY},
        {"id": "plain_search"},
        {"id": "timed_search", "timeout_ms": 10000,
         "latency": {**LATENCY, "timeout_factor": 2.0, "timeout_min_ms": 50}},
    ])


def test_retry_that_cannot_finish_is_not_offered(server):
    report(server, "slow_search", 3000, 10)
    # No measured alternative yet: keep the partial results.
    d = decide(server.stub, "slow_search", network_timeout(), attempt=1, turn_remaining_ms=2000)
    expect_action(d, pb.ACTION_PARTIAL)
    assert "3200 ms p90 latency > 2000 ms left" in d.reason, d.reason
    # Enough time left: the retry stands.
    d = decide(server.stub, "slow_search", network_timeout(), attempt=1, turn_remaining_ms=9000)
    expect_action(d, pb.ACTION_RETRY)
    # A tool without the setting is retried as before, whatever its latency.
    report(server, "plain_search", 3000, 10)
    d = decide(server.stub, "plain_search", network_timeout(), attempt=1, turn_remaining_ms=2000)
    expect_action(d, pb.ACTION_RETRY)


def test_alternative_whose_p90_fits(server):
    report(server, "slow_search", 3000, 10)
    report(server, "quick_search", 150, 10)
    d = decide(server.stub, "slow_search", network_timeout(), attempt=1, turn_remaining_ms=2000)
    expect_action(d, pb.ACTION_USE_ALTERNATIVE)
    assert d.alternative_tool_id == "quick_search"


def test_breaker_state_shows_percentiles(server):
    tool = "quick_search"
    for ms in range(10, 1001, 10):
        record(server.stub, tool, success=True, attempt=1, latency_ms=ms)
    b = breaker(server.stub, tool)
    assert (b.latency_samples, b.latency_p50_ms, b.latency_p90_ms, b.latency_p99_ms) == \
        (100, 500, 1000, 1000), b
    quiet = breaker(server.stub, "plain_search")
    assert quiet.latency_samples == 0 and quiet.latency_p90_ms == 0
    # The same distribution in the listing of every tool.
    every = server.stub.GetBreakerState(pb.GetBreakerStateRequest(), timeout=10).breakers
    assert [x.latency_p90_ms for x in every if x.tool_id == tool] == [1000]


def test_timeout_follows_the_measured_p99(server):
    assert decide(server.stub, "timed_search").timeout_ms == 10000  # no samples yet
    report(server, "timed_search", 700, 10)  # p99: 800 (bucket (640, 800])
    assert decide(server.stub, "timed_search").timeout_ms == 1600
    retry = decide(server.stub, "timed_search", network_timeout(), attempt=1)
    expect_action(retry, pb.ACTION_RETRY)
    assert retry.timeout_ms == 1600
    report(server, "timed_search", 60000, 100)  # slower than the manifest allows
    assert decide(server.stub, "timed_search").timeout_ms == 10000


def test_bad_latency_setting_is_a_file_line_error(ops_launcher, recoveryd_binary):
    import re
    from rdtest import run_check_config
    config = ops_launcher.config(tools=[{"id": "odd", "latency": {"min_samples": 0}}])
    code, out = run_check_config(recoveryd_binary, config)
    assert code != 0
    assert re.search(r"odd\.yaml:\d+: tool\.latency\.min_samples", out), out
