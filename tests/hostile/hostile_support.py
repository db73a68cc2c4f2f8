"""Runs one attack (attacks.py, in its own process) against a server while
an executor calls Decide, and measures what the issue's bounds are about:
the server's resident memory (sampled every 20 ms from /proc), the
executor's success rate and p99 while the attacker is at work and in the
seconds after it left, whether the server lived, its memory 10 s after
the attacker left, and whether a new executor is served once that memory
is back."""
from __future__ import annotations

import json
import math
import subprocess
import sys
import threading
import time
from pathlib import Path

import grpc

import rdtest
from recovery.v1 import recovery_pb2 as pb

HERE = Path(__file__).resolve().parent
MIB = 1024 * 1024
RETURN_SLACK = 64 * MIB
RECOVERY_CHECK_S = 2.0


def rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def percentile(values, q):
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return ordered[max(1, math.ceil(q / 100.0 * len(ordered))) - 1]


class Executor(threading.Thread):
    """A legitimate executor: Decide (admission check, then a timeout
    error), one call after another, 1 s deadline each."""

    def __init__(self, address: str, token: str | None):
        super().__init__(daemon=True)
        self.channel = grpc.insecure_channel(address, options=[
            ("grpc.use_local_subchannel_pool", 1), ("grpc.enable_retries", 0)])
        from recovery.v1 import recovery_pb2_grpc as rpc
        self.stub = rpc.RecoveryServiceStub(self.channel)
        self.metadata = [("authorization", f"Bearer {token}")] if token else None
        self.stop = threading.Event()
        self.calls: list[tuple[float, float, str | None]] = []  # (begun, took, failure code)

    def run(self):
        i = 0
        while not self.stop.is_set():
            i += 1
            req = pb.DecideRequest(tool_id=f"exec-{i % 8}", attempt=1, turn_id=f"t{i % 64}",
                                   error=pb.ToolError(message="Connection timeout after 30s"))
            t0 = time.monotonic()
            code = None
            try:
                self.stub.Decide(req, timeout=1.0, metadata=self.metadata)
            except grpc.RpcError as e:
                code = e.code().name
            self.calls.append((t0, time.monotonic() - t0, code))
            time.sleep(0.002)

    def figures(self, start: float, end: float, prefix: str = "executor") -> dict:
        """The calls begun in [start, end): how many, the share that
        succeeded, their p99 and the failures by code."""
        window = [(took, code) for t0, took, code in list(self.calls) if start <= t0 < end]
        failures: dict[str, int] = {}
        for _, code in window:
            if code is not None:
                failures[code] = failures.get(code, 0) + 1
        n = len(window)
        return {f"{prefix}_calls": n,
                f"{prefix}_success": round((n - sum(failures.values())) / n, 4) if n else 0.0,
                f"{prefix}_p99_ms": round(percentile([took for took, _ in window], 99) * 1000, 1),
                f"{prefix}_failures": failures}


class RssSampler(threading.Thread):
    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid = pid
        self.peak = 0
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            try:
                self.peak = max(self.peak, rss_bytes(self.pid))
            except OSError:
                return
            time.sleep(0.02)


def attack(server: rdtest.Recoveryd, name: str, seconds: float, *, token: str | None = None,
           settle: float = 10.0, extra_wait: float = 0.0, address: str | None = None,
           after: float = 3.0, **args) -> dict:
    """Runs attacks.py NAME against the server for `seconds` while an
    executor calls Decide, and `after` seconds more once the attacker has
    left; returns the figures (executor_*: the calls begun during the
    attack; after_*: those begun after it; recovered_*: a new executor's,
    for RECOVERY_CHECK_S once the memory is back). `address` overrides the
    target (the metrics endpoint)."""
    pid = server.proc.pid
    executor = Executor(server.address, token)
    executor.start()
    time.sleep(1.0)  # the executor's connection and the server warm up
    rss_start = rss_bytes(pid)
    sampler = RssSampler(pid)
    sampler.start()
    cmd = [sys.executable, str(HERE / "attacks.py"), name, address or server.address, str(seconds)]
    if token:
        cmd += ["--token", token]
    for k, v in args.items():
        cmd += [f"--{k}"] + ([str(v)] if v != "" else [])
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 120)
    t_left = time.monotonic()
    attack_s = t_left - t0
    time.sleep(after)
    executor.stop.set()
    executor.join(5)
    executor.channel.close()
    alive = server.proc.poll() is None
    # memory is read `settle` seconds after the attacker left
    time.sleep(max(0.0, t_left + settle - time.monotonic()) if alive else 0)
    sampler.stop.set()
    sampler.join(1)
    alive = alive and server.proc.poll() is None
    rss_after = rss_bytes(pid) if alive else None
    # How long past the settle time memory took to come back (a backlog the
    # core is still working through), up to `extra_wait` seconds.
    returned_after = None
    if alive:
        t_settled = time.monotonic()
        while rss_bytes(pid) - rss_start > RETURN_SLACK and \
                time.monotonic() - t_settled < extra_wait and server.proc.poll() is None:
            time.sleep(0.5)
        if rss_bytes(pid) - rss_start <= RETURN_SLACK:
            returned_after = round(time.monotonic() - t_left, 1)
    # Whether a new executor is served once the server has worked through
    # what the attack left (its memory back, or given up waiting).
    recovered = {}
    if alive and server.proc.poll() is None:
        check = Executor(server.address, token)
        t_check = time.monotonic()
        check.start()
        time.sleep(RECOVERY_CHECK_S)
        check.stop.set()
        check.join(5)
        check.channel.close()
        recovered = check.figures(t_check, t_check + RECOVERY_CHECK_S, "recovered")
    try:
        report = json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        report = {"error": proc.stderr[-2000:]}
    return {"attack": report, "attack_seconds": round(attack_s, 2), "alive": alive,
            "rss_start_mib": round(rss_start / MIB, 1),
            "rss_peak_growth_mib": round((sampler.peak - rss_start) / MIB, 1),
            "rss_after_growth_mib": None if rss_after is None
            else round((rss_after - rss_start) / MIB, 1),
            "rss_returned_after_s": returned_after,
            **executor.figures(t0, t_left),
            **executor.figures(t_left, t_left + after, "after"), **recovered}


def track_tools(server: rdtest.Recoveryd, n: int, token: str | None) -> None:
    """Makes the server track `n` tools with ~110-byte ids."""
    from recovery.v1 import recovery_pb2_grpc as rpc
    metadata = [("authorization", f"Bearer {token}")] if token else None
    channel = grpc.insecure_channel(server.address)
    stub = rpc.RecoveryServiceStub(channel)
    for start in range(0, n, 500):
        futures = [stub.RecordOutcome.future(
            pb.RecordOutcomeRequest(tool_id=f"tool-{i:05d}-" + "x" * 100, success=True,
                                    attempt=1), metadata=metadata, timeout=10)
            for i in range(start, min(n, start + 500))]
        for fut in futures:
            fut.result()
    channel.close()
