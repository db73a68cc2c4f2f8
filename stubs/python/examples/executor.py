"""A small tool executor that runs one tool call through recoveryd and
prints the result as one JSON line. The cross-language conformance run
drives it; it doubles as a complete usage example.

    python executor.py --addr 127.0.0.1:50051 --turn t1 --tool search --mode fail

Modes choose the tool's behaviour: fail (always a connection reset), succeed,
flaky (fails twice, then succeeds), hold (prints HOLDING, then waits until the
--release file exists and succeeds).
"""
import argparse
import json
import os
import time

from recoveryd_client import RecoveryClient, ToolFailure, recovery_pb2 as pb


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--addr", default="127.0.0.1:50051")
    ap.add_argument("--turn", default="")
    ap.add_argument("--tool", default="search")
    ap.add_argument("--mode", default="succeed", choices=["fail", "succeed", "flaky", "hold"])
    ap.add_argument("--release", default="")
    args = ap.parse_args()
    calls = 0

    def search(timeout_s: float) -> str:
        nonlocal calls
        calls += 1
        if args.mode == "fail":
            raise ToolFailure("read tcp: connection reset by peer", code="ECONNRESET",
                              kind=pb.ERROR_KIND_TRANSPORT_ERROR)
        if args.mode == "flaky" and calls <= 2:
            raise ToolFailure("503 Service Unavailable", http_status=503)
        if args.mode == "hold":
            print("HOLDING", flush=True)
            end = time.monotonic() + min(timeout_s, 20.0)
            while not os.path.exists(args.release) and time.monotonic() < end:
                time.sleep(0.02)
        return f"results for {args.tool}"

    with RecoveryClient(args.addr, executor_id="python-executor") as client:
        res = client.run_tool(args.tool, {args.tool: search}, turn_id=args.turn)
    print(json.dumps({
        "lang": "python", "status": res.status, "attempts": res.attempts, "tool_calls": calls,
        "fallback": res.fallback, "permit": bool(res.permit_id),
        "recorded": res.outcome_recorded, "reason": res.reason,
        "actions": [pb.Action.Name(d.action) for d in res.decisions], "value": res.value,
    }), flush=True)


if __name__ == "__main__":
    main()
