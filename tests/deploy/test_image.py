"""deploy/Dockerfile built with podman on a locally bootstrapped Debian
bookworm base (no registry is reachable; image_tools.py), then run as
Kubernetes runs it and checked the same way: the non-root user, a
read-only root filesystem with only /tmp writable, all capabilities
dropped, the configuration extended by a drop-in fragment mounted into
/etc/recoveryd/recovery.d, grpc-health-probe for liveness and readiness, a
Decide call with grpcurl, the Docker HEALTHCHECK, and SIGTERM: NOT_SERVING
while it drains, then a clean exit well within the grace period.

The first build takes long (the build stage's packages and the
profile-guided Release build); podman's layer cache would make later runs
quick while deploy/Dockerfile, scripts/, proto/, server/ and config/ are
unchanged, but the vfs storage driver keeps every layer as a full copy, so
the image and its layers are removed afterwards unless RD_IMAGE_KEEP=1."""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

import deployutil as du
import image_tools as it

TAG = f"localhost/recoveryd:{du.source_version()}-test"
API = du.api_service_name()
GRACE_S = 30               # the Deployment's terminationGracePeriodSeconds
DRAIN_MS = 1500            # server.drain_delay_ms in the test fragment


def tool(name: str) -> str:
    for c in [du.REPO / "build-tools/bin" / name, shutil.which(name)]:
        if c and Path(c).is_file():
            return str(c)
    pytest.skip(f"no {name} in build-tools/bin or on PATH (scripts/install-deps.sh --test)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def podman(*args: str, timeout: float = 120, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([*it.podman(), *args], capture_output=True, text=True,
                          timeout=timeout)
    if check:
        assert proc.returncode == 0, f"podman {' '.join(args)}:\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def image():
    missing = it.missing_tools()
    if missing:
        pytest.skip(f"missing {', '.join(missing)} (scripts/install-deps.sh --test)")
    base = it.base_image()
    # Working containers an interrupted build left in this storage (its own:
    # nothing else uses it) hold a full root copy each.
    subprocess.run([*it.buildah(), "rm", "--all"], capture_output=True, timeout=600)
    started = time.monotonic()
    proc = subprocess.run(
        [*it.podman(), "build", "--format", "docker", "--network", "host", *it.ulimits(),
         "--ignorefile", str(du.REPO / "deploy/Dockerfile.dockerignore"),
         "--build-arg", f"DEBIAN_IMAGE={base}", "-f", str(du.REPO / "deploy/Dockerfile"),
         "-t", TAG, str(du.REPO)],
        capture_output=True, text=True, timeout=3000)
    assert proc.returncode == 0, f"podman build failed:\n{proc.stdout[-6000:]}\n{proc.stderr[-3000:]}"
    print(f"image built in {time.monotonic() - started:.0f} s")
    yield json.loads(podman("image", "inspect", TAG).stdout)[0]
    # The vfs driver stores every layer as a full copy of the root (several
    # GB per build): keep only the base image unless asked to keep the
    # layer cache for the next run.
    if os.environ.get("RD_IMAGE_KEEP") != "1":
        podman("rmi", "-f", TAG, check=False, timeout=600)
        podman("image", "prune", "-f", check=False, timeout=600)


class Container:
    def __init__(self, name: str, grpc_port: int, metrics_port: int):
        self.name = name
        self.address = f"127.0.0.1:{grpc_port}"
        self.metrics_port = metrics_port

    def inspect(self) -> dict:
        return json.loads(podman("inspect", self.name).stdout)[0]

    def logs(self) -> str:
        proc = podman("logs", self.name, check=False)
        return proc.stdout + proc.stderr

    def probe(self, service: str = "") -> subprocess.CompletedProcess:
        """grpc-health-probe as the kubelet's gRPC probe asks (exit 0 =
        SERVING, 4 = NOT_SERVING, 2 = connection failure)."""
        return subprocess.run([tool("grpc-health-probe"), "-addr", self.address,
                               "-service", service, "-connect-timeout", "1s",
                               "-rpc-timeout", "1s"],
                              capture_output=True, text=True, timeout=10)


# How deploy/k8s runs the container: read-only root, a small tmpfs on /tmp
# (the Deployment's emptyDir), no capabilities, no privilege escalation.
DEPLOYED_FLAGS = ("--read-only", "--read-only-tmpfs=false",
                  "--tmpfs", "/tmp:rw,size=16m,mode=1777",
                  "--cap-drop", "ALL", "--security-opt", "no-new-privileges")


@pytest.fixture(scope="module")
def container(image, tmp_path_factory):
    """The image run as deploy/k8s runs it: uid 10001 (the image's USER),
    read-only root, a small tmpfs on /tmp (the Deployment's emptyDir), no
    capabilities, no privilege escalation, and one drop-in fragment."""
    grpc_port, metrics_port = free_port(), free_port()
    dropin = tmp_path_factory.mktemp("recovery.d")
    # The host network (the test's loopback is the container's): listen on
    # free loopback ports, drain long enough to observe.
    (dropin / "50-test.yaml").write_text(
        f"server:\n  listen: 127.0.0.1:{grpc_port}\n  drain_delay_ms: {DRAIN_MS}\n"
        f"metrics:\n  listen: 127.0.0.1:{metrics_port}\n")
    dropin.chmod(0o755)
    (dropin / "50-test.yaml").chmod(0o644)
    name = f"recoveryd-test-{os.getpid()}"
    podman("rm", "-f", name, check=False)
    podman("run", "-d", "--name", name, "--network", "host", *it.ulimits(), *DEPLOYED_FLAGS,
           "--stop-timeout", str(GRACE_S),
           "-e", f"RECOVERYD_HEALTH_PORT={metrics_port}",
           "-v", f"{dropin}:/etc/recoveryd/recovery.d:ro", TAG)
    c = Container(name, grpc_port, metrics_port)
    deadline = time.monotonic() + 30  # the Deployment's startupProbe: 30 x 1 s
    while c.probe().returncode != 0:
        state = c.inspect()["State"]
        assert state["Running"], f"the container exited ({state}):\n{c.logs()}"
        assert time.monotonic() < deadline, f"not SERVING within 30 s:\n{c.logs()}"
        time.sleep(0.5)
    yield c
    podman("rm", "-f", "-t", "0", name, check=False)


def test_image_config(image):
    cfg = image["Config"]
    assert cfg["User"] == "10001:10001"
    assert cfg["Entrypoint"] == ["/usr/local/bin/recoveryd"]
    assert cfg["Cmd"] == ["--config", "/etc/recoveryd/recovery.yaml"]
    assert {"50051/tcp", "9464/tcp"} <= set(cfg["ExposedPorts"])
    # podman keeps the Docker-format health check beside the OCI config
    assert image["Healthcheck"]["Test"] == ["CMD", "/usr/local/bin/recoveryd-healthcheck"]
    print(f"image size: {image['Size'] / 1e6:.0f} MB")


def test_image_holds_no_build_tools(image):
    """The runtime stage has the binary's libraries, not the compilers."""
    proc = podman("run", "--rm", "--network", "none", *it.ulimits(), "--entrypoint",
                  "/bin/sh", TAG, "-c",
                  "for t in cc gcc cmake protoc protoc-c; do command -v $t; done; "
                  "/usr/local/bin/recoveryd --version")
    assert proc.stdout.strip() == f"recoveryd {du.source_version()}", proc.stdout


def test_runs_as_the_unprivileged_user(container):
    pid = container.inspect()["State"]["Pid"]
    status = Path(f"/proc/{pid}/status").read_text()
    uids = next(l for l in status.splitlines() if l.startswith("Uid:")).split()[1:]
    gids = next(l for l in status.splitlines() if l.startswith("Gid:")).split()[1:]
    assert set(uids) == {"10001"} and set(gids) == {"10001"}, (uids, gids)
    cap_eff = next(l for l in status.splitlines() if l.startswith("CapEff:")).split()[1]
    assert int(cap_eff, 16) == 0, f"effective capabilities {cap_eff}"


# The two checks below run the image's own commands in a sibling container
# with the same flags (DEPLOYED_FLAGS) rather than through `podman exec`:
# exec does not enter the container's root filesystem when podman itself
# runs in a chroot, as it does in .ci/run.
def test_root_filesystem_is_read_only(image):
    proc = podman("run", "--rm", "--network", "none", *it.ulimits(), *DEPLOYED_FLAGS,
                  "--entrypoint", "/bin/sh", TAG, "-c",
                  "echo x > /etc/recoveryd/x; echo x > /usr/local/bin/x; echo x > /tmp/ok && "
                  "echo tmp-writable", check=False)
    assert proc.stdout.strip() == "tmp-writable", proc.stdout + proc.stderr
    assert proc.stderr.count("Read-only file system") == 2, proc.stderr


def test_health_probes_as_the_kubelet_asks(container):
    for service in ("", API):
        proc = container.probe(service)
        assert proc.returncode == 0 and "status: SERVING" in proc.stdout + proc.stderr, (
            service, proc.stdout, proc.stderr)
    proc = container.probe("no.such.Service")
    said = (proc.stderr + proc.stdout).replace("_", "").lower()
    assert proc.returncode != 0 and "notfound" in said, proc


def test_decide_with_grpcurl(container):
    request = {"toolId": "flight_search", "attempt": 1,
               "error": {"message": "connection reset by peer", "code": "ECONNRESET",
                         "exceptionType": "ConnectionResetError"}}
    proc = subprocess.run(
        [tool("grpcurl"), "-plaintext", "-import-path", str(du.REPO / "proto"),
         "-proto", "recovery/v1/recovery.proto", "-d", json.dumps(request),
         container.address, f"{API}/Decide"],
        capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout)
    assert answer["action"] == "ACTION_RETRY", answer
    assert int(answer["delayMs"]) > 0, answer


def test_docker_healthcheck_script(image, container):
    """The image's HEALTHCHECK command, as the runtime runs it, answers
    healthy against the running service and unhealthy where nothing
    listens."""
    command = image["Healthcheck"]["Test"][1]

    def health(port):
        return podman("run", "--rm", "--network", "host", *it.ulimits(), *DEPLOYED_FLAGS,
                      "-e", f"RECOVERYD_HEALTH_PORT={port}", "--entrypoint", command, TAG,
                      check=False)
    proc = health(container.metrics_port)
    assert proc.returncode == 0 and "unhealthy" not in proc.stdout, proc.stdout + proc.stderr
    proc = health(free_port())
    assert proc.returncode == 1 and "unhealthy" in proc.stdout, proc.stdout + proc.stderr


def test_sigterm_drains_then_exits_cleanly(container):
    """What the kubelet does at pod deletion: SIGTERM, then SIGKILL after
    the grace period. recoveryd must turn the API NOT_SERVING first (so
    readiness drops while calls still succeed), then exit 0 on its own."""
    podman("kill", "--signal", "TERM", container.name)
    sent = time.monotonic()
    seen_not_serving = False
    while time.monotonic() - sent < DRAIN_MS / 1000 * 0.8:
        if container.probe(API).returncode == 4:
            seen_not_serving = True
            break
        time.sleep(0.1)
    assert seen_not_serving, f"the API never reported NOT_SERVING while draining:\n" \
                             f"{container.logs()}"
    proc = podman("wait", container.name, timeout=GRACE_S + 10)
    elapsed = time.monotonic() - sent
    assert proc.stdout.strip() == "0", f"exit code {proc.stdout.strip()}:\n{container.logs()}"
    assert elapsed < GRACE_S, f"took {elapsed:.1f} s of the {GRACE_S} s grace period"
    assert elapsed >= DRAIN_MS / 1000 * 0.9, f"exited after {elapsed:.1f} s, before the drain"
    print(f"SIGTERM to exit: {elapsed:.2f} s (drain_delay_ms {DRAIN_MS})")


def test_podman_stop_ends_within_the_grace_period(image, tmp_path):
    """`podman stop` (SIGTERM, SIGKILL after --stop-timeout) on the image's
    own configuration: the exit is clean, never the SIGKILL."""
    name = f"recoveryd-stop-{os.getpid()}"
    grpc_port, metrics_port = free_port(), free_port()
    dropin = tmp_path / "recovery.d"
    dropin.mkdir()
    (dropin / "50-test.yaml").write_text(
        f"server:\n  listen: 127.0.0.1:{grpc_port}\nmetrics:\n  listen: 127.0.0.1:{metrics_port}\n")
    tmp_path.chmod(0o755)
    dropin.chmod(0o755)
    podman("run", "-d", "--name", name, "--network", "host", *it.ulimits(), "--read-only",
           "-v", f"{dropin}:/etc/recoveryd/recovery.d:ro", TAG)
    try:
        c = Container(name, grpc_port, metrics_port)
        deadline = time.monotonic() + 30
        while c.probe().returncode != 0:
            assert time.monotonic() < deadline, c.logs()
            time.sleep(0.5)
        started = time.monotonic()
        podman("stop", "-t", str(GRACE_S), name, timeout=GRACE_S + 10)
        elapsed = time.monotonic() - started
        state = c.inspect()["State"]
        assert state["ExitCode"] == 0, f"{state}\n{c.logs()}"
        assert elapsed < GRACE_S / 2, f"podman stop took {elapsed:.1f} s"
        print(f"podman stop: {elapsed:.2f} s")
    finally:
        podman("rm", "-f", "-t", "0", name, check=False)
