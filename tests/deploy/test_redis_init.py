"""components/redis-sentinel/redis-init.sh, run for real on loopback: the
first pod becomes a password-protected master that its Sentinel monitors,
and a pod started while a Sentinel answers follows the master it names
instead of starting as a second master."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

import deployutil as du

SCRIPT = du.K8S / "components/redis-sentinel/redis-init.sh"
PASSWORD = "test-only-password"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def init(conf: Path, pod: str, announce: str, redis_port: int, sentinel_port: int, pw: Path):
    env = dict(os.environ, CONF_DIR=str(conf), PASSWORD_FILE=str(pw), POD_NAME=pod,
               ANNOUNCE_HOST=announce, PEER_HOST_PATTERN="127.0.0.1",
               REDIS_PORT=str(redis_port), SENTINEL_PORT=str(sentinel_port), REPLICAS="1",
               QUORUM="1")
    proc = subprocess.run(["sh", str(SCRIPT)], env=env, capture_output=True, text=True,
                          timeout=30)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def cli(port: int, *args: str, password: str | None = None) -> str:
    env = dict(os.environ)
    if password:
        env["REDISCLI_AUTH"] = password
    return subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(port), *args],
                          capture_output=True, text=True, env=env, timeout=10).stdout.strip()


def wait_for(predicate, what: str, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    pytest.fail(f"timed out waiting for {what}")


@pytest.fixture
def redis_tools():
    for tool in ("redis-server", "redis-cli", "timeout"):
        if not shutil.which(tool):
            pytest.skip(f"no {tool} (apt-get install redis-server)")


def test_first_pod_is_a_protected_master_and_later_pods_follow_the_sentinels(
        redis_tools, tmp_path):
    pw = tmp_path / "password"
    pw.write_text(PASSWORD)
    redis_port, sentinel_port = free_port(), free_port()
    conf0 = tmp_path / "pod0"
    out = init(conf0, "recoveryd-redis-0", "127.0.0.1", redis_port, sentinel_port, pw)
    assert "first start" in out
    for name in ("redis.conf", "sentinel.conf"):
        assert (conf0 / name).stat().st_mode & 0o077 == 0, f"{name} readable by others"
    assert "replicaof" not in (conf0 / "redis.conf").read_text()

    procs = [subprocess.Popen(["redis-server", str(conf0 / "redis.conf")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)]
    try:
        wait_for(lambda: cli(redis_port, "ping", password=PASSWORD) == "PONG", "redis")
        assert "NOAUTH" in cli(redis_port, "ping"), "Redis answers without the password"
        for p in procs:
            assert PASSWORD not in Path(f"/proc/{p.pid}/cmdline").read_text()
        procs.append(subprocess.Popen(["redis-server", str(conf0 / "sentinel.conf"),
                                       "--sentinel"], stdout=subprocess.DEVNULL,
                                      stderr=subprocess.STDOUT))
        wait_for(lambda: cli(sentinel_port, "sentinel", "get-master-addr-by-name",
                             "recoveryd").splitlines()[:1] == ["127.0.0.1"], "sentinel")

        # Another pod starting now asks the Sentinel and becomes a replica.
        conf1 = tmp_path / "pod1"
        out = init(conf1, "recoveryd-redis-1", "localhost", redis_port, sentinel_port, pw)
        assert "Sentinels name 127.0.0.1" in out
        assert f"replicaof 127.0.0.1 {redis_port}" in (conf1 / "redis.conf").read_text()
        assert f"sentinel monitor recoveryd 127.0.0.1 {redis_port}" in \
            (conf1 / "sentinel.conf").read_text()
    finally:
        for p in procs:
            p.terminate()
            p.wait(timeout=10)


def test_empty_password_stops_the_pod_with_instructions(tmp_path):
    """The component's generated Secret has an empty password until an
    overlay replaces it: the init container must stop with what to do
    rather than start an unprotected Redis."""
    pw = tmp_path / "password"
    pw.write_text("")
    env = dict(os.environ, CONF_DIR=str(tmp_path / "conf"), PASSWORD_FILE=str(pw),
               POD_NAME="recoveryd-redis-0")
    proc = subprocess.run(["sh", str(SCRIPT)], env=env, capture_output=True, text=True,
                          timeout=30)
    assert proc.returncode != 0
    assert "the Secret recoveryd-redis has no password" in proc.stderr, proc.stderr
    assert "behavior: replace" in proc.stderr, proc.stderr
    assert not (tmp_path / "conf").exists(), "nothing is configured without a password"
