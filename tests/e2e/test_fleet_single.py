"""Fleet features over real gRPC on one recoveryd (memory store): retry
budgets, the failure-rate breaker with slow calls, quorum tripping,
learning from outcomes and live ranking of alternatives (docs/FLEET.md)."""
from __future__ import annotations

import yaml

from rdtest import (pb, admit, breaker, classify, decide, err, events_of, expect_action,
                    expect_state, network_timeout, record, unique)

NO_BREAKER = {"failure_threshold": 10000}
LONG_RETRIES = {"max_attempts": 100, "max_total_time_ms": 3600000}


def test_retry_budget_exhausted_gives_up_with_reason_and_trace(launcher):
    server = launcher.start(defaults={
        "circuit_breaker": NO_BREAKER,
        "retry_budget": {"enabled": True, "budget_percent": 10,
                         "min_retries_per_window": 3, "window_ms": 60000}})
    stub = server.stub
    tool, turn = unique("budget"), unique("turn")
    for _ in range(3):
        expect_action(decide(stub, tool, network_timeout(), attempt=1, turn_id=turn), pb.ACTION_RETRY)
    d = decide(stub, tool, network_timeout(), attempt=1, turn_id=turn)
    expect_action(d, pb.ACTION_GIVE_UP)
    assert d.reason == "retry budget exhausted (3 retries / 4 requests in the last 60000 ms)"
    gave_up = events_of(d.trace, "GaveUp")
    assert gave_up and "retry budget exhausted" in gave_up[0].detail
    # admissions are requests: 40 of them lift the allowance to 10 % of 44
    for _ in range(40):
        expect_action(admit(stub, tool), pb.ACTION_PROCEED)
    expect_action(decide(stub, tool, network_timeout(), attempt=1), pb.ACTION_RETRY)


def test_budget_off_by_default(launcher):
    server = launcher.start(defaults={"circuit_breaker": NO_BREAKER})
    tool = unique("nobudget")
    for _ in range(30):
        expect_action(decide(server.stub, tool, network_timeout(), attempt=1), pb.ACTION_RETRY)


def test_failure_rate_breaker_opens_on_slow_calls(launcher):
    tool = unique("slowtool")
    server = launcher.start(tools=[{
        "id": tool,
        "circuit_breaker": {"mode": "failure_rate", "failure_rate_threshold": 50,
                            "minimum_calls": 4, "window_ms": 60000, "slow_call_ms": 1000,
                            "slow_call_rate_threshold": 50}}])
    stub = server.stub
    record(stub, tool, success=True, latency_ms=10)
    record(stub, tool, success=True, latency_ms=1500)
    record(stub, tool, success=True, latency_ms=20)
    expect_state(breaker(stub, tool), pb.BREAKER_STATUS_CLOSED)
    r = record(stub, tool, success=True, latency_ms=2500)  # 2 of 4 slow
    expect_state(r.breaker, pb.BREAKER_STATUS_OPEN)
    expect_action(admit(stub, tool), pb.ACTION_FAIL_FAST)


def test_failure_rate_breaker_ignores_a_streak_below_the_rate(launcher):
    tool = unique("ratetool")
    server = launcher.start(tools=[{
        "id": tool, "retry_policy": LONG_RETRIES,
        "circuit_breaker": {"mode": "failure_rate", "failure_threshold": 2,
                            "failure_rate_threshold": 60, "minimum_calls": 10}}])
    stub = server.stub
    for _ in range(10):
        record(stub, tool, success=True)
    for _ in range(5):  # a streak of 5 > failure_threshold, but 5 of 15 = 33 %
        expect_action(decide(stub, tool, network_timeout(), attempt=1), pb.ACTION_RETRY)
    expect_state(breaker(stub, tool), pb.BREAKER_STATUS_CLOSED)
    for _ in range(10):  # 15 of 25 = 60 %
        d = decide(stub, tool, network_timeout(), attempt=1)
    expect_action(d, pb.ACTION_FAIL_FAST)


def test_quorum_one_executor_cannot_open_the_breaker(launcher):
    server = launcher.start(defaults={
        "retry_policy": LONG_RETRIES,
        "circuit_breaker": {"failure_threshold": 3,
                            "quorum": {"min_executors": 2, "window_ms": 60000}}})
    stub = server.stub
    tool = unique("quorum")
    for _ in range(8):
        d = decide(stub, tool, network_timeout(), attempt=1, executor_id="sick-host")
        expect_action(d, pb.ACTION_RETRY)
    assert "breaker held closed" in d.reason
    state = breaker(stub, tool)
    expect_state(state, pb.BREAKER_STATUS_CLOSED)
    assert state.consecutive_failures == 8
    d = decide(stub, tool, network_timeout(), attempt=1, executor_id="other-host")
    expect_action(d, pb.ACTION_FAIL_FAST)
    expect_state(breaker(stub, tool), pb.BREAKER_STATUS_OPEN)


def _with_learning(launcher, **learning):
    path = launcher.config()
    doc = yaml.safe_load(path.read_text())
    doc["learning"] = {"enabled": True, **learning}
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return launcher.start(config=path)


def test_learning_classifies_an_unknown_error_from_retries(launcher):
    server = _with_learning(launcher, min_samples=5)
    stub = server.stub
    tool = unique("learner")
    message = "zorglub subsystem wedged on capacitor {}"
    assert classify(stub, tool, err(message.format(1))).rule_id == "unknown"
    for i in range(5):
        turn = unique("t")
        expect_action(decide(stub, tool, err(message.format(i)), attempt=1, turn_id=turn),
                      pb.ACTION_RETRY)
        record(stub, tool, success=True, attempt=2, turn_id=turn)
    c = classify(stub, tool, err(message.format(42)))
    assert c.rule_id.startswith("learned:"), c
    assert "5 earlier retries" in c.suggestion
    # another tool has its own record
    assert classify(stub, unique("other"), err(message.format(42))).rule_id == "unknown"


def test_learning_outweighs_the_words_tier(launcher):
    """An error only its words decided is followed like an unknown one:
    when its retries keep failing, what they did replaces what the words
    suggested."""
    server = _with_learning(launcher, min_samples=4)
    stub = server.stub
    tool = unique("slowpoke")
    message = "Query took {} ms on port 5001"
    first = classify(stub, tool, err(message.format(1)))
    assert first.decided_by == pb.CLASSIFICATION_TIER_WORDS, first
    assert first.retryability == pb.RETRYABILITY_TRANSIENT, first
    turn = unique("t")
    for attempt in range(1, 6):
        decide(stub, tool, err(message.format(attempt)), attempt=attempt, turn_id=turn)
    c = classify(stub, tool, err(message.format(99)))
    assert c.rule_id.startswith("learned:"), c
    assert c.decided_by == pb.CLASSIFICATION_TIER_LEARNED, c
    assert c.retryability == pb.RETRYABILITY_PERMANENT, c


def test_learning_teaches_permanent_and_decide_escalates(launcher):
    server = _with_learning(launcher, min_samples=4)
    stub = server.stub
    tool = unique("hopeless")
    message = "frobnicator answered qux {}"
    turn = unique("t")
    for attempt in range(1, 6):
        d = decide(stub, tool, err(message.format(attempt)), attempt=attempt, turn_id=turn)
    # the fifth failure ends the run (max attempts; the breaker opens too)
    expect_action(d, pb.ACTION_GIVE_UP, pb.ACTION_FAIL_FAST)
    d = decide(stub, tool, err(message.format(99)), attempt=1, turn_id=unique("t"))
    expect_action(d, pb.ACTION_ESCALATE)
    assert d.classification.rule_id.startswith("learned:")


def test_live_ranking_skips_an_alternative_that_keeps_failing(launcher):
    main, bad, good = unique("main"), unique("alt_bad"), unique("alt_good")
    tools = [{"id": main, "alternatives": [bad, good]}, {"id": bad}, {"id": good}]
    server = launcher.start(tools=tools)
    stub = server.stub
    record(stub, bad, success=True)
    for _ in range(3):
        record(stub, bad, success=False, error=network_timeout())
    d = decide(stub, main, err("invalid request: missing field", http_status=400), attempt=1)
    expect_action(d, pb.ACTION_USE_ALTERNATIVE)
    assert d.alternative_tool_id == good


def test_manifest_ranking_keeps_the_listed_order(launcher):
    main, bad, good = unique("main"), unique("alt_bad"), unique("alt_good")
    tools = [{"id": main, "alternatives": [bad, good], "alternatives_ranking": "manifest"},
             {"id": bad}, {"id": good}]
    server = launcher.start(tools=tools)
    stub = server.stub
    for _ in range(3):
        record(stub, bad, success=False, error=network_timeout())
    d = decide(stub, main, err("invalid request: missing field", http_status=400), attempt=1)
    expect_action(d, pb.ACTION_USE_ALTERNATIVE)
    assert d.alternative_tool_id == bad


def test_bad_fleet_keys_name_file_line_and_key(launcher, recoveryd_binary):
    from rdtest import run_check_config
    path = launcher.config(defaults={"circuit_breaker": {"mode": "sometimes"}})
    rc, out = run_check_config(recoveryd_binary, path)
    assert rc != 0
    assert "defaults.circuit_breaker.mode" in out and "recovery.yaml:" in out, out
