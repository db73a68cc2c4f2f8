"""deploy/Dockerfile, checked without a Docker engine: its stages, the
shared install script, the non-root user, no secrets, that every COPY
source exists and passes the .dockerignore, that the runtime packages exist
in Debian and provide every shared library the binary links, and that the
HEALTHCHECK script tells a healthy recoveryd from an unhealthy one.
(test_image.py builds the image with podman and runs it.)"""
from __future__ import annotations

import fnmatch
import http.server
import os
import re
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest
import yaml

import deployutil as du

DOCKERFILE = du.REPO / "deploy/Dockerfile"
INSTALL = du.REPO / "scripts/install-deps.sh"
HEALTHCHECK = du.REPO / "deploy/docker/healthcheck.sh"


def instructions(path: Path = DOCKERFILE) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined."""
    out, pending = [], ""
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line = pending + line
        pending = ""
        word, _, rest = line.partition(" ")
        out.append((word.upper(), rest.strip()))
    return out


def stages() -> dict[str, list[tuple[str, str]]]:
    args = {}
    result, current = {}, None
    for word, rest in instructions():
        if word == "ARG" and current is None:
            name, _, value = rest.partition("=")
            args[name] = value
        elif word == "FROM":
            m = re.match(r"(\S+)\s+AS\s+(\S+)", rest, re.I)
            image = re.sub(r"\$\{(\w+)\}", lambda g: args[g.group(1)], m.group(1))
            current = m.group(2)
            result[current] = [("FROM", image)]
        else:
            result[current].append((word, rest))
    return result


def runs(stage) -> str:
    return "\n".join(rest for word, rest in stage if word == "RUN")


def packages(*flags) -> list[str]:
    proc = subprocess.run(["bash", str(INSTALL), *flags, "--list"], capture_output=True,
                          text=True, check=True)
    return proc.stdout.split()


def test_two_stages_on_debian_bookworm():
    s = stages()
    assert list(s) == ["build", "runtime"], "the last stage is the image: runtime"
    for name, stage in s.items():
        assert re.fullmatch(r"debian:bookworm(-slim)?", stage[0][1]), (name, stage[0][1])


def test_build_stage_uses_the_readme_install_script_and_a_release_build():
    build = runs(stages()["build"])
    assert "scripts/install-deps.sh --build-only" in build
    # The profile-guided Release build the benchmark measures (bench/rpc/run.sh).
    assert re.search(r"scripts/build-release\.sh (\S+)", build)
    release = (du.REPO / "scripts/build-release.sh").read_text()
    assert "-DCMAKE_BUILD_TYPE=Release" in release and "-DRD_PGO=use" in release
    assert "--check-config" in build, "the build stage proves the shipped config loads"
    # `make test` installs everything the image build does, and `make run`
    # everything compiling needs.
    assert set(packages("--build-only")) <= set(packages("--test"))
    assert set(packages("--run")) <= set(packages("--build-only"))


def test_runtime_stage_installs_only_runtime_libraries():
    runtime = stages()["runtime"]
    assert "install-deps.sh --runtime" in runs(runtime)
    runtime_pkgs = packages("--runtime")
    assert not [p for p in runtime_pkgs if p.endswith("-dev") or p in
                {"build-essential", "cmake", "gcc", "pkg-config"}], runtime_pkgs
    build_dir = re.search(r"scripts/build-release\.sh (\S+)", runs(stages()["build"])).group(1)
    copies = [rest for word, rest in runtime if word == "COPY" and "--from=build" in rest]
    assert copies == [f"--from=build {build_dir}/recoveryd /usr/local/bin/recoveryd"]


def test_runs_as_uid_10001_not_root():
    runtime = stages()["runtime"]
    users = [i for i, (word, _) in enumerate(runtime) if word == "USER"]
    assert users, "no USER: the container would run as root"
    user = runtime[users[-1]][1]
    assert user.split(":")[0] == "10001"
    assert "--uid 10001" in runs(runtime)
    assert all(word != "RUN" for word, _ in runtime[users[-1]:]), "RUN after USER"


def test_ports_and_entrypoint_match_the_config():
    runtime = stages()["runtime"]
    exposed = {int(p) for word, rest in runtime if word == "EXPOSE" for p in rest.split()}
    shipped = yaml.safe_load((du.REPO / "config/recovery.yaml").read_text())
    cfg = du.merge_fragment(shipped, yaml.safe_load(
        (du.K8S / "base/recovery.d/10-kubernetes.yaml").read_text()))
    assert exposed == {du.port_of(cfg["server"]["listen"]), du.port_of(cfg["metrics"]["listen"])}
    assert du.port_of(shipped["server"]["listen"]) in exposed
    cmd = next(rest for word, rest in runtime if word == "CMD")
    assert '"/etc/recoveryd/recovery.yaml"' in cmd
    assert any(word == "COPY" and rest == "config/ /etc/recoveryd/" for word, rest in runtime)


def test_no_secrets_in_the_image_definition():
    for word, rest in instructions():
        if word in ("ENV", "ARG", "LABEL"):
            assert not re.search(r"(?i)(password|passwd|secret|token|api_?key|credential)",
                                 rest), f"{word} {rest}"
        if word in ("COPY", "ADD"):
            assert not re.search(r"(?i)\.(pem|key|crt|p12|env)\b|id_rsa|\.npmrc", rest), rest
            assert word != "ADD" or not re.search(r"https?://", rest), "ADD from a URL"


def dockerignore_allows(path: str) -> bool:
    """The .dockerignore semantics the file uses: patterns in order, the
    last match decides, '!' re-includes, a directory pattern covers what
    lies below it."""
    allowed = True
    for line in (du.REPO / "deploy/Dockerfile.dockerignore").read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        pattern = line.lstrip("!").rstrip("/")
        if fnmatch.fnmatch(path, pattern) or path.startswith(pattern + "/") or pattern == "*":
            allowed = negate
    return allowed


def test_every_copied_path_exists_and_is_in_the_build_context():
    for word, rest in instructions():
        if word != "COPY" or rest.startswith("--from"):
            continue
        for src in rest.split()[:-1]:
            path = du.REPO / src
            assert path.exists(), f"COPY {src}: not in the repository"
            assert dockerignore_allows(src.rstrip("/")), f"COPY {src}: excluded by .dockerignore"
            if path.is_dir():
                for f in path.rglob("*"):
                    rel = str(f.relative_to(du.REPO))
                    assert dockerignore_allows(rel) or rel in LEFT_OUT, f
    for rel in LEFT_OUT:
        assert not dockerignore_allows(rel), f"{rel} would be copied into the image"


# Files inside copied directories that the image must not hold: the
# Kubernetes generator beside the shipped configuration.
LEFT_OUT = {"config/kustomization.yaml"}


def apt_known(pkg: str) -> bool:
    proc = subprocess.run(["apt-cache", "show", "--no-all-versions", pkg],
                          capture_output=True, text=True)
    return proc.returncode == 0 and f"Package: {pkg}" in proc.stdout


@pytest.fixture(scope="module")
def apt_cache():
    if not shutil.which("apt-cache"):
        pytest.skip("no apt-cache: not a Debian machine")
    if not apt_known("libc6"):
        pytest.skip("apt-cache knows no packages (run apt-get update once)")


def test_runtime_packages_exist_in_debian(apt_cache):
    missing = [p for p in packages("--runtime") if not apt_known(p)]
    assert not missing, f"install-deps.sh --runtime names packages Debian lacks: {missing}"


def owning_package(lib: str) -> str:
    """dpkg registers some files under /lib and others under /usr/lib
    (merged /usr): ask for each spelling of the path."""
    real = os.path.realpath(lib)
    spellings = {lib, real, real.removeprefix("/usr"), "/usr" + lib}
    for path in spellings:
        owner = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True)
        if owner.returncode == 0:
            return owner.stdout.split(":")[0]
    return "?"


def test_runtime_packages_provide_every_library_the_binary_links(apt_cache, recoveryd_binary):
    ldd = subprocess.run(["ldd", str(recoveryd_binary)], capture_output=True, text=True,
                         check=True).stdout
    libs = re.findall(r"=>\s+(/\S+)", ldd)
    # Sanitizer runtimes belong to test builds only; the image builds Release.
    libs = [lib for lib in libs if not re.search(r"lib(a|ub|t|l)san", lib)]
    closure = subprocess.run(
        ["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests",
         "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances",
         *packages("--runtime")], capture_output=True, text=True, check=True).stdout
    reachable = {line.strip().split(":")[-1].strip().split(":")[0]
                 for line in closure.splitlines()} | set(packages("--runtime"))
    reachable |= {"libc6", "libgcc-s1"}  # in every Debian image (Essential)
    unprovided = []
    for lib in libs:
        pkg = owning_package(lib)
        if pkg not in reachable:
            unprovided.append(f"{lib} ({pkg})")
    assert not unprovided, ("libraries the binary needs that the runtime stage does not "
                            f"install: {unprovided}")


# ---------------------------------------------------------------- HEALTHCHECK

class _Handler(http.server.BaseHTTPRequestHandler):
    status = 200

    def do_GET(self):
        code = self.status if self.path == "/healthz" else 404
        self.send_response(code)
        self.end_headers()
        self.wfile.write(b"ok\n" if code == 200 else b"no\n")

    def log_message(self, *args):
        pass


def healthcheck(port: int) -> subprocess.CompletedProcess:
    env = dict(os.environ, RECOVERYD_HEALTH_PORT=str(port))
    return subprocess.run(["bash", str(HEALTHCHECK)], capture_output=True, text=True,
                          env=env, timeout=10)


def test_healthcheck_is_the_script_copied_into_the_image():
    runtime = stages()["runtime"]
    hc = next(rest for word, rest in runtime if word == "HEALTHCHECK")
    target = re.search(r'CMD \["([^"]+)"', hc).group(1)
    assert any(word == "COPY" and rest == f"deploy/docker/healthcheck.sh {target}"
               for word, rest in runtime)
    assert os.access(HEALTHCHECK, os.X_OK)


@pytest.mark.parametrize("status,healthy", [(200, True), (503, False)])
def test_healthcheck_follows_the_healthz_status(status, healthy):
    handler = type("H", (_Handler,), {"status": status})
    server = http.server.HTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        result = healthcheck(server.server_address[1])
    finally:
        server.shutdown()
    assert (result.returncode == 0) == healthy, result.stdout


def test_healthcheck_fails_when_nothing_listens():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = healthcheck(port)
    assert result.returncode == 1 and "nothing listens" in result.stdout


def test_healthcheck_gives_up_on_a_silent_server():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        started = time.monotonic()
        result = healthcheck(s.getsockname()[1])
    assert result.returncode == 1 and "no answer" in result.stdout
    assert time.monotonic() - started < 5
