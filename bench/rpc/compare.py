#!/usr/bin/env python3
"""Before/after: two or more recoveryd builds (and optionally the null
server) under the same saturation load, alternating, in one run.

run.py compares recoveryd with the null server; this compares builds of
recoveryd with each other, which is what a change to the hot path needs: the
same h2load load as run.py (-c4 -m64, the same request bodies, the companion
stream beside Decide error), every server pinned to the same cores and
started with the same generated config, the order reversed every round.
Reports, per case and server, the median and the minimum over rounds of the
server's CPU per call (utime + stime from /proc) and of rps. On a shared
machine the minimum is the least disturbed figure.

A change that touches the null server too (the thread and queue model both
share) needs each build against its own null server: --ratio A/B prints
the median and range of the round-paired ratios of A to B (CPU per call and
rps), and --fresh starts every server afresh before each round, after a
second of warm-up, as run.py does.

  bench/rpc/compare.py before=build-old/recoveryd after=build-perf/recoveryd \\
      [null=build-perf/bench/rpc/null_server] [--rounds 5] [--seconds 3] \\
      [--cases Classify,"Decide error"] [--redis-port P] [--workers N] \\
      [--fresh] [--ratio after/null ...]

A LABEL=PATH whose PATH ends in null_server is started as the null server;
with --redis-port, servers whose label starts with "redis" use a Redis
store on that port (each with its own key prefix).
"""
import argparse
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import load_generators  # noqa: E402  (the benchmark's own helpers)
import procstat  # noqa: E402
import rpc_cases  # noqa: E402
import server_procs  # noqa: E402


def write_config(work, label, port, workers, redis_port):
    path = server_procs.write_config(work, label, port, workers, redis_port)
    if redis_port:  # a key prefix per server, so builds do not share breakers
        with open(path) as f:
            text = f.read().replace('key_prefix: "bench:"', 'key_prefix: "cmp-%s:"' % label)
        with open(path, "w") as f:
            f.write(text)
    return path


def start_servers(specs, args, work):
    servers = []
    for spec in specs:
        label, exe = spec.split("=", 1)
        port = procstat.free_port()
        if exe.endswith("null_server"):
            argv = [exe, "--listen", "127.0.0.1:%d" % port, "--workers", str(args.workers)]
        else:
            redis = args.redis_port if label.startswith("redis") else None
            argv = [exe, "--config", write_config(work, label, port, args.workers, redis)]
        servers.append(server_procs.Server(label, argv, port, args.server_cores, work).start())
    return servers


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("servers", nargs="+", help="LABEL=PATH, in the order of the columns")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--seconds", type=int, default=3)
    p.add_argument("--cases", default="", help="comma-separated case names (default: all)")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--redis-port", type=int, default=0)
    p.add_argument("--server-cores", default="0")
    p.add_argument("--client-cores", default="1")
    p.add_argument("--h2-clients", type=int, default=4)
    p.add_argument("--h2-streams", type=int, default=64)
    p.add_argument("--companion-rps", type=int, default=200)
    p.add_argument("--fresh", action="store_true",
                   help="start every server afresh, and warm it up, before each round")
    p.add_argument("--ratio", action="append", default=[], metavar="A/B",
                   help="also print the round-paired ratios of server A to server B")
    args = p.parse_args()
    wanted = [c for c in args.cases.split(",") if c]
    cases = [c for c in rpc_cases.CASES if not wanted or c.name in wanted]
    work = tempfile.mkdtemp(prefix="rpc-compare-")
    load = load_generators.Load(args, rpc_cases.encode_bodies(work), work)
    servers = start_servers(args.servers, args, work)
    results = {}
    try:
        for case in cases:
            for r in range(args.rounds):
                if args.fresh:
                    server_procs.restart_all(servers)
                for srv in (servers if r % 2 == 0 else servers[::-1]):
                    if args.fresh:
                        load.h2load(srv, case, 1, log_latency=False)
                    res = load.h2load(srv, case, args.seconds, log_latency=False)
                    results.setdefault(case.name, {}).setdefault(srv.label, []).append(res)
    finally:
        for srv in servers:
            srv.stop()
    print("CPU us per call and rps: median (min) over %d rounds of %d s, server on cores %s"
          % (args.rounds, args.seconds, args.server_cores))
    print("%-18s" % "case" + "".join("%30s" % s.label for s in servers))
    for case in cases:
        row = "%-18s" % case.name
        for srv in servers:
            runs = results[case.name][srv.label]
            cpu = [x["server_cpu_us"] for x in runs]
            rps = [x["rps"] for x in runs]
            row += "%9.2f (%5.2f) %7.0f (%6.0f)" % (statistics.median(cpu), min(cpu),
                                                   statistics.median(rps), max(rps))
        print(row)
    print("(rps: median (max)); other load during the runs: %.2f cores (median)" % statistics.median(
        x["other_cores"] for per in results.values() for runs in per.values() for x in runs))
    for pair in args.ratio:
        print_ratios(pair, cases, results)


def print_ratios(pair, cases, results):
    """Median [range] of the per-round ratios of server A to server B."""
    a, b = pair.split("/", 1)
    for case in cases:
        ra, rb = results[case.name][a], results[case.name][b]
        cpu = [x["server_cpu_us"] / y["server_cpu_us"] for x, y in zip(ra, rb)]
        rps = [x["rps"] / y["rps"] for x, y in zip(ra, rb)]
        print("%-18s %s: CPU %.3f [%.2f-%.2f]  rps %.3f [%.2f-%.2f]" % (
            case.name, pair, statistics.median(cpu), min(cpu), max(cpu),
            statistics.median(rps), min(rps), max(rps)))


if __name__ == "__main__":
    main()
