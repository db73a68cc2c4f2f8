"""Measures what the in-memory store costs per breaker, per trace event and
per remembered outcome_id, by filling a real recoveryd and reading its RSS.
The sizing table of docs/DEPLOYMENT.md comes from this script:

    .venv/bin/python tests/deploy/measure_memory.py build-deploy/recoveryd

Not part of the test suite (it takes about a minute and its numbers are
for people, not assertions)."""
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "e2e"))
import rdtest  # noqa: E402
from rdtest import pb  # noqa: E402

BATCH = 500


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def pump(requests):
    """Sends (method, request) pairs, BATCH at a time in flight."""
    pending = []
    for method, req in requests:
        pending.append(method.future(req, timeout=30))
        if len(pending) >= BATCH:
            for f in pending:
                f.result()
            pending.clear()
    for f in pending:
        f.result()


def main():
    binary = Path(sys.argv[1] if len(sys.argv) > 1 else "build-deploy/recoveryd")
    work = Path(tempfile.mkdtemp(prefix="recoveryd-mem-"))
    config = rdtest.write_config(work / "cfg", store={
        "max_tools": 1000000, "max_turns": 1000000, "max_events_per_turn": 1000,
        "max_outcomes": 10000000})
    server = rdtest.Recoveryd(binary, config, work / "log").start()
    stub, pid = server.stub, server.proc.pid
    err = pb.ToolError(message="Connection reset by peer", code="ECONNRESET")
    try:
        pump((stub.Classify, pb.ClassifyRequest(tool_id="warm", error=err)) for _ in range(2000))
        base = rss_kib(pid)
        print(f"after start and warm-up: {base} KiB")

        n_tools = 50000
        pump((stub.RecordOutcome, pb.RecordOutcomeRequest(
            tool_id=f"tool-{i}", success=False, error=err, attempt=1)) for i in range(n_tools))
        after_tools = rss_kib(pid)
        per_tool = (after_tools - base) * 1024 / n_tools
        print(f"{n_tools} breakers: +{after_tools - base} KiB = {per_tool:.0f} B per breaker")

        n_turns, per_turn = 5000, 10
        pump((stub.Decide, pb.DecideRequest(
            tool_id="traced", error=err, attempt=1, turn_id=f"turn-{t}", executor_id="m"))
             for t in range(n_turns) for _ in range(per_turn))
        after_turns = rss_kib(pid)
        resp = stub.GetTurnTrace(pb.GetTurnTraceRequest(turn_id="turn-0"), timeout=10)
        events = n_turns * len(resp.events)
        print(f"{n_turns} turns, {events} events: +{after_turns - after_tools} KiB = "
              f"{(after_turns - after_tools) * 1024 / events:.0f} B per event "
              f"({len(resp.events)} events per turn)")

        n_outcomes = 100000
        pump((stub.RecordOutcome, pb.RecordOutcomeRequest(
            tool_id="dedup", success=True, attempt=1, outcome_id=f"o-{i}"))
             for i in range(n_outcomes))
        after_outcomes = rss_kib(pid)
        print(f"{n_outcomes} outcome ids: +{after_outcomes - after_turns} KiB = "
              f"{(after_outcomes - after_turns) * 1024 / n_outcomes:.0f} B per outcome id")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
