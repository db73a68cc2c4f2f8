"""Memory per tracked breaker: a fresh recoveryd's VmRSS before and after
Decide failures on N distinct tools, and the memory store's own estimate
from its structs (bench/rpc/store_sizes).
"""
import json
import os
import subprocess
import time

from answer_samples import breaker_line
from load_generators import Load
from procstat import free_port, pin, proc_rss_kib
from rpc_cases import PROTO, PROTO_DIR, SERVICE
from server_procs import Server, write_config


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
