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
"""
import argparse
import json
import os
import re
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REQUESTS = os.path.join(ROOT, "bench", "rpc", "requests")
PROTO_DIR = os.path.join(ROOT, "proto")
PROTO = os.path.join(PROTO_DIR, "recovery", "v1", "recovery.proto")
SERVICE = "recovery.v1.RecoveryService"
CLK_TCK = os.sysconf("SC_CLK_TCK")

# The targets.
TARGET_RPS_MEMORY = 0.90    # recoveryd (memory store) rps / null rps, at least
TARGET_CPU_MEMORY = 1.15    # recoveryd CPU per call / null CPU per call, at most
TARGET_RPS_REDIS = 0.60     # recoveryd (Redis store) rps / null rps, at least
TARGET_P50_DIFF_US = 15.0   # p50 at concurrency 1, recoveryd - null, at most
TARGET_BREAKER_BYTES = 1024 # memory per tracked breaker, below
# A second null server in the workers=1 rounds: its ratios to the first
# show how far two identical servers drift apart on this machine.
NULL_CONTROL = "null-control"


class Case:
    """One measured RPC: its method, its body and, for the failure case, the
    companion stream that keeps the breaker closed (see decide_error.txtpb)."""

    def __init__(self, name, method, request_type, body, companion=None):
        self.name, self.method, self.request_type = name, method, request_type
        self.body, self.companion = body, companion


CASES = [
    Case("Classify", "Classify", "ClassifyRequest", "classify"),
    Case("Decide admission", "Decide", "DecideRequest", "decide_admission"),
    Case("Decide error", "Decide", "DecideRequest", "decide_error", companion="reset_transient"),
    Case("RecordOutcome", "RecordOutcome", "RecordOutcomeRequest", "record_outcome"),
    Case("GetBreakerState", "GetBreakerState", "GetBreakerStateRequest", "get_breaker_state"),
]
READ_CASES = [c for c in CASES if c.method == "GetBreakerState"]
COMPANION_METHOD, COMPANION_TYPE = "RecordOutcome", "RecordOutcomeRequest"

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


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- helpers


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, proc, timeout=15.0):
    end = time.time() + timeout
    while time.time() < end:
        if proc.poll() is not None:
            raise RuntimeError("server exited with %s" % proc.returncode)
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("port %d not open after %.0fs" % (port, timeout))


def proc_cpu_ticks(pid):
    """utime + stime of the whole process (all threads), in clock ticks."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def proc_minor_faults(pid):
    """Minor page faults of the whole process so far (a heap trimmed and
    regrown per call shows here)."""
    with open("/proc/%d/stat" % pid) as f:
        return int(f.read().rsplit(")", 1)[1].split()[7])


def proc_rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def machine_busy_ticks():
    """Busy ticks of all cores together (everything but idle and iowait)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v) - v[3] - v[4]


def pin(cores):
    return ["taskset", "-c", cores] if cores else []


def run_child(argv, timeout):
    """Runs argv; returns (stdout, stderr, returncode)."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = p.communicate(timeout=timeout)
    return out, err, p.returncode


class ChildCpu:
    """CPU seconds used by the children reaped within the block (the load
    generators: h2load and its companion)."""

    def __enter__(self):
        import resource
        self._r = resource
        u = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.start = u.ru_utime + u.ru_stime
        return self

    def __exit__(self, *exc):
        u = self._r.getrusage(self._r.RUSAGE_CHILDREN)
        self.seconds = u.ru_utime + u.ru_stime - self.start


def percentile(sorted_values, pct):
    if not sorted_values:
        return float("nan")
    k = max(0, min(len(sorted_values) - 1, int(round(pct / 100.0 * len(sorted_values) + 0.5)) - 1))
    return sorted_values[k]


def median(values):
    values = [v for v in values if v is not None and v == v]
    return statistics.median(values) if values else float("nan")


# ---------------------------------------------------------------- bodies


def encode_bodies(work):
    """protoc --encode each text message; writes NAME.bin (the message) and
    NAME.grpc (gRPC-framed: flag 0, big-endian length, message)."""
    bodies = {}
    wanted = [(c.body, c.request_type) for c in CASES]
    wanted += [(c.companion, COMPANION_TYPE) for c in CASES if c.companion]
    for name, rtype in wanted:
        with open(os.path.join(REQUESTS, name + ".txtpb"), "rb") as f:
            text = f.read()
        msg = subprocess.run(["protoc", "--encode=recovery.v1." + rtype, "-I", PROTO_DIR, PROTO],
                             input=text, stdout=subprocess.PIPE, check=True).stdout
        raw, framed = os.path.join(work, name + ".bin"), os.path.join(work, name + ".grpc")
        with open(raw, "wb") as f:
            f.write(msg)
        with open(framed, "wb") as f:
            f.write(b"\x00" + struct.pack(">I", len(msg)) + msg)
        bodies[name] = (raw, framed)
    return bodies


# ---------------------------------------------------------------- servers


class Server:
    """A server process under test: the null server, or recoveryd with a
    generated config (memory or Redis store)."""

    def __init__(self, label, argv, port, cores, work):
        self.label, self.argv, self.port, self.cores = label, argv, port, cores
        self.work, self.proc = work, None
        self.also_pids = []  # server-side helpers whose CPU counts too (redis-server)

    def start(self):
        out = open(os.path.join(self.work, self.label + ".log"), "a")
        self.proc = subprocess.Popen(pin(self.cores) + self.argv, stdout=out, stderr=out)
        wait_for_port(self.port, self.proc)
        return self

    @property
    def pid(self):
        return self.proc.pid

    def cpu_ticks(self):
        """(own ticks, own + helpers' ticks)"""
        own = proc_cpu_ticks(self.pid)
        return own, own + sum(proc_cpu_ticks(p) for p in self.also_pids)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def write_config(work, name, port, workers, redis_port=None, max_tools=200000,
                 redis_extra=""):
    """The shipped config's values except: the listen port, the worker count,
    the failure threshold (10000, see decide_error.txtpb), room for the
    memory test's tools and a free metrics port (and redis_extra, lines of
    store.redis). Logging, metrics and config watching stay on, as in
    production."""
    store = "  backend: memory\n"
    if redis_port:
        store = ('  backend: redis\n  redis:\n    address: "127.0.0.1:%d"\n'
                 '    key_prefix: "bench:"\n%s' % (redis_port, redis_extra))
    text = (
        "server:\n  listen: \"127.0.0.1:%d\"\n  workers: %d\n"
        "store:\n%s  max_tools: %d\n"
        "defaults:\n  circuit_breaker:\n    failure_threshold: 10000\n"
        "tools:\n  directory: %s\n"
        "classification:\n  rules_file: %s\n"
        "metrics:\n  listen: \"127.0.0.1:%d\"\n"
        % (port, workers, store, max_tools, os.path.join(ROOT, "config", "tools.d"),
           os.path.join(ROOT, "config", "rules.yaml"), free_port()))
    path = os.path.join(work, name + ".yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


def start_redis(work, cores):
    port = free_port()
    argv = pin(cores) + ["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                         "--save", "", "--appendonly", "no", "--dir", work]
    out = open(os.path.join(work, "redis.log"), "w")
    proc = subprocess.Popen(argv, stdout=out, stderr=out)
    wait_for_port(port, proc)
    return proc, port


# ---------------------------------------------------------------- load


class Load:
    """The load generators and their settings."""

    def __init__(self, args, bodies, work):
        self.args, self.bodies, self.work = args, bodies, work
        self.client_cores = args.client_cores

    def url(self, port, method):
        return "http://127.0.0.1:%d/%s/%s" % (port, SERVICE, method)

    def h2load_argv(self, port, method, body, seconds, clients, streams, extra=()):
        return pin(self.client_cores) + [
            "h2load", "-t", "1", "-c", str(clients), "-m", str(streams),
            "-D", "%dms" % (seconds * 1000),
            "-d", self.bodies[body][1], "-H", "content-type: application/grpc",
            "-H", "te: trailers", *extra, self.url(port, method)]

    def companion(self, port, case, seconds):
        """The low-rate reset stream beside the failure case (or None)."""
        if not case.companion:
            return None
        argv = self.h2load_argv(port, COMPANION_METHOD, case.companion, seconds, 1, 1,
                                ("--rps", str(self.args.companion_rps)))
        return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    @staticmethod
    def companion_done(proc):
        if not proc:
            return 0
        out, _ = proc.communicate(timeout=60)
        return parse_h2load(out)["succeeded"]

    def h2load(self, server, case, seconds, log_latency=True):
        """One saturation run: rps, p99 (from the request log), server CPU per
        call, client CPU per call, other load on the machine."""
        logfile = os.path.join(self.work, "h2load-requests.log")
        extra = ("--log-file", logfile) if log_latency else ()
        argv = self.h2load_argv(server.port, case.method, case.body, seconds,
                                self.args.h2_clients, self.args.h2_streams, extra)
        busy0, (srv0, side0) = machine_busy_ticks(), server.cpu_ticks()
        faults0 = proc_minor_faults(server.pid)
        t0 = time.time()
        with ChildCpu() as client:
            comp = self.companion(server.port, case, seconds)
            out, err, rc = run_child(argv, timeout=seconds + 60)
            comp_calls = self.companion_done(comp)
        wall = time.time() - t0
        srv1, side1 = server.cpu_ticks()
        faults = proc_minor_faults(server.pid) - faults0
        srv_ticks, side_ticks = srv1 - srv0, side1 - side0
        busy = machine_busy_ticks() - busy0
        res = parse_h2load(out)
        if rc != 0 or res["succeeded"] == 0:
            raise RuntimeError("h2load failed (%s): %s %s" % (rc, out[-500:], err[-500:]))
        calls = res["succeeded"] + comp_calls
        srv_s = srv_ticks / CLK_TCK
        res.update(
            rps=res["succeeded"] / res["seconds"],
            server_cpu_us=srv_s * 1e6 / calls,
            side_cpu_us=side_ticks / CLK_TCK * 1e6 / calls,
            server_cores=srv_s / wall,
            client_cpu_us=client.seconds * 1e6 / calls,
            client_cores=client.seconds / wall,
            other_cores=max(0.0, (busy - side_ticks) / CLK_TCK - client.seconds) / wall,
            companion_calls=comp_calls,
            faults_per_kcall=faults * 1000.0 / calls)
        if log_latency:
            res.update(latency_from_log(logfile, "sat_"))
        return res

    def run_beside_companion(self, argv, server, case):
        """Runs a fixed-count client with the case's companion stream (if any)
        beside it for as long as the client runs."""
        comp = self.companion(server.port, case, 600)
        try:
            return run_child(argv, timeout=600)
        finally:
            if comp:  # h2load ends only with its duration; its output is not needed here
                comp.kill()
                comp.communicate(timeout=60)

    def h2load_c1(self, server, case, count):
        """Latency at concurrency 1 as the server gives it: one connection,
        one call at a time, timed by a client that does not decode the
        answer (h2load), so the null server's empty answer and recoveryd's
        larger one cost the client the same."""
        logfile = os.path.join(self.work, "h2load-c1.log")
        argv = pin(self.client_cores) + [
            "h2load", "-t", "1", "-c", "1", "-m", "1", "-n", str(count),
            "-d", self.bodies[case.body][1], "-H", "content-type: application/grpc",
            "-H", "te: trailers", "--log-file", logfile, self.url(server.port, case.method)]
        out, err, rc = self.run_beside_companion(argv, server, case)
        if rc != 0 or parse_h2load(out)["succeeded"] != count:
            raise RuntimeError("h2load (c=1) failed (%s): %s %s" % (rc, out[-500:], err[-500:]))
        return latency_from_log(logfile, "")

    def ghz(self, server, case, count, concurrency, connections):
        """A fixed number of calls (not a duration: ghz reports the calls it
        cuts off at the end of a duration as Unavailable), every status kept."""
        argv = pin(self.client_cores) + [
            self.args.ghz, "--insecure", "--proto", PROTO, "--import-paths", PROTO_DIR,
            "--call", "%s.%s" % (SERVICE, case.method), "-B", self.bodies[case.body][0],
            "-c", str(concurrency), "--connections", str(connections), "-n", str(count),
            "-O", "json", "127.0.0.1:%d" % server.port]
        out, err, rc = self.run_beside_companion(argv, server, case)
        if rc not in (0, 1) or not out.strip():
            raise RuntimeError("ghz failed (%s): %s" % (rc, err[-500:]))
        d = json.loads(out)
        pct = {p["percentage"]: p["latency"] / 1000.0 for p in d.get("latencyDistribution") or []}
        statuses = d.get("statusCodeDistribution") or {}
        return dict(count=d.get("count", 0), rps=d.get("rps", 0.0), p50_us=pct.get(50),
                    p99_us=pct.get(99), statuses=statuses,
                    all_ok=bool(statuses) and set(statuses) == {"OK"},
                    errors=d.get("errorDistribution") or {})


def parse_h2load(out):
    res = dict(succeeded=0, failed=0, errored=0, seconds=0.0, status_2xx=0)
    m = re.search(r"finished in ([\d.]+)(ms|s),", out)
    if m:
        res["seconds"] = float(m.group(1)) / (1000.0 if m.group(2) == "ms" else 1.0)
    m = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, "
                  r"(\d+) failed, (\d+) errored", out)
    if m:
        res.update(succeeded=int(m.group(4)), failed=int(m.group(5)), errored=int(m.group(6)))
    m = re.search(r"status codes: (\d+) 2xx", out)
    if m:
        res["status_2xx"] = int(m.group(1))
    return res


def latency_from_log(path, prefix):
    """p50 and p99 (us) of h2load's request log: {prefix}p50_us, {prefix}p99_us."""
    lat = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[1] == "200":
                lat.append(int(parts[2]))
    os.unlink(path)
    lat.sort()
    return {prefix + "p50_us": percentile(lat, 50), prefix + "p99_us": percentile(lat, 99)}


# ---------------------------------------------------------------- samples


def sample_answer(port, case, bodies, body=None):
    """One call through curl; returns (grpc-status, first line of the decoded
    response), e.g. (0, 'action: ACTION_RETRY')."""
    name = body or case.body
    out = subprocess.run(
        ["curl", "-sS", "--http2-prior-knowledge", "-H", "content-type: application/grpc",
         "-H", "te: trailers", "--data-binary", "@" + bodies[name][1], "-D", "-",
         "-o", "/dev/stdout", "http://127.0.0.1:%d/%s/%s" % (port, SERVICE, case.method)],
        stdout=subprocess.PIPE, check=False).stdout
    m = re.search(rb"grpc-status: *(\d+)", out)
    status = int(m.group(1)) if m else None
    frame = out.find(b"\r\n\r\n")
    payload = out[frame + 4:] if frame >= 0 else b""
    first = ""
    if len(payload) >= 5 and payload[0] == 0:
        n = struct.unpack(">I", payload[1:5])[0]
        resp_type = case.request_type.replace("Request", "Response")
        dec = subprocess.run(["protoc", "--decode=recovery.v1." + resp_type, "-I", PROTO_DIR,
                              PROTO], input=payload[5:5 + n], stdout=subprocess.PIPE).stdout
        first = dec.decode(errors="replace").strip().splitlines()[0] if dec.strip() else "(empty)"
    return status, first


def answer_bytes(port, case, bodies):
    """The message of one answer of the server to the case's request."""
    out = subprocess.run(
        ["curl", "-sS", "--http2-prior-knowledge", "-H", "content-type: application/grpc",
         "-H", "te: trailers", "--data-binary", "@" + bodies[case.body][1], "-o", "-",
         "http://127.0.0.1:%d/%s/%s" % (port, SERVICE, case.method)],
        stdout=subprocess.PIPE, check=True).stdout
    if len(out) < 5 or out[0] != 0:
        raise RuntimeError("no answer to sample for %s" % case.name)
    return out[5:5 + struct.unpack(">I", out[1:5])[0]]


def decoding_control(load, case, service, cfg, rounds):
    """ghz's p50 at concurrency 1 against the null server answering every
    call with the bytes of one of the service's answers: what ghz itself
    spends on receiving and decoding that answer, which the plain null
    server's empty answer does not cost it."""
    path = os.path.join(load.work, "answer-%s.bin" % case.body)
    with open(path, "wb") as f:
        f.write(answer_bytes(service.port, case, load.bodies))
    p = free_port()
    null = Server("null-answer", [load.args.null_server, "--listen", "127.0.0.1:%d" % p,
                                  "--workers", "1", "--answer", path], p, service.cores,
                  load.work).start()
    try:
        return [load.ghz(null, case, cfg["ghz1_n"], 1, 1)["p50_us"] for _ in range(rounds)]
    finally:
        null.stop()


# ---------------------------------------------------------------- runs


def rotated(servers, r):
    """The servers in round r's order: rotated every round so drift in
    background load does not favour one."""
    k = r % len(servers)
    return servers[k:] + servers[:k]


def restart_all(servers):
    """Fresh processes for the next round. Two starts of one binary can
    differ by a few percent for the whole of their lives (where the
    loader and the kernel put their code and heap); a new pair every
    round turns that into noise the median averages out, instead of a
    bias every round of the run shares."""
    for s in servers:
        s.stop()
    for s in servers:
        s.start()


def measure_config(load, servers, cfg, rounds, h2load_s, with_ghz, control_of=None,
                   cases=CASES, restart=True):
    """Per case: throughput rounds, each running every server back to back,
    then (with_ghz) latency rounds that add h2load -c1 and ghz figures to
    the first latency_rounds rounds of each server (except the null
    control, which is only there for the throughput rounds). With
    control_of (a server's label), also the decoding control of each case.
    With restart, every throughput round starts each server afresh."""
    results = {}
    for case in cases:
        per = {s.label: [] for s in servers}
        for r in range(rounds):
            if restart:
                restart_all(servers)
            for s in rotated(servers, r):
                log("  %-16s round %d/%d  %s" % (case.name, r + 1, rounds, s.label))
                load.h2load(s, case, cfg["warmup_s"], log_latency=False)
                per[s.label].append(dict(h2=load.h2load(s, case, h2load_s)))
        latency_rounds = min(rounds, cfg["latency_rounds"]) if with_ghz else 0
        for r in range(latency_rounds):
            for s in rotated([s for s in servers if s.label != NULL_CONTROL], r):
                log("  %-16s latency %d/%d  %s" % (case.name, r + 1, latency_rounds, s.label))
                one = per[s.label][r]
                one["h1"] = load.h2load_c1(s, case, cfg["ghz1_n"])
                one["c1"] = load.ghz(s, case, cfg["ghz1_n"], 1, 1)
                one["sat"] = load.ghz(s, case, cfg["ghzsat_n"], 32, 4)
        samples = {s.label: sample_answer(s.port, case, load.bodies) for s in servers}
        results[case.name] = dict(runs=per, sample=samples)
        if latency_rounds and control_of:
            results[case.name]["control"] = decoding_control(
                load, case, servers[[s.label for s in servers].index(control_of)], cfg,
                latency_rounds)
        if case.companion:  # the breaker must still be closed after the runs
            results[case.name]["after"] = {
                s.label: breaker_line(s.port, "bench_transient", load)
                for s in servers if s.label not in ("null", NULL_CONTROL)}
    return results


def summarize(results, labels, cases=CASES):
    """Medians over rounds per server and case."""
    out = {}
    for case in cases:
        runs = results[case.name]["runs"]
        row = {}
        for label in labels:
            rs = runs[label]
            nul = runs["null"]
            row[label] = dict(
                rps_ratios=[a["h2"]["rps"] / b["h2"]["rps"] for a, b in zip(rs, nul)],
                cpu_ratios=[a["h2"]["side_cpu_us"] / b["h2"]["server_cpu_us"]
                            for a, b in zip(rs, nul)],
                side_cpu_us=median([r["h2"]["side_cpu_us"] for r in rs]),
                rps=median([r["h2"]["rps"] for r in rs]),
                cpu_us=median([r["h2"]["server_cpu_us"] for r in rs]),
                server_cores=median([r["h2"]["server_cores"] for r in rs]),
                client_cpu_us=median([r["h2"]["client_cpu_us"] for r in rs]),
                client_cores=median([r["h2"]["client_cores"] for r in rs]),
                other_cores=median([r["h2"]["other_cores"] for r in rs]),
                faults_per_kcall=median([r["h2"]["faults_per_kcall"] for r in rs]),
                sat_p99_us=median([r["h2"].get("sat_p99_us") for r in rs]),
                c1_p50_us=median([r["h1"]["p50_us"] for r in rs if "h1" in r]),
                c1_p99_us=median([r["h1"]["p99_us"] for r in rs if "h1" in r]),
                ghz_c1_p50_us=median([r["c1"]["p50_us"] for r in rs if "c1" in r]),
                ghz_sat_p99_us=median([r["sat"]["p99_us"] for r in rs if "sat" in r]),
                statuses_ok=all(r[k]["all_ok"] for r in rs for k in ("c1", "sat") if k in r),
                h2_failed=sum(r["h2"]["failed"] + r["h2"]["errored"] for r in rs))
        row["sample"] = results[case.name]["sample"]
        row["control_p50_us"] = median(results[case.name].get("control") or [None])
        row["after"] = results[case.name].get("after", {})
        out[case.name] = row
    return out


def verdict(ok):
    return "PASS" if ok else "FAIL"


def fmt(v, spec="%.1f"):
    return "-" if v is None or v != v else spec % v


def spread(values):
    values = [v for v in values if v == v]
    return "%.2f-%.2f" % (min(values), max(values)) if len(values) > 1 else ""


def table(title, summary, service_label, rps_target, with_latency, cpu_target=True,
          cases=CASES):
    """One line per RPC. Ratios are medians of the per-round ratios (each
    round pairs adjacent runs of the two servers); the range follows."""
    lines = ["", title, "=" * len(title)]
    head = "%-17s %7s %7s %-22s" % ("RPC", "rps0", "rps", "rps ratio [range]")
    if with_latency:
        head += " %6s %6s %-13s %6s %6s %6s %6s %6s %6s %6s" % (
            "p50_0", "p50", "p50 diff", "p99_0", "p99", "g50_0", "g50a", "g50", "p99s0", "p99s")
    head += " %6s %6s %-22s %7s %5s" % ("cpu0", "cpu", "cpu ratio [range]", "cli/srv", "other")
    lines += [head, "-" * len(head)]
    for case in cases:
        row = summary[case.name]
        n, s = row["null"], row[service_label]
        ratio, cratio = median(s["rps_ratios"]), median(s["cpu_ratios"])
        line = "%-17s %7.0f %7.0f %4.2f %-4s %-12s" % (
            case.name, n["rps"], s["rps"], ratio, verdict(ratio >= rps_target),
            "[%s]" % spread(s["rps_ratios"]) if spread(s["rps_ratios"]) else "")
        if with_latency:
            diff = s["c1_p50_us"] - n["c1_p50_us"]
            line += " %6s %6s %6s %-6s %6s %6s %6s %6s %6s %6s %6s" % (
                fmt(n["c1_p50_us"]), fmt(s["c1_p50_us"]), fmt(diff, "%+.1f"),
                verdict(diff <= TARGET_P50_DIFF_US), fmt(n["c1_p99_us"], "%.0f"),
                fmt(s["c1_p99_us"], "%.0f"), fmt(n["ghz_c1_p50_us"]),
                fmt(row["control_p50_us"]), fmt(s["ghz_c1_p50_us"]),
                fmt(n["sat_p99_us"], "%.0f"), fmt(s["sat_p99_us"], "%.0f"))
        line += " %6.1f %6.1f %4.2f %-6s %-10s %3.2f/%3.2f %5.2f" % (
            n["cpu_us"], s["side_cpu_us"], cratio,
            verdict(cratio <= TARGET_CPU_MEMORY) if cpu_target else "(info)",
            "[%s]" % spread(s["cpu_ratios"]) if spread(s["cpu_ratios"]) else "",
            n["client_cpu_us"] / n["cpu_us"] if n["cpu_us"] else 0,
            s["client_cpu_us"] / s["side_cpu_us"] if s["side_cpu_us"] else 0,
            median([n["other_cores"], s["other_cores"]]))
        lines.append(line)
    lines.append("targets: rps ratio >= %.2f; p50 diff <= %.0f us; CPU ratio <= %.2f%s"
                 % (rps_target, TARGET_P50_DIFF_US, TARGET_CPU_MEMORY,
                    "" if cpu_target else " (a memory-store target; shown for information)"))
    return lines


def control_table(summary):
    """The null server against a second null server in the same rounds:
    how far two identical servers' ratios move on this machine."""
    title = "workers=1, the method's own noise: a second null server (null-control) in every round"
    lines = ["", title, "=" * len(title),
             "%-17s %-24s %-24s" % ("RPC", "rps ratio [range]", "cpu ratio [range]")]
    lines.append("-" * len(lines[-1]))
    for case in CASES:
        c = summary[case.name][NULL_CONTROL]
        lines.append("%-17s %4.2f %-19s %4.2f %-19s" % (
            case.name, median(c["rps_ratios"]), "[%s]" % spread(c["rps_ratios"]),
            median(c["cpu_ratios"]), "[%s]" % spread(c["cpu_ratios"])))
    lines.append("two identical servers: a median this far from 1.00 is this machine's "
                 "noise, not a difference between the servers")
    return lines


LEGEND = [
    "legend: 0 = null server, no suffix = recoveryd. rps: h2load, median over rounds.",
    "  p50/p99: us at concurrency 1 (h2load -c1 -m1: one connection, one call at a time; h2load",
    "  does not decode answers). g50: ghz's p50 at concurrency 1, which includes ghz decoding",
    "  the answer; g50a: ghz against the null server answering recoveryd's bytes (the cost of",
    "  decoding that answer in ghz, not in the server). p99s: us under saturation (h2load's",
    "  request log). cpu: server CPU us per call from /proc (recoveryd + redis-server for the",
    "  Redis store). cli/srv: load generator CPU per call / server CPU per call (null/service);",
    "  below 1 means the client had headroom. other: cores busy with processes outside the",
    "  benchmark, or taken by the VM's host (steal), during the runs (high values make the",
    "  figures noisy).",
]


def notes_for(summary, labels):
    lines = []
    for case in CASES:
        row = summary[case.name]
        bits = []
        for label in labels:
            st, first = row["sample"][label]
            bits.append("%s: grpc-status %s %s" % (label, st, first))
            if not row[label]["statuses_ok"]:
                bits.append("%s: ghz saw non-OK statuses" % label)
            if row[label]["h2_failed"]:
                bits.append("%s: h2load failures %d" % (label, row[label]["h2_failed"]))
        for label, state in row["after"].items():
            bits.append("%s breaker after the runs: %s" % (label, state))
        other = median([row[l]["other_cores"] for l in labels])
        bits.append("other load %.2f cores" % other)
        bits.append("page faults per 1,000 calls %s" % ", ".join(
            "%s %.1f" % (l, row[l]["faults_per_kcall"]) for l in labels))
        lines.append("  %-17s %s" % (case.name, "; ".join(bits)))
    return lines


# ---------------------------------------------------------------- memory


def measure_memory(args, cfg, work, bodies):
    """VmRSS of a fresh recoveryd before and after Decide failures on N
    distinct tools (ghz, templated tool ids), divided by N."""
    n = cfg["memory_tools"]
    port = free_port()
    conf = write_config(work, "memory-test", port, 1, max_tools=max(200000, 2 * n))
    srv = Server("recoveryd-memtest", [args.recoveryd, "--config", conf], port,
                 args.server_cores, work).start()
    try:
        def drive(prefix, count):
            data = json.dumps({"tool_id": prefix + "-{{.RequestNumber}}", "attempt": 1,
                               "error": {"message": "connection reset by peer",
                                         "code": "ECONNRESET"}})
            out = subprocess.run(
                pin(args.client_cores) + [args.ghz, "--insecure", "--proto", PROTO,
                                          "--import-paths", PROTO_DIR, "--call",
                                          SERVICE + ".Decide", "-d", data, "-c", "16",
                                          "--connections", "2", "-n", str(count), "-O", "json",
                                          "127.0.0.1:%d" % port],
                stdout=subprocess.PIPE, check=False, text=True).stdout
            d = json.loads(out)
            return d.get("statusCodeDistribution") or {}
        drive("warm", 2000)  # per-thread arenas, gRPC buffers, metrics series cap
        time.sleep(0.5)
        before = proc_rss_kib(srv.pid)
        statuses = drive("mem", n)
        time.sleep(0.5)
        after = proc_rss_kib(srv.pid)
        lines = breaker_line(port, "mem-%d" % (n - 1), Load(args, bodies, work))
    finally:
        srv.stop()
    per = (after - before) * 1024.0 / n
    return dict(tools=n, rss_before_kib=before, rss_after_kib=after, bytes_per_breaker=per,
                statuses=statuses, last_tool_check=lines, estimate=store_estimate(args))


def breaker_line(port, tool_id, load):
    """GetBreakerState of one tool through curl, decoded, as one line."""
    load.bodies["_probe"] = encode_probe(load.work, tool_id)
    return probe_lines(port, load.bodies)


def encode_probe(work, tool_id):
    msg = subprocess.run(["protoc", "--encode=recovery.v1.GetBreakerStateRequest", "-I",
                          PROTO_DIR, PROTO], input=('tool_ids: "%s"' % tool_id).encode(),
                         stdout=subprocess.PIPE, check=True).stdout
    raw, framed = os.path.join(work, "probe.bin"), os.path.join(work, "probe.grpc")
    with open(raw, "wb") as f:
        f.write(msg)
    with open(framed, "wb") as f:
        f.write(b"\x00" + struct.pack(">I", len(msg)) + msg)
    return raw, framed


def probe_lines(port, bodies):
    """The decoded GetBreakerState answer for the probe tool, as one line."""
    out = subprocess.run(
        ["curl", "-sS", "--http2-prior-knowledge", "-H", "content-type: application/grpc",
         "-H", "te: trailers", "--data-binary", "@" + bodies["_probe"][1], "-o", "-",
         "http://127.0.0.1:%d/%s/GetBreakerState" % (port, SERVICE)],
        stdout=subprocess.PIPE).stdout
    if len(out) < 5:
        return "(no answer)"
    n = struct.unpack(">I", out[1:5])[0]
    dec = subprocess.run(["protoc", "--decode=recovery.v1.GetBreakerStateResponse", "-I",
                          PROTO_DIR, PROTO], input=out[5:5 + n], stdout=subprocess.PIPE).stdout
    return " ".join(l.strip() for l in dec.decode().splitlines() if ":" in l)


def store_estimate(args):
    """The memory store's own layout: bytes per breaker from its structs
    (bench/rpc/store_sizes, built beside null_server), plus glibc's chunk
    rounding and the hash bucket pointer."""
    exe = os.path.join(os.path.dirname(args.null_server), "store_sizes")
    if not os.path.exists(exe):
        return None
    out = subprocess.run([exe, "mem-99999"], stdout=subprocess.PIPE, text=True).stdout
    try:
        return json.loads(out)
    except ValueError:
        return None


# ---------------------------------------------------------------- profile


def profile(args, cfg, work, load, servers):
    """perf record (cpu-clock) of each server under the Decide error load;
    the flat profiles side by side, grouped by cost category."""
    if not shutil.which("perf"):
        return dict(error="perf not installed")
    case = next(c for c in CASES if c.name == "Decide error")
    report = {}
    for s in servers:
        data = os.path.join(work, "perf-%s.data" % s.label)
        rec = subprocess.Popen(["perf", "record", "-e", "cpu-clock", "-F", "4999", "-p",
                                str(s.pid), "-o", data], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        time.sleep(0.3)
        load.h2load(s, case, cfg["profile_s"], log_latency=False)
        rec.send_signal(signal.SIGINT)
        rec.wait(timeout=60)
        txt = subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-children",
                              "--sort", "dso,symbol", "--percent-limit", "0.3"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
        txt = "\n".join(line.rstrip()[:160] for line in txt.splitlines()) + "\n"
        with open(os.path.join(args.out, "perf-%s.txt" % s.label), "w") as f:
            f.write(txt)
        report[s.label] = parse_perf(txt)
    return report


PERF_CATEGORIES = [
    ("malloc/free", re.compile(r"malloc|free|calloc|realloc|_int_|tcache|arena_get|sysmalloc|"
                               r"unlink_chunk|consolidate")),
    ("locks/atomics", re.compile(r"pthread_mutex|pthread_rwlock|futex|__lll_|spin|sched_yield")),
    ("string/copy", re.compile(r"mem(cpy|move|set|cmp|chr)|str(len|cmp|chr|ncmp|casecmp|dup|"
                               r"ncasecmp|str)|__(memcpy|memmove|memset|strlen|strcmp)")),
    ("logging/printf", re.compile(r"printf|vfprintf|__printf|_IO_|fwrite|fputs|"
                                  r"strftime|gmtime|localtime|rd_log")),
    ("time", re.compile(r"clock_gettime|gettimeofday|__vdso|gpr_now")),
    ("protobuf-c", re.compile(r"protobuf_c")),
    ("kernel", re.compile(r"^\[k\]")),
]


def parse_perf(txt):
    rows = []
    for line in txt.splitlines():
        m = re.match(r"\s+([\d.]+)%\s+(\S+)\s+(\[[.k]\])\s+(.*)$", line)
        if m:
            rows.append((float(m.group(1)), m.group(2), m.group(3), m.group(4).strip()[:90]))
    cats = {}
    for pct, dso, kind, sym in rows:
        label = "other"
        for name, rx in PERF_CATEGORIES:
            if (name == "kernel" and kind == "[k]") or (name != "kernel" and rx.search(sym)):
                label = name
                break
        if label == "other":
            label = "recoveryd code" if dso == "recoveryd" else "other (%s)" % dso
        cats[label] = cats.get(label, 0.0) + pct
    return dict(top=rows[:25], categories=sorted(cats.items(), key=lambda kv: -kv[1]))


# ---------------------------------------------------------------- main


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
