"""The load generators and what they report: h2load at saturation (with
the server's CPU, the client's and the rest of the machine's around the
run) and at concurrency 1, ghz with every status kept, each beside the
failure case's companion stream.
"""
import json
import os
import re
import subprocess
import time

from procstat import (CLK_TCK, ChildCpu, machine_busy_ticks, pin, proc_minor_faults,
                      run_child)
from rpc_cases import COMPANION_METHOD, PROTO, PROTO_DIR, SERVICE


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


def percentile(sorted_values, pct):
    if not sorted_values:
        return float("nan")
    k = max(0, min(len(sorted_values) - 1, int(round(pct / 100.0 * len(sorted_values) + 0.5)) - 1))
    return sorted_values[k]
