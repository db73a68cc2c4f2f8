"""A Redis Cluster for the tests of the Redis store on a cluster
(test_redis_cluster_store.py): six redis-server --cluster-enabled yes on
free 127.0.0.1 ports, joined by redis-cli --cluster create into three
primaries with a replica each. Builds on cluster_support (RedisProc, the
RESP client, wait_until).

API
---
key_slot(key) -> int                 the cluster slot of a key (CRC16 of its hash tag)
tool_slot(prefix, tool) -> int       the slot of a tool's breaker key

RedisClusterTopology(workdir, node_timeout_ms=1000)
    .start() / .stop()               six nodes, created and ready (every node says
                                     cluster_state:ok, replicas synced)
    .nodes                           RedisProc objects
    .store_config(key_prefix=..., command_timeout_ms=50, **extra)
                                     the `store:` section: {backend: redis,
                                     redis: {cluster: [seeds], ...}}
    .primary_port(slot)              the port of the primary serving slot now
    .primary_ports()                 ports of the primaries now
    .node_id(port)                   CLUSTER MYID of the node on port
    .proc_on_port(port)              the RedisProc listening on port
    .reshard(from_port, to_port, slots)  redis-cli --cluster reshard; returns its
                                     exit code and output
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import rdtest
from cluster_support import RedisError, RedisProc, require_redis, wait_until

SLOTS = 16384


def crc16(data: bytes) -> int:
    """CRC16/XMODEM, the checksum Redis Cluster hashes keys with."""
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def key_slot(key: str) -> int:
    start = key.find("{")
    if start >= 0:
        end = key.find("}", start + 1)
        if end > start + 1:
            key = key[start + 1:end]
    return crc16(key.encode()) % SLOTS


def tool_slot(prefix: str, tool: str) -> int:
    return key_slot(f"{prefix}{{tool:{tool}}}:breaker")


def require_cluster_tools() -> None:
    require_redis()
    if shutil.which("redis-cli") is None:
        pytest.skip("redis-cli is not installed (Debian package redis-tools)")


class RedisClusterTopology:
    def __init__(self, workdir: Path, node_timeout_ms: int = 1000):
        self.workdir = Path(workdir)
        args = ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                "--cluster-node-timeout", str(node_timeout_ms),
                "--cluster-require-full-coverage", "no", "--repl-diskless-sync-delay", "0"]
        # The bus port is given: port + 10000 may be taken or past 65535.
        self.nodes = [RedisProc(self.workdir, f"node-{i}",
                                args=args + ["--cluster-port", str(rdtest.free_port())])
                      for i in range(6)]

    def start(self, timeout: float = 30.0) -> "RedisClusterTopology":
        for n in self.nodes:
            n.start()
        created = subprocess.run(
            ["redis-cli", "--cluster", "create", *[n.address for n in self.nodes],
             "--cluster-replicas", "1", "--cluster-yes"],
            capture_output=True, text=True, timeout=60)
        if created.returncode != 0:
            raise RuntimeError(f"redis-cli --cluster create failed:\n{created.stdout}\n"
                               f"{created.stderr}")
        if not wait_until(self.ready, timeout, interval=0.1):
            raise RuntimeError("the cluster did not become ready:\n" +
                               "\n".join(n.log_text(1500) for n in self.nodes))
        return self

    def ready(self) -> bool:
        for n in self.nodes:
            if not n.running:
                continue
            info = n.cmd("CLUSTER", "INFO")
            if "cluster_state:ok" not in info or "cluster_slots_ok:16384" not in info:
                return False
            repl = n.cmd("INFO", "replication")
            if "role:master" not in repl and "master_link_status:up" not in repl:
                return False
        owners = {self.primary_port(slot, n.port) for n in self.nodes if n.running
                  for slot in (0, 8000, 16383)}
        return len(owners) == 3 and None not in owners

    def stop(self) -> None:
        for n in self.nodes:
            n.stop()

    def store_config(self, key_prefix: str = "e2e:", command_timeout_ms: int = 50,
                     **extra) -> dict:
        redis = {"cluster": [n.address for n in self.nodes[:3]], "key_prefix": key_prefix,
                 "command_timeout_ms": command_timeout_ms}
        redis.update(extra)
        return {"backend": "redis", "redis": redis}

    def _slots(self, via_port: int | None = None):
        ports = [via_port] if via_port else [n.port for n in self.nodes if n.running]
        for port in ports:
            try:
                return redis_slots(port)
            except (OSError, RedisError):
                continue
        return []

    def primary_port(self, slot: int, via_port: int | None = None) -> int | None:
        for start, end, port in self._slots(via_port):
            if start <= slot <= end:
                return port
        return None

    def primary_ports(self) -> set[int]:
        return {port for _, _, port in self._slots()}

    def node_id(self, port: int) -> str:
        return RedisProc.cmd(self.proc_on_port(port), "CLUSTER", "MYID")

    def proc_on_port(self, port: int) -> RedisProc | None:
        return next((n for n in self.nodes if n.port == port), None)

    def reshard(self, from_port: int, to_port: int, slots: int):
        done = subprocess.run(
            ["redis-cli", "--cluster", "reshard", f"127.0.0.1:{from_port}",
             "--cluster-from", self.node_id(from_port), "--cluster-to", self.node_id(to_port),
             "--cluster-slots", str(slots), "--cluster-yes"],
            capture_output=True, text=True, timeout=300)
        return done.returncode, done.stdout + done.stderr


def redis_slots(port: int):
    """(start, end, primary port) of every range CLUSTER SLOTS names."""
    from cluster_support import redis_command  # noqa: PLC0415
    reply = redis_command(port, "CLUSTER", "SLOTS")
    return [(int(r[0]), int(r[1]), int(r[2][1])) for r in reply]
