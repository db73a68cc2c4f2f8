#!/usr/bin/env python3
"""Checks the cache model of bench/rpc/cost_model.py by measurement: many
tools, each called at a low rate, through one recoveryd with the shipped
caches on its own redis-server; compares the Redis requests per tool call
(script runs, and admissions answered without a script) with what the
model predicts for the tool rate reached. They are counted with MONITOR,
which marks the commands scripts run ("[0 lua]"): each request is one
script call (FCALL, EVALSHA or EVAL) or one round trip holding one GET of
a record sent by recoveryd itself.

Each tool call is an admission check (Decide without an error) and then a
RecordOutcome success, or with probability --failure-rate a Decide with a
timeout error. Every tool's breaker is created before the measurement. Runs with the e2e venv (it uses the Python stubs):

  .venv/bin/python bench/rpc/cache_yield.py --recoveryd build-test/recoveryd \\
      [--tools 200] [--seconds 10] [--threads 8]
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
import cost_model  # noqa: E402
import grpc  # noqa: E402
import procstat  # noqa: E402
import rdtest  # noqa: E402
import server_procs  # noqa: E402

pb, pb_grpc = rdtest.pb, rdtest.pb_grpc


REQUEST_COMMANDS = ('"get"', '"fcall"', '"evalsha"', '"eval"')


class RequestCounter:
    """MONITOR of a redis-server from start() to stop(); stop() returns the
    requests seen."""

    def __init__(self, port, work):
        self.port, self.path = port, os.path.join(work, "monitor.log")

    def start(self):
        self.out = open(self.path, "w")
        self.proc = subprocess.Popen(["redis-cli", "-p", str(self.port), "monitor"],
                                     stdout=self.out, stderr=subprocess.DEVNULL)
        time.sleep(0.2)  # MONITOR is on before the load starts

    def stop(self):
        self.proc.terminate()
        self.proc.wait()
        self.out.close()
        n = 0
        with open(self.path) as f:
            for line in f:
                parts = line.split("] ", 1)
                if len(parts) == 2 and not parts[0].endswith(" lua") and \
                        parts[1].split(" ", 1)[0].lower() in REQUEST_COMMANDS:
                    n += 1
        return n


def caller(port, tools, failure_rate, stop, counts, lock):
    channel = grpc.insecure_channel("127.0.0.1:%d" % port)
    stub = pb_grpc.RecoveryServiceStub(channel)
    rng = random.Random()
    done = 0
    i = 0
    while not stop.is_set():
        tool = tools[i % len(tools)]
        i += 1
        stub.Decide(pb.DecideRequest(tool_id=tool, executor_id="bench"), timeout=5)
        if rng.random() < failure_rate:
            stub.Decide(pb.DecideRequest(tool_id=tool, error=rdtest.network_timeout(),
                                         attempt=1, executor_id="bench"), timeout=5)
        else:
            stub.RecordOutcome(pb.RecordOutcomeRequest(tool_id=tool, success=True, attempt=1,
                                                       latency_ms=5, executor_id="bench"),
                               timeout=5)
        done += 1
    with lock:
        counts.append(done)
    channel.close()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--recoveryd", default=os.path.join(ROOT, "build-perf", "recoveryd"))
    p.add_argument("--tools", type=int, default=200)
    p.add_argument("--seconds", type=float, default=10)
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--failure-rate", type=float, default=0.05)
    args = p.parse_args()
    work = tempfile.mkdtemp(prefix="cache-yield-")
    redis_proc, redis_port = server_procs.start_redis(work, "0-1")
    port = procstat.free_port()
    extra = "    closed_cache_ms: 250\n    outcome_batch_ms: 5\n    read_cache_ms: 100\n"
    cfg = server_procs.write_config(work, "cache-yield", port, 2, redis_port, redis_extra=extra)
    srv = server_procs.Server("recoveryd", [args.recoveryd, "--config", cfg], port, "0-1",
                              work).start()
    try:
        tag = rdtest.unique("y")
        per_thread = [["%s-%d" % (tag, k) for k in range(t, args.tools, args.threads)]
                      for t in range(args.threads)]
        # Every tool's breaker exists before the measurement: creating one
        # (with max_tools, a reservation in the index and a second admission)
        # is a cost per tool, not per call.
        with grpc.insecure_channel("127.0.0.1:%d" % port) as channel:
            stub = pb_grpc.RecoveryServiceStub(channel)
            for tools in per_thread:
                for tool in tools:
                    stub.RecordOutcome(pb.RecordOutcomeRequest(tool_id=tool, success=True,
                                                               attempt=1), timeout=5)
        time.sleep(0.3)  # the admission entries of the warm-up have expired
        stop, lock, counts = threading.Event(), threading.Lock(), []
        threads = [threading.Thread(target=caller, args=(port, tools, args.failure_rate, stop,
                                                         counts, lock))
                   for tools in per_thread]
        counter = RequestCounter(redis_port, work)
        counter.start()
        t0 = time.time()
        for t in threads:
            t.start()
        time.sleep(args.seconds)
        stop.set()
        for t in threads:
            t.join()
        wall = time.time() - t0
        time.sleep(0.05)  # the last batches
        scripts = counter.stop()
    finally:
        srv.stop()
        redis_proc.terminate()
        redis_proc.wait()
    calls = sum(counts)
    lam = calls / wall / args.tools  # tool calls per second per tool (one replica)
    predicted = sum(cost_model.per_tool_scripts(lam, lam * (1 - args.failure_rate),
                                                lam * args.failure_rate, 0.25, 0.005,
                                                args.tools)) / lam
    print("%d tools, %.0f tool calls/s (%.1f per tool), failure rate %.0f%%: "
          "%.3f Redis requests per tool call measured, %.3f predicted (%+.1f%%)"
          % (args.tools, calls / wall, lam, args.failure_rate * 100, scripts / calls, predicted,
             100 * (scripts / calls - predicted) / predicted))


if __name__ == "__main__":
    main()
