"""Fixtures of the fault-injection suite (docs/RELIABILITY.md): which
recoveryd binary to run, the end-to-end helpers (tests/e2e is put on the
import path; its files are used, never changed), and `figures`, which
collects the numbers every test measures and prints them at the end of the
run (and as each test finishes, with -s). RD_FAULTS_REPORT=FILE also writes
them as JSON."""
import json
import os
import sys
from pathlib import Path

import pytest

# RD_NO_SKIP=1 (make test) turns a skip into a failure: tests/rd_noskip.py.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from rd_noskip import pytest_runtest_makereport  # noqa: E402,F401

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO / "tests" / "e2e"))

DEFAULT_BINARIES = [REPO / "build-faults" / "recoveryd", REPO / "build-test" / "recoveryd",
                    REPO / "build" / "recoveryd"]

_collected: list[tuple[str, dict]] = []


def pytest_addoption(parser):
    parser.addoption("--recoveryd", action="store", default=None, metavar="PATH",
                     help="recoveryd binary (default: build-faults/, build-test/ or build/)")


@pytest.fixture(scope="session")
def recoveryd_binary(request) -> Path:
    given = request.config.getoption("--recoveryd")
    candidates = [Path(given)] if given else DEFAULT_BINARIES
    for path in candidates:
        if path.is_file():
            return path.resolve()
    pytest.fail(f"no recoveryd binary at {', '.join(str(p) for p in candidates)}; build it "
                "(cmake --build build-faults --target recoveryd) or pass --recoveryd=PATH")


class Figures:
    def __init__(self, test_name: str):
        self.test_name = test_name

    def record(self, label: str, **values) -> None:
        """Keeps the figures of one measurement and prints them at once."""
        name = f"{self.test_name}: {label}"
        _collected.append((name, values))
        print(f"\n[figures] {name}: " + ", ".join(f"{k}={v}" for k, v in values.items()))


@pytest.fixture
def figures(request) -> Figures:
    return Figures(request.node.name)


def pytest_terminal_summary(terminalreporter):
    if not _collected:
        return
    terminalreporter.section("fault-injection figures")
    for name, values in _collected:
        terminalreporter.write_line(name)
        for k, v in values.items():
            terminalreporter.write_line(f"    {k:<28} {v}")
    out = os.environ.get("RD_FAULTS_REPORT")
    if out:
        Path(out).write_text(json.dumps([{"test": n, **v} for n, v in _collected], indent=2))
