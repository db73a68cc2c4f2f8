"""Several recoveryd replicas sharing one Redis, for the cluster tests
(test_redis_cluster.py) and for fault-injection suites built on them.

Everything runs on free 127.0.0.1 ports inside one temporary directory;
Redis persists nothing (--save "" --appendonly no). Only the standard
library and the e2e helpers (rdtest) are used: Redis is spoken to with a
small RESP client, so no Python Redis package is needed.

API
---
require_redis()                      pytest.skip unless redis-server is installed.
redis_command(port, *args)           one command on a fresh connection; returns the
                                     decoded reply (bytes -> str), raises RedisError
                                     on an error reply, OSError when nothing answers.

RedisProc(workdir, name, port=None, args=(), conf_text=None)
    .start() / .stop()               start (waits for PING) / SIGKILL and reap
    .kill()                          SIGKILL, keeping port and arguments (an outage)
    .restart()                       kill if running, start again on the same port
    .pause() / .resume()             SIGSTOP / SIGCONT (a hung Redis)
    .cmd(*args)                      redis_command on its port
    .port, .address ("127.0.0.1:P"), .dir, .log_text()

RedisTopology(workdir, replica=False, sentinels=0, master_name="rdmaster",
              quorum=2, down_after_ms=1000, failover_timeout_ms=3000)
    .start() / .stop()               master (+ replica, + sentinels, waiting until every
                                     sentinel sees the replica and the other sentinels)
    .master, .replica, .sentinels    RedisProc objects (replica/sentinels may be None/[])
    .store_config(key_prefix=..., command_timeout_ms=50, **extra)
                                     the `store:` section for rdtest.write_config: direct
                                     address, or sentinels + master_name when there are any
    .sentinel_master_port()          the master the sentinels name now (None if unknown)
    .proc_on_port(port)              the RedisProc listening on that port

RecoverydCluster(binary, workdir, store, n=3, **config_kw)
    config_kw go to rdtest.write_config (defaults, tools, server, ...); every replica
    reads the same configuration and gets its own gRPC port, log and metrics port
    (metrics.listen 127.0.0.1:0; the port is read from the "serving" log line).
    .start()                         starts all replicas (parallel readiness wait)
    .replicas                        list of rdtest.Recoveryd (.stub, .address, ...)
    .stubs                           their RecoveryService stubs
    .stop()                          SIGTERM to every replica; returns the problems
                                     (exit code != 0) as a list of strings
    .admin_stub(i, token)            AdminService stub sending `Bearer <token>`
    .metrics_port(i), .metrics_text(i), .metric(i, name) -> float | None

timed_call(method, request, timeout=5.0) -> CallResult
    one unary call with its latency, status code name and whether the server
    marked it degraded (initial metadata `recoveryd-degraded: true`).

Load(cluster, threads_per_replica=2, timeout=5.0)
    context manager: callers on every replica loop admission check (Decide
    without error) + RecordOutcome(success) on their own tool, each on its own
    connection; .results is a list of Sample(start, end, replica, method, code,
    degraded), times on time.monotonic(). Helpers: .snapshot(), .calls_between().

percentile(values, q), summarize(samples) -> dict of figures to print.

Fixtures (import them into the test module to use them):
    cluster_env      function scope: ClusterEnv(binary, tmp dir); .redis(**kw) starts a
                     RedisTopology, .recoveryd(store, n=3, **kw) a RecoverydCluster; at
                     teardown every recoveryd gets SIGTERM and must exit 0, then Redis
                     processes are killed.
    module_cluster_env               the same, module scope.
"""
from __future__ import annotations

import atexit
import json
import math
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest

import rdtest
from rdtest import pb, pb_grpc

try:  # the admin stubs are built with the others by rdtest
    import importlib
    admin_pb = importlib.import_module("recovery.v1.admin_pb2")
    admin_grpc = importlib.import_module("recovery.v1.admin_pb2_grpc")
except ImportError:  # pragma: no cover - admin.proto missing
    admin_pb = admin_grpc = None

DEGRADED_KEY = "recoveryd-degraded"


# ---------------------------------------------------------------- redis

def have_redis() -> bool:
    return shutil.which("redis-server") is not None


def require_redis() -> None:
    if not have_redis():
        pytest.skip("redis-server is not installed (Debian package redis-server); "
                    "the cluster tests need a real Redis")


class RedisError(Exception):
    """An error reply (-ERR ..., -NOSCRIPT ..., ...)."""


def _encode(args) -> bytes:
    out = [f"*{len(args)}\r\n".encode()]
    for a in args:
        b = a if isinstance(a, bytes) else str(a).encode()
        out.append(f"${len(b)}\r\n".encode() + b + b"\r\n")
    return b"".join(out)


def _read_reply(f):
    line = f.readline()
    if not line.endswith(b"\r\n"):
        raise OSError("connection closed by Redis")
    kind, rest = line[:1], line[1:-2]
    if kind == b"+":
        return rest.decode()
    if kind == b"-":
        raise RedisError(rest.decode())
    if kind == b":":
        return int(rest)
    if kind == b"$":
        n = int(rest)
        if n < 0:
            return None
        data = f.read(n + 2)
        return data[:-2].decode("utf-8", "replace")
    if kind == b"*":
        n = int(rest)
        return None if n < 0 else [_read_reply(f) for _ in range(n)]
    raise OSError(f"unexpected reply from Redis: {line!r}")


def redis_command(port: int, *args, host: str = "127.0.0.1", timeout: float = 2.0):
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.sendall(_encode(args))
        with s.makefile("rb") as f:
            return _read_reply(f)


def wait_until(predicate, timeout: float, interval: float = 0.02):
    """Polls predicate() until it returns something true; returns it, or
    None after timeout. Exceptions from predicate count as false."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = predicate()
            if value:
                return value
        except (OSError, RedisError):
            pass
        if time.monotonic() >= deadline:
            return None
        time.sleep(interval)


# Replicas agree on a breaker within a bound, not at once: a replica answers
# GetBreakerState of a named tool from the last reply it saw for up to
# store.redis.read_cache_ms (default 100) and sees other replicas' batched
# outcomes up to outcome_batch_ms late (docs/REDIS.md). A replica reads its
# own writes at once.
SETTLE_S = 1.0


def settled_breakers(stubs, tool_id: str, settle_s: float = SETTLE_S):
    """Every replica's state of tool_id, read again until they all agree (or
    settle_s passed: then the disagreement is what the caller sees)."""
    states = []

    def agree():
        states[:] = [rdtest.breaker(stub, tool_id) for stub in stubs]
        return all(s == states[0] for s in states)

    wait_until(agree, settle_s, interval=0.01)
    return states


class RedisProc:
    """One redis-server (or sentinel) process in its own directory."""

    # every started process, so an interrupted run can still be cleaned up
    live: list["RedisProc"] = []

    def __init__(self, workdir: Path, name: str, *, port: int | None = None, args=(),
                 conf_text: str | None = None):
        self.name = name
        self.dir = Path(workdir) / name
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = port or rdtest.free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.extra_args = list(args)
        self.conf_text = conf_text
        self.proc: subprocess.Popen | None = None
        self._log = None

    def _argv(self) -> list[str]:
        if self.conf_text is not None:  # sentinel: rewrites its own config file
            conf = self.dir / "sentinel.conf"
            if not conf.exists():
                conf.write_text(self.conf_text.format(port=self.port, dir=self.dir))
            return ["redis-server", str(conf), "--sentinel"]
        return ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no", "--daemonize", "no",
                "--dir", str(self.dir), *self.extra_args]

    def start(self, timeout: float = 10.0) -> "RedisProc":
        self._log = open(self.dir / "server.log", "ab")
        self.proc = subprocess.Popen(self._argv(), cwd=self.dir, stdout=self._log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        if self not in RedisProc.live:
            RedisProc.live.append(self)
        if not wait_until(lambda: self.cmd("PING", timeout=0.5) == "PONG", timeout):
            raise RuntimeError(f"{self.name} did not answer PING on {self.address} within "
                               f"{timeout}s:\n{self.log_text()}")
        return self

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGCONT)  # a paused process dies too
                self.proc.kill()
            self.proc.wait()
            self.proc = None
        if self._log:
            self._log.close()
            self._log = None

    def restart(self, timeout: float = 10.0) -> "RedisProc":
        self.kill()
        return self.start(timeout)

    def pause(self) -> None:
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self.proc.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        self.kill()
        if self in RedisProc.live:
            RedisProc.live.remove(self)

    def cmd(self, *args, timeout: float = 2.0):
        return redis_command(self.port, *args, timeout=timeout)

    def log_text(self, tail: int = 4000) -> str:
        try:
            return (self.dir / "server.log").read_bytes()[-tail:].decode("utf-8", "replace")
        except OSError:
            return "(no output)"


@atexit.register
def _kill_leftovers() -> None:
    """An interrupted run (Ctrl-C during a test) leaves no Redis behind."""
    for p in list(RedisProc.live):
        p.stop()


SENTINEL_CONF = """port {port}
bind 127.0.0.1
daemonize no
dir {dir}
sentinel monitor %(name)s 127.0.0.1 %(master)d %(quorum)d
sentinel down-after-milliseconds %(name)s %(down)d
sentinel failover-timeout %(name)s %(failover)d
sentinel parallel-syncs %(name)s 1
"""


class RedisTopology:
    """A master, optionally one replica and N sentinels."""

    def __init__(self, workdir: Path, *, replica: bool = False, sentinels: int = 0,
                 master_name: str = "rdmaster", quorum: int = 2, down_after_ms: int = 1000,
                 failover_timeout_ms: int = 3000):
        self.workdir = Path(workdir)
        self.master_name = master_name
        self.master = RedisProc(self.workdir, "redis-master")
        self.replica = (RedisProc(self.workdir, "redis-replica",
                                  args=["--replicaof", "127.0.0.1", str(self.master.port)])
                        if replica else None)
        conf = SENTINEL_CONF % {"name": master_name, "master": self.master.port,
                                "quorum": quorum, "down": down_after_ms,
                                "failover": failover_timeout_ms}
        self.sentinels = [RedisProc(self.workdir, f"sentinel-{i}", conf_text=conf)
                          for i in range(sentinels)]

    def start(self, timeout: float = 20.0) -> "RedisTopology":
        self.master.start()
        if self.replica:
            self.replica.start()
            if not wait_until(lambda: "master_link_status:up" in
                              self.replica.cmd("INFO", "replication"), timeout):
                raise RuntimeError("the replica did not sync with the master:\n"
                                   + self.replica.log_text())
        for s in self.sentinels:
            s.start()
        if self.sentinels:
            self._wait_sentinels_ready(timeout)
        return self

    def _wait_sentinels_ready(self, timeout: float) -> None:
        """Every sentinel must know the replica and the other sentinels,
        otherwise a failover cannot be agreed or has no one to promote."""
        want_replicas = 1 if self.replica else 0

        def ready():
            for s in self.sentinels:
                replicas = s.cmd("SENTINEL", "REPLICAS", self.master_name)
                others = s.cmd("SENTINEL", "SENTINELS", self.master_name)
                if len(replicas) < want_replicas or len(others) < len(self.sentinels) - 1:
                    return False
            return True

        if not wait_until(ready, timeout, interval=0.1):
            raise RuntimeError("sentinels did not discover the replica and each other within "
                               f"{timeout}s:\n" + "\n".join(s.log_text(1500)
                                                            for s in self.sentinels))

    def procs(self) -> list[RedisProc]:
        return [p for p in [self.master, self.replica, *self.sentinels] if p]

    def stop(self) -> None:
        for p in reversed(self.procs()):
            p.stop()

    def store_config(self, key_prefix: str = "e2e:", command_timeout_ms: int = 50,
                     **extra) -> dict:
        redis = {"key_prefix": key_prefix, "command_timeout_ms": command_timeout_ms}
        if self.sentinels:
            redis["sentinels"] = [s.address for s in self.sentinels]
            redis["master_name"] = self.master_name
        else:
            redis["address"] = self.master.address
        redis.update(extra)
        return {"backend": "redis", "redis": redis}

    def sentinel_master_port(self) -> int | None:
        for s in self.sentinels:
            try:
                reply = s.cmd("SENTINEL", "GET-MASTER-ADDR-BY-NAME", self.master_name)
            except (OSError, RedisError):
                continue
            if reply:
                return int(reply[1])
        return None

    def proc_on_port(self, port: int) -> RedisProc | None:
        return next((p for p in self.procs() if p.port == port), None)


# ---------------------------------------------------------------- recoveryd replicas

class RecoverydCluster:
    """N recoveryd processes on one configuration (a shared store)."""

    def __init__(self, binary: Path, workdir: Path, store: dict, n: int = 3, **config_kw):
        self.binary = Path(binary)
        self.workdir = Path(workdir)
        self.config = rdtest.write_config(self.workdir / f"config-{rdtest.unique('cluster')}",
                                          store=store, **config_kw)
        self.replicas = [rdtest.Recoveryd(self.binary, self.config,
                                          self.workdir / f"recoveryd-{rdtest.unique('r')}.log")
                         for _ in range(n)]
        self._metrics_ports: dict[int, int] = {}

    @property
    def stubs(self):
        return [r.stub for r in self.replicas]

    def start(self) -> "RecoverydCluster":
        errors = []

        def start_one(r):
            try:
                r.start(ready_timeout=30.0)
            except rdtest.ServerDied as e:
                errors.append(str(e))

        threads = [threading.Thread(target=start_one, args=(r,)) for r in self.replicas]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            pytest.fail("\n\n".join(errors))
        return self

    def stop(self) -> list[str]:
        problems = []
        for r in self.replicas:
            if r.proc is not None and r.proc.poll() is None:
                r.send_signal(signal.SIGTERM)
        for r in self.replicas:
            if r.proc is None or r.returncode is not None:
                continue
            rc = r.stop()
            if rc != 0:
                problems.append(f"recoveryd on {r.address} exit code {rc} after SIGTERM "
                                f"(expected 0); its output:\n{r.log_text(6000)}")
        return problems

    def admin_stub(self, i: int, token: str):
        from ops_support import BearerInterceptor  # noqa: PLC0415 (optional dependency)
        channel = grpc.intercept_channel(grpc.insecure_channel(self.replicas[i].address),
                                         BearerInterceptor(token))
        return channel, admin_grpc.AdminServiceStub(channel)

    def metrics_port(self, i: int) -> int:
        if i not in self._metrics_ports:
            for line in self.replicas[i].log_text(1 << 20).splitlines():
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if entry.get("msg") == "serving" and "metrics_port" in entry:
                    self._metrics_ports[i] = int(entry["metrics_port"])
                    break
            else:
                raise AssertionError(f"no \"serving\" log line with metrics_port from replica "
                                     f"{i}:\n{self.replicas[i].log_text(3000)}")
        return self._metrics_ports[i]

    def metrics_text(self, i: int) -> str:
        url = f"http://127.0.0.1:{self.metrics_port(i)}/metrics"
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.read().decode()

    def metric(self, i: int, name: str) -> float | None:
        """The value of an unlabelled sample `name` on replica i."""
        for line in self.metrics_text(i).splitlines():
            parts = line.split()
            if len(parts) >= 2 and parts[0] == name:
                return float(parts[1])
        return None


# ---------------------------------------------------------------- calls and load

@dataclass
class CallResult:
    response: object
    code: str           # "OK" or the grpc.StatusCode name
    latency_s: float
    degraded: bool
    details: str = ""


def _degraded(call) -> bool:
    try:
        md = call.initial_metadata() or ()
    except Exception:  # noqa: BLE001 - a failed call may have none
        return False
    return any(k == DEGRADED_KEY and v == "true" for k, v in md)


def timed_call(method, request, timeout: float = 5.0) -> CallResult:
    started = time.monotonic()
    try:
        response, call = method.with_call(request, timeout=timeout)
        return CallResult(response, "OK", time.monotonic() - started, _degraded(call))
    except grpc.RpcError as e:
        return CallResult(None, e.code().name, time.monotonic() - started, _degraded(e),
                          e.details() or "")


@dataclass
class Sample:
    start: float
    end: float
    replica: int
    method: str
    code: str
    degraded: bool
    details: str = ""

    @property
    def latency_s(self) -> float:
        return self.end - self.start


class Load:
    """Callers on every replica of a cluster: admission check, then a
    successful outcome, on a tool of their own, in a loop."""

    def __init__(self, cluster: RecoverydCluster, threads_per_replica: int = 2,
                 timeout: float = 5.0, tool_prefix: str = "load"):
        self.cluster = cluster
        self.timeout = timeout
        self.stop_event = threading.Event()
        self.lock = threading.Lock()
        self.results: list[Sample] = []
        self.threads = [threading.Thread(target=self._run,
                                         args=(i, rdtest.unique(f"{tool_prefix}-r{i}")),
                                         daemon=True)
                        for i in range(len(cluster.replicas))
                        for _ in range(threads_per_replica)]

    def _run(self, replica: int, tool_id: str) -> None:
        channel = self.cluster.replicas[replica].new_channel(own_connection=True)
        stub = pb_grpc.RecoveryServiceStub(channel)
        try:
            while not self.stop_event.is_set():
                self._one(replica, "Decide", stub.Decide,
                          pb.DecideRequest(tool_id=tool_id, executor_id="load"))
                self._one(replica, "RecordOutcome", stub.RecordOutcome,
                          pb.RecordOutcomeRequest(tool_id=tool_id, success=True, attempt=1,
                                                  latency_ms=1, executor_id="load"))
        finally:
            channel.close()

    def _one(self, replica: int, name: str, method, request) -> None:
        started = time.monotonic()
        r = timed_call(method, request, self.timeout)
        with self.lock:
            self.results.append(Sample(started, started + r.latency_s, replica, name,
                                       r.code, r.degraded, r.details))

    def __enter__(self) -> "Load":
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop_event.set()
        for t in self.threads:
            t.join(timeout=30)

    def snapshot(self) -> list[Sample]:
        with self.lock:
            return list(self.results)

    def calls_between(self, t0: float, t1: float) -> list[Sample]:
        """Calls that started in [t0, t1)."""
        return [s for s in self.snapshot() if t0 <= s.start < t1]


def percentile(values, q: float) -> float:
    """Nearest-rank percentile (q in 0..100); 0.0 for no values."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    rank = max(1, math.ceil(q / 100.0 * len(ordered)))
    return ordered[rank - 1]


def summarize(samples) -> dict:
    lat = [s.latency_s * 1000 for s in samples]
    return {"calls": len(samples),
            "failed": sum(1 for s in samples if s.code != "OK"),
            "degraded": sum(1 for s in samples if s.degraded),
            "p50_ms": round(percentile(lat, 50), 1),
            "p99_ms": round(percentile(lat, 99), 1),
            "max_ms": round(max(lat), 1) if lat else 0.0}


# ---------------------------------------------------------------- fixtures

class ClusterEnv:
    """Starts Redis topologies and recoveryd clusters in one directory and
    stops them all: recoveryd first (SIGTERM, exit 0 required), then Redis."""

    def __init__(self, binary: Path, workdir: Path):
        self.binary = Path(binary)
        self.workdir = Path(workdir)
        self.topologies: list[RedisTopology] = []
        self.clusters: list[RecoverydCluster] = []

    def redis(self, **kw) -> RedisTopology:
        require_redis()
        topo = RedisTopology(self.workdir / f"redis-{len(self.topologies)}", **kw)
        self.topologies.append(topo)
        topo.start()
        return topo

    def recoveryd(self, store: dict, n: int = 3, **config_kw) -> RecoverydCluster:
        cluster = RecoverydCluster(self.binary, self.workdir, store, n, **config_kw)
        self.clusters.append(cluster)
        return cluster.start()

    def close(self) -> list[str]:
        problems = []
        for cluster in self.clusters:
            problems += cluster.stop()
        for topo in self.topologies:
            topo.stop()
        self.clusters.clear()
        self.topologies.clear()
        return problems


@pytest.fixture
def cluster_env(recoveryd_binary, tmp_path):
    require_redis()
    env = ClusterEnv(recoveryd_binary, tmp_path)
    yield env
    problems = env.close()
    if problems:
        pytest.fail("\n\n".join(problems))


@pytest.fixture(scope="module")
def module_cluster_env(recoveryd_binary, tmp_path_factory):
    require_redis()
    env = ClusterEnv(recoveryd_binary, tmp_path_factory.mktemp("cluster"))
    yield env
    problems = env.close()
    if problems:
        pytest.fail("\n\n".join(problems))
