"""Fleet features across replicas: three recoveryd sharing one Redis.
A retry budget, a failure-rate window and a quorum of executors are
counted once for the whole cluster, whichever replica each call reaches
(docs/FLEET.md)."""
from __future__ import annotations

import threading

import pytest

from cluster_support import cluster_env, settled_breakers  # noqa: F401  (fixture)
from rdtest import (pb, breaker, decide, expect_action, expect_state, network_timeout,
                    record, unique)

BUDGET_MIN = 4


@pytest.fixture
def fleet(cluster_env):  # noqa: F811
    topo = cluster_env.redis()
    budget_tool, rate_tool = unique("budget"), unique("rate")
    return cluster_env.recoveryd(
        topo.store_config(key_prefix=unique("fleet") + ":", command_timeout_ms=200),
        defaults={
            "retry_policy": {"max_attempts": 100, "max_total_time_ms": 3600000},
            "circuit_breaker": {"failure_threshold": 3,
                                "quorum": {"min_executors": 2, "window_ms": 60000}}},
        tools=[
            {"id": budget_tool, "circuit_breaker": {"failure_threshold": 10000},
             "retry_budget": {"enabled": True, "budget_percent": 0,
                              "min_retries_per_window": BUDGET_MIN, "window_ms": 60000}},
            {"id": rate_tool,
             "circuit_breaker": {"mode": "failure_rate", "failure_rate_threshold": 50,
                                 "minimum_calls": 6, "window_ms": 60000}},
        ]), budget_tool, rate_tool


def test_retry_budget_is_shared_by_every_replica(fleet):
    cluster, tool, _ = fleet
    stubs = cluster.stubs
    actions, lock = [], threading.Lock()

    def caller(i):
        for _ in range(4):
            d = decide(stubs[i % len(stubs)], tool, network_timeout(), attempt=1,
                       executor_id=f"exec-{i}")
            with lock:
                actions.append(d)

    threads = [threading.Thread(target=caller, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    retries = [d for d in actions if d.action == pb.ACTION_RETRY]
    gave_up = [d for d in actions if d.action == pb.ACTION_GIVE_UP]
    assert len(retries) == BUDGET_MIN, [d.reason for d in actions]
    assert len(gave_up) == len(actions) - BUDGET_MIN
    assert all(d.reason.startswith(f"retry budget exhausted ({BUDGET_MIN} retries / ")
               for d in gave_up), gave_up[0].reason


def test_quorum_counts_executors_across_replicas(fleet):
    cluster, _, _ = fleet
    stubs = cluster.stubs
    tool = unique("quorum")
    for i in range(9):  # one executor, every replica
        expect_action(decide(stubs[i % 3], tool, network_timeout(), attempt=1,
                             executor_id="sick"), pb.ACTION_RETRY)
    for state in settled_breakers(stubs, tool):
        expect_state(state, pb.BREAKER_STATUS_CLOSED)
        assert state.consecutive_failures == 9
    d = decide(stubs[1], tool, network_timeout(), attempt=1, executor_id="second")
    expect_action(d, pb.ACTION_FAIL_FAST)
    for state in settled_breakers(stubs, tool):  # the others learn it by pub/sub
        expect_state(state, pb.BREAKER_STATUS_OPEN)


def test_failure_rate_window_is_shared(fleet):
    cluster, _, tool = fleet
    stubs = cluster.stubs
    for i in range(3):
        record(stubs[i], tool, success=True)
    for i in range(2):
        record(stubs[i], tool, success=False, error=network_timeout(), executor_id=f"e{i}")
    expect_state(breaker(stubs[2], tool), pb.BREAKER_STATUS_CLOSED)  # 5 calls < 6
    r = record(stubs[2], tool, success=False, error=network_timeout(), executor_id="e2")
    expect_state(r.breaker, pb.BREAKER_STATUS_OPEN)  # 3 of 6 across three replicas
    for state in settled_breakers(stubs, tool):  # the others learn it by pub/sub
        expect_state(state, pb.BREAKER_STATUS_OPEN)
