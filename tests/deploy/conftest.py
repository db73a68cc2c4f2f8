"""Shared fixtures of the deployment tests: the repository, a kustomize to
render deploy/k8s with, the rendered objects of each layer, and a recoveryd
binary for the checks that run the real config loader.

    .venv/bin/python -m pytest tests/deploy
    RECOVERYD=path/to/recoveryd .venv/bin/python -m pytest tests/deploy
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import deployutil as du

# RD_NO_SKIP=1 (make test) turns a skip into a failure: tests/rd_noskip.py.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from rd_noskip import pytest_runtest_makereport  # noqa: E402,F401


@pytest.fixture(scope="session")
def kustomize() -> list[str]:
    """The command that renders a kustomization: the pinned kustomize that
    scripts/install-deps.sh --test builds into build-tools/bin, else one on
    PATH, else kubectl's embedded one."""
    for c in [str(du.REPO / "build-tools/bin/kustomize"), shutil.which("kustomize")]:
        if c and Path(c).is_file():
            return [c, "build"]
    if shutil.which("kubectl"):
        return ["kubectl", "kustomize"]
    pytest.skip("no kustomize in build-tools/bin or on PATH, and no kubectl "
                "(scripts/install-deps.sh --test installs it)")


@pytest.fixture(scope="session")
def rendered(kustomize):
    """{layer: [objects]} for every layer, rendered once per session."""
    cache: dict[str, list[dict]] = {}

    def render(layer: str) -> list[dict]:
        if layer not in cache:
            cache[layer] = du.render(kustomize, du.K8S / layer)
        return cache[layer]
    return render


@pytest.fixture(scope="session")
def recoveryd_binary() -> Path:
    given = os.environ.get("RECOVERYD")
    candidates = [Path(given)] if given else [du.REPO / d / "recoveryd" for d in
                                              ("build-deploy", "build", "build-test")]
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return path.resolve()
    pytest.skip("no recoveryd binary (looked at "
                f"{', '.join(str(c) for c in candidates)}); build one, e.g. "
                "cmake -S . -B build-deploy -DCMAKE_BUILD_TYPE=Release -DRD_E2E=OFF && "
                "cmake --build build-deploy --target recoveryd, or set RECOVERYD=PATH")


@pytest.fixture(scope="session")
def strict_decoder(tmp_path_factory) -> Path:
    """strictdecode/ built with the pinned Go of scripts/versions.sh (which
    scripts/install-deps.sh --test installs into build-tools/); its modules
    come from the Go module proxy."""
    version = re.search(r"^GO_VERSION=(\S+)", (du.REPO / "scripts/versions.sh").read_text(),
                        re.M).group(1)
    go = du.REPO / "build-tools" / f"go-{version}" / "bin" / "go"
    if not go.is_file():
        pytest.skip(f"no Go {version} in build-tools/ (scripts/install-deps.sh --test)")
    out = tmp_path_factory.mktemp("strictdecode") / "strictdecode"
    env = dict(os.environ, GOTOOLCHAIN="local", GOFLAGS="-buildvcs=false -mod=readonly")
    proc = subprocess.run([str(go), "build", "-o", str(out), "."], cwd=du.HERE / "strictdecode",
                          env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"building tests/deploy/strictdecode failed:\n{proc.stderr}"
    return out
