"""A small tool executor that runs one tool call through recoveryd and
prints the result as one JSON line. The cross-language conformance run
drives it; it doubles as a complete usage example.

    python executor.py --addr 127.0.0.1:50051 --turn t1 --tool search --mode fail

Modes choose the tool's behaviour: fail (always a connection reset), succeed,
flaky (fails twice, then succeeds), hold (prints HOLDING, then waits until the
--release file exists and succeeds), timeout-once (the first call times out
after sending, later calls succeed).

A non-idempotent tool (docs/EFFECTS.md): --verify-tool find_sent_email
registers a verifier for that verify tool, answering --happened (true: the
timed-out call did send; false: it did not). With server.tenants, --token and
--tenant send the admin token and the tenant it acts for.
"""
import argparse
import json
import os
import time

from recoveryd_client import RecoveryClient, ToolFailure, VerifyRequest, recovery_pb2 as pb


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--addr", default="127.0.0.1:50051")
    ap.add_argument("--turn", default="")
    ap.add_argument("--tool", default="search")
    ap.add_argument("--mode", default="succeed",
                    choices=["fail", "succeed", "flaky", "hold", "timeout-once"])
    ap.add_argument("--release", default="")
    ap.add_argument("--verify-tool", default="")
    ap.add_argument("--happened", default="false", choices=["true", "false"])
    ap.add_argument("--token", default="")
    ap.add_argument("--tenant", default="")
    args = ap.parse_args()
    calls = verify_calls = 0

    def search(timeout_s: float) -> str:
        nonlocal calls
        calls += 1
        if args.mode == "fail":
            raise ToolFailure("read tcp: connection reset by peer", code="ECONNRESET",
                              kind=pb.ERROR_KIND_TRANSPORT_ERROR)
        if args.mode == "flaky" and calls <= 2:
            raise ToolFailure("503 Service Unavailable", http_status=503)
        if args.mode == "timeout-once" and calls == 1:
            raise ToolFailure("timeout after 10s waiting for the reply", kind=pb.ERROR_KIND_TIMEOUT)
        if args.mode == "hold":
            print("HOLDING", flush=True)
            end = time.monotonic() + min(timeout_s, 20.0)
            while not os.path.exists(args.release) and time.monotonic() < end:
                time.sleep(0.02)
        return f"results for {args.tool}"

    def verify(req: VerifyRequest) -> bool:
        nonlocal verify_calls
        verify_calls += 1
        return args.happened == "true"

    verifiers = {args.verify_tool: verify} if args.verify_tool else None
    with RecoveryClient(args.addr, executor_id="python-executor", token=args.token,
                        tenant=args.tenant or None) as client:
        res = client.run_tool(args.tool, {args.tool: search}, turn_id=args.turn,
                              verifiers=verifiers)
    print(json.dumps({
        "lang": "python", "status": res.status, "attempts": res.attempts, "tool_calls": calls,
        "fallback": res.fallback, "permit": bool(res.permit_id),
        "recorded": res.outcome_recorded, "reason": res.reason,
        "actions": [pb.Action.Name(d.action) for d in res.decisions], "value": res.value,
        "verified": res.verified, "verify_tool": res.verify_tool_id, "verify_calls": verify_calls,
    }), flush=True)


if __name__ == "__main__":
    main()
