"""Three recoveryd replicas on separate hosts sharing one Redis, a client
that round-robins over them, and one replica SIGKILLed under load: only the
calls in flight on it fail, and no breaker state is lost.

The hosts are network namespaces made by this test (root needed), joined by
veth pairs to a bridge in a hub namespace, with 10.231.0.0/24 addresses that
exist only inside them; everything is removed on exit. The client runs in
its own namespace too (tests/deploy/cluster_client.py)."""
from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import yaml

import deployutil as du

sys.path.insert(0, str(du.REPO / "tests/e2e"))
import rdtest  # noqa: E402

SUBNET = "10.231.0"
REDIS_IP = f"{SUBNET}.2"
CLIENT_IP = f"{SUBNET}.3"
REPLICA_IPS = [f"{SUBNET}.11", f"{SUBNET}.12", f"{SUBNET}.13"]
PORT = 50051
KILLED = 1                     # index of the replica the client kills


def run(*cmd: str) -> None:
    subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=30)


class Hosts:
    """Namespaces <prefix>-hub (the bridge) and one per host, each host
    with eth0 (veth to the bridge) and lo up."""

    def __init__(self):
        self.prefix = f"rdc{uuid.uuid4().hex[:6]}"
        self.hub = f"{self.prefix}-hub"
        self.names: list[str] = []
        self.procs: list[subprocess.Popen] = []
        atexit.register(self.close)

    def ns(self, host: str) -> str:
        return f"{self.prefix}-{host}"

    def create_hub(self) -> None:
        run("ip", "netns", "add", self.hub)
        self.names.append(self.hub)
        run("ip", "-n", self.hub, "link", "add", "br0", "type", "bridge")
        run("ip", "-n", self.hub, "link", "set", "br0", "up")

    def add(self, host: str, ip: str) -> None:
        ns = self.ns(host)
        run("ip", "netns", "add", ns)
        self.names.append(ns)
        veth = f"v{len(self.names)}"
        run("ip", "-n", self.hub, "link", "add", veth, "type", "veth", "peer", "name", "eth0",
            "netns", ns)
        run("ip", "-n", self.hub, "link", "set", veth, "master", "br0", "up")
        run("ip", "-n", ns, "addr", "add", f"{ip}/24", "dev", "eth0")
        run("ip", "-n", ns, "link", "set", "eth0", "up")
        run("ip", "-n", ns, "link", "set", "lo", "up")

    def start(self, host: str, cmd: list[str], log: Path) -> subprocess.Popen:
        out = open(log, "wb")
        proc = subprocess.Popen(["ip", "netns", "exec", self.ns(host), *cmd], stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.procs.append(proc)
        return proc

    def close(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        self.procs.clear()
        for ns in reversed(self.names):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        self.names.clear()


def wait_port(hosts: Hosts, host: str, ip: str, port: int, proc, log: Path, what: str):
    probe = (f"import socket,sys\ntry:\n socket.create_connection(('{ip}',{port}),0.5)\n"
             "except OSError: sys.exit(1)")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"{what} exited with {proc.returncode}:\n{log.read_text()[-4000:]}")
        if subprocess.run(["ip", "netns", "exec", hosts.ns(host), sys.executable, "-c", probe],
                          capture_output=True).returncode == 0:
            return
        time.sleep(0.1)
    pytest.fail(f"{what} did not listen on {ip}:{port}:\n{log.read_text()[-4000:]}")


# The replicas listen on their namespace's address, not loopback, and the
# test needs no token: protected mode must be told (server.allow_unauthenticated).
OPEN = {"allow_unauthenticated": True}


def redis_config(tmp_path: Path) -> Path:
    return rdtest.write_config(tmp_path / "cfg", server=OPEN, store={
        "backend": "redis",
        "redis": {"address": f"{REDIS_IP}:6379", "key_prefix": "rdcluster:",
                  "command_timeout_ms": 200}})


@pytest.fixture
def hosts():
    if os.geteuid() != 0:
        pytest.skip("needs root to create network namespaces (ip netns add)")
    if not shutil.which("ip"):
        pytest.skip("no ip command (iproute2)")
    probe = f"rdcprobe{os.getpid()}"
    res = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if res.returncode != 0:
        pytest.skip(f"ip netns add is not permitted here: {res.stderr.strip()}")
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    h = Hosts()
    yield h
    h.close()


def run_cluster(hosts: Hosts, binary: Path, config: Path, tmp_path: Path,
                with_redis: bool) -> tuple[dict, list]:
    """Starts the hosts (Redis too when asked) and the client; returns the
    client's report and the replicas [(process, log)]."""
    hosts.create_hub()
    hosts.add("client", CLIENT_IP)
    if with_redis:
        hosts.add("redis", REDIS_IP)
        redis_log = tmp_path / "redis.log"
        redis = hosts.start("redis", [shutil.which("redis-server"), "--bind", REDIS_IP,
                                      "--port", "6379", "--save", "", "--appendonly", "no",
                                      "--protected-mode", "no"], redis_log)
        wait_port(hosts, "redis", REDIS_IP, 6379, redis, redis_log, "redis-server")
    replicas = []
    for i, ip in enumerate(REPLICA_IPS):
        hosts.add(f"r{i}", ip)
        log = tmp_path / f"recoveryd-{i}.log"
        proc = hosts.start(f"r{i}", [str(binary), "--config", str(config),
                                     "--listen", f"{ip}:{PORT}"], log)
        time.sleep(0.2)
        if with_redis and proc.poll() is not None and "store.backend" in log.read_text():
            pytest.skip("the config accepts store.backend: redis but this recoveryd cannot "
                        "create the Redis store (server/store/factory.c, server/store/redis.c "
                        f"not wired yet): {log.read_text().strip()}")
        wait_port(hosts, f"r{i}", ip, PORT, proc, log, f"recoveryd {i}")
        replicas.append((proc, log))
    client = subprocess.run(
        ["ip", "netns", "exec", hosts.ns("client"), sys.executable,
         str(du.HERE / "cluster_client.py"),
         "--replicas", ",".join(f"{ip}:{PORT}" for ip in REPLICA_IPS),
         "--kill-pid", str(replicas[KILLED][0].pid), "--kill-index", str(KILLED)],
        capture_output=True, text=True, timeout=120)
    logs = "\n".join(f"--- recoveryd {i}\n{log.read_text()[-3000:]}"
                     for i, (_, log) in enumerate(replicas))
    assert client.returncode == 0, f"client failed:\n{client.stderr[-4000:]}\n{logs}"
    assert replicas[KILLED][0].wait(timeout=10) == -signal.SIGKILL
    return json.loads(client.stdout.strip().splitlines()[-1]), replicas


def check_only_in_flight_calls_failed(result: dict) -> None:
    """Only calls in flight on the replica as it died may fail: all with
    UNAVAILABLE, all sent before the client saw its connection reset (the
    end of the first failure; until the kernel has reaped the process and
    reset its connections, and the client's picker has dropped it, calls
    still go to it: 5 to 15 ms here, about 100 ms on a loaded machine, and
    at most 1 s allowed). Any call started later succeeds, and the load goes
    on over the survivors.
    (A client with a retryPolicy on UNAVAILABLE, as docs/DEPLOYMENT.md
    recommends, retries even these: Decide and RecordOutcome with an
    outcome_id are idempotent.)"""
    failures = result["failures"]
    print(f"in flight at the kill: {result['in_flight_at_kill']}, failed: {len(failures)}, "
          f"calls before/after: {result['calls_before_kill']}/{result['calls_after_kill']}")
    assert all(f["code"] == "UNAVAILABLE" for f in failures), failures
    if failures:
        reset_seen = min(f["end_s"] for f in failures)
        assert reset_seen <= 1.0, f"the client took {reset_seen} s to see the reset: {failures}"
        # 10 ms of slack: a call the picker sent as the reset was being read
        assert all(f["start_s"] <= reset_seen + 0.01 for f in failures), (
            f"calls started after the replica was seen gone failed: {failures}")
    assert result["calls_after_kill"] > 100, result


def stop_survivors(replicas) -> None:
    for i, (proc, log) in enumerate(replicas):
        if i != KILLED:
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=20) == 0, f"recoveryd {i}:\n{log.read_text()[-3000:]}"


def test_round_robin_client_survives_a_killed_replica(hosts, recoveryd_binary, tmp_path):
    """The same failover on the in-memory store (each replica keeps its own
    breakers): the client side of the property, which holds for any store."""
    config = rdtest.write_config(tmp_path / "cfg", server=OPEN)
    result, replicas = run_cluster(hosts, recoveryd_binary, config, tmp_path, with_redis=False)
    check_only_in_flight_calls_failed(result)
    stop_survivors(replicas)


def test_replica_killed_under_load_loses_no_shared_state(hosts, recoveryd_binary, tmp_path):
    if not shutil.which("redis-server"):
        pytest.skip("no redis-server (apt-get install redis-server)")
    config = redis_config(tmp_path)
    rc, out = rdtest.run_check_config(recoveryd_binary, config)
    if rc != 0:
        pytest.skip("the Redis store is not wired into the config yet: recoveryd "
                    "--check-config rejects store.backend: redis / store.redis "
                    f"(server/config, server/store/factory.c): {out.strip()}")
    result, replicas = run_cluster(hosts, recoveryd_binary, config, tmp_path, with_redis=True)

    keys = subprocess.run(["ip", "netns", "exec", hosts.ns("redis"), "redis-cli", "-h", REDIS_IP,
                           "--scan", "--pattern", "rdcluster:*"], capture_output=True, text=True)
    if keys.returncode == 0 and not keys.stdout.strip():
        pytest.skip("store.backend: redis is accepted but nothing reaches Redis: "
                    "server/store/factory.c does not create the Redis store yet")

    # Before the kill every replica saw the state written through all three.
    for addr, states in result["before"].items():
        assert states["opened_before_kill"]["state"] == "BREAKER_STATUS_OPEN", (addr, states)
        assert states["streak_across_kill"]["consecutive_failures"] == 3, (addr, states)

    check_only_in_flight_calls_failed(result)

    # No state lost: the open breaker stays open with the same epoch on the
    # survivors, and the streak of 3 continues to the threshold of 5.
    before = next(iter(result["before"].values()))["opened_before_kill"]
    for addr, states in result["after"].items():
        opened = states["opened_before_kill"]
        assert opened["state"] == "BREAKER_STATUS_OPEN", (addr, opened)
        assert opened["opened_at_ms"] == before["opened_at_ms"], (addr, opened, before)
        assert opened["opens_total"] == before["opens_total"], (addr, opened, before)
        streak = states["streak_across_kill"]
        assert streak["state"] == "BREAKER_STATUS_OPEN", (addr, streak)
    stop_survivors(replicas)
