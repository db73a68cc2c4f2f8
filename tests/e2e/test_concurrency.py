"""The in-memory store under many concurrent callers: counts stay exact,
a breaker opens once however many failures race, an outcome_id is counted
once, and a half-open breaker grants exactly one probe permit."""
import concurrent.futures
import threading
import time

import pytest

from rdtest import (admit, breaker, decide, events_of, expect_state, network_timeout, pb,
                    pb_grpc, record, turn_trace, unique)

OPEN_TIMEOUT_MS = 300
THREADS = 16
CHANNELS = 8


@pytest.fixture(scope="module")
def server(module_launcher):
    return module_launcher.start(
        defaults={"circuit_breaker": {"timeout_ms": OPEN_TIMEOUT_MS}},
        tools=[{"id": "hammered", "circuit_breaker": {"failure_threshold": 10000}}],
        store={"max_events_per_turn": 100000},
        server={"workers": 4})


@pytest.fixture(scope="module")
def stubs(server):
    """Several stubs on separate TCP connections, so calls really arrive
    in parallel instead of queueing on one connection."""
    channels = [server.new_channel(own_connection=True) for _ in range(CHANNELS)]
    yield [pb_grpc.RecoveryServiceStub(c) for c in channels]
    for c in channels:
        c.close()


def run_parallel(n, fn):
    """Runs fn(i) for i in range(n) on n threads released together."""
    gate = threading.Barrier(n)

    def task(i):
        gate.wait()
        return fn(i)

    with concurrent.futures.ThreadPoolExecutor(n) as pool:
        return list(pool.map(task, range(n)))


def test_concurrent_failures_are_all_counted(stubs):
    """16 threads report 50 transient failures each on one tool (threshold
    out of reach): the breaker counts exactly 800, every decision is a
    retry, and the turn holds all 800 ToolError events in one gap-free
    sequence."""
    turn = unique("turn")
    per_thread = 50

    def hammer(i):
        stub = stubs[i % len(stubs)]
        return [decide(stub, "hammered", network_timeout(), attempt=1, turn_id=turn).action
                for _ in range(per_thread)]

    actions = [a for chunk in run_parallel(THREADS, hammer) for a in chunk]
    assert actions == [pb.ACTION_RETRY] * (THREADS * per_thread)
    state = breaker(stubs[0], "hammered")
    assert state.consecutive_failures == THREADS * per_thread
    expect_state(state, pb.BREAKER_STATUS_CLOSED)

    events = turn_trace(stubs[0], turn).events
    assert len(events_of(events, "ToolError", "hammered")) == THREADS * per_thread
    sequences = sorted(e.sequence for e in events)
    assert sequences == list(range(sequences[0], sequences[0] + len(events))), \
        "sequence numbers are unique and without gaps"

    # Successes from every thread at once end the streak exactly.
    run_parallel(THREADS, lambda i: record(stubs[i % len(stubs)], "hammered", success=True))
    assert breaker(stubs[0], "hammered").consecutive_failures == 0


def test_racing_failures_open_the_breaker_once(stubs):
    """50 threads report a transient failure of one fresh tool at the same
    moment (threshold 5): the breaker opens exactly once, and the turn
    records one CircuitOpened."""
    for _ in range(5):
        tool, turn = unique("racing"), unique("turn")
        run_parallel(50, lambda i: decide(stubs[i % len(stubs)], tool, network_timeout(),
                                          attempt=1, turn_id=turn))
        state = breaker(stubs[0], tool)
        expect_state(state, pb.BREAKER_STATUS_OPEN)
        assert state.opens_total == 1 and state.generation == 1
        assert len(events_of(turn_trace(stubs[0], turn).events, "CircuitOpened")) == 1


def test_outcome_ids_counted_once_under_concurrency(stubs):
    """16 threads report the same 20 failures (same outcome_ids, as a
    retrying client would): exactly 20 are recorded, the rest are
    duplicates, and the breaker counts 20."""
    tool = unique("dedup")
    ids = [unique("outcome") for _ in range(20)]

    def report(i):
        stub = stubs[i % len(stubs)]
        return [record(stub, tool, success=False, error=network_timeout(),
                       outcome_id=oid).duplicate for oid in ids]

    flags = [d for chunk in run_parallel(THREADS, report) for d in chunk]
    assert flags.count(False) == len(ids)
    assert flags.count(True) == (THREADS - 1) * len(ids)
    state = breaker(stubs[0], tool)
    # 20 transient failures against a threshold of 5: opened on the fifth,
    # the later ones (while OPEN) change nothing.
    assert state.opens_total == 1


def test_half_open_grants_exactly_one_permit(stubs):
    """20 trials: a HALF_OPEN breaker meets 50 simultaneous admission
    checks; exactly one gets PROCEED with a permit, 49 are refused. The
    probe's success then closes it and all 50 are admitted."""
    trials = 20
    tools = [unique("probe") for _ in range(trials)]
    for tool in tools:
        for attempt in range(1, 6):
            decide(stubs[0], tool, network_timeout(), attempt=attempt)
        expect_state(breaker(stubs[0], tool), pb.BREAKER_STATUS_OPEN)
    time.sleep(OPEN_TIMEOUT_MS / 1000.0 + 0.05)

    for trial, tool in enumerate(tools):
        expect_state(breaker(stubs[0], tool), pb.BREAKER_STATUS_HALF_OPEN)
        answers = run_parallel(50, lambda i: admit(stubs[i % len(stubs)], tool))
        granted = [a for a in answers if a.action == pb.ACTION_PROCEED]
        refused = [a for a in answers if a.action == pb.ACTION_FAIL_FAST]
        assert len(granted) == 1, f"trial {trial}: {len(granted)} permits granted"
        assert granted[0].permit_id
        assert len(refused) == 49 and not any(a.permit_id for a in refused)

        record(stubs[0], tool, success=True, permit_id=granted[0].permit_id)
        after = run_parallel(50, lambda i: admit(stubs[i % len(stubs)], tool))
        assert all(a.action == pb.ACTION_PROCEED and not a.permit_id for a in after)


def test_every_answer_belongs_to_its_own_call(stubs):
    """Answers are copied into shared buffers a worker hands out piece by
    piece (server/transport/call.c): 16 threads make 60 Decide calls each,
    every one on a tool of its own with ids of different lengths, so the
    pieces differ in size and each worker fills several buffers. Every
    answer names its own call's tool, in its breaker and in its trace."""
    per_thread = 60

    def ask(i):
        stub = stubs[i % len(stubs)]
        wrong = []
        for k in range(per_thread):
            tool = unique("piece-%d-%s" % (i, "x" * ((i * per_thread + k) % 37)))
            answer = decide(stub, tool, network_timeout(), attempt=1)
            tools_named = {answer.breaker.tool_id} | {e.tool_id for e in answer.trace}
            if answer.action != pb.ACTION_RETRY or tools_named != {tool}:
                wrong.append((tool, answer.action, sorted(tools_named)))
        return wrong

    wrong = [w for chunk in run_parallel(THREADS, ask) for w in chunk]
    assert wrong == []
