"""Three recoveryd replicas on a Redis Cluster (six nodes: three primaries
with a replica each), over real gRPC: one breaker across the replicas and
exactly one half-open probe; then, under load, a resharding
(redis-cli --cluster reshard) with no failed RPC, and a primary killed:
only its slots answer degraded until the cluster promotes its replica,
which the replicas follow without a restart.

Fault tests print their figures (run pytest with -s to see them)."""
import threading
import time

import pytest

from cluster_support import (Load, Sample, cluster_env, settled_breakers,  # noqa: F401
                             summarize, timed_call, wait_until)
from rdtest import (admit, breaker, expect_action, network_timeout, now_ms, pb, record,
                    unique)
from redis_cluster_support import RedisClusterTopology, require_cluster_tools, tool_slot

OPEN = pb.BREAKER_STATUS_OPEN
HALF_OPEN_TOOL = "halfopen_tool"   # opens on one failure, half-open after 500 ms
FAILURE_THRESHOLD = 3
# Shared-state checks wait longer than production's 50 ms budget (see
# test_redis_cluster.py); the fault tests keep a short one.
SHARED_BUDGET_MS = 1000
FAULT_BUDGET_MS = 100
NODE_TIMEOUT_MS = 1000


@pytest.fixture
def redis_cluster(tmp_path):
    require_cluster_tools()
    topo = RedisClusterTopology(tmp_path / "redis-cluster", node_timeout_ms=NODE_TIMEOUT_MS)
    try:
        yield topo.start()
    finally:
        topo.stop()


def replicas(cluster_env, topo, prefix, budget_ms, **extra):  # noqa: F811
    return cluster_env.recoveryd(
        topo.store_config(key_prefix=prefix, command_timeout_ms=budget_ms, **extra),
        defaults={"circuit_breaker": {"failure_threshold": FAILURE_THRESHOLD,
                                      "timeout_ms": 30000}},
        tools=[{"id": HALF_OPEN_TOOL, "circuit_breaker": {
            "failure_threshold": 1, "success_threshold": 1, "timeout_ms": 500}}])


def sleep_until_ms(unix_ms: int, margin_ms: int = 30):
    delay = (unix_ms + margin_ms - now_ms()) / 1000.0
    if delay > 0:
        time.sleep(delay)


def test_one_breaker_and_exactly_one_probe_across_replicas(cluster_env, redis_cluster):  # noqa: F811
    cluster = replicas(cluster_env, redis_cluster, "shared:", SHARED_BUDGET_MS)
    stubs = cluster.stubs
    # failures through different replicas open one breaker, on its primary
    tool = unique("shared")
    for i in range(FAILURE_THRESHOLD):
        record(stubs[i], tool, success=False, error=network_timeout())
    states = settled_breakers(stubs, tool)
    assert all(s == states[0] for s in states), states
    assert states[0].state == OPEN and states[0].consecutive_failures == FAILURE_THRESHOLD
    owner = redis_cluster.proc_on_port(redis_cluster.primary_port(tool_slot("shared:", tool)))
    assert owner.cmd("EXISTS", f"shared:{{tool:{tool}}}:breaker") == 1
    wait_until(lambda: all(admit(s, tool).action == pb.ACTION_FAIL_FAST for s in stubs), 1.0)
    for s in stubs:
        expect_action(admit(s, tool), pb.ACTION_FAIL_FAST)

    record(stubs[0], HALF_OPEN_TOOL, success=False, error=network_timeout())
    trials, per_trial = 20, 50
    for trial in range(trials):
        state = breaker(stubs[trial % 3], HALF_OPEN_TOOL)
        assert state.state == OPEN, f"trial {trial}: not OPEN before the trial: {state}"
        sleep_until_ms(state.open_until_ms)
        futures = [stubs[i % 3].Decide.future(
            pb.DecideRequest(tool_id=HALF_OPEN_TOOL, executor_id=f"exec-{i}"), timeout=10)
            for i in range(per_trial)]
        answers = [f.result() for f in futures]
        granted = [(i, a) for i, a in enumerate(answers) if a.action == pb.ACTION_PROCEED]
        assert len(granted) == 1, (f"trial {trial}: {len(granted)} of {per_trial} half-open "
                                   f"admission checks granted (expected exactly 1)")
        winner, probe = granted[0]
        resp = record(stubs[(winner + 1) % 3], HALF_OPEN_TOOL, success=False,
                      error=network_timeout(), permit_id=probe.permit_id)
        assert resp.breaker.state == OPEN and resp.breaker.generation > state.generation
    print(f"\nhalf-open trials on a Redis Cluster: {trials} x {per_trial} concurrent admission "
          f"checks over 3 replicas, exactly one probe each")


def _collect(stream, out, until):
    try:
        for msg in stream:
            out.append(msg)
            if until(out):
                return
    except Exception:  # noqa: BLE001 - the stream is cancelled at the end
        pass


def test_watch_on_one_replica_sees_a_breaker_opened_through_another(cluster_env,  # noqa: F811
                                                                    redis_cluster):
    """The events a script publishes on one primary reach a replica whose
    subscriber listens on another node."""
    cluster = replicas(cluster_env, redis_cluster, "watch:", SHARED_BUDGET_MS)
    a, b, _ = cluster.stubs
    # tools on every primary, so some events cross nodes whichever one A listens on
    tools = [unique(f"watched-{i}") for i in range(6)]
    assert len({redis_cluster.primary_port(tool_slot("watch:", t)) for t in tools}) >= 2
    for tool in tools:
        admit(b, tool)
    stream = a.WatchBreakers(pb.WatchBreakersRequest(tool_ids=tools), timeout=20)
    seen = []
    reader = threading.Thread(target=_collect, args=(
        stream, seen, lambda s: sum(m.cause == "opened" for m in s) >= len(tools)))
    reader.start()
    time.sleep(0.4)
    for tool in tools:
        for _ in range(FAILURE_THRESHOLD):
            record(b, tool, success=False, error=network_timeout())
    reader.join(timeout=5)
    time.sleep(0.3)  # a duplicate would arrive within this
    stream.cancel()
    reader.join(timeout=2)
    opened = sorted(m.breaker.tool_id for m in seen if m.cause == "opened")
    assert opened == sorted(tools), [(m.cause, m.breaker.tool_id) for m in seen]


class ToolLoad(Load):
    """Load on the tools given (each caller its own tool), instead of
    tools of random slots."""

    def __init__(self, cluster, tools, **kw):
        super().__init__(cluster, threads_per_replica=1, **kw)
        n = len(cluster.replicas)
        self.local = threading.local()
        self.tool_of = {}  # id(sample) -> tool
        self.threads = [threading.Thread(target=self._run, args=(i % n, tool), daemon=True)
                        for i, tool in enumerate(tools)]

    def _run(self, replica, tool_id):
        self.local.tool = tool_id
        super()._run(replica, tool_id)

    def _one(self, replica, name, method, request):
        started = time.monotonic()
        r = timed_call(method, request, self.timeout)
        sample = Sample(started, started + r.latency_s, replica, name, r.code, r.degraded,
                        r.details)
        with self.lock:
            self.results.append(sample)
            self.tool_of[id(sample)] = self.local.tool


def tools_in(prefix, slots, count, tag):
    """count tool ids whose breaker slot is in `slots`."""
    found, i = [], 0
    while len(found) < count:
        tool = f"{tag}-{i}"
        if tool_slot(prefix, tool) in slots:
            found.append(tool)
        i += 1
    return found


def owned_slots(topo, port):
    from redis_cluster_support import redis_slots  # noqa: PLC0415
    return {s for start, end, p in redis_slots(port) if p == port for s in range(start, end + 1)}


def test_reshard_under_load_fails_no_rpc(cluster_env, redis_cluster):  # noqa: F811
    prefix = "reshard:"
    cluster = replicas(cluster_env, redis_cluster, prefix, FAULT_BUDGET_MS)
    src, dst = sorted(redis_cluster.primary_ports())[:2]
    moving = sorted(owned_slots(redis_cluster, src))[:1000]  # reshard takes the lowest first
    tools = tools_in(prefix, set(moving), 9, "moving") + \
        tools_in(prefix, set(range(16384)) - set(moving), 3, "staying")
    with ToolLoad(cluster, tools) as load:
        time.sleep(1.0)
        t0 = time.monotonic()
        rc, out = redis_cluster.reshard(src, dst, len(moving))
        t1 = time.monotonic()
        time.sleep(1.0)
    assert rc == 0, f"redis-cli --cluster reshard failed:\n{out[-3000:]}"
    samples = load.snapshot()
    during = [s for s in samples if t0 <= s.start < t1]
    print(f"\nreshard of {len(moving)} slots under load ({len(tools)} callers) took "
          f"{t1 - t0:.1f} s\n  during it: {summarize(during)}\n  all calls: {summarize(samples)}")
    moved = [t for t in tools[:9] if redis_cluster.primary_port(tool_slot(prefix, t)) == dst]
    assert len(moved) == 9, "the loaded tools' slots did not all move"
    for t in moved:
        assert redis_cluster.proc_on_port(dst).cmd(
            "EXISTS", f"{prefix}{{tool:{t}}}:breaker") == 1
    failed = [s for s in samples if s.code != "OK"]
    assert not failed, f"{len(failed)} of {len(samples)} RPCs failed, e.g. {failed[:3]}"
    assert len(during) > 50, f"too few calls during the reshard: {summarize(during)}"


def test_primary_killed_under_load_only_its_slots_degrade(cluster_env, redis_cluster):  # noqa: F811
    prefix = "kill:"
    # A killed node refuses at once, so the budget plays no part in noticing
    # it; a long one keeps a stall of this machine from passing for an
    # outage of the other primaries.
    cluster = replicas(cluster_env, redis_cluster, prefix, SHARED_BUDGET_MS,
                       probe_interval_ms=200)
    victim_port = redis_cluster.primary_port(0)
    lost = owned_slots(redis_cluster, victim_port)
    tools = tools_in(prefix, lost, 6, "lost") + \
        tools_in(prefix, set(range(16384)) - lost, 6, "kept")
    lost_tools = set(tools[:6])
    with ToolLoad(cluster, tools) as load:
        time.sleep(1.0)
        t_kill = time.monotonic()
        redis_cluster.proc_on_port(victim_port).kill()
        promoted = wait_until(lambda: redis_cluster.primary_port(0) not in (None, victim_port),
                              30.0, 0.05)
        t_promoted = time.monotonic()
        assert promoted, "the cluster did not promote the replica within 30 s"

        def followed():
            recent = [s for s in load.snapshot() if s.start > time.monotonic() - 0.3]
            return recent and not any(s.degraded for s in recent)

        assert wait_until(followed, 15.0, 0.05), "calls still degraded 15 s after promotion"
        t_followed = time.monotonic()
        time.sleep(0.5)
    samples = load.snapshot()
    degraded = [s for s in samples if s.degraded]
    kept_degraded = [s for s in degraded if load.tool_of[id(s)] not in lost_tools]
    print(f"\nprimary SIGKILL under load ({len(tools)} callers, 3 replicas): replica promoted "
          f"after {t_promoted - t_kill:.2f} s, every replica shared again after "
          f"{t_followed - t_kill:.2f} s\n  from the kill on: "
          f"{summarize([s for s in samples if s.start >= t_kill])}; degraded answers: "
          f"{len(degraded)}, all on the lost primary's tools"
          f"\n  all calls: {summarize(samples)}")
    failed = [s for s in samples if s.code != "OK"]
    assert not failed, f"{len(failed)} of {len(samples)} RPCs failed, e.g. {failed[:3]}"
    assert degraded, "no call was answered degraded while a primary was down"
    # a call in flight when the node died may be answered degraded; none
    # that finished before it
    assert all(t_kill <= s.end for s in degraded), "degraded before the kill"
    assert not kept_degraded, (f"{len(kept_degraded)} calls on tools of the other primaries "
                               f"were answered degraded, e.g. {kept_degraded[:3]}")
    assert t_followed - t_kill < 15.0
    # whole-store degraded mode never engaged: the other primaries stayed shared
    for i in range(len(cluster.replicas)):
        assert cluster.metric(i, "recoveryd_store_degraded") == 0
    # shared state again on the promoted primary, across replicas
    tool = tools_in(prefix, lost, 1, "after")[0]
    for i in range(FAILURE_THRESHOLD):
        record(cluster.stubs[i], tool, success=False, error=network_timeout())
    states = settled_breakers(cluster.stubs, tool)
    assert all(s == states[0] for s in states) and states[0].state == OPEN, states
    new_owner = redis_cluster.proc_on_port(redis_cluster.primary_port(tool_slot(prefix, tool)))
    assert new_owner.cmd("EXISTS", f"{prefix}{{tool:{tool}}}:breaker") == 1
