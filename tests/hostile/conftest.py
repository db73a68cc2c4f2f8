"""Fixtures of the hostile-peer suite (tests/hostile/README.md): which
recoveryd binary to attack, and `figures`, which prints what each attack
measured. tests/e2e is put on the import path for its server launcher."""
import json
import sys
from pathlib import Path

import pytest
import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO / "tests" / "e2e"))
# RD_NO_SKIP=1 (make test) turns a skip into a failure: tests/rd_noskip.py.
sys.path.insert(0, str(REPO / "tests"))

import rdtest  # noqa: E402
from rd_noskip import pytest_runtest_makereport  # noqa: E402,F401

DEFAULT_BINARIES = [REPO / "build-rel" / "recoveryd", REPO / "build-test" / "recoveryd",
                    REPO / "build" / "recoveryd"]
_collected: list[tuple[str, dict]] = []


def pytest_addoption(parser):
    parser.addoption("--recoveryd", action="store", default=None, metavar="PATH",
                     help="recoveryd binary (default: build-rel/, build-test/ or build/)")


@pytest.fixture(scope="session")
def recoveryd_binary(request) -> Path:
    given = request.config.getoption("--recoveryd")
    candidates = [Path(given)] if given else DEFAULT_BINARIES
    for path in candidates:
        if path.is_file():
            return path.resolve()
    pytest.fail(f"no recoveryd binary at {', '.join(str(p) for p in candidates)}; "
                "build it or pass --recoveryd=PATH")


@pytest.fixture
def fresh_server(recoveryd_binary, tmp_path):
    """A factory: a fresh recoveryd per attack, stopped (exit 0 required) at teardown."""
    started = []

    def start(metrics: dict | None = None, **config_kw) -> rdtest.Recoveryd:
        """config_kw as rdtest.write_config; `metrics` replaces its metrics section."""
        config = rdtest.write_config(tmp_path / f"config-{len(started)}", **config_kw)
        if metrics is not None:
            main = yaml.safe_load(config.read_text())
            main["metrics"] = metrics
            config.write_text(yaml.safe_dump(main, sort_keys=False))
        server = rdtest.Recoveryd(recoveryd_binary, config, tmp_path / f"log-{len(started)}")
        started.append(server)
        server.start()
        return server

    yield start
    problems = []
    for server in started:
        alive = server.proc.poll() is None
        rc = server.stop()
        if alive and rc != 0:
            problems.append(f"exit code {rc} after SIGTERM:\n{server.log_text()}")
        # every line the server wrote, gRPC's own included, is a JSON object
        for line in server.log_path.read_bytes().decode("utf-8").splitlines():
            try:
                assert isinstance(json.loads(line), dict)
            except (ValueError, AssertionError):
                problems.append(f"log line that is not a JSON object: {line[:300]!r}")
                break
    if problems:
        pytest.fail("\n\n".join(problems))


class Figures:
    def __init__(self, test_name: str):
        self.test_name = test_name

    def record(self, label: str, **values) -> None:
        name = f"{self.test_name}: {label}"
        _collected.append((name, values))
        print(f"\n[figures] {name}: " + ", ".join(f"{k}={v}" for k, v in values.items()))


@pytest.fixture
def figures(request) -> Figures:
    return Figures(request.node.name)


def pytest_terminal_summary(terminalreporter):
    if not _collected:
        return
    terminalreporter.section("hostile-peer figures")
    for name, values in _collected:
        terminalreporter.write_line(name)
        for k, v in values.items():
            terminalreporter.write_line(f"    {k:<28} {v}")
