#!/usr/bin/env python3
"""What each RPC costs on the Redis store: calls per second, recoveryd's and
redis-server's CPU per call, the Redis commands per call (INFO
commandstats; commands run inside scripts are counted too) and the bytes
per call between recoveryd and Redis (INFO stats, replication traffic left
out), and from redis-server's CPU per call the calls one Redis primary (one
core) serves per second.

Starts its own redis-server (or with --cluster a six-node Redis Cluster,
three primaries with a replica each, summed over the primaries) and one
recoveryd (workers=1, the benchmark's config plus --redis-option lines),
all pinned to --server-cores; for each case sends --warmup calls, then
--calls calls with h2load (-c4 -m64, pinned to --client-cores; the failure
case in chunks, see CHUNK), and reads
/proc, commandstats and stats before and after. After each case, as its
yardstick in the same run, the Redis side of envoyproxy/ratelimit's
ShouldRateLimit (INCRBY + EXPIRE pipelined) sent the way recoveryd sends
its calls, at the case's pace.

--full-window 60000 first fills the tool's call window as a tool busy for a
whole window has it (the calls alone fill one or two of its ten buckets).

  bench/rpc/redis_cost.py [--recoveryd build-perf/recoveryd] [--cluster] \\
      [--cases GetBreakerState] [--redis-option "read_cache_ms: 0"] [--calls 20000] \\
      [--full-window 60000]
"""
import argparse
import os
import re
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import load_generators  # noqa: E402  (the benchmark's own helpers)
import procstat  # noqa: E402
import rpc_cases  # noqa: E402
import server_procs  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def info(port, section):
    return subprocess.run(["redis-cli", "-p", str(port), "info", section],
                          capture_output=True, text=True, check=True).stdout


def command_stats(ports):
    """Per command (calls, usec), and ("bytes in", "bytes out") of client
    traffic, summed over the servers on ports."""
    total = {}
    for port in ports:
        out = info(port, "commandstats")
        for m in re.finditer(r"cmdstat_(\w+):calls=(\d+),usec=(\d+)", out):
            c, u = total.get(m.group(1), (0, 0))
            total[m.group(1)] = (c + int(m.group(2)), u + int(m.group(3)))
        stats = dict(re.findall(r"^(\w+):(\d+)", info(port, "stats"), re.M))
        for way, key in (("in", "input"), ("out", "output")):
            moved = int(stats["total_net_%s_bytes" % key]) - \
                int(stats.get("total_net_repl_%s_bytes" % key, 0))
            c, _ = total.get("bytes " + way, (0, 0))
            total["bytes " + way] = (c + moved, 0)
    return total


def h2load(args, port, case, body, n, pinned):
    url = "http://127.0.0.1:%d/%s/%s" % (port, rpc_cases.SERVICE, case.method)
    clients = min(4, n)  # h2load wants a call for each client at least
    argv = ["h2load", "-n", str(n), "-c", str(clients), "-m", "64", "-d", body,
            "-H", "content-type: application/grpc", "-H", "te: trailers", url]
    out = subprocess.run((procstat.pin(args.client_cores) if pinned else []) + argv,
                         capture_output=True, text=True, check=True).stdout
    return load_generators.parse_h2load(out)


def cpu_ticks(procs):
    return sum(procstat.proc_cpu_ticks(p.pid) for p in procs)


def case_tool(case):
    with open(os.path.join(ROOT, "bench", "rpc", "requests", case.body + ".txtpb")) as f:
        return re.search(r'^tool_id: "([^"]+)"', f.read(), re.M).group(1)


def fill_window(args, case, redis_ports):
    """Gives the case's tool the call window of a tool busy for a whole
    window (all NB buckets written, the newest the current one), as in
    production; the bench alone fills one or two buckets. The window is the
    record's tail (server/store/lua/lib/window_record.lua): NB slots of
    (bucket, calls, failures, slow) as big-endian 64-bit integers."""
    port = redis_ports[0]
    t = subprocess.run(["redis-cli", "-p", str(port), "time"], capture_output=True, text=True,
                       check=True).stdout.split()
    now_ms = int(t[0]) * 1000 + int(t[1]) // 1000
    nb, width = 10, max(args.full_window // 10, 1)
    newest = now_ms // width
    slots = [None] * nb
    for b in range(newest - nb + 1, newest + 1):
        slots[b % nb] = struct.pack(">4q", b, 100, 5, 1)
    key = "bench:{tool:%s}:breaker" % case_tool(case)
    # the record exists after the warm-up; its 11 fields come first
    subprocess.run(["redis-cli", "-c", "-p", str(port), "-x", "setrange", key, "88"],
                   input=b"".join(slots), capture_output=True, check=True)


# The failure case's tool opens after 10,000 failures in a row (see
# decide_error.txtpb): its calls go in chunks, each after one companion
# success (not measured; its script is in the command counts) that ends
# the streak, so no chunk reaches the threshold.
CHUNK = 8000


def measure(args, case, body, srv, redis_procs, redis_ports, companion):
    h2load(args, srv.port, case, body, args.warmup, False)
    if args.full_window:
        fill_window(args, case, redis_ports)
    before = command_stats(redis_ports)
    ticks = redis_ticks = 0
    wall = 0.0
    n = 0
    left = args.calls
    while left > 0:
        chunk = min(left, CHUNK)
        if case.companion:
            reset = rpc_cases.Case("companion", rpc_cases.COMPANION_METHOD,
                                   rpc_cases.COMPANION_TYPE, case.companion)
            h2load(args, srv.port, reset, companion, 1, False)
        t0, r0, w0 = procstat.proc_cpu_ticks(srv.pid), cpu_ticks(redis_procs), time.time()
        part = h2load(args, srv.port, case, body, chunk, True)
        wall += time.time() - w0
        ticks += procstat.proc_cpu_ticks(srv.pid) - t0
        redis_ticks += cpu_ticks(redis_procs) - r0
        n += part["succeeded"]
        left -= chunk
    after = command_stats(redis_ports)
    us = 1e6 / procstat.CLK_TCK / n
    redis_us = redis_ticks * us
    recoveryd_us = ticks * us
    delta = {k: (after[k][0] - before.get(k, (0, 0))[0], after[k][1] - before.get(k, (0, 0))[1])
             for k in after}
    # Not the calls' own: the bench's INFO, replicas' acks, the slot-map fetches.
    others = ("info", "bytes in", "bytes out", "replconf", "cluster", "ping")
    commands = sum(c for k, (c, _) in delta.items() if k not in others)
    scripts = sum(delta.get(k, (0, 0))[0] for k in ("fcall", "evalsha", "eval"))
    print("%-17s %8.0f calls/s  recoveryd %5.1f us/call  redis-server %5.1f us/call  "
          "(%d of %d ok)" % (case.name, n / wall, recoveryd_us, redis_us, n, args.calls))
    print("    %.2f script runs, %.2f Redis commands (those inside scripts too), %.0f bytes to "
          "Redis, %.0f bytes back per call; one primary core serves %s calls/s"
          % (scripts / n, commands / n, delta["bytes in"][0] / n,
                                      delta["bytes out"][0] / n,
                                      "%.0f" % (1e6 / redis_us) if redis_us > 0 else "(no CPU)"))
    for name in sorted(delta):
        calls, usec = delta[name]
        if calls and name not in others:
            print("    %-14s %5.2f per call, %6.1f us each" % (name, calls / n, usec / calls))
    return recoveryd_us


def ratelimit_baseline(args, redis_procs, redis_ports, work_us, label):
    """The Redis side of envoyproxy/ratelimit's ShouldRateLimit (one
    descriptor: INCRBY and EXPIRE pipelined), sent by ratelimit_load (built
    beside recoveryd) one call at a time on one connection, as recoveryd's
    one worker sends its calls, from recoveryd's place (--server-cores),
    each call first spending work_us of CPU as recoveryd spent on the case's
    calls (the same pace: Redis's CPU per call depends on it): the case's
    yardstick,
    measured the same way in the same run. On a cluster, the primary that
    holds the key."""
    load = os.path.join(os.path.dirname(os.path.abspath(args.recoveryd)), "bench", "rpc",
                        "ratelimit_load")
    if not os.access(load, os.X_OK):
        sys.exit("%s not built (cmake --build <dir> --target ratelimit_load), or --no-baseline"
                 % load)
    key = "ratelimit_bench_descriptor"
    procs, ports = redis_procs, redis_ports
    if args.cluster:
        owner = [i for i, p in enumerate(redis_ports)
                 if "MOVED" not in subprocess.run(["redis-cli", "-p", str(p), "get", key],
                                                  capture_output=True, text=True).stdout]
        procs, ports = [redis_procs[owner[0]]], [redis_ports[owner[0]]]
    for n, timed in ((args.warmup, False), (args.calls, True)):
        before = command_stats(ports)
        r0, w0 = cpu_ticks(procs), time.time()
        subprocess.run(procstat.pin(args.server_cores)
                       + [load, str(ports[0]), str(n), "%.1f" % work_us], check=True)
        if timed:
            wall, r1 = time.time() - w0, cpu_ticks(procs)
            after = command_stats(ports)
            redis_us = (r1 - r0) * 1e6 / procstat.CLK_TCK / n
            commands = sum(after[k][0] - before.get(k, (0, 0))[0] for k in ("incrby", "expire"))
            print("  yardstick: ratelimit's call at %s's pace: %.0f calls/s, redis-server "
                  "%.1f us/call (%.2f commands: INCRBY + EXPIRE pipelined)"
                  % (label, n / wall, redis_us, commands / n))


def start_cluster(work, cores):
    """Six nodes joined by redis-cli --cluster create; returns the processes
    and ports of the three primaries, and the other processes."""
    procs, ports = [], []
    for i in range(6):
        d = os.path.join(work, "node-%d" % i)
        os.makedirs(d)
        port = procstat.free_port()
        argv = procstat.pin(cores) + [
            "redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
            "--appendonly", "no", "--dir", d, "--cluster-enabled", "yes",
            "--cluster-config-file", "nodes.conf", "--cluster-port", str(procstat.free_port()),
            "--repl-diskless-sync-delay", "0"]
        out = open(os.path.join(d, "redis.log"), "w")
        procs.append(subprocess.Popen(argv, stdout=out, stderr=out))
        procstat.wait_for_port(port, procs[-1])
        ports.append(port)
    subprocess.run(["redis-cli", "--cluster", "create"] +
                   ["127.0.0.1:%d" % p for p in ports] +
                   ["--cluster-replicas", "1", "--cluster-yes"],
                   capture_output=True, check=True)
    deadline = time.time() + 30
    while not all("cluster_state:ok" in subprocess.run(
            ["redis-cli", "-p", str(p), "cluster", "info"], capture_output=True,
            text=True).stdout for p in ports):
        if time.time() > deadline:
            sys.exit("the cluster did not form")
        time.sleep(0.2)
    primary = ["role:master" in info(p, "replication") for p in ports]
    return ([p for p, m in zip(procs, primary) if m], [p for p, m in zip(ports, primary) if m],
            [p for p, m in zip(procs, primary) if not m])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--recoveryd", default=os.path.join(ROOT, "build-perf", "recoveryd"))
    p.add_argument("--cases", default=",".join(c.name for c in rpc_cases.CASES))
    p.add_argument("--redis-option", action="append", default=[],
                   help='a line of store.redis, e.g. "read_cache_ms: 0" (repeatable)')
    p.add_argument("--calls", type=int, default=20000)
    p.add_argument("--cluster", action="store_true",
                   help="a six-node Redis Cluster instead of one redis-server")
    p.add_argument("--warmup", type=int, default=2000)
    p.add_argument("--full-window", type=int, default=0, metavar="WINDOW_MS",
                   help="before each case, fill the tool's call window (window_ms of the "
                        "config, 60000 shipped) as a tool busy for a whole window has it")
    p.add_argument("--no-baseline", action="store_true",
                   help="skip the yardstick: envoyproxy/ratelimit's Redis commands per call")
    p.add_argument("--server-cores", default="0")
    p.add_argument("--client-cores", default="1")
    args = p.parse_args()
    work = tempfile.mkdtemp(prefix="redis-cost-")
    bodies = rpc_cases.encode_bodies(work)
    others = []
    if args.cluster:
        redis_procs, redis_ports, others = start_cluster(work, args.server_cores)
        args.redis_option.append("cluster: [%s]" % ", ".join(
            '"127.0.0.1:%d"' % p for p in redis_ports))
    else:
        redis_proc, redis_port = server_procs.start_redis(work, args.server_cores)
        redis_procs, redis_ports = [redis_proc], [redis_port]
    port = procstat.free_port()
    extra = "".join("    %s\n" % line for line in args.redis_option)
    # With --cluster the address is ignored: store.redis.cluster names the nodes.
    cfg = server_procs.write_config(work, "redis-cost", port, 1, redis_ports[0], redis_extra=extra)
    srv = server_procs.Server("recoveryd", [args.recoveryd, "--config", cfg], port,
                              args.server_cores, work).start()
    try:
        for case in rpc_cases.CASES:
            if case.name in args.cases.split(","):
                companion = bodies[case.companion][1] if case.companion else None
                work_us = measure(args, case, bodies[case.body][1], srv, redis_procs, redis_ports,
                                  companion)
                if not args.no_baseline:
                    ratelimit_baseline(args, redis_procs, redis_ports, work_us, case.name)
    finally:
        srv.stop()
        for p in redis_procs + others:
            p.terminate()
            p.wait()


if __name__ == "__main__":
    main()
