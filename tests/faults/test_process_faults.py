"""Faults of recoveryd's own processes under load: SIGTERM (graceful
shutdown), SIGKILL of one of three replicas sharing Redis, and
configuration reloads (SIGHUP) while calls run.

The promises (docs/OPERATIONS.md, docs/RELIABILITY.md): SIGTERM fails no
call the server had taken and exits 0 within the grace period; a dead
replica costs its own callers only, the others fail nothing and the shared
breaker state survives it; a reload, valid or not, fails no call. Each
test prints its figures."""
import signal
import threading
import time

import grpc
import pytest
import yaml

from cluster_support import (Load, RecoverydCluster, cluster_env, timed_call,  # noqa: F401
                             wait_until)
from faults_support import failed, figures_of, in_flight_at, ms, redis_store, window
from rdtest import breaker, decide, network_timeout, pb, pb_grpc, state_name, unique

MEMORY = {"backend": "memory"}
# A call the server had not taken yet when it stopped accepting may be
# refused; nothing else is acceptable during a graceful shutdown.
REFUSED = {"UNAVAILABLE", "CANCELLED"}


@pytest.mark.parametrize("drain_ms", [300, 0])
def test_sigterm_under_load(cluster_env, figures, drain_ms):
    """With a drain delay (deploy/k8s uses 5 s) no call in flight at the
    signal fails. Without one (drain_delay_ms: 0, the shipped default), the
    gRPC core cancels the calls that reached the server in the instant it
    stopped accepting: they are counted, and must be CANCELLED or
    UNAVAILABLE, never a broken answer."""
    cluster = cluster_env.recoveryd(MEMORY, n=1, server={"shutdown_grace_ms": 5000,
                                                         "drain_delay_ms": drain_ms})
    server = cluster.replicas[0]
    with Load(cluster, threads_per_replica=8, tool_prefix="term") as load:
        time.sleep(1.0)
        t_signal = time.monotonic()
        server.send_signal(signal.SIGTERM)
        rc = server.wait(timeout=15)
        t_exit = time.monotonic()
    samples = load.snapshot()
    in_flight = in_flight_at(samples, t_signal)
    answered_before = [s for s in samples if s.end < t_signal]
    after = window(samples, t_signal, float("inf"))
    unexpected = [s for s in samples if s.code != "OK" and s.code not in REFUSED]
    fig = {
        "drain_delay_ms": drain_ms,
        "calls_sent": len(samples),
        "failed_before_signal": len(failed(answered_before)),
        "in_flight_at_signal": len(in_flight),
        "in_flight_failed": len(failed(in_flight)),
        "in_flight_codes": sorted({s.code for s in in_flight}),
        "answered_ok_after_signal": sum(1 for s in after if s.code == "OK"),
        "refused_after_signal": sum(1 for s in after if s.code in REFUSED),
        "other_errors": len(unexpected),
        "p99_before_ms": figures_of(answered_before)["p99_ms"],
        "exit_code": rc,
        "exit_after_ms": ms(t_exit - t_signal),
    }
    figures.record(f"SIGTERM under load, drain_delay_ms {drain_ms} (1 replica, 8 callers)",
                   **fig)
    assert rc == 0, server.log_text()
    assert in_flight, "no call was in flight at the signal: the test proved nothing"
    assert not failed(answered_before)
    assert not unexpected, unexpected[:3]
    assert fig["exit_after_ms"] < drain_ms + 5000 + 2000
    assert "calls cancelled" not in server.log_text()
    if drain_ms:
        assert not failed(in_flight), f"in-flight calls failed: {failed(in_flight)[:3]}"


def _round_robin_channel(cluster):
    target = "ipv4:" + ",".join(r.address for r in cluster.replicas)
    return grpc.insecure_channel(target, options=[("grpc.lb_policy_name", "round_robin"),
                                                  ("grpc.enable_retries", 0)])


def test_sigkill_of_one_of_three_replicas(cluster_env, figures):
    """Replica 1 dies with SIGKILL (no shutdown at all). Callers of
    replicas 0 and 2 fail nothing; a client balancing over all three loses
    only the calls that were on the dead one and stops failing once its
    channel notices; a breaker opened through replica 1 stays open for the
    others, since its state is in Redis."""
    topo = cluster_env.redis()
    threshold = 3
    cluster = cluster_env.recoveryd(
        redis_store(topo.master.address, "sigkill:"), n=3,
        defaults={"circuit_breaker": {"failure_threshold": threshold, "timeout_ms": 60000}})
    victim = cluster.replicas[1]
    tool = unique("opened_by_victim")
    for attempt in range(1, threshold + 1):
        decide(victim.stub, tool, network_timeout(), attempt=attempt)
    assert state_name(breaker(victim.stub, tool).state) == "BREAKER_STATUS_OPEN"

    rr_channel = _round_robin_channel(cluster)
    rr_stub = pb_grpc.RecoveryServiceStub(rr_channel)
    rr_samples = []
    stop = threading.Event()

    def rr_loop():
        while not stop.is_set():
            t = time.monotonic()
            r = timed_call(rr_stub.Decide, pb.DecideRequest(tool_id="rr_tool"), timeout=5)
            rr_samples.append((t, t + r.latency_s, r.code))

    rr = threading.Thread(target=rr_loop, daemon=True)
    try:
        with Load(cluster, threads_per_replica=2, tool_prefix="kill9") as load:
            rr.start()
            time.sleep(1.0)
            t_kill = time.monotonic()
            victim.proc.kill()
            victim.wait(timeout=10)
            time.sleep(3.0)
            stop.set()
            rr.join(timeout=10)
    finally:
        rr_channel.close()
    samples = load.snapshot()
    survivors = [s for s in samples if s.replica != 1]
    after = window(survivors, t_kill, float("inf"))
    rr_failed_after = [x for x in rr_samples if x[0] >= t_kill and x[2] != "OK"]
    rr_last_failure = max((x[1] for x in rr_failed_after), default=None)
    seen = [state_name(breaker(cluster.replicas[i].stub, tool).state) for i in (0, 2)]
    fig = {
        "calls_sent": len(samples) + len(rr_samples),
        "survivor_calls_after_kill": len(after),
        "survivor_failed": len(failed(survivors)),
        "survivor_p99_before_ms": figures_of(window(survivors, 0, t_kill))["p99_ms"],
        "survivor_p99_after_kill_ms": figures_of(after)["p99_ms"],
        "victim_callers_failed": len(failed([s for s in samples if s.replica == 1])),
        "round_robin_calls": len(rr_samples),
        "round_robin_failed": len(rr_failed_after),
        "round_robin_recovered_after_ms": ms(rr_last_failure - t_kill) if rr_last_failure
                                          else 0.0,
        "breaker_seen_by_survivors": seen,
    }
    figures.record("SIGKILL of replica 1 of 3 (Redis store)", **fig)
    assert not failed(survivors), failed(survivors)[:3]
    assert seen == ["BREAKER_STATUS_OPEN"] * 2, seen
    assert fig["round_robin_recovered_after_ms"] < 3000, fig
    rr_tail = [x for x in rr_samples if x[0] >= t_kill + 2.5]
    assert rr_tail and all(x[2] == "OK" for x in rr_tail), "the balancing client still fails"


def _write_with_max_attempts(config_path, main: dict, value: int):
    main["defaults"]["retry_policy"]["max_attempts"] = value
    config_path.write_text(yaml.safe_dump(main, sort_keys=False))


def _reload_outcomes(server) -> tuple[int, int]:
    """(applied, refused) reloads reported in the server's log so far."""
    lines = server.log_text(1 << 22).splitlines()
    applied = sum(1 for line in lines if "configuration reloaded" in line)
    refused = sum(1 for line in lines if "reload failed" in line and '"error"' in line)
    return applied, refused


def _signal_reload_and_wait(server, timeout_s: float = 10.0) -> None:
    """Sends SIGHUP and waits until the server reports that reload's outcome.
    The next file must not be written before then: two SIGHUPs that arrive
    before one is handled coalesce into one reload of the latest file."""
    before = sum(_reload_outcomes(server))
    server.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + timeout_s
    while sum(_reload_outcomes(server)) == before:
        assert time.monotonic() < deadline, "no reload reported after SIGHUP"
        time.sleep(0.02)


def test_config_reload_under_load_fails_no_call(cluster_env, figures):
    """Ten valid reloads (SIGHUP, max_attempts alternating) and one invalid
    file in the middle, at least 150 ms apart, while 6 callers keep going."""
    cluster = RecoverydCluster(cluster_env.binary, cluster_env.workdir, MEMORY, n=1)
    main = yaml.safe_load(cluster.config.read_text())
    main["reload"] = {"watch": False}  # SIGHUP only: every reload is counted
    cluster.config.write_text(yaml.safe_dump(main, sort_keys=False))
    cluster_env.clusters.append(cluster)
    cluster.start()
    server = cluster.replicas[0]
    good = cluster.config.read_text()
    main = yaml.safe_load(good)
    with Load(cluster, threads_per_replica=6, tool_prefix="reload") as load:
        time.sleep(1.0)
        t_fault = time.monotonic()
        for i in range(11):
            if i == 5:
                cluster.config.write_text(good + "\nserver: [not, a, mapping\n")
            else:
                _write_with_max_attempts(cluster.config, main, 4 + i % 2)
            _signal_reload_and_wait(server)
            time.sleep(0.15)
        t_end = time.monotonic()
        time.sleep(0.5)
    samples = load.snapshot()
    during = window(samples, t_fault, t_end)
    log = server.log_text(1 << 22)
    applied, refused = _reload_outcomes(server)
    fig = {
        "calls_sent": len(samples),
        "failed": len(failed(samples)),
        "calls_during_reloads": len(during),
        "p99_before_ms": figures_of(window(samples, 0, t_fault))["p99_ms"],
        "p99_during_reloads_ms": figures_of(during)["p99_ms"],
        "reloads_applied": applied,
        "reloads_refused": refused,
        "recovered_after_ms": 0.0,
    }
    figures.record("11 SIGHUP reloads (1 invalid) under load (1 replica, 6 callers)", **fig)
    assert not failed(samples), failed(samples)[:3]
    assert (applied, refused) == (10, 1), log[-3000:]
    assert server.proc.poll() is None, "recoveryd died during the reloads"
