"""Fixtures of the end-to-end suite: which recoveryd binary to run, and
factories that start it on a free port with a test configuration and stop
it with SIGTERM at teardown, requiring a clean exit (code 0)."""
import sys
from pathlib import Path

import pytest

import rdtest

# RD_NO_SKIP=1 (make test) turns a skip into a failure: tests/rd_noskip.py.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from rd_noskip import pytest_runtest_makereport  # noqa: E402,F401

HERE = Path(__file__).resolve().parent
DEFAULT_BINARIES = [HERE / "../../build-test/recoveryd", HERE / "../../build/recoveryd"]


def pytest_addoption(parser):
    parser.addoption("--recoveryd", action="store", default=None, metavar="PATH",
                     help="recoveryd binary to test (default: build-test/ or build/)")


@pytest.fixture(scope="session")
def recoveryd_binary(request) -> Path:
    given = request.config.getoption("--recoveryd")
    candidates = [Path(given)] if given else DEFAULT_BINARIES
    for path in candidates:
        if path.is_file():
            return path.resolve()
    pytest.fail(f"no recoveryd binary at {', '.join(str(p) for p in candidates)}; "
                "build it or pass --recoveryd=PATH")


class Launcher:
    """Starts recoveryd processes and stops them all at teardown."""

    def __init__(self, binary: Path, workdir: Path):
        self.binary = binary
        self.workdir = workdir
        self.servers: list[rdtest.Recoveryd] = []

    def config(self, **kw) -> Path:
        directory = self.workdir / f"config-{len(self.servers)}-{rdtest.unique('c')}"
        return rdtest.write_config(directory, **kw)

    def start(self, config: Path | None = None, **config_kw) -> rdtest.Recoveryd:
        """Starts a server on `config`, or on a config written from
        config_kw (see rdtest.write_config)."""
        if config is None:
            config = self.config(**config_kw)
        log = self.workdir / f"recoveryd-{len(self.servers)}.log"
        server = rdtest.Recoveryd(self.binary, config, log)
        self.servers.append(server)
        try:
            server.start()
        except rdtest.ServerDied as e:
            pytest.fail(str(e))
        return server

    def stop_all(self):
        problems = []
        for server in self.servers:
            checked = server.returncode is not None  # a test stopped it itself
            rc = server.stop()
            if not checked and rc != 0:
                problems.append(f"recoveryd on {server.address} exit code {rc} after "
                                f"SIGTERM (expected 0); its output:\n{server.log_text()}")
        self.servers.clear()
        if problems:
            pytest.fail("\n\n".join(problems))


@pytest.fixture
def launcher(recoveryd_binary, tmp_path):
    """Function-scoped: for tests whose server state must start fresh."""
    la = Launcher(recoveryd_binary, tmp_path)
    yield la
    la.stop_all()


@pytest.fixture(scope="module")
def module_launcher(recoveryd_binary, tmp_path_factory):
    """Module-scoped: for servers shared by tests that use distinct ids."""
    la = Launcher(recoveryd_binary, tmp_path_factory.mktemp("recoveryd"))
    yield la
    la.stop_all()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Appends the output of every running recoveryd to a failing test."""
    outcome = yield
    report = outcome.get_result()
    if report.failed and rdtest.Recoveryd.live:
        for server in rdtest.Recoveryd.live:
            report.sections.append((f"recoveryd {server.address} output",
                                    server.log_text(8000)))
