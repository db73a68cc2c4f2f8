#!/usr/bin/env python3
"""What each RPC costs on the Redis store: calls per second, recoveryd's and
redis-server's CPU per call, and the Redis commands per call (INFO
commandstats; commands run inside scripts are counted too).

Starts its own redis-server and one recoveryd (workers=1, the benchmark's
config plus --redis-option lines), both pinned to --server-cores; for each
case sends --warmup calls, then --calls calls with h2load (-c4 -m64, pinned
to --client-cores), and reads /proc and commandstats before and after.

  bench/rpc/redis_cost.py [--recoveryd build-perf/recoveryd] \\
      [--cases GetBreakerState] [--redis-option "read_cache_ms: 0"] [--calls 20000]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402  (the benchmark's own helpers)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def command_stats(port):
    out = subprocess.run(["redis-cli", "-p", str(port), "info", "commandstats"],
                         capture_output=True, text=True, check=True).stdout
    return {m.group(1): (int(m.group(2)), int(m.group(3)))
            for m in re.finditer(r"cmdstat_(\w+):calls=(\d+),usec=(\d+)", out)}


def h2load(args, port, case, body, n, pinned):
    url = "http://127.0.0.1:%d/%s/%s" % (port, run.SERVICE, case.method)
    argv = ["h2load", "-n", str(n), "-c", "4", "-m", "64", "-d", body,
            "-H", "content-type: application/grpc", "-H", "te: trailers", url]
    out = subprocess.run((run.pin(args.client_cores) if pinned else []) + argv,
                         capture_output=True, text=True, check=True).stdout
    return run.parse_h2load(out)


def measure(args, case, body, srv, redis_proc, redis_port):
    h2load(args, srv.port, case, body, args.warmup, False)
    before = command_stats(redis_port)
    t0, r0, w0 = run.proc_cpu_ticks(srv.pid), run.proc_cpu_ticks(redis_proc.pid), time.time()
    res = h2load(args, srv.port, case, body, args.calls, True)
    wall = time.time() - w0
    t1, r1 = run.proc_cpu_ticks(srv.pid), run.proc_cpu_ticks(redis_proc.pid)
    after = command_stats(redis_port)
    n = res["succeeded"]
    us = 1e6 / run.CLK_TCK / n
    print("%-17s %8.0f calls/s  recoveryd %5.1f us/call  redis-server %5.1f us/call  "
          "(%d of %d ok)" % (case.name, n / wall, (t1 - t0) * us, (r1 - r0) * us, n, args.calls))
    for name in sorted(after):
        calls = after[name][0] - before.get(name, (0, 0))[0]
        usec = after[name][1] - before.get(name, (0, 0))[1]
        if calls and name != "info":
            print("    %-14s %5.2f per call, %6.1f us each" % (name, calls / n, usec / calls))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--recoveryd", default=os.path.join(ROOT, "build-perf", "recoveryd"))
    p.add_argument("--cases", default=",".join(c.name for c in run.CASES))
    p.add_argument("--redis-option", action="append", default=[],
                   help='a line of store.redis, e.g. "read_cache_ms: 0" (repeatable)')
    p.add_argument("--calls", type=int, default=20000)
    p.add_argument("--warmup", type=int, default=2000)
    p.add_argument("--server-cores", default="0")
    p.add_argument("--client-cores", default="1")
    args = p.parse_args()
    work = tempfile.mkdtemp(prefix="redis-cost-")
    bodies = run.encode_bodies(work)
    redis_proc, redis_port = run.start_redis(work, args.server_cores)
    port = run.free_port()
    extra = "".join("    %s\n" % line for line in args.redis_option)
    cfg = run.write_config(work, "redis-cost", port, 1, redis_port, redis_extra=extra)
    srv = run.Server("recoveryd", [args.recoveryd, "--config", cfg], port, args.server_cores,
                     work).start()
    try:
        for case in run.CASES:
            if case.name in args.cases.split(","):
                measure(args, case, bodies[case.body][1], srv, redis_proc, redis_port)
    finally:
        srv.stop()
        redis_proc.terminate()
        redis_proc.wait()


if __name__ == "__main__":
    main()
