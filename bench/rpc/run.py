#!/usr/bin/env python3
"""The RPC benchmark: recoveryd against a null server on the same gRPC core.

Drives the null server (bench/rpc/null_server.c) and recoveryd with the same
load, alternating them several times in one run, for every measured RPC:

  h2load   saturation throughput (and its p99 from the per-request log),
           with the framed protobuf bodies of bench/rpc/requests/*.txtpb;
  ghz      latency at concurrency 1 and under load, checking every status;
  /proc    the server's own CPU time per call (utime + stime of the whole
           process over the run / completed calls), the client's CPU (its
           rusage), and the rest of the machine's busy time (other load);
  curl     one sample answer per case, decoded with protoc, so a body that
           the service rejects (HTTP 200 with grpc-status != 0, which h2load
           counts as a success) is caught.

In the workers=1 rounds a second null server runs beside the first (the
null control): its ratios to the first are the method's own noise floor.
Every server is started afresh before each throughput round
(--keep-servers: one process each for the whole run).

Then memory per tracked breaker (100,000 distinct tools through Decide), the
Redis store variant when the build has it, and a perf profile of recoveryd
under load. Prints one table per configuration with the issue's targets and
PASS/FAIL, and writes results.json and report.txt to the output directory.

Usage: bench/rpc/run.sh [--quick] [--out DIR] [...]   (see --help)
Standard library only; needs h2load, ghz, protoc, curl, taskset, perf and
redis-server (scripts/install-bench-deps.sh installs them).

The parts: rpc_cases.py (the RPCs and their bodies), server_procs.py (the
servers' processes), load_generators.py (h2load and ghz), measure.py (the
rounds and their medians), answer_samples.py (single answers through curl),
breaker_memory.py, perf_profile.py, report_tables.py (the report's text) and
procstat.py (ports and /proc); this file chooses the configurations and
writes the report.
"""
import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time

from breaker_memory import measure_memory
from load_generators import Load
from measure import NULL_CONTROL, log, measure_config, summarize
from perf_profile import profile
from procstat import free_port
from report_tables import (LEGEND, TARGET_BREAKER_BYTES, TARGET_RPS_MEMORY, TARGET_RPS_REDIS,
                           control_table, notes_for, table, verdict)
from rpc_cases import READ_CASES, encode_bodies
from server_procs import Server, start_redis, write_config

MODES = {
    # rounds of {null, recoveryd[, recoveryd+redis]} per case; seconds per run.
    # Throughput rounds are short and many: this VM's speed drifts within
    # seconds, so the two runs of a pair must be close in time and the
    # median must come from enough pairs. Latency runs follow, in rounds
    # of their own (latency_rounds), so they do not stand between a pair.
    # 11 rounds: with 7, two runs of the same binaries differed by up to
    # 0.2 in a case's median ratio; with 11 still by up to 0.15. workers=2
    # has as many rounds: its targets are the same.
    "full": dict(rounds=11, h2load_s=2, warmup_s=1, latency_rounds=3, ghz1_n=5000,
                 ghzsat_n=10000, w2_rounds=11, w2_h2load_s=2, memory_tools=100000,
                 profile_s=6),
    "quick": dict(rounds=1, h2load_s=2, warmup_s=0.5, latency_rounds=1, ghz1_n=2000,
                  ghzsat_n=5000, w2_rounds=1, w2_h2load_s=2, memory_tools=20000,
                  profile_s=3),
}


def machine():
    model = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return dict(nproc=os.cpu_count(), cpu=model, kernel=os.uname().release,
                grpc=subprocess.run(["pkg-config", "--modversion", "grpc"],
                                    stdout=subprocess.PIPE, text=True).stdout.strip())


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="one round, short runs (~2 min)")
    p.add_argument("--recoveryd", required=True)
    p.add_argument("--null-server", required=True)
    p.add_argument("--ghz", default=shutil.which("ghz") or "ghz")
    p.add_argument("--out", required=True, help="directory for results.json, report.txt, perf")
    p.add_argument("--server-cores", default="0", help="taskset list for the servers (\"\" = none)")
    p.add_argument("--client-cores", default="1", help="taskset list for the load generators")
    p.add_argument("--h2-clients", type=int, default=4, help="h2load -c (connections)")
    p.add_argument("--h2-streams", type=int, default=64, help="h2load -m (streams per connection)")
    p.add_argument("--companion-rps", type=int, default=200,
                   help="rate of the reset stream beside the Decide error case")
    p.add_argument("--keep-servers", action="store_true",
                   help="one process per server for the whole run (the method before "
                        "2026-11-26) instead of fresh ones every throughput round")
    p.add_argument("--skip", default="", help="comma list of parts to skip: "
                   "workers2,redis,memory,profile,ghz")
    p.add_argument("--rounds", type=int, default=0,
                   help="throughput rounds per case at workers=1 and at workers=2 "
                        "(default: the mode's, 11 in full mode); the null control's "
                        "median moves by about 1/sqrt(rounds)")
    return p.parse_args()


def run_memory_config(args, cfg, work, load, redis_proc, redis_port):
    """workers=1, pinned: null vs recoveryd (memory) [vs recoveryd (Redis)]."""
    servers = []
    for label in ("null", NULL_CONTROL):
        p = free_port()
        servers.append(Server(label, [args.null_server, "--listen", "127.0.0.1:%d" % p,
                                      "--workers", "1"], p, args.server_cores, work))
    p = free_port()
    servers.append(Server("memory", [args.recoveryd, "--config",
                                     write_config(work, "memory", p, 1)], p,
                          args.server_cores, work))
    if redis_port:
        p = free_port()
        servers.append(Server("redis", [args.recoveryd, "--config",
                                        write_config(work, "redis", p, 1, redis_port)], p,
                              args.server_cores, work))
        servers[-1].also_pids.append(redis_proc.pid)
    for s in servers:
        s.start()
    try:
        results = measure_config(load, servers, cfg, cfg["rounds"], cfg["h2load_s"],
                                 "ghz" not in args.skip, control_of="memory",
                                 restart=not args.keep_servers)
        profiled = [s for s in servers if s.label in ("null", "memory")]
        prof = None if "profile" in args.skip else profile(args, cfg, work, load, profiled)
    finally:
        for s in servers:
            s.stop()
    return results, [s.label for s in servers], prof


def run_redis_exact(args, cfg, work, load, redis_proc, redis_port):
    """GetBreakerState with store.redis.read_cache_ms 0 (every read a round
    trip to Redis) against the null server, h2load only: the cost of the
    read the cache saves."""
    pn, pr = free_port(), free_port()
    exact = Server("redis-exact", [args.recoveryd, "--config",
                                   write_config(work, "redis-exact", pr, 1, redis_port,
                                                redis_extra="    read_cache_ms: 0\n")],
                   pr, args.server_cores, work)
    exact.also_pids.append(redis_proc.pid)
    servers = [Server("null", [args.null_server, "--listen", "127.0.0.1:%d" % pn,
                               "--workers", "1"], pn, args.server_cores, work), exact]
    for s in servers:
        s.start()
    try:
        return measure_config(load, servers, cfg, cfg["rounds"], cfg["h2load_s"], False,
                              cases=READ_CASES, restart=not args.keep_servers)
    finally:
        for s in servers:
            s.stop()


def run_workers2(args, cfg, work, bodies):
    """workers=2 on both servers, nothing pinned, h2load only."""
    a = argparse.Namespace(**vars(args))
    a.client_cores = ""
    load = Load(a, bodies, work)
    pn, pm = free_port(), free_port()
    servers = [Server("null", [args.null_server, "--listen", "127.0.0.1:%d" % pn,
                               "--workers", "2"], pn, "", work),
               Server("memory", [args.recoveryd, "--config",
                                 write_config(work, "memory-w2", pm, 2)], pm, "", work)]
    for s in servers:
        s.start()
    try:
        return measure_config(load, servers, cfg, cfg["w2_rounds"], cfg["w2_h2load_s"], False,
                              restart=not args.keep_servers)
    finally:
        for s in servers:
            s.stop()


def redis_available(args, work):
    """A start of recoveryd with store.backend redis against a live Redis."""
    if not shutil.which("redis-server"):
        return None, None, "redis-server not installed"
    proc, port = start_redis(work, args.server_cores)
    p = free_port()
    conf = write_config(work, "redis-check", p, 1, port)
    chk = subprocess.run([args.recoveryd, "--config", conf, "--check-config"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if chk.returncode != 0:
        proc.terminate()
        proc.wait()
        return None, None, "--check-config: " + chk.stdout.strip()[-300:]
    try:
        Server("redis-check", [args.recoveryd, "--config", conf], p, "", work).start().stop()
    except RuntimeError as e:
        proc.terminate()
        proc.wait()
        return None, None, "start failed: %s" % e
    return proc, port, None


def main():
    args = parse_args()
    cfg = dict(MODES["quick" if args.quick else "full"])
    if args.rounds > 0:
        cfg["rounds"] = cfg["w2_rounds"] = args.rounds
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="rpc-bench-", dir=args.out)
    t_start = time.time()
    bodies = encode_bodies(work)
    load = Load(args, bodies, work)
    report = dict(machine=machine(), mode="quick" if args.quick else "full", settings=cfg,
                  pinning=dict(server=args.server_cores, client=args.client_cores),
                  h2load=dict(clients=args.h2_clients, streams=args.h2_streams, threads=1))
    lines = ["RPC benchmark (%s mode, %d throughput rounds per case) on %s, %d cores, "
             "kernel %s, gRPC core %s" % (
                 report["mode"], cfg["rounds"], report["machine"]["cpu"],
                 report["machine"]["nproc"], report["machine"]["kernel"],
                 report["machine"]["grpc"])]

    redis_proc, redis_port, redis_why = (None, None, "skipped")
    if "redis" not in args.skip:
        redis_proc, redis_port, redis_why = redis_available(args, work)
    try:
        log("workers=1, server on cores %s, client on cores %s" % (args.server_cores,
                                                                   args.client_cores))
        results, labels, prof = run_memory_config(args, cfg, work, load, redis_proc,
                                                   redis_port)
        exact = None
        if redis_port:
            log("Redis store, every read a round trip (read_cache_ms 0)")
            exact = summarize(run_redis_exact(args, cfg, work, load, redis_proc, redis_port),
                              ["null", "redis-exact"], READ_CASES)
    finally:
        if redis_proc:
            redis_proc.terminate()
            redis_proc.wait()
    summary = summarize(results, labels)
    report.update(workers1=summary, profile=prof)
    with_lat = "ghz" not in args.skip
    lines += table("workers=1, memory store (server pinned to cores %s, client to %s)"
                   % (args.server_cores, args.client_cores), summary, "memory",
                   TARGET_RPS_MEMORY, with_lat)
    lines += control_table(summary)
    if redis_port:
        lines += table("workers=1, Redis store (Redis on the server's cores; cpu = "
                       "recoveryd + redis-server)", summary, "redis", TARGET_RPS_REDIS, with_lat,
                       cpu_target=False)
        report["redis_exact"] = exact
        lines += table("workers=1, Redis store with read_cache_ms 0 (every read asks Redis; "
                       "for information)", exact, "redis-exact", TARGET_RPS_REDIS, False,
                       cpu_target=False, cases=READ_CASES)
    else:
        lines.append("")
        lines.append("redis: not available in this build (%s)" % redis_why)
    lines += [""] + LEGEND + [""]
    lines.append("checks (a sample answer per case, decoded; ghz statuses; other load; page faults):")
    lines += notes_for(summary, labels)

    if "workers2" not in args.skip:
        log("workers=2, nothing pinned")
        w2 = summarize(run_workers2(args, cfg, work, bodies), ["null", "memory"])
        report["workers2"] = w2
        lines += table("workers=2, memory store (nothing pinned; h2load only)", w2, "memory",
                       TARGET_RPS_MEMORY, False)
    if "memory" not in args.skip:
        log("memory per breaker")
        mem = measure_memory(args, cfg, work, bodies)
        report["memory"] = mem
        est = mem["estimate"]
        lines += ["", "memory per tracked breaker (%d tools through Decide with an error)"
                  % mem["tools"],
                  "  VmRSS %d KiB -> %d KiB: %.0f bytes per breaker  (target < %d)  %s"
                  % (mem["rss_before_kib"], mem["rss_after_kib"], mem["bytes_per_breaker"],
                     TARGET_BREAKER_BYTES, verdict(mem["bytes_per_breaker"] < TARGET_BREAKER_BYTES)),
                  "  statuses %s; last tool: %s" % (mem["statuses"], mem["last_tool_check"])]
        if est:
            lines.append("  store's own estimate: %s" % est.get("summary", est))
    if prof:
        lines += ["", "profile (perf, cpu-clock, Decide error under saturation), share of "
                  "server CPU by category:"]
        for label, p in prof.items():
            lines.append("  %-7s %s" % (label, ", ".join("%s %.1f%%" % kv
                                                          for kv in p["categories"][:9])))
        lines.append("  top symbols of recoveryd:")
        for pct, dso, _, sym in prof.get("memory", {}).get("top", [])[:15]:
            lines.append("    %5.2f%%  %-28s %s" % (pct, dso[:28], sym))
        lines.append("  full flat profiles: %s/perf-*.txt" % args.out)
    lines.append("")
    lines.append("elapsed %.0f s" % (time.time() - t_start))
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(args.out, "report.txt"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(dict(report, raw=results), f, indent=1, default=str)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
