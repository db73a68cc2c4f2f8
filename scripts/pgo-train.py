#!/usr/bin/env python3
"""The training run of a profile-guided build (scripts/build-release.sh).

Starts an instrumented recoveryd on 127.0.0.1 with the shipped rules and
tool manifests and a memory store, sends it the calls of scripts/pgo/calls.txt
with h2load (each request encoded from its text form by protoc), then stops
it with SIGTERM: the profile is written as the process exits. Before that
it reads the server's /metrics and fails unless every call was answered
with status OK, so a request that no longer parses cannot leave the build
trained on error paths.

  scripts/pgo-train.py BUILD/recoveryd

Needs protoc (protobuf-compiler) and h2load (nghttp2-client). Standard
library only.
"""
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PGO = os.path.join(ROOT, "scripts", "pgo")
PROTO_DIR = os.path.join(ROOT, "proto")
PROTO = os.path.join(PROTO_DIR, "recovery", "v1", "recovery.proto")
SERVICE = "recovery.v1.RecoveryService"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def config(work, port, metrics_port):
    """failure_threshold high, so the transient failures keep being retried
    as most are in production rather than opening the breakers."""
    path = os.path.join(work, "train.yaml")
    with open(path, "w") as f:
        f.write("server:\n  listen: \"127.0.0.1:%d\"\n  workers: 1\n"
                "store:\n  backend: memory\n"
                "defaults:\n  circuit_breaker:\n    failure_threshold: 10000\n"
                "tools:\n  directory: %s\n"
                "classification:\n  rules_file: %s\n"
                "metrics:\n  listen: \"127.0.0.1:%d\"\n"
                % (port, os.path.join(ROOT, "config", "tools.d"),
                   os.path.join(ROOT, "config", "rules.yaml"), metrics_port))
    return path


def calls():
    """(file, method, request type, count) of calls.txt, in order."""
    with open(os.path.join(PGO, "calls.txt")) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                name, method, rtype, count = line.split()
                yield name, method, rtype, int(count)


def framed_body(work, name, rtype):
    """The request as one gRPC message (flag 0, big-endian length, bytes)."""
    with open(os.path.join(PGO, name), "rb") as f:
        msg = subprocess.run(["protoc", "--encode=recovery.v1." + rtype, "-I", PROTO_DIR, PROTO],
                             input=f.read(), stdout=subprocess.PIPE, check=True).stdout
    path = os.path.join(work, name + ".grpc")
    with open(path, "wb") as f:
        f.write(b"\x00" + struct.pack(">I", len(msg)) + msg)
    return path


def handled_by_code(metrics_port):
    """{code: calls} of grpc_server_handled_total, over every method."""
    url = "http://127.0.0.1:%d/metrics" % metrics_port
    text = urllib.request.urlopen(url, timeout=10).read().decode()
    counts = {}
    for line in text.splitlines():
        if line.startswith("grpc_server_handled_total{") and SERVICE in line:
            code = line.split('grpc_code="', 1)[1].split('"', 1)[0]
            counts[code] = counts.get(code, 0) + int(float(line.rsplit(" ", 1)[1]))
    return counts


def wait_for_port(port, proc, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit("pgo-train: recoveryd exited with %d at start" % proc.returncode)
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit("pgo-train: recoveryd did not listen on port %d" % port)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: pgo-train.py BUILD/recoveryd")
    work = tempfile.mkdtemp(prefix="recoveryd-pgo-")
    port, metrics_port = free_port(), free_port()
    log = open(os.path.join(work, "recoveryd.log"), "w")
    proc = subprocess.Popen([sys.argv[1], "--config", config(work, port, metrics_port)],
                            stdout=log, stderr=log)
    try:
        wait_for_port(port, proc)
        for name, method, rtype, count in calls():
            url = "http://127.0.0.1:%d/%s/%s" % (port, SERVICE, method)
            out = subprocess.run(
                ["h2load", "-n", str(count), "-c", "4", "-m", "32", "-d",
                 framed_body(work, name, rtype), "-H", "content-type: application/grpc",
                 "-H", "te: trailers", url], capture_output=True, text=True, check=True).stdout
            if " 0 failed" not in out:
                sys.exit("pgo-train: %s: calls failed:\n%s" % (name, out))
        counts = handled_by_code(metrics_port)
        expected = sum(c for _, _, _, c in calls())
        if counts != {"OK": expected}:
            sys.exit("pgo-train: expected %d calls answered OK, got %s" % (expected, counts))
    finally:
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=60)
    if rc != 0:
        sys.exit("pgo-train: recoveryd exited with %d (log: %s)" % (rc, log.name))
    print("pgo-train: %d calls" % sum(c for _, _, _, c in calls()))


if __name__ == "__main__":
    main()
