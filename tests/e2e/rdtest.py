"""Shared machinery of the end-to-end tests: Python stubs built from the
proto at import time, test configurations, a recoveryd process wrapper and
the small executor helpers the scenarios are written with.

The tests play the executor: they call recoveryd over real gRPC exactly as
an agent's tool runner would, sleep the delays it returns and report how
each attempt ended.
"""
from __future__ import annotations

import importlib
import itertools
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import grpc
import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
PROTO_DIR = REPO / "proto"
SHIPPED_RULES = REPO / "config" / "rules.yaml"

SERVICE = "recovery.v1.RecoveryService"


# ---------------------------------------------------------------- stubs

def _build_stubs():
    """Runs grpc_tools.protoc over proto/ into a fresh temporary directory
    and imports the result, so generated code is never committed or stale."""
    from grpc_tools import protoc

    out_dir = Path(tempfile.mkdtemp(prefix="recoveryd-e2e-stubs-"))
    include = Path(importlib.import_module("grpc_tools").__file__).parent / "_proto"
    protos = sorted(str(p.relative_to(PROTO_DIR)) for p in PROTO_DIR.rglob("*.proto"))
    args = ["protoc", f"-I{PROTO_DIR}", f"-I{include}",
            f"--python_out={out_dir}", f"--grpc_python_out={out_dir}", *protos]
    if protoc.main(args) != 0:
        raise RuntimeError(f"grpc_tools.protoc failed on {protos}")
    sys.path.insert(0, str(out_dir))
    pb2 = importlib.import_module("recovery.v1.recovery_pb2")
    pb2_grpc = importlib.import_module("recovery.v1.recovery_pb2_grpc")
    return out_dir, pb2, pb2_grpc


STUB_DIR, pb, pb_grpc = _build_stubs()


# ---------------------------------------------------------------- config

# Values the tests rely on; each mirrors the documented default unless a
# scenario needs it shorter.
BASE_DEFAULTS = {
    "timeout_ms": 30000,
    "retry_policy": {
        "strategy": "exponential_backoff",
        "initial_delay_ms": 100,
        "max_delay_ms": 800,
        "multiplier": 2.0,
        "jitter_percent": 10,
        "max_attempts": 5,
        "max_total_time_ms": 2000,
    },
    "circuit_breaker": {
        "failure_threshold": 5,
        "success_threshold": 1,
        "timeout_ms": 30000,
    },
}


def _merge(base: dict, extra: dict | None) -> dict:
    out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in base.items()}
    for key, value in (extra or {}).items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def write_config(directory: Path, *, defaults: dict | None = None, tools=(),
                 turn_timeout_ms: int = 300000, store: dict | None = None,
                 server: dict | None = None, reject_unknown: bool = False) -> Path:
    """Writes recovery.yaml, a copy of the shipped rules.yaml and one
    tools.d/<id>.yaml per manifest (dicts in the manifest format, without
    the top-level `tool:` key) into `directory`; returns the main file."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    if not SHIPPED_RULES.is_file():
        raise FileNotFoundError(f"the shipped rules file {SHIPPED_RULES} is missing")
    shutil.copyfile(SHIPPED_RULES, directory / "rules.yaml")
    tools_dir = directory / "tools.d"
    tools_dir.mkdir(exist_ok=True)
    for manifest in tools:
        path = tools_dir / f"{manifest['id'].replace('/', '_')}.yaml"
        path.write_text(yaml.safe_dump({"tool": manifest}, sort_keys=False))
    main = {
        "server": _merge({"workers": 4, "shutdown_grace_ms": 5000}, server),
        "store": _merge({"backend": "memory"}, store),
        "defaults": _merge(BASE_DEFAULTS, defaults),
        "turn": {"timeout_ms": turn_timeout_ms},
        "tools": {"directory": "tools.d", "reject_unknown": reject_unknown},
        "classification": {"rules_file": "rules.yaml"},
        # test servers run side by side: no shared fixed metrics port
        "metrics": {"listen": "127.0.0.1:0"},
    }
    path = directory / "recovery.yaml"
    path.write_text(yaml.safe_dump(main, sort_keys=False))
    return path


# ---------------------------------------------------------------- process

_handed_out: set[int] = set()


def free_port() -> int:
    """A loopback port nothing listens on now and that this process has not
    handed out before: a port is only bound when its server starts, so two
    servers chosen one after the other (a Redis node and its cluster bus
    port, recoveryd beside them) could otherwise be given the same one."""
    for _ in range(1000):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in _handed_out:
            _handed_out.add(port)
            return port
    raise RuntimeError("no loopback port left that was not handed out before")


class ServerDied(Exception):
    pass


class Recoveryd:
    """One recoveryd process listening on 127.0.0.1:<free port>."""

    # Every live instance, so a failing test can show the servers' output.
    live: list["Recoveryd"] = []

    def __init__(self, binary: Path, config: Path, log_path: Path):
        self.binary = Path(binary)
        self.config = Path(config)
        self.log_path = Path(log_path)
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None
        self.channel: grpc.Channel | None = None
        self.stub = None
        self.returncode: int | None = None

    # Another process can still take a free port between its choice and
    # recoveryd's bind (a client's outgoing connection is given one from the
    # same range): recoveryd then exits saying so, and starts again on
    # another port, at most this many times in all.
    LISTEN_ATTEMPTS = 3

    def start(self, ready_timeout: float = 20.0) -> "Recoveryd":
        self._log = open(self.log_path, "wb")
        Recoveryd.live.append(self)
        for attempt in range(self.LISTEN_ATTEMPTS):
            if self._launch(ready_timeout, last=attempt + 1 == self.LISTEN_ATTEMPTS):
                return self
            self.port = free_port()
            self.address = f"127.0.0.1:{self.port}"
        return self

    def _launch(self, ready_timeout: float, last: bool) -> bool:
        """Starts recoveryd on self.address and waits until it answers; False
        when it exited because the port was taken (and `last` is False)."""
        self.proc = subprocess.Popen(
            [str(self.binary), "--config", str(self.config), "--listen", self.address],
            stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + ready_timeout

        def died() -> bool:
            if self.proc.poll() is None:
                return False
            if not last and "cannot listen" in self.log_text(2000):
                return True
            raise ServerDied(f"recoveryd exited with {self.proc.returncode} during "
                             f"startup:\n{self.log_text()}")

        # Wait for the port first: a gRPC channel that finds nothing there
        # backs off for a second before it tries again.
        while not self._port_open():
            if died():
                return False
            if time.monotonic() > deadline:
                raise ServerDied(f"recoveryd did not listen on {self.address} within "
                                 f"{ready_timeout}s:\n{self.log_text()}")
            time.sleep(0.01)
        self.channel = self.new_channel()
        ready = grpc.channel_ready_future(self.channel)
        while True:
            try:
                ready.result(timeout=0.2)
                break
            except grpc.FutureTimeoutError:
                # what answers on the port may be another process's
                if died():
                    self.channel.close()
                    self.channel = None
                    return False
                if time.monotonic() > deadline:
                    raise ServerDied(f"recoveryd did not answer on {self.address} within "
                                     f"{ready_timeout}s:\n{self.log_text()}") from None
        self.stub = pb_grpc.RecoveryServiceStub(self.channel)
        return True

    def _port_open(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                return True
        except OSError:
            return False

    def new_channel(self, own_connection: bool = False) -> grpc.Channel:
        """A channel to the server; own_connection=True gives it its own TCP
        connection instead of sharing one with the other channels."""
        options = [("grpc.enable_retries", 0)]
        if own_connection:
            options.append(("grpc.use_local_subchannel_pool", 1))
        return grpc.insecure_channel(self.address, options=options)

    def log_text(self, tail: int = 20000) -> str:
        try:
            data = self.log_path.read_bytes()
        except OSError:
            return "(no server output)"
        return data[-tail:].decode("utf-8", "replace")

    def send_signal(self, signum=signal.SIGTERM) -> None:
        self.proc.send_signal(signum)

    def wait(self, timeout: float = 10.0) -> int:
        """Waits for the process to exit, killing it after `timeout`;
        returns the exit code (negative: killed by that signal)."""
        try:
            self.returncode = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.returncode = self.proc.wait()
            self.returncode = f"did not exit within {timeout}s after the signal (killed)"
        return self.returncode

    def stop(self, signum=signal.SIGTERM, timeout: float = 10.0):
        """SIGTERM, wait (kill after timeout); returns the exit code."""
        if self.channel is not None:
            self.channel.close()
            self.channel = None
        if self.proc is not None and self.proc.poll() is None:
            self.send_signal(signum)
        rc = self.wait(timeout) if self.proc is not None else None
        if self in Recoveryd.live:
            Recoveryd.live.remove(self)
        self._log.close()
        return rc


def run_check_config(binary: Path, config: Path, timeout: float = 30.0):
    """recoveryd --config FILE --check-config; returns (exit code, output)."""
    proc = subprocess.run([str(binary), "--config", str(config), "--check-config"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          timeout=timeout, stdin=subprocess.DEVNULL)
    return proc.returncode, proc.stdout.decode("utf-8", "replace")


# ---------------------------------------------------------------- ids

_counter = itertools.count(1)
_counter_lock = threading.Lock()


def unique(prefix: str) -> str:
    """A fresh id, so tests sharing a server never share a breaker or turn."""
    with _counter_lock:
        n = next(_counter)
    return f"{prefix}-{os.getpid()}-{n}"


# ---------------------------------------------------------------- errors of the seeds

def err(message: str = "", **fields) -> "pb.ToolError":
    return pb.ToolError(message=message, **fields)


def network_timeout():
    return err("Connection timeout after 30s")


def tool_timeout(seconds: int = 30):
    return err(f"Tool timeout after {seconds}s", kind=pb.ERROR_KIND_TIMEOUT)


def rate_limit():
    return err("Rate limit exceeded (429)")


def connection_reset():
    return err("Connection reset by peer", code="ECONNRESET")


def invalid_input():
    return err("Invalid airport code: XYZ")


def auth_failure():
    return err("Authentication failed (401)")


def not_found():
    return err("Resource not found (404)", http_status=404)


# ---------------------------------------------------------------- calls

def decide(stub, tool_id: str, error=None, *, attempt: int = 0, elapsed_ms: int = 0,
           turn_id: str = "", turn_remaining_ms: int | None = None, plan=(),
           outcome_id: str = "", permit_id: str = "", executor_id: str = "e2e",
           timeout: float = 10.0):
    req = pb.DecideRequest(tool_id=tool_id, attempt=attempt, elapsed_ms=elapsed_ms,
                           turn_id=turn_id, plan=list(plan), outcome_id=outcome_id,
                           permit_id=permit_id, executor_id=executor_id)
    if error is not None:
        req.error.CopyFrom(error)
        if attempt == 0:
            req.attempt = 1
    if turn_remaining_ms is not None:
        req.turn_remaining_ms = turn_remaining_ms
    return stub.Decide(req, timeout=timeout)


def admit(stub, tool_id: str, **kw):
    """Admission check: 'may I call this tool now?'"""
    return decide(stub, tool_id, None, **kw)


def record(stub, tool_id: str, *, success: bool, error=None, attempt: int = 1,
           latency_ms: int = 1, turn_id: str = "", outcome_id: str = "",
           permit_id: str = "", executor_id: str = "e2e", timeout: float = 10.0):
    req = pb.RecordOutcomeRequest(tool_id=tool_id, success=success, attempt=attempt,
                                  latency_ms=latency_ms, turn_id=turn_id,
                                  outcome_id=outcome_id, permit_id=permit_id,
                                  executor_id=executor_id)
    if error is not None:
        req.error.CopyFrom(error)
    return stub.RecordOutcome(req, timeout=timeout)


def classify(stub, tool_id: str, error, timeout: float = 10.0):
    return stub.Classify(pb.ClassifyRequest(tool_id=tool_id, error=error),
                         timeout=timeout).classification


def breaker(stub, tool_id: str):
    resp = stub.GetBreakerState(pb.GetBreakerStateRequest(tool_ids=[tool_id]), timeout=10)
    states = [b for b in resp.breakers if b.tool_id == tool_id]
    assert len(states) == 1, f"GetBreakerState({tool_id!r}) returned {resp}"
    return states[0]


def turn_trace(stub, turn_id: str):
    return stub.GetTurnTrace(pb.GetTurnTraceRequest(turn_id=turn_id), timeout=10)


def step(tool_id: str, depends_on=(), optional: bool = False, default=None):
    s = pb.PlanStep(tool_id=tool_id, depends_on=list(depends_on), optional=optional)
    if default is not None:
        s.default_value = default
    return s


# ---------------------------------------------------------------- names and checks

def action_name(value: int) -> str:
    return pb.Action.Name(value)


def state_name(value: int) -> str:
    return pb.BreakerStatus.Name(value)


def expect_action(resp, *actions):
    names = [action_name(a) for a in actions]
    assert resp.action in actions, (
        f"expected {' or '.join(names)}, got {action_name(resp.action)} "
        f"(reason {resp.reason!r}, delay {resp.delay_ms} ms, "
        f"classification {pb.Retryability.Name(resp.classification.retryability)} "
        f"rule {resp.classification.rule_id!r})")


def expect_state(state, expected):
    assert state.state == expected, (
        f"{state.tool_id}: expected {state_name(expected)}, got {state_name(state.state)} "
        f"(consecutive_failures {state.consecutive_failures}, "
        f"opened_at_ms {state.opened_at_ms}, open_until_ms {state.open_until_ms})")


def events_of(events, event_type: str, tool_id: str | None = None):
    return [e for e in events
            if e.event_type == event_type and (tool_id is None or e.tool_id == tool_id)]


def describe_events(events) -> str:
    return "\n".join(f"  #{e.sequence} {e.event_type} tool={e.tool_id} "
                     f"decision={e.decision} breaker={e.circuit_breaker_state} "
                     f"detail={e.detail!r}" for e in events)


RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$")


def parse_rfc3339(text: str) -> datetime:
    assert RFC3339.match(text), f"timestamp {text!r} is not RFC 3339"
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(timezone.utc)


def now_ms() -> int:
    return int(time.time() * 1000)


# ---------------------------------------------------------------- raw HTTP/2

def _h2_frame(frame_type: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    return (len(payload).to_bytes(3, "big") + bytes([frame_type, flags]) +
            stream.to_bytes(4, "big") + payload)


def _hpack_literal(name: str, value: str) -> bytes:
    """A header as 'literal without indexing, new name', no Huffman coding
    (lengths below 127 only, which is all these tests send)."""
    n, v = name.encode(), value.encode()
    assert len(n) < 127 and len(v) < 127
    return b"\x00" + bytes([len(n)]) + n + bytes([len(v)]) + v


def raw_grpc_call(address: str, method: str, message: bytes, grpc_timeout: str,
                  pause_before_body: float = 0.0, read_timeout: float = 10.0) -> dict:
    """One gRPC call spoken in plain HTTP/2, so the grpc-timeout header and
    the moment the body is sent are under the test's control (a client
    library computes the header itself and enforces its own deadline).
    Returns {"answered": a response message (DATA) came back,
    "ended": the stream was closed by the server}."""
    host, port = address.rsplit(":", 1)
    headers = b"".join(_hpack_literal(k, v) for k, v in [
        (":method", "POST"), (":scheme", "http"), (":path", f"/{SERVICE}/{method}"),
        (":authority", address), ("content-type", "application/grpc"), ("te", "trailers"),
        ("grpc-timeout", grpc_timeout)])
    body = b"\x00" + len(message).to_bytes(4, "big") + message
    result = {"answered": False, "ended": False}
    with socket.create_connection((host, int(port)), timeout=read_timeout) as sock:
        sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + _h2_frame(0x4, 0, 0) +
                     _h2_frame(0x1, 0x4, 1, headers))
        if pause_before_body:
            time.sleep(pause_before_body)
        sock.sendall(_h2_frame(0x0, 0x1, 1, body))
        buf = b""
        while not result["ended"]:
            chunk = sock.recv(65536)
            if not chunk:
                break
            buf += chunk
            while len(buf) >= 9:
                length = int.from_bytes(buf[:3], "big")
                if len(buf) < 9 + length:
                    break
                ftype, flags = buf[3], buf[4]
                stream = int.from_bytes(buf[5:9], "big") & 0x7FFFFFFF
                buf = buf[9 + length:]
                if ftype == 0x4 and not flags & 0x1:
                    sock.sendall(_h2_frame(0x4, 0x1, 0))  # SETTINGS ack
                elif ftype == 0x6 and not flags & 0x1:
                    sock.sendall(_h2_frame(0x6, 0x1, 0, b"\0" * 8))  # PING ack
                elif stream == 1 and ftype == 0x0 and length > 0:
                    result["answered"] = True
                if stream == 1 and (ftype == 0x3 or (ftype in (0x0, 0x1) and flags & 0x1)):
                    result["ended"] = True
                if ftype == 0x7:  # GOAWAY
                    result["ended"] = True
    return result
