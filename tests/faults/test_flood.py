"""A flood of oversize and malformed requests from many connections while
well-formed calls go on.

The promise (docs/RELIABILITY.md): every bad request is refused on its own
(RESOURCE_EXHAUSTED above max_receive_bytes, INVALID_ARGUMENT naming the
field otherwise), never with INTERNAL or a crash; well-formed calls fail
nothing and keep their latency within a bounded factor. The flood runs in
separate processes (tests/faults/flood.py) so its Python work does not slow
the measuring callers' interpreter. Prints the figures of both phases."""
import time

from cluster_support import Load, cluster_env, timed_call  # noqa: F401
from faults_support import failed, figures_of, flood_result, start_flood, window
from rdtest import pb

FLOOD_PROCESSES = 4
CONNECTIONS_PER_PROCESS = 8
PHASE_S = 4.0
REFUSALS = {"INVALID_ARGUMENT", "RESOURCE_EXHAUSTED"}
# With the flood taking the machine's cores as well, good calls may slow
# down; they must stay within this factor of their own baseline (or this
# many ms, whichever is larger), and fail nothing.
P99_FACTOR = 10
P99_FLOOR_MS = 250


def test_flood_of_bad_requests_keeps_good_calls_going(cluster_env, figures):
    cluster = cluster_env.recoveryd({"backend": "memory"}, n=1,
                                    server={"max_receive_bytes": 1048576})
    server = cluster.replicas[0]
    with Load(cluster, threads_per_replica=2, tool_prefix="good") as load:
        time.sleep(0.5)
        t_base = time.monotonic()
        time.sleep(PHASE_S)
        t_flood = time.monotonic()
        floods = [start_flood(server.address, PHASE_S, CONNECTIONS_PER_PROCESS)
                  for _ in range(FLOOD_PROCESSES)]
        results = [flood_result(p) for p in floods]
        t_flood_end = time.monotonic()
        time.sleep(1.0)
    samples = load.snapshot()
    base = figures_of(window(samples, t_base, t_flood))
    # skip the processes' start-up (interpreter, grpc import)
    flooded = figures_of(window(samples, t_flood + 1.0, t_flood_end))
    after = figures_of(window(samples, t_flood_end, float("inf")))
    codes = {}
    by_kind = {}
    for r in results:
        for code, n in r["codes"].items():
            codes[code] = codes.get(code, 0) + n
        for kind, kc in r["by_kind"].items():
            for code, n in kc.items():
                by_kind.setdefault(kind, {}).setdefault(code, 0)
                by_kind[kind][code] += n
    fig = {
        "bad_calls_sent": sum(r["calls"] for r in results),
        "bad_connections": FLOOD_PROCESSES * CONNECTIONS_PER_PROCESS,
        "bad_codes": codes,
        "bad_codes_by_kind": by_kind,
        "good_calls_sent": len(samples),
        "good_failed": len(failed(samples)),
        "good_p50_without_flood_ms": base["p50_ms"],
        "good_p99_without_flood_ms": base["p99_ms"],
        "good_p50_with_flood_ms": flooded["p50_ms"],
        "good_p99_with_flood_ms": flooded["p99_ms"],
        "good_calls_with_flood": flooded["calls"],
        "good_p99_after_flood_ms": after["p99_ms"],
    }
    figures.record("flood of oversize/malformed requests (32 connections) vs good calls", **fig)
    assert not failed(samples), failed(samples)[:3]
    assert set(codes) <= REFUSALS, f"bad requests answered with {codes}"
    assert by_kind.get("oversize", {}).keys() <= {"RESOURCE_EXHAUSTED"}, by_kind
    assert server.proc.poll() is None, "recoveryd died under the flood"
    assert timed_call(server.stub.Classify, pb.ClassifyRequest(
        tool_id="after_flood", error=pb.ToolError(message="timeout"))).code == "OK"
    assert flooded["calls"] > 20, "the good callers were starved completely"
    bound = max(P99_FACTOR * base["p99_ms"], P99_FLOOR_MS)
    assert flooded["p99_ms"] <= bound, f"good p99 {flooded['p99_ms']} ms > {bound} ms"
