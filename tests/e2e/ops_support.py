"""Machinery of the operations tests (test_ops_*.py): configurations with
the operational keys (TLS, tokens, metrics, reload, drain), a server
wrapper whose channels can carry TLS credentials and a bearer token, the
AdminService and health stubs, and test certificates made with openssl at
test time (never committed)."""
from __future__ import annotations

import importlib
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import grpc
import pytest
import yaml

import rdtest
from rdtest import STUB_DIR, pb, pb_grpc  # noqa: F401  (STUB_DIR: stubs are importable)

admin_pb = importlib.import_module("recovery.v1.admin_pb2")
admin_grpc = importlib.import_module("recovery.v1.admin_pb2_grpc")

try:
    from grpc_health.v1 import health_pb2, health_pb2_grpc
except ImportError:  # grpcio-health-checking not installed
    health_pb2 = health_pb2_grpc = None


def write_ops_config(directory: Path, *, server: dict | None = None, top: dict | None = None,
                     **kw) -> Path:
    """rdtest.write_config plus top-level sections (metrics, log, reload).
    Metrics bind a free port and the directory watch is off unless asked."""
    path = rdtest.write_config(directory, server=server, **kw)
    main = yaml.safe_load(path.read_text())
    main.setdefault("metrics", {"listen": "127.0.0.1:0"})
    main.setdefault("reload", {"watch": False})
    for key, value in (top or {}).items():
        main[key] = value
    path.write_text(yaml.safe_dump(main, sort_keys=False))
    return path


class OpsRecoveryd(rdtest.Recoveryd):
    """A recoveryd whose channels use TLS (root CA, optional client cert)
    and/or send a bearer token."""

    def __init__(self, *args, tls: dict | None = None, token: str | None = None, **kw):
        super().__init__(*args, **kw)
        self.tls = tls
        self.token = token

    def credentials(self, tls: dict | None = None, token: str | None = None):
        tls = self.tls if tls is None else tls
        creds = None
        if tls:
            creds = grpc.ssl_channel_credentials(
                root_certificates=Path(tls["ca"]).read_bytes(),
                private_key=Path(tls["key"]).read_bytes() if tls.get("key") else None,
                certificate_chain=Path(tls["cert"]).read_bytes() if tls.get("cert") else None)
        return creds

    def new_channel(self, own_connection: bool = False, tls: dict | None = None,
                    token: str | None = None) -> grpc.Channel:
        options = [("grpc.enable_retries", 0)]
        if own_connection:
            options.append(("grpc.use_local_subchannel_pool", 1))
        creds = self.credentials(tls)
        token = self.token if token is None else token
        if token:
            call_creds = grpc.metadata_call_credentials(
                lambda ctx, cb: cb((("authorization", f"Bearer {token}"),), None))
            if creds is None:  # grpcio only sends call credentials over TLS
                return grpc.intercept_channel(grpc.insecure_channel(self.address, options),
                                              BearerInterceptor(token))
            creds = grpc.composite_channel_credentials(creds, call_creds)
        if creds is None:
            return grpc.insecure_channel(self.address, options=options)
        options.append(("grpc.ssl_target_name_override", "localhost"))
        return grpc.secure_channel(self.address, creds, options=options)

    def admin(self, token: str | None = None):
        channel = self.new_channel(token=token)
        return channel, admin_grpc.AdminServiceStub(channel)


class BearerInterceptor(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor):
    """Adds `authorization: Bearer <token>` to every call of a plaintext channel."""

    def __init__(self, token: str):
        self.token = token

    def _with_token(self, details):
        metadata = list(details.metadata or []) + [("authorization", f"Bearer {self.token}")]
        return details._replace(metadata=metadata) if hasattr(details, "_replace") else \
            _Details(details.method, details.timeout, metadata, details.credentials,
                     getattr(details, "wait_for_ready", None),
                     getattr(details, "compression", None))

    def intercept_unary_unary(self, continuation, details, request):
        return continuation(self._with_token(details), request)

    def intercept_unary_stream(self, continuation, details, request):
        return continuation(self._with_token(details), request)


class _Details(grpc.ClientCallDetails):
    def __init__(self, method, timeout, metadata, credentials, wait_for_ready, compression):
        self.method = method
        self.timeout = timeout
        self.metadata = metadata
        self.credentials = credentials
        self.wait_for_ready = wait_for_ready
        self.compression = compression


class OpsLauncher:
    """Starts OpsRecoveryd processes; stops them all at teardown and
    requires exit code 0 from each."""

    def __init__(self, binary: Path, workdir: Path):
        self.binary = binary
        self.workdir = workdir
        self.servers: list[OpsRecoveryd] = []

    def config(self, **kw) -> Path:
        directory = self.workdir / f"config-{len(self.servers)}-{rdtest.unique('c')}"
        return write_ops_config(directory, **kw)

    def start(self, config: Path | None = None, *, tls: dict | None = None,
              token: str | None = None, **config_kw) -> OpsRecoveryd:
        if config is None:
            config = self.config(**config_kw)
        log = self.workdir / f"recoveryd-{len(self.servers)}.log"
        server = OpsRecoveryd(self.binary, config, log, tls=tls, token=token)
        self.servers.append(server)
        try:
            server.start()
        except rdtest.ServerDied as e:
            pytest.fail(str(e))
        return server

    def stop_all(self):
        problems = []
        for server in self.servers:
            checked = server.returncode is not None
            rc = server.stop()
            if not checked and rc != 0:
                problems.append(f"recoveryd exit code {rc} after SIGTERM; output:\n"
                                f"{server.log_text()}")
        self.servers.clear()
        if problems:
            pytest.fail("\n\n".join(problems))


@pytest.fixture
def ops_launcher(recoveryd_binary, tmp_path):
    la = OpsLauncher(recoveryd_binary, tmp_path)
    yield la
    la.stop_all()


# ---------------------------------------------------------------- certificates

def make_certs(directory: Path) -> dict:
    """A CA, a server certificate for localhost/127.0.0.1 signed by it, a
    client certificate signed by it, and a second, unrelated CA. Returns
    the paths by name."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)

    def run(*args):
        subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True)

    for ca in ("ca", "other_ca"):
        run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
            f"/CN=recoveryd test {ca}", "-keyout", f"{ca}.key", "-out", f"{ca}.crt")
    (d / "san.cnf").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    for name, cn in (("server", "localhost"), ("client", "test client")):
        run("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={cn}",
            "-keyout", f"{name}.key", "-out", f"{name}.csr")
        extra = ["-extfile", "san.cnf"] if name == "server" else []
        run("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "2", "-out", f"{name}.crt", *extra)
    return {n: str(d / n) for n in ("ca.crt", "other_ca.crt", "server.crt", "server.key",
                                    "client.crt", "client.key")}


# ---------------------------------------------------------------- load

class Load:
    """Callers that keep Decide calls going on their own connections and
    record every call's start, end and status code."""

    def __init__(self, server, n_threads: int = 8, tool_prefix: str = "load",
                 plan=None, channel_factory=None):
        self.server = server
        self.stop = threading.Event()
        self.results: list[tuple[float, float, str]] = []
        self.lock = threading.Lock()
        self.plan = plan
        self.channel_factory = channel_factory or (lambda: server.new_channel(own_connection=True))
        self.threads = [threading.Thread(target=self._run, args=(f"{tool_prefix}_{i}",))
                        for i in range(n_threads)]

    def _run(self, tool_id: str):
        channel = self.channel_factory()
        stub = pb_grpc.RecoveryServiceStub(channel)
        n = 0
        while not self.stop.is_set():
            n += 1
            started = time.monotonic()
            try:
                error = rdtest.invalid_input() if n % 2 else rdtest.network_timeout()
                rdtest.decide(stub, tool_id, error, attempt=1, plan=self.plan or (), timeout=10)
                code = "OK"
            except grpc.RpcError as e:
                code = e.code().name
            with self.lock:
                self.results.append((started, time.monotonic(), code))
            if code == "UNAVAILABLE":
                break
        channel.close()

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join()

    def codes(self) -> set[str]:
        with self.lock:
            return {code for _, _, code in self.results}


def sighup(server):
    server.send_signal(signal.SIGHUP)


def wait_for_log(server, text: str, timeout: float = 5.0, after: int = 0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in server.log_text(10**7)[after:]:
            return True
        time.sleep(0.05)
    return False
