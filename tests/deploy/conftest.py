"""Shared fixtures of the deployment tests: the repository, a kustomize to
render deploy/k8s with, the rendered objects of each layer, and a recoveryd
binary for the checks that run the real config loader.

    .venv/bin/python -m pytest tests/deploy
    RECOVERYD=path/to/recoveryd .venv/bin/python -m pytest tests/deploy
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

import deployutil as du


@pytest.fixture(scope="session")
def kustomize() -> list[str]:
    """The command that renders a kustomization: the pinned kustomize
    (installed through tests/deploy/install-kustomize.sh when missing),
    else kubectl's embedded one."""
    candidates = [shutil.which("kustomize"), str(Path.home() / "go/bin/kustomize")]
    for c in candidates:
        if c and Path(c).is_file():
            return [c, "build"]
    try:
        out = subprocess.run([str(du.HERE / "install-kustomize.sh")], capture_output=True,
                             text=True, timeout=540)
        if out.returncode == 0 and Path(out.stdout.strip()).is_file():
            return [out.stdout.strip(), "build"]
        why = out.stderr.strip()[-500:]
    except (OSError, subprocess.TimeoutExpired) as e:
        why = str(e)
    if shutil.which("kubectl"):
        return ["kubectl", "kustomize"]
    pytest.skip("no kustomize: tests/deploy/install-kustomize.sh could not install it "
                f"({why}) and there is no kubectl")


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
