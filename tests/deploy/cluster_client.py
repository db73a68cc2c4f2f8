"""The executor side of test_local_cluster.py, run inside the client's
network namespace: it round-robins over three recoveryd replicas the way a
gRPC client behind the headless Service does (one channel, round_robin
policy), SIGKILLs one replica in the middle of the load, and prints what it
saw as one JSON object.

    cluster_client.py --replicas A:P,B:P,C:P --kill-pid PID --kill-index 1
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

import grpc

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "e2e"))
import rdtest  # noqa: E402
from rdtest import pb, pb_grpc  # noqa: E402

THREADS = 8
LOAD_BEFORE_S = 1.5
LOAD_AFTER_S = 3.0


def state_of(stub, tool):
    b = rdtest.breaker(stub, tool)
    return {"state": rdtest.state_name(b.state), "consecutive_failures": b.consecutive_failures,
            "opened_at_ms": b.opened_at_ms, "opens_total": b.opens_total}


# A replica sends the outcomes it batched every store.redis.outcome_batch_ms
# (5 ms), so the others see them that late plus a round trip, and answers a
# read from its cache for up to store.redis.read_cache_ms (100 ms)
# (docs/REDIS.md, "Consistency and staleness"); room here for a loaded
# machine.
SETTLE_S = 2.0


def settled_states(stubs, tools):
    """Each replica's view of the tools, read again until all replicas agree
    (or SETTLE_S passed: then the disagreement is what the test sees)."""
    deadline = time.monotonic() + SETTLE_S
    while True:
        views = [{t: state_of(s, t) for t in tools} for s in stubs]
        if all(v == views[0] for v in views) or time.monotonic() > deadline:
            return views
        time.sleep(0.01)


def report_failures(stub, tool, n, tag):
    """n transient failures, each through the next replica in turn."""
    for i in range(n):
        rdtest.decide(stub, tool, rdtest.connection_reset(), attempt=1,
                      outcome_id=f"{tag}-{tool}-{i}", executor_id="cluster-client")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--replicas", required=True)
    ap.add_argument("--kill-pid", type=int, required=True)
    ap.add_argument("--kill-index", type=int, required=True)
    args = ap.parse_args()
    addresses = args.replicas.split(",")

    direct = [pb_grpc.RecoveryServiceStub(grpc.insecure_channel(a)) for a in addresses]
    for a in addresses:
        grpc.channel_ready_future(grpc.insecure_channel(a)).result(timeout=20)
    rr_channel = grpc.insecure_channel(
        "ipv4:" + ",".join(addresses),
        options=[("grpc.lb_policy_name", "round_robin"), ("grpc.enable_retries", 1)])
    grpc.channel_ready_future(rr_channel).result(timeout=20)
    rr = pb_grpc.RecoveryServiceStub(rr_channel)
    out = {}

    # State written through all three replicas before the kill.
    report_failures(rr, "opened_before_kill", 5, "pre")
    report_failures(rr, "streak_across_kill", 3, "pre")
    tools = ("opened_before_kill", "streak_across_kill")
    out["before"] = dict(zip(addresses, settled_states(direct, tools)))

    # Load over the round-robin channel; one replica is killed in the middle.
    lock = threading.Lock()
    in_flight = 0
    calls = []                      # (start, end, ok, code, thread)
    stop = threading.Event()

    def worker(n):
        nonlocal in_flight
        i = 0
        while not stop.is_set():
            tool = f"load-{n % 4}"
            start = time.monotonic()
            with lock:
                in_flight += 1
            code = "OK"
            try:
                if i % 2 == 0:
                    rdtest.admit(rr, tool, timeout=2)
                else:
                    rdtest.record(rr, tool, success=True, timeout=2)
            except grpc.RpcError as e:
                code = e.code().name
            end = time.monotonic()
            with lock:
                in_flight -= 1
                calls.append((start, end, code == "OK", code, n))
            i += 1

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(THREADS)]
    for t in threads:
        t.start()
    time.sleep(LOAD_BEFORE_S)
    with lock:
        killed_at = time.monotonic()
        out["in_flight_at_kill"] = in_flight
        os.kill(args.kill_pid, signal.SIGKILL)
    time.sleep(LOAD_AFTER_S)
    stop.set()
    for t in threads:
        t.join()

    out["calls_before_kill"] = sum(1 for c in calls if c[1] <= killed_at)
    out["calls_after_kill"] = sum(1 for c in calls if c[0] > killed_at)
    out["threads"] = THREADS
    out["failures"] = [{"start_s": round(c[0] - killed_at, 4), "end_s": round(c[1] - killed_at, 4),
                        "code": c[3], "thread": c[4]} for c in calls if not c[2]]

    # The streak begun before the kill goes on through the survivors.
    survivors = [(a, s) for i, (a, s) in enumerate(zip(addresses, direct)) if i != args.kill_index]
    report_failures(rr, "streak_across_kill", 2, "post")
    out["after"] = dict(zip([a for a, _ in survivors],
                            settled_states([s for _, s in survivors], tools)))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
