#!/usr/bin/env python3
"""Instructions per call under callgrind: recoveryd builds and the null
server on the same requests, a figure the machine's neighbours do not move.

CPU time per call (run.py, compare.py) moves by tens of percent between
runs of the same binary on a shared VM; the number of instructions a call
executes does not. Each server is started under valgrind --tool=callgrind
with the benchmark's config (memory store, workers=1); h2load sends
--warmup calls, the counters are zeroed (callgrind_control -z), h2load sends
--calls more, the counters are dumped (callgrind_control -d), and the
whole process's total (every thread, gRPC and the kernel interface included,
the kernel itself not) is divided by --calls.

  bench/rpc/instructions.py null=build-perf/bench/rpc/null_server \\
      after=build-perf/recoveryd [before=OLD/recoveryd] \\
      [--cases Classify,"Decide error"] [--calls 2000] [--warmup 300]

The first null_server is the baseline of the ratio column. Takes about
20 s per server and case.
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402  (the benchmark's own helpers)


def h2load_calls(port, case, body, n):
    url = "http://127.0.0.1:%d/%s/%s" % (port, run.SERVICE, case.method)
    subprocess.run(["h2load", "-n", str(n), "-c", "1", "-m", "8", "-d", body,
                    "-H", "content-type: application/grpc", "-H", "te: trailers", url],
                   check=True, capture_output=True)


def dumped_total(out_dir):
    """Ir of the newest dump callgrind_control -d wrote."""
    dumps = [f for f in glob.glob(os.path.join(out_dir, "cg.out.*"))]
    if not dumps:
        raise RuntimeError("callgrind wrote no dump in %s" % out_dir)
    with open(max(dumps, key=os.path.getmtime)) as f:
        for line in f:
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    raise RuntimeError("no totals in the callgrind dump")


def instructions_per_call(exe, case, body, args, work):
    out_dir = tempfile.mkdtemp(prefix="cg-", dir=work)
    port = run.free_port()
    if exe.endswith("null_server"):
        server = [exe, "--listen", "127.0.0.1:%d" % port, "--workers", "1"]
    else:
        server = [exe, "--config", run.write_config(work, "cg", port, 1)]
    argv = ["valgrind", "--tool=callgrind",
            "--callgrind-out-file=" + os.path.join(out_dir, "cg.out")] + server
    with open(os.path.join(out_dir, "server.log"), "w") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=log)
    try:
        run.wait_for_port(port, proc, timeout=60)
        h2load_calls(port, case, body, args.warmup)
        subprocess.run(["callgrind_control", "-z", str(proc.pid)], check=True,
                       capture_output=True)
        h2load_calls(port, case, body, args.calls)
        subprocess.run(["callgrind_control", "-d", str(proc.pid)], check=True,
                       capture_output=True)
        time.sleep(0.5)
        return dumped_total(out_dir) / args.calls
    finally:
        proc.terminate()
        proc.wait()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("servers", nargs="+", help="LABEL=PATH, in the order of the columns")
    p.add_argument("--cases", default=",".join(c.name for c in run.CASES))
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--warmup", type=int, default=300)
    args = p.parse_args()
    specs = [s.split("=", 1) for s in args.servers]
    base = next((label for label, exe in specs if exe.endswith("null_server")), None)
    cases = [c for c in run.CASES if c.name in args.cases.split(",")]
    work = tempfile.mkdtemp(prefix="rpc-instructions-")
    bodies = run.encode_bodies(work)
    head = "%-17s" % "RPC" + "".join(" %12s" % label for label, _ in specs)
    if base:
        head += "".join(" %12s" % ("%s/%s" % (label, base)) for label, _ in specs
                        if label != base)
    print(head)
    print("-" * len(head))
    for case in cases:
        counts = {label: instructions_per_call(exe, case, bodies[case.body][1], args, work)
                  for label, exe in specs}
        line = "%-17s" % case.name + "".join(" %12.0f" % counts[label] for label, _ in specs)
        if base:
            line += "".join(" %12.2f" % (counts[label] / counts[base]) for label, _ in specs
                            if label != base)
        print(line, flush=True)
    print("instructions per call, whole process, %d calls after %d of warm-up"
          % (args.calls, args.warmup))


if __name__ == "__main__":
    main()
