"""components/redis-cluster/redis-cluster-init.sh, run for real on
loopback: `config` writes a password-protected cluster node's redis.conf
for each of six pods, and `create` joins them into a cluster of three
primaries with a replica each, then leaves an existing cluster alone."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

import deployutil as du

SCRIPT = du.K8S / "components/redis-cluster/redis-cluster-init.sh"
PASSWORD = "test-only-password"
NODES = 6


def ports_free(base: int) -> bool:
    for port in [base + i for i in range(NODES)] + [base + 10000 + i for i in range(NODES)]:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                return False
    return True


def port_base() -> int:
    for _ in range(200):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            base = s.getsockname()[1]
        if base + NODES + 10000 < 65535 and ports_free(base):
            return base
    pytest.fail("no run of free ports found")


def run(mode: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(["sh", str(SCRIPT), mode], env=env, capture_output=True, text=True,
                          timeout=120)


def cli(port: int, *args: str) -> str:
    env = dict(os.environ, REDISCLI_AUTH=PASSWORD)
    return subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(port), *args],
                          capture_output=True, text=True, env=env, timeout=10).stdout.strip()


def test_pods_form_a_cluster_once(tmp_path):
    for tool in ("redis-server", "redis-cli", "getent"):
        if not shutil.which(tool):
            pytest.skip(f"no {tool} (apt-get install redis-server)")
    pw = tmp_path / "password"
    pw.write_text(PASSWORD)
    base = port_base()
    common = dict(os.environ, PASSWORD_FILE=str(pw), PEER_HOST_PATTERN="127.0.0.1",
                  PEER_PORT_BASE=str(base), NODES=str(NODES), BIND="127.0.0.1",
                  NODE_TIMEOUT_MS="1000")
    procs = []
    try:
        for i in range(NODES):
            pod = tmp_path / f"pod-{i}"
            env = dict(common, CONF_DIR=str(pod / "conf"), DATA_DIR=str(pod / "data"),
                       POD_NAME=f"recoveryd-redis-cluster-{i}", ANNOUNCE_HOST="127.0.0.1",
                       REDIS_PORT=str(base + i))
            done = run("config", env)
            assert done.returncode == 0, done.stderr
            conf = (pod / "conf" / "redis.conf").read_text()
            assert "cluster-enabled yes" in conf and f"requirepass {PASSWORD}" in conf
            assert oct((pod / "conf" / "redis.conf").stat().st_mode & 0o777) == "0o600"
            procs.append(subprocess.Popen(["redis-server", str(pod / "conf" / "redis.conf")],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        created = run("create", dict(common, REDIS_PORT=str(base)))
        assert created.returncode == 0, created.stdout + created.stderr
        deadline = time.monotonic() + 30
        while "cluster_state:ok" not in cli(base, "cluster", "info"):
            assert time.monotonic() < deadline, cli(base, "cluster", "info")
            time.sleep(0.2)
        # a node learns the others' roles by gossip: the replicas may still
        # read as masters here for a moment after cluster_state:ok
        def roles():
            nodes = cli(base, "cluster", "nodes").splitlines()
            return sum("master" in n for n in nodes), sum("slave" in n for n in nodes)
        while roles() != (3, 3):
            assert time.monotonic() < deadline, cli(base, "cluster", "nodes")
            time.sleep(0.2)
        again = run("create", dict(common, REDIS_PORT=str(base)))
        assert again.returncode == 0 and "already exists" in again.stdout
        assert PASSWORD not in created.stdout + created.stderr
    finally:
        for p in procs:
            p.kill()
            p.wait()
