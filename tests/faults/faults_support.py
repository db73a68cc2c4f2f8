"""Helpers of the fault-injection tests, on top of the cluster harness of
the end-to-end suite (tests/e2e/cluster_support.py): windows of samples,
time to recover, and a Redis that accepts DEBUG SLEEP.

Times are time.monotonic() seconds; figures are rounded milliseconds."""
from __future__ import annotations

import subprocess
import sys
import json
from pathlib import Path

from cluster_support import (RedisProc, RedisTopology, percentile,  # noqa: F401 (re-exported)
                             require_redis, summarize)

HERE = Path(__file__).resolve().parent


def window(samples, t0: float, t1: float):
    """Calls that started in [t0, t1)."""
    return [s for s in samples if t0 <= s.start < t1]


def in_flight_at(samples, t: float):
    """Calls that had started and not yet ended at t."""
    return [s for s in samples if s.start < t <= s.end]


def failed(samples):
    return [s for s in samples if s.code != "OK"]


def figures_of(samples) -> dict:
    """calls, failed, degraded, p50/p99/max latency (ms)."""
    return summarize(samples)


def recovered_at(samples, t_fault_end: float, healthy, replicas) -> float | None:
    """The first time after t_fault_end from which every replica in
    `replicas` answers only healthy calls (healthy(sample) is true for
    every later call of that replica); None if one never does. This is the
    moment the service is back to normal, not merely the first good call."""
    worst = t_fault_end
    for r in replicas:
        mine = sorted((s for s in samples if s.replica == r and s.start >= t_fault_end),
                      key=lambda s: s.start)
        if not mine:
            return None
        last_bad = max((i for i, s in enumerate(mine) if not healthy(s)), default=-1)
        if last_bad == len(mine) - 1:
            return None
        worst = max(worst, mine[last_bad + 1].start)
    return worst


def ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 1)


def debug_redis(env) -> RedisTopology:
    """A single Redis that accepts DEBUG SLEEP (Redis 7 refuses DEBUG
    unless enable-debug-command is set), owned by the cluster_env fixture
    `env` like the topologies it starts: stopped after the replicas."""
    require_redis()
    topo = RedisTopology(Path(env.workdir) / f"redis-debug-{len(env.topologies)}")
    topo.master = RedisProc(topo.workdir, "redis-master",
                            args=["--enable-debug-command", "yes"])
    env.topologies.append(topo)
    return topo.start()


def redis_store(address: str, prefix: str, **extra) -> dict:
    """The `store:` section for rdtest.write_config: Redis at address,
    a 50 ms command budget and a 200 ms probe while degraded."""
    redis = {"address": address, "key_prefix": prefix, "command_timeout_ms": 50,
             "probe_interval_ms": 200}
    redis.update(extra)
    return {"backend": "redis", "redis": redis}


def start_flood(address: str, seconds: float, connections: int) -> subprocess.Popen:
    """flood.py in its own interpreter (see there); read the result with
    flood_result()."""
    return subprocess.Popen([sys.executable, str(HERE / "flood.py"), address, str(seconds),
                             "--connections", str(connections)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def flood_result(proc: subprocess.Popen, timeout: float = 60.0) -> dict:
    out, err = proc.communicate(timeout=timeout)
    if proc.returncode != 0:
        raise AssertionError(f"flood.py failed ({proc.returncode}):\n{err.decode()}")
    return json.loads(out)
