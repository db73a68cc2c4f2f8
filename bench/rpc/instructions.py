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

With --cache-sim, callgrind also simulates the data caches (by default
this machine's: a 48 KiB 12-way L1d and a 2 MiB 16-way L2 as the last
level, and a 32 KiB 8-way L1i) and the table gives, per call, the
instruction fetches that miss L1i, the data reads and writes that miss L1d,
and those that miss the last level as well. Time per call is what the
targets are about, but on this VM it moves by more than the effect of a
layout change; simulated misses do not move at all.
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import procstat  # noqa: E402  (the benchmark's own helpers)
import rpc_cases  # noqa: E402
import server_procs  # noqa: E402


def h2load_calls(port, case, body, n):
    url = "http://127.0.0.1:%d/%s/%s" % (port, rpc_cases.SERVICE, case.method)
    subprocess.run(["h2load", "-n", str(n), "-c", "1", "-m", "8", "-d", body,
                    "-H", "content-type: application/grpc", "-H", "te: trailers", url],
                   check=True, capture_output=True)


def dumped_totals(out_dir):
    """{event: total} of the newest dump callgrind_control -d wrote."""
    dumps = [f for f in glob.glob(os.path.join(out_dir, "cg.out.*"))]
    if not dumps:
        raise RuntimeError("callgrind wrote no dump in %s" % out_dir)
    events = None
    with open(max(dumps, key=os.path.getmtime)) as f:
        for line in f:
            if line.startswith("events:"):
                events = line.split()[1:]
            if line.startswith(("summary:", "totals:")) and events:
                return dict(zip(events, map(int, line.split()[1:])))
    raise RuntimeError("no totals in the callgrind dump")


def figures(totals, calls):
    """Per call: instructions, and with the cache simulation the
    instruction fetches that miss L1i, the data accesses that miss L1d and
    those that miss the last level."""
    out = {"Ir": totals["Ir"] / calls}
    if "D1mr" in totals:
        out["I1 miss"] = totals["I1mr"] / calls
        out["D1 miss"] = (totals["D1mr"] + totals["D1mw"]) / calls
        out["LL miss"] = (totals["DLmr"] + totals["DLmw"]) / calls
    return out


def instructions_per_call(exe, case, body, args, work):
    out_dir = tempfile.mkdtemp(prefix="cg-", dir=work)
    port = procstat.free_port()
    if exe.endswith("null_server"):
        server = [exe, "--listen", "127.0.0.1:%d" % port, "--workers", "1"]
    else:
        server = [exe, "--config", server_procs.write_config(work, "cg", port, 1)]
    argv = ["valgrind", "--tool=callgrind",
            "--callgrind-out-file=" + os.path.join(out_dir, "cg.out")]
    if args.cache_sim:
        argv += ["--cache-sim=yes", "--I1=" + args.i1, "--D1=" + args.d1, "--LL=" + args.ll]
    argv += server
    with open(os.path.join(out_dir, "server.log"), "w") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=log)
    try:
        procstat.wait_for_port(port, proc, timeout=60)
        h2load_calls(port, case, body, args.warmup)
        subprocess.run(["callgrind_control", "-z", str(proc.pid)], check=True,
                       capture_output=True)
        h2load_calls(port, case, body, args.calls)
        subprocess.run(["callgrind_control", "-d", str(proc.pid)], check=True,
                       capture_output=True)
        time.sleep(0.5)
        return figures(dumped_totals(out_dir), args.calls)
    finally:
        proc.terminate()
        proc.wait()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("servers", nargs="+", help="LABEL=PATH, in the order of the columns")
    p.add_argument("--cases", default=",".join(c.name for c in rpc_cases.CASES))
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--warmup", type=int, default=300)
    p.add_argument("--cache-sim", action="store_true",
                   help="also simulate the data caches and report misses per call")
    p.add_argument("--i1", default="32768,8,64", help="L1i: size,ways,line (bytes)")
    p.add_argument("--d1", default="49152,12,64", help="L1d: size,ways,line (bytes)")
    p.add_argument("--ll", default="2097152,16,64", help="last level: size,ways,line")
    args = p.parse_args()
    specs = [s.split("=", 1) for s in args.servers]
    base = next((label for label, exe in specs if exe.endswith("null_server")), None)
    cases = [c for c in rpc_cases.CASES if c.name in args.cases.split(",")]
    work = tempfile.mkdtemp(prefix="rpc-instructions-")
    bodies = rpc_cases.encode_bodies(work)
    names = ["Ir"] + (["I1 miss", "D1 miss", "LL miss"] if args.cache_sim else [])
    head = "%-17s %-8s" % ("RPC", "per call") + "".join(" %12s" % label for label, _ in specs)
    if base:
        head += "".join(" %12s" % ("%s/%s" % (label, base)) for label, _ in specs
                        if label != base)
    print(head)
    print("-" * len(head))
    for case in cases:
        got = {label: instructions_per_call(exe, case, bodies[case.body][1], args, work)
               for label, exe in specs}
        for k, name in enumerate(names):
            line = "%-17s %-8s" % (case.name if k == 0 else "", name)
            line += "".join(" %12.1f" % got[label][name] for label, _ in specs)
            if base:
                line += "".join(" %12.2f" % (got[label][name] / max(got[base][name], 1e-9))
                                for label, _ in specs if label != base)
            print(line, flush=True)
    print("per call, whole process, %d calls after %d of warm-up%s"
          % (args.calls, args.warmup,
             "; I1 %s, D1 %s, LL %s (size,ways,line)" % (args.i1, args.d1, args.ll) if args.cache_sim else ""))


if __name__ == "__main__":
    main()
