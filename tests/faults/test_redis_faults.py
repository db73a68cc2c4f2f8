"""Faults of the shared Redis under load, three replicas: killed and
restarted, slowed (CLIENT PAUSE, DEBUG SLEEP), its script cache flushed.

The promise (docs/REDIS.md "Failure behaviour", docs/RELIABILITY.md): no
call fails; while Redis cannot answer within the 50 ms command budget the
replicas answer from memory (responses marked recoveryd-degraded) with a
bounded latency, and they go back to the shared state by themselves once
Redis answers again. Each test prints its figures."""
import time

import pytest

from cluster_support import Load, cluster_env, wait_until  # noqa: F401
from faults_support import (debug_redis, failed, figures_of, ms, recovered_at, redis_store,
                            window)

REPLICAS = 3
P99_BOUND_MS = 250        # a degraded answer: one 50 ms budget, then memory
RECOVER_BOUND_S = 10.0    # probe every 200 ms; generous for a loaded CI machine


def healthy(s):
    return s.code == "OK" and not s.degraded


def wait_recovered(load, t_end):
    return wait_until(lambda: recovered_at(load.snapshot(), t_end, healthy, range(REPLICAS)),
                      timeout=RECOVER_BOUND_S + 5, interval=0.1)


def outage_figures(samples, t_fault, t_end):
    """Figures of a fault that started at t_fault and ended at t_end."""
    during = window(samples, t_fault, t_end)
    back = recovered_at(samples, t_end, healthy, range(REPLICAS))
    first_degraded = [min((s.start for s in during if s.replica == r and s.degraded),
                          default=None) for r in range(REPLICAS)]
    return during, back, {
        "calls_sent": len(samples),
        "failed": len(failed(samples)),
        "calls_during_fault": len(during),
        "failed_during_fault": len(failed(during)),
        "degraded_answers": sum(1 for s in during if s.degraded),
        "p99_before_ms": figures_of(window(samples, 0, t_fault))["p99_ms"],
        "p99_during_fault_ms": figures_of(during)["p99_ms"],
        "max_during_fault_ms": figures_of(during)["max_ms"],
        "detected_after_ms": [ms(t - t_fault) if t else None for t in first_degraded],
        "recovered_after_ms": ms(back - t_end) if back else None,
    }


def check(samples, during, back, fig):
    assert not failed(samples), f"{fig['failed']} calls failed, e.g. {failed(samples)[:3]}"
    assert fig["p99_during_fault_ms"] < P99_BOUND_MS, fig
    assert back is not None, f"a replica did not return to Redis within {RECOVER_BOUND_S}s"


def test_redis_killed_and_restarted_under_load(cluster_env, figures):
    topo = cluster_env.redis()
    cluster = cluster_env.recoveryd(redis_store(topo.master.address, "kill:"), n=REPLICAS)
    with Load(cluster, threads_per_replica=2, tool_prefix="kill") as load:
        time.sleep(1.0)
        t_fault = time.monotonic()
        topo.master.kill()
        time.sleep(2.0)
        t_end = time.monotonic()
        topo.master.start()
        wait_recovered(load, t_end)
        time.sleep(0.5)
    samples = load.snapshot()
    during, back, fig = outage_figures(samples, t_fault, t_end)
    figures.record("Redis SIGKILL for 2 s, then restarted (3 replicas, 6 callers)", **fig)
    check(samples, during, back, fig)
    assert fig["degraded_answers"] > 0, "no answer was marked degraded while Redis was down"


def _client_pause(redis):
    redis.cmd("CLIENT", "PAUSE", "1500", "ALL")
    time.sleep(1.5)


def _debug_sleep(redis):
    redis.cmd("DEBUG", "SLEEP", "1.5", timeout=10)


@pytest.mark.parametrize("how", ["client_pause", "debug_sleep"])
def test_redis_slowed_under_load(cluster_env, figures, how):
    """CLIENT PAUSE holds every client's commands for 1.5 s (Redis accepts
    connections but answers nothing); DEBUG SLEEP blocks the whole server
    for 1.5 s. Either way each command hits the 50 ms budget."""
    topo = cluster_env.redis() if how == "client_pause" else debug_redis(cluster_env)
    cluster = cluster_env.recoveryd(redis_store(topo.master.address, f"{how}:"), n=REPLICAS)
    with Load(cluster, threads_per_replica=2, tool_prefix=how) as load:
        time.sleep(1.0)
        t_fault = time.monotonic()
        (_client_pause if how == "client_pause" else _debug_sleep)(topo.master)
        t_end = time.monotonic()
        wait_recovered(load, t_end)
        time.sleep(0.5)
    samples = load.snapshot()
    during, back, fig = outage_figures(samples, t_fault, t_end)
    figures.record(f"Redis slowed by {how.replace('_', ' ').upper()} 1.5 s (3 replicas)", **fig)
    check(samples, during, back, fig)


def test_function_flush_under_load(cluster_env, figures):
    """FUNCTION FLUSH drops the store's functions library: every FCALL
    answers "Function not found" until the library is loaded again. That is
    not an outage: no call fails and none is answered from memory."""
    topo = cluster_env.redis()
    cluster = cluster_env.recoveryd(redis_store(topo.master.address, "flush:"), n=REPLICAS)
    with Load(cluster, threads_per_replica=2, tool_prefix="flush") as load:
        time.sleep(1.0)
        t_fault = time.monotonic()
        for _ in range(5):
            topo.master.cmd("FUNCTION", "FLUSH")
            time.sleep(0.2)
        t_end = time.monotonic()
        time.sleep(1.0)
    samples = load.snapshot()
    during = window(samples, t_fault, t_end + 0.2)
    fig = {
        "calls_sent": len(samples),
        "failed": len(failed(samples)),
        "flushes": 5,
        "calls_during_fault": len(during),
        "degraded_answers": sum(1 for s in during if s.degraded),
        "p99_before_ms": figures_of(window(samples, 0, t_fault))["p99_ms"],
        "p99_during_fault_ms": figures_of(during)["p99_ms"],
        "recovered_after_ms": 0.0 if not any(s.degraded for s in during) else None,
    }
    figures.record("FUNCTION FLUSH x5 under load (3 replicas)", **fig)
    assert not failed(samples), failed(samples)[:3]
    assert fig["degraded_answers"] == 0, "a missing function was treated as an outage"
    assert fig["p99_during_fault_ms"] < P99_BOUND_MS, fig
