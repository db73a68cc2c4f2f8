"""Three recoveryd replicas sharing one Redis (issue 5, "How it is
checked"), over real gRPC: one breaker across the cluster, exactly one
half-open probe, leases of dead executors, outcome deduplication, turn
traces and manual control across replicas; then faults: Redis killed and
restarted under load, FUNCTION FLUSH under load, a Sentinel failover.

Fault tests print their figures (run pytest with -s to see them)."""
import threading
import time

import pytest

from cluster_support import (DEGRADED_KEY, Load, admin_pb, cluster_env,  # noqa: F401
                             module_cluster_env, SETTLE_S, settled_breakers, summarize,
                             timed_call, wait_until)
from rdtest import (admit, breaker, decide, describe_events, expect_action, network_timeout,
                    now_ms, pb, record, state_name, turn_trace, unique)

OPEN, CLOSED = pb.BREAKER_STATUS_OPEN, pb.BREAKER_STATUS_CLOSED
HALF_OPEN = pb.BREAKER_STATUS_HALF_OPEN
ADMIN_TOKEN = "cluster-admin-Token-7"
FAILURE_THRESHOLD = 3
HALF_OPEN_TOOL = "halfopen_tool"   # opens on one failure, half-open after 500 ms
LEASE_TOOL = "lease_tool"          # the same, with an 800 ms call timeout (= probe lease)
LEASE_MS = 800
LATENCY_TOOL = "latency_tool"      # keeps its latency distribution (latency.enabled)
COMMAND_BUDGET_MS = 50
# The store trips to local state after 2 failed Redis operations in a row
# (store/resilient.h); until then, calls the Redis store answers from its
# cache or its outcome batch are answered without Redis and not marked.
# A replica must answer everything degraded from this long after its first
# degraded answer.
TRIP_GRACE_S = 0.1
# The shared-state tests check what replicas agree on while Redis answers. A
# machine stall longer than the 50 ms production budget would send a replica
# into degraded mode (local decisions, by design) and void such a check, so
# their cluster waits longer; the fault tests below keep the real budget.
SHARED_BUDGET_MS = 1000


def cluster_tools():
    return [
        {"id": HALF_OPEN_TOOL,
         "circuit_breaker": {"failure_threshold": 1, "success_threshold": 1, "timeout_ms": 500}},
        {"id": LEASE_TOOL, "timeout_ms": LEASE_MS,
         "circuit_breaker": {"failure_threshold": 1, "success_threshold": 1, "timeout_ms": 500}},
        {"id": LATENCY_TOOL, "latency": {"enabled": True, "window_ms": 60000, "min_samples": 5}},
    ]


@pytest.fixture(scope="module")
def shared(module_cluster_env, tmp_path_factory):
    """One Redis, three replicas, for the tests that do not break Redis."""
    token = tmp_path_factory.mktemp("secrets") / "admin.token"
    token.write_text(ADMIN_TOKEN + "\n")
    topo = module_cluster_env.redis()
    cluster = module_cluster_env.recoveryd(
        topo.store_config(key_prefix="shared:", command_timeout_ms=SHARED_BUDGET_MS),
        server={"admin": {"token_file": str(token)}},
        defaults={"circuit_breaker": {"failure_threshold": FAILURE_THRESHOLD,
                                      "timeout_ms": 30000}},
        tools=cluster_tools())
    return topo, cluster


def assert_same_everywhere(states):
    first = states[0]
    for i, s in enumerate(states[1:], start=1):
        assert s == first, f"replica {i} disagrees with replica 0:\n{s}\nvs\n{first}"


def sleep_until_ms(unix_ms: int, margin_ms: int = 30):
    delay = (unix_ms + margin_ms - now_ms()) / 1000.0
    if delay > 0:
        time.sleep(delay)


# ---------------------------------------------------------------- shared state

def test_failures_through_different_replicas_open_the_breaker_for_all(shared):
    _, cluster = shared
    stubs = cluster.stubs
    tool = unique("shared")
    # transient failures, round-robin over the replicas, both ways of reporting
    record(stubs[0], tool, success=False, error=network_timeout())
    states = settled_breakers(stubs, tool)
    assert_same_everywhere(states)
    assert states[0].state == CLOSED and states[0].consecutive_failures == 1
    decide(stubs[1], tool, network_timeout(), attempt=1)
    states = settled_breakers(stubs, tool)
    assert_same_everywhere(states)
    assert states[0].state == CLOSED and states[0].consecutive_failures == 2
    record(stubs[2], tool, success=False, error=network_timeout())

    states = settled_breakers(stubs, tool)
    assert_same_everywhere(states)
    s = states[0]
    assert s.state == OPEN, f"expected OPEN on every replica, got {state_name(s.state)}: {s}"
    assert s.consecutive_failures == FAILURE_THRESHOLD and s.opens_total == 1
    assert s.generation >= 1 and s.open_until_ms > s.opened_at_ms > 0
    # replicas whose cache held CLOSED learn of the opening by pub/sub
    wait_until(lambda: all(admit(stub, tool).action == pb.ACTION_FAIL_FAST for stub in stubs),
               SETTLE_S)
    for stub in stubs:
        expect_action(admit(stub, tool), pb.ACTION_FAIL_FAST)


def test_half_open_grants_exactly_one_probe_across_the_cluster(shared):
    _, cluster = shared
    stubs = cluster.stubs
    record(stubs[0], HALF_OPEN_TOOL, success=False, error=network_timeout())
    trials, per_trial = 20, 50
    generations = []
    for trial in range(trials):
        state = breaker(stubs[trial % 3], HALF_OPEN_TOOL)
        assert state.state == OPEN, f"trial {trial}: breaker not OPEN before the trial: {state}"
        generations.append(state.generation)
        sleep_until_ms(state.open_until_ms)
        futures = [stubs[i % 3].Decide.future(
            pb.DecideRequest(tool_id=HALF_OPEN_TOOL, executor_id=f"exec-{i}"), timeout=10)
            for i in range(per_trial)]
        answers = [f.result() for f in futures]  # raises on any failed RPC
        granted = [(i, a) for i, a in enumerate(answers) if a.action == pb.ACTION_PROCEED]
        assert len(granted) == 1, (
            f"trial {trial}: {len(granted)} of {per_trial} half-open admission checks were "
            f"granted (expected exactly 1) on replicas {[i % 3 for i, _ in granted]}")
        winner, probe = granted[0]
        assert probe.permit_id, f"trial {trial}: PROCEED without a permit_id: {probe}"
        refused = {pb.Action.Name(a.action) for a in answers if a is not probe}
        assert refused == {"ACTION_FAIL_FAST"}, f"trial {trial}: others answered {refused}"
        assert all(not a.permit_id for a in answers if a is not probe)
        # the probe fails, reported through another replica: re-opened, new epoch
        resp = record(stubs[(winner + 1) % 3], HALF_OPEN_TOOL, success=False,
                      error=network_timeout(), permit_id=probe.permit_id)
        assert resp.breaker.state == OPEN and resp.breaker.generation > state.generation, (
            f"trial {trial}: a failed probe did not re-open the breaker: {resp.breaker}")
    print(f"\nhalf-open trials: {trials} x {per_trial} concurrent admission checks over 3 "
          f"replicas, exactly one probe each; generations {generations[0]}..{generations[-1]}")


def test_a_dead_executors_permit_is_freed_after_the_lease(shared):
    _, cluster = shared
    a, b, c = cluster.stubs
    record(a, LEASE_TOOL, success=False, error=network_timeout())
    sleep_until_ms(breaker(a, LEASE_TOOL).open_until_ms)
    taken = admit(a, LEASE_TOOL, executor_id="dies")
    granted_at = time.monotonic()
    expect_action(taken, pb.ACTION_PROCEED)
    assert taken.permit_id
    # the executor holding the permit dies: nobody reports
    expect_action(admit(b, LEASE_TOOL), pb.ACTION_FAIL_FAST)
    expect_action(admit(c, LEASE_TOOL), pb.ACTION_FAIL_FAST)
    held = breaker(c, LEASE_TOOL)
    assert held.state == HALF_OPEN and held.probe_in_flight, held

    def next_probe():
        r = admit(b, LEASE_TOOL, executor_id="survivor")
        return r if r.action == pb.ACTION_PROCEED else None

    second = wait_until(next_probe, timeout=5.0, interval=0.02)
    freed_after = time.monotonic() - granted_at
    print(f"\nlease {LEASE_MS} ms: a new probe was granted through another replica "
          f"{freed_after * 1000:.0f} ms after the first")
    assert second is not None, "no new probe within 5 s of a dead executor's lease"
    assert freed_after >= (LEASE_MS - 100) / 1000.0, (
        f"a new probe after {freed_after * 1000:.0f} ms: the {LEASE_MS} ms lease was not held")
    assert second.permit_id and second.permit_id != taken.permit_id
    # the dead executor's late report counts for nothing; the live probe's does
    record(a, LEASE_TOOL, success=True, permit_id=taken.permit_id)
    late = breaker(c, LEASE_TOOL)
    assert late.state == HALF_OPEN and late.probe_in_flight, (
        f"an outcome with an expired permit changed the breaker: {late}")
    record(c, LEASE_TOOL, success=True, permit_id=second.permit_id)
    states = settled_breakers(cluster.stubs, LEASE_TOOL)
    assert_same_everywhere(states)
    assert states[0].state == CLOSED, states[0]


def test_outcome_ids_are_deduplicated_across_replicas(shared):
    _, cluster = shared
    a, b, c = cluster.stubs
    tool, outcome = unique("dedup"), unique("outcome")
    first = record(a, tool, success=False, error=network_timeout(), outcome_id=outcome)
    assert not first.duplicate and first.breaker.consecutive_failures == 1
    again = record(b, tool, success=False, error=network_timeout(), outcome_id=outcome)
    assert again.duplicate, "the same outcome_id through a second replica was counted again"
    via_decide = decide(c, tool, network_timeout(), attempt=1, outcome_id=outcome)
    assert via_decide.duplicate
    for s in settled_breakers(cluster.stubs, tool):
        assert s.consecutive_failures == 1, f"one outcome counted more than once: {s}"


def test_trace_context_reaches_every_replica(shared):
    """The W3C trace ids of the call that made an event are stored with it:
    another replica reads them back; an event of a call without one has
    none (and is stored in the form every replica reads)."""
    _, cluster = shared
    a, b, _ = cluster.stubs
    tool, turn = unique("ctx"), unique("ctx-turn")
    trace_id, span_id = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    req = pb.DecideRequest(tool_id=tool, attempt=1, turn_id=turn, error=network_timeout())
    traced = a.Decide(req, metadata=[("traceparent", f"00-{trace_id}-{span_id}-01")],
                      timeout=10)
    plain = decide(a, tool, network_timeout(), attempt=2, turn_id=turn)
    events = list(turn_trace(b, turn).events)
    assert len(events) == len(traced.trace) + len(plain.trace), describe_events(events)
    ids = [(e.trace_id, e.span_id) for e in events]
    assert ids == [(trace_id, span_id)] * len(traced.trace) + [("", "")] * len(plain.trace)


def test_latency_distribution_is_shared(shared):
    """Latencies reported to one replica decide another's retry."""
    _, cluster = shared
    a, b, c = cluster.stubs
    for _ in range(10):
        record(a, LATENCY_TOOL, success=True, attempt=1, latency_ms=3000)
    d = decide(b, LATENCY_TOOL, network_timeout(), attempt=1, turn_remaining_ms=2000)
    expect_action(d, pb.ACTION_PARTIAL)
    assert "3200 ms p90 latency" in d.reason, d.reason
    state = breaker(c, LATENCY_TOOL)
    assert (state.latency_samples, state.latency_p90_ms) == (10, 3200), state


def test_turn_trace_answers_from_any_replica(shared):
    _, cluster = shared
    a, b, c = cluster.stubs
    tool, turn = unique("traced"), unique("turn")
    first = decide(a, tool, network_timeout(), attempt=1, turn_id=turn)
    record(b, tool, success=False, error=network_timeout(), attempt=2, turn_id=turn)
    third = decide(b, tool, network_timeout(), attempt=2, turn_id=turn)
    record(a, tool, success=True, attempt=3, turn_id=turn)

    traces = [turn_trace(stub, turn) for stub in (c, a, b)]
    events = list(traces[0].events)
    assert events, "replica C knows nothing of a turn written through A and B"
    for other in traces[1:]:
        assert list(other.events) == events, "replicas disagree on the trace"
    sequences = [e.sequence for e in events]
    assert sequences == sorted(set(sequences)), f"sequences out of order: {sequences}"
    # A's events come first, B's after them, in the order they were appended
    written = list(first.trace) + list(third.trace)
    assert first.trace and third.trace, "Decide returned no trace events to compare with"
    positions = [next((k for k, e in enumerate(events) if e.sequence == w.sequence
                       and e.event_type == w.event_type), None) for w in written]
    assert None not in positions and positions == sorted(positions), (
        f"events returned by A and B are not in C's trace in order:\n"
        f"written:\n{describe_events(written)}\nread from C:\n{describe_events(events)}")
    assert all(e.turn_id == turn for e in events)


def test_manual_control_is_seen_by_other_replicas(shared):
    _, cluster = shared
    a, b, c = cluster.stubs
    tool = unique("manual")
    ch_a, admin_a = cluster.admin_stub(0, ADMIN_TOKEN)
    ch_b, admin_b = cluster.admin_stub(1, ADMIN_TOKEN)
    try:
        forced = admin_a.ForceBreaker(admin_pb.ForceBreakerRequest(
            tool_id=tool, mode=admin_pb.FORCE_MODE_OPEN, reason="cluster e2e",
            operator="tester"), timeout=5).breaker
        assert forced.forced == OPEN
        expect_action(admit(b, tool), pb.ACTION_FAIL_FAST)
        expect_action(admit(c, tool), pb.ACTION_FAIL_FAST)
        for s in settled_breakers(cluster.stubs, tool):
            assert s.state == OPEN and s.forced == OPEN and s.forced_until_ms == 0, s
        admin_b.ForceBreaker(admin_pb.ForceBreakerRequest(
            tool_id=tool, mode=admin_pb.FORCE_MODE_RELEASE, reason="cluster e2e",
            operator="tester"), timeout=5)
        for stub in (a, b, c):
            expect_action(admit(stub, tool), pb.ACTION_PROCEED)
        for s in settled_breakers(cluster.stubs, tool):
            assert s.forced == pb.BREAKER_STATUS_UNSPECIFIED and s.state == CLOSED, s
    finally:
        ch_a.close()
        ch_b.close()


def _collect(stream, out, until):
    try:
        for msg in stream:
            out.append(msg)
            if until(out):
                return
    except Exception:  # the stream is cancelled at the end
        pass


def test_watch_on_one_replica_sees_changes_made_through_another(shared):
    """WatchBreakers on replica A reports a breaker opened through B and an
    operator hold placed through C, each change exactly once."""
    _, cluster = shared
    a, b, c = cluster.stubs
    tool = unique("watched")
    admit(b, tool)
    stream = a.WatchBreakers(pb.WatchBreakersRequest(tool_ids=[tool]), timeout=20)
    seen = []
    reader = threading.Thread(target=_collect, args=(
        stream, seen, lambda s: any(m.cause == "forced_open" for m in s)))
    reader.start()
    time.sleep(0.4)
    for _ in range(3):  # the shared config opens after 3 transient failures
        record(b, tool, success=False, error=network_timeout())
    # A learns of a change when it reads the breaker after the notice: a hold
    # placed before that read would be seen instead of the opening (on a
    # loaded machine A can lag that far), so the hold waits for it.
    wait_until(lambda: any(m.cause == "opened" for m in seen), timeout=5)
    ch_c, admin_c = cluster.admin_stub(2, ADMIN_TOKEN)
    try:
        admin_c.ForceBreaker(admin_pb.ForceBreakerRequest(
            tool_id=tool, mode=admin_pb.FORCE_MODE_OPEN, reason="watch e2e",
            operator="tester"), timeout=5)
        reader.join(timeout=5)
        time.sleep(0.3)  # a duplicate would arrive within this
    finally:
        stream.cancel()
        reader.join(timeout=2)
        admin_c.ForceBreaker(admin_pb.ForceBreakerRequest(
            tool_id=tool, mode=admin_pb.FORCE_MODE_RELEASE, operator="tester"), timeout=5)
        ch_c.close()
    causes = [m.cause for m in seen]
    assert causes[0] == "snapshot", causes
    assert causes.count("opened") == 1, causes
    assert causes.count("forced_open") == 1, causes
    opened = seen[causes.index("opened")].breaker
    assert opened.tool_id == tool and opened.state == OPEN, opened


def library_functions(node) -> int:
    """How many functions of recoveryd's library (rd_<hash>) the node holds."""
    count = 0
    for lib in node.cmd("FUNCTION", "LIST") or []:
        fields = dict(zip(lib[::2], lib[1::2]))
        name = fields.get("library_name")
        if isinstance(name, str) and name.startswith("rd_"):
            count += len(fields.get("functions") or [])
    return count


def test_function_flush_under_load(shared):
    topo, cluster = shared
    flushes = 3
    with Load(cluster, threads_per_replica=2, tool_prefix="flush") as load:
        time.sleep(0.5)
        assert library_functions(topo.master) > 0, "the store does not use Redis Functions"
        t0 = time.monotonic()
        for _ in range(flushes):
            assert topo.master.cmd("FUNCTION", "FLUSH") == "OK"
            time.sleep(0.4)
        t1 = time.monotonic()
        time.sleep(0.3)
    during = load.calls_between(t0, t1)
    everything = load.snapshot()
    figures = summarize(during)
    print(f"\nFUNCTION FLUSH x{flushes} under load: {figures} "
          f"(all calls: {summarize(everything)})")
    failed = [s for s in everything if s.code != "OK"]
    assert not failed, f"{len(failed)} RPCs failed, e.g. {failed[:3]}"
    assert figures["calls"] > 0
    degraded = [s for s in everything if s.degraded]
    assert not degraded, (f"{len(degraded)} responses degraded by FUNCTION FLUSH (\"Function not "
                          f"found\" must load the library again, not count as an outage), "
                          f"e.g. {degraded[:3]}")
    assert library_functions(topo.master) > 0, "the library was not loaded again after FUNCTION FLUSH"
    # shared state still works
    tool = unique("after-flush")
    for i in range(FAILURE_THRESHOLD):
        record(cluster.stubs[1], tool, success=False, error=network_timeout())
    states = settled_breakers(cluster.stubs, tool)
    assert_same_everywhere(states)
    assert states[0].state == OPEN


# ---------------------------------------------------------------- Redis outage

def first_after(samples, t0, predicate):
    hits = [s for s in samples if s.start >= t0 and predicate(s)]
    return min(hits, key=lambda s: s.start) if hits else None


def test_redis_killed_under_load_degrades_then_resumes(cluster_env):
    topo = cluster_env.redis()
    cluster = cluster_env.recoveryd(
        topo.store_config(key_prefix="outage:", command_timeout_ms=COMMAND_BUDGET_MS,
                          probe_interval_ms=200),
        defaults={"circuit_breaker": {"failure_threshold": FAILURE_THRESHOLD}})
    n = len(cluster.replicas)
    for i in range(n):
        assert cluster.metric(i, "recoveryd_store_degraded") == 0
    with Load(cluster, threads_per_replica=2, tool_prefix="outage") as load:
        time.sleep(1.0)
        t_kill = time.monotonic()
        topo.master.kill()
        time.sleep(1.5)
        degraded_metric = [cluster.metric(i, "recoveryd_store_degraded") for i in range(n)]
        time.sleep(1.0)
        t_restart = time.monotonic()
        topo.master.start()

        def all_back():
            got = [first_after(load.snapshot(), t_restart,
                               lambda s, i=i: s.replica == i and not s.degraded)
                   for i in range(n)]
            return got if all(got) else None

        back = wait_until(all_back, timeout=15.0, interval=0.05)
        time.sleep(0.5)
    samples = load.snapshot()

    before = [s for s in samples if s.end < t_kill]  # answered before the kill
    detected = [first_after(samples, t_kill, lambda s, i=i: s.replica == i and s.degraded)
                for i in range(n)]
    assert all(detected), f"replicas {[i for i, d in enumerate(detected) if not d]} never " \
                          "marked a response degraded while Redis was down"
    t_detect = [d.start for d in detected]
    fault = [s for s in samples if max(t_detect) <= s.start < t_restart]
    undetected_window = [s for s in samples if t_kill <= s.start < max(t_detect)]
    tripping = [s for s in samples
                if t_detect[s.replica] <= s.start < t_detect[s.replica] + TRIP_GRACE_S]
    figures = summarize(fault)
    recover_s = [round(b.start - t_restart, 3) for b in back] if back else None
    print(f"\nRedis SIGKILL under load ({len(load.threads)} callers, 3 replicas):"
          f"\n  before the kill: {summarize(before)}"
          f"\n  kill until detected (detection after "
          f"{[round(t - t_kill, 3) for t in t_detect]} s): {summarize(undetected_window)}"
          f"\n  first {TRIP_GRACE_S} s after each replica's first degraded answer: "
          f"{summarize(tripping)}"
          f"\n  during the outage, once detected: {figures}"
          f"\n  recoveryd_store_degraded during the outage: {degraded_metric}"
          f"\n  shared state again after the restart (s, per replica): {recover_s}"
          f"\n  all calls: {summarize(samples)}")

    failed = [s for s in samples if s.code != "OK"]
    assert not failed, f"{len(failed)} of {len(samples)} RPCs failed, e.g. {failed[:3]}"
    assert not [s for s in before if s.degraded], "degraded before Redis was killed"
    assert figures["calls"] > 50, f"too few calls during the outage: {figures}"
    assert figures["p99_ms"] < 250, f"p99 {figures['p99_ms']} ms during the outage (> 250 ms)"
    not_marked = [s for s in samples
                  if t_detect[s.replica] + TRIP_GRACE_S <= s.start and s.end < t_restart
                  and not s.degraded]
    assert not not_marked, (f"{len(not_marked)} responses during the detected outage were not "
                            f"marked {DEGRADED_KEY}, e.g. {not_marked[:3]}")
    # checked last, so the recovery below is still exercised when it fails
    problems = []
    if degraded_metric != [1.0] * n:
        problems.append(f"recoveryd_store_degraded during the outage was {degraded_metric} "
                        f"on the three replicas (expected 1 on each)")
    assert back, "degraded marks did not disappear within 15 s of Redis coming back"

    # shared state resumes without restarting the service
    for i in range(n):
        assert wait_until(lambda i=i: cluster.metric(i, "recoveryd_store_degraded") == 0, 5.0), \
            f"replica {i} still reports recoveryd_store_degraded 1"
        for _ in range(5):
            r = timed_call(cluster.stubs[i].Decide, pb.DecideRequest(tool_id=unique("probe")))
            assert r.code == "OK" and not r.degraded, f"replica {i} after recovery: {r}"
    tool = unique("after-restart")
    for _ in range(FAILURE_THRESHOLD):
        record(cluster.stubs[0], tool, success=False, error=network_timeout())
    states = settled_breakers(cluster.stubs, tool)
    assert_same_everywhere(states)
    assert states[0].state == OPEN, states[0]
    assert topo.master.cmd("EXISTS", f"outage:{{tool:{tool}}}:breaker") == 1
    assert not problems, "; ".join(problems)


# ---------------------------------------------------------------- Sentinel

def test_sentinel_failover_is_followed_without_restart(cluster_env):
    topo = cluster_env.redis(replica=True, sentinels=3, quorum=2, down_after_ms=1000,
                             failover_timeout_ms=3000)
    cluster = cluster_env.recoveryd(
        topo.store_config(key_prefix="sentinel:", command_timeout_ms=100,
                          probe_interval_ms=200),
        defaults={"circuit_breaker": {"failure_threshold": FAILURE_THRESHOLD}})
    old, new = topo.master, topo.replica

    def key(tool):
        return f"sentinel:{{tool:{tool}}}:breaker"

    tool = unique("before-failover")
    record(cluster.stubs[0], tool, success=False, error=network_timeout())
    assert old.cmd("EXISTS", key(tool)) == 1, "the service does not write to the master"

    with Load(cluster, threads_per_replica=1, tool_prefix="failover") as load:
        time.sleep(0.5)
        t_failover = time.monotonic()
        assert topo.sentinels[0].cmd("SENTINEL", "FAILOVER", topo.master_name) == "OK"
        promoted = wait_until(lambda: topo.sentinel_master_port() == new.port and
                              "role:master" in new.cmd("INFO", "replication"), 20.0, 0.05)
        t_promoted = time.monotonic()
        assert promoted, "Sentinel did not promote the replica within 20 s"

        followed = [None] * len(cluster.replicas)

        def writes_reach_new_master():
            for i, stub in enumerate(cluster.stubs):
                if followed[i] is not None:
                    continue
                probe = unique(f"follow-r{i}")
                r = timed_call(stub.RecordOutcome, pb.RecordOutcomeRequest(
                    tool_id=probe, success=False, attempt=1, error=network_timeout()))
                if r.code == "OK" and not r.degraded and new.cmd("EXISTS", key(probe)) == 1:
                    followed[i] = time.monotonic() - t_failover
            return all(f is not None for f in followed)

        all_followed = wait_until(writes_reach_new_master, 20.0, 0.05)
        time.sleep(0.3)
    samples = load.snapshot()
    during = [s for s in samples if s.start >= t_failover]
    print(f"\nSentinel failover: promoted after {t_promoted - t_failover:.2f} s; writes through "
          f"each replica reached the new master after "
          f"{[round(f, 2) if f else None for f in followed]} s"
          f"\n  load from the failover on: {summarize(during)}; all calls: {summarize(samples)}")
    failed = [s for s in samples if s.code != "OK"]
    assert not failed, f"{len(failed)} RPCs failed during the failover, e.g. {failed[:3]}"
    assert all_followed, f"replicas did not follow the new master within 20 s: {followed}"
    assert max(followed) < 15.0
    # shared state on the new master, across replicas
    tool = unique("after-failover")
    for _ in range(FAILURE_THRESHOLD):
        record(cluster.stubs[1], tool, success=False, error=network_timeout())
    states = settled_breakers(cluster.stubs, tool)
    assert_same_everywhere(states)
    assert states[0].state == OPEN, states[0]
    assert new.cmd("EXISTS", key(tool)) == 1
