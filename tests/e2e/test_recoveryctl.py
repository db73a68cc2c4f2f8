"""recoveryctl against a running recoveryd (issue 6): state as a table and
as JSON, classify, trace, watch, manual control through the admin service,
clear failures (exit 1 naming the gRPC status), usage errors (exit 2) and
check-config with file:line errors."""
from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import threading
import time
from pathlib import Path

import pytest
import yaml

import rdtest
from rdtest import pb

ADMIN_TOKEN = "admin-secret-for-tests"


@pytest.fixture(scope="session")
def recoveryctl_binary(recoveryd_binary) -> Path:
    """recoveryctl from the same build as recoveryd (RECOVERYCTL overrides)."""
    given = os.environ.get("RECOVERYCTL")
    path = Path(given) if given else recoveryd_binary.parent / "tools" / "recoveryctl"
    if not path.is_file():
        pytest.fail(f"no recoveryctl binary at {path}; build the 'recoveryctl' target "
                    "or set RECOVERYCTL=PATH")
    return path


def edited_config(launcher, **sections) -> Path:
    """A test config with `sections` merged into server: (and the metrics
    endpoint on an ephemeral port, so servers never contend for 9464)."""
    path = launcher.config()
    main = yaml.safe_load(path.read_text())
    main["server"].update(sections)
    main["metrics"] = {"listen": "127.0.0.1:0"}
    path.write_text(yaml.safe_dump(main, sort_keys=False))
    return path


def admin_config(launcher) -> Path:
    """A test config whose AdminService accepts ADMIN_TOKEN."""
    path = edited_config(launcher, admin={"token_file": "admin.token"})
    (path.parent / "admin.token").write_text(ADMIN_TOKEN + "\n")
    return path


@pytest.fixture(scope="module")
def server(module_launcher):
    return module_launcher.start(admin_config(module_launcher))


class Ctl:
    def __init__(self, binary: Path, address: str):
        self.binary = binary
        self.address = address

    def run(self, *args, addr: str | None = None, timeout: float = 30.0):
        cmd = [str(self.binary), "--addr", addr or self.address, *args]
        return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)

    def ok(self, *args, **kw) -> str:
        proc = self.run(*args, **kw)
        assert proc.returncode == 0, (f"recoveryctl {' '.join(args)} exited "
                                      f"{proc.returncode}:\n{proc.stderr}{proc.stdout}")
        return proc.stdout

    def json(self, *args, **kw):
        return json.loads(self.ok("--json", *args, **kw))


@pytest.fixture
def ctl(recoveryctl_binary, server) -> Ctl:
    return Ctl(recoveryctl_binary, server.address)


def parse_table(text: str) -> list[dict]:
    """Rows of an aligned table (columns are separated by two or more
    spaces) as dicts keyed by the header."""
    lines = [line for line in text.splitlines() if line.strip()]
    header = re.split(r"\s{2,}", lines[0].strip())
    rows = [re.split(r"\s{2,}", line.strip()) for line in lines[1:]]
    for row in rows:
        assert len(row) == len(header), f"row {row} does not match header {header}"
    return [dict(zip(header, row)) for row in rows]


def open_breaker(stub, tool: str, failures: int = 5):
    for _ in range(failures):
        rdtest.decide(stub, tool, rdtest.network_timeout(), attempt=1)


# ---------------------------------------------------------------- state

def test_state_table_shows_open_and_closed_breakers(ctl, server):
    broken, healthy = rdtest.unique("ctl-broken"), rdtest.unique("ctl-healthy")
    open_breaker(server.stub, broken)
    rdtest.decide(server.stub, healthy, rdtest.network_timeout(), attempt=1)

    rows = {r["TOOL"]: r for r in parse_table(ctl.ok("state", broken, healthy))}
    assert set(rows) == {broken, healthy}
    assert rows[broken]["STATE"] == "open"
    assert rows[broken]["FAILURES"] == "5/5"
    assert rows[broken]["OPENS"] == "1"
    assert rows[broken]["PROBE"] == "no"
    rdtest.parse_rfc3339(rows[broken]["OPENED AT"])
    until = rdtest.parse_rfc3339(rows[broken]["OPEN UNTIL"])
    opened = rdtest.parse_rfc3339(rows[broken]["OPENED AT"])
    assert abs((until - opened).total_seconds() - 30) < 0.01  # circuit_breaker.timeout_ms
    assert rows[healthy]["STATE"] == "closed"
    assert rows[healthy]["FAILURES"] == "1/5"
    assert rows[healthy]["OPENED AT"] == "-"
    assert rows[healthy]["FORCED"] == "-"


def test_state_without_tools_lists_every_tracked_tool(ctl, server):
    tools = [rdtest.unique("ctl-all") for _ in range(3)]
    for tool in tools:
        rdtest.admit(server.stub, tool)
    listed = {r["TOOL"] for r in parse_table(ctl.ok("state"))}
    assert set(tools) <= listed


def test_state_json_matches_the_api(ctl, server):
    tool = rdtest.unique("ctl-json")
    open_breaker(server.stub, tool)
    doc = ctl.json("state", tool)
    assert len(doc["breakers"]) == 1
    b = doc["breakers"][0]
    api = rdtest.breaker(server.stub, tool)
    assert b["tool_id"] == tool
    assert b["state"] == "open"
    assert b["consecutive_failures"] == api.consecutive_failures == 5
    assert b["failure_threshold"] == api.failure_threshold
    assert b["opened_at_ms"] == api.opened_at_ms
    assert b["open_until_ms"] == api.open_until_ms
    assert b["opens_total"] == api.opens_total == 1
    assert b["generation"] == api.generation
    assert b["probe_in_flight"] is False
    assert b["forced"] is None
    rdtest.parse_rfc3339(b["opened_at"])


# ---------------------------------------------------------------- classify

def test_classify_prints_the_classification(ctl):
    out = ctl.ok("classify", "--tool", "flight_search", "--code", "ECONNRESET",
                 "Connection reset by peer")
    fields = dict(re.match(r"([a-z ]+):\s*(.*)", line).groups()
                  for line in out.splitlines() if re.match(r"[a-z ]+:\s", line))
    assert fields["retryability"] == "transient"
    assert fields["executed"] in ("yes", "no")
    assert fields["rule"] not in ("", "-")
    assert "Tool Execution Failed" in out
    assert "Connection reset by peer" in out


def test_classify_json_with_structured_fields(ctl, server):
    doc = ctl.json("classify", "--tool", "web", "--http-status", "404",
                   "Resource", "not", "found")
    api = rdtest.classify(server.stub, "web", rdtest.err("Resource not found", http_status=404))
    assert doc["retryability"] == "permanent"
    assert doc["retryability"] == pb.Retryability.Name(api.retryability).split("_", 1)[1].lower()
    assert doc["rule_id"] == api.rule_id
    assert doc["llm_message"] == api.llm_message

    doc = ctl.json("classify", "--kind", "timeout", "Tool timeout after 30s")
    assert doc["kind"] == "timeout"
    assert doc["executed"] is True
    assert doc["retryability"] == "transient"


# ---------------------------------------------------------------- trace

def test_trace_shows_events_and_summary(ctl, server):
    turn, tool = rdtest.unique("ctl-turn"), rdtest.unique("ctl-trace")
    rdtest.decide(server.stub, tool, rdtest.tool_timeout(), attempt=1, turn_id=turn)
    rdtest.record(server.stub, tool, success=True, attempt=2, turn_id=turn)
    api = rdtest.turn_trace(server.stub, turn)

    doc = ctl.json("trace", turn)
    assert doc["turn_id"] == turn
    assert [e["event_type"] for e in doc["events"]] == [e.event_type for e in api.events]
    assert [e["sequence"] for e in doc["events"]] == [e.sequence for e in api.events]
    assert doc["events"][0]["tool_id"] == tool
    assert doc["summary"]["completed"] == list(api.summary.completed)
    assert doc["summary"]["turn_failed"] is False

    text = ctl.ok("trace", turn)
    assert text.splitlines()[0] == f"turn {turn}: {len(api.events)} events"
    table = parse_table("\n".join(text.splitlines()[1:len(api.events) + 2]))
    assert [r["EVENT"] for r in table] == [e.event_type for e in api.events]
    assert re.search(rf"^completed:\s+{re.escape(tool)}$", text, re.M)


def test_trace_json_names_the_w3c_trace(ctl, server):
    turn, tool = rdtest.unique("ctl-turn"), rdtest.unique("ctl-traced")
    trace_id, span_id = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    server.stub.Decide(rdtest.pb.DecideRequest(tool_id=tool, attempt=1, turn_id=turn,
                                               error=rdtest.tool_timeout()),
                       metadata=[("traceparent", f"00-{trace_id}-{span_id}-01")], timeout=10)
    rdtest.record(server.stub, tool, success=True, attempt=2, turn_id=turn)
    events = ctl.json("trace", turn)["events"]
    assert [(e.get("trace_id"), e.get("span_id")) for e in events] == \
        [(trace_id, span_id)] * (len(events) - 1) + [(None, None)], events


def test_trace_of_an_unknown_turn_fails_naming_the_status(ctl):
    proc = ctl.run("trace", rdtest.unique("no-such-turn"))
    assert proc.returncode == 1
    assert "GetTurnTrace" in proc.stderr and "NOT_FOUND" in proc.stderr
    assert proc.stdout == ""


# ---------------------------------------------------------------- failures and usage

def test_unreachable_server_fails_with_unavailable(ctl):
    proc = ctl.run("state", addr=f"127.0.0.1:{rdtest.free_port()}", timeout=20)
    assert proc.returncode == 1
    assert "UNAVAILABLE" in proc.stderr


def test_deadline_is_enforced(recoveryctl_binary):
    """A server that accepts the connection but never answers: the call
    ends at --timeout-ms with DEADLINE_EXCEEDED instead of hanging."""
    import socket
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        address = f"127.0.0.1:{listener.getsockname()[1]}"
        started = time.monotonic()
        proc = Ctl(recoveryctl_binary, address).run("--timeout-ms", "500", "state", timeout=20)
        elapsed = time.monotonic() - started
    assert proc.returncode == 1
    assert "DEADLINE_EXCEEDED" in proc.stderr or "UNAVAILABLE" in proc.stderr
    assert elapsed < 10


@pytest.mark.parametrize("args", [
    [],
    ["no-such-command"],
    ["state", "--ttl-ms", "5"],
    ["force-open"],
    ["trace"],
    ["trace", "a", "b"],
    ["classify"],
    ["classify", "--kind", "sideways", "msg"],
    ["--timeout-ms", "0", "state"],
    ["--token", "a", "--token-file", "/nonexistent", "state"],
    ["--bogus-option", "state"],
])
def test_usage_errors_exit_2(recoveryctl_binary, args):
    proc = subprocess.run([str(recoveryctl_binary), *args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=20)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip()


def test_bearer_token_is_sent(recoveryctl_binary, launcher, tmp_path):
    path = edited_config(launcher, auth={"token_file": "api.token"})
    (path.parent / "api.token").write_text("api-secret\n")
    server = launcher.start(path)
    ctl = Ctl(recoveryctl_binary, server.address)

    refused = ctl.run("state")
    assert refused.returncode == 1
    assert "UNAUTHENTICATED" in refused.stderr
    wrong = ctl.run("--token", "not-it", "state")
    assert wrong.returncode == 1 and "UNAUTHENTICATED" in wrong.stderr

    token_file = tmp_path / "token"
    token_file.write_text("api-secret\n")
    assert ctl.run("--token-file", str(token_file), "state").returncode == 0
    assert ctl.run("--token", "api-secret", "state").returncode == 0
    env_run = subprocess.run([str(recoveryctl_binary), "--addr", server.address, "state"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             timeout=30, env={**os.environ, "RECOVERYCTL_TOKEN": "api-secret"})
    assert env_run.returncode == 0, env_run.stderr


# ---------------------------------------------------------------- manual control and watch

def test_force_open_and_release_through_the_admin_service(ctl, server):
    tool = rdtest.unique("ctl-force")
    doc = ctl.json("--admin-token", ADMIN_TOKEN, "force-open", tool, "--ttl-ms", "60000",
                   "--reason", "maintenance")
    assert doc["breaker"]["state"] == "open"
    assert doc["breaker"]["forced"] == "open"
    assert doc["breaker"]["forced_until_ms"] > rdtest.now_ms()
    rdtest.expect_action(rdtest.admit(server.stub, tool), pb.ACTION_FAIL_FAST,
                         pb.ACTION_USE_ALTERNATIVE)
    row = parse_table(ctl.ok("state", tool))[0]
    assert row["STATE"] == "open"
    assert row["FORCED"].startswith("open until ")

    rows = parse_table(ctl.ok("--admin-token", ADMIN_TOKEN, "release", tool))
    assert rows[0]["STATE"] == "closed" and rows[0]["FORCED"] == "-"
    rdtest.expect_action(rdtest.admit(server.stub, tool), pb.ACTION_PROCEED)


def test_force_without_the_admin_token_is_refused(ctl):
    proc = ctl.run("force-open", rdtest.unique("ctl-noadmin"))
    assert proc.returncode == 1
    assert "ForceBreaker" in proc.stderr
    assert re.search(r"PERMISSION_DENIED|UNAUTHENTICATED", proc.stderr)


def _reader(stream, lines: queue.Queue):
    for line in stream:
        lines.put(line)
    lines.put(None)


def test_watch_prints_a_line_per_change(recoveryctl_binary, server):
    tool = rdtest.unique("ctl-watch")
    rdtest.admit(server.stub, tool)  # tracked, so the watch starts with its snapshot
    proc = subprocess.Popen([str(recoveryctl_binary), "--addr", server.address, "--json",
                             "watch", tool, "--duration-ms", "20000"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=_reader, args=(proc.stdout, lines), daemon=True).start()
    try:
        first = json.loads(lines.get(timeout=10))
        assert first["breaker"]["tool_id"] == tool
        assert first["breaker"]["state"] == "closed"
        open_breaker(server.stub, tool)
        deadline = time.monotonic() + 10
        change = None
        while time.monotonic() < deadline:
            line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            assert line is not None, f"watch ended early: {proc.stderr.read()}"
            doc = json.loads(line)
            if doc["breaker"]["state"] == "open":
                change = doc
                break
        assert change is not None, "no line for the breaker opening"
        assert change["cause"] == "opened"
        assert change["breaker"]["opens_total"] == 1
        rdtest.parse_rfc3339(change["timestamp"])
    finally:
        proc.send_signal(2)  # SIGINT: recoveryctl cancels the stream and exits 0
        rc = proc.wait(timeout=10)
    assert rc == 0, proc.stderr.read()


def test_watch_count_exits_after_n_changes(ctl, server):
    tool = rdtest.unique("ctl-watch-count")
    rdtest.admit(server.stub, tool)
    out = ctl.ok("watch", tool, "--count", "1", timeout=20)
    lines = out.splitlines()
    assert len(lines) == 1
    assert tool in lines[0] and " closed " in lines[0]


# ---------------------------------------------------------------- check-config

def test_check_config_accepts_a_good_file(recoveryctl_binary, tmp_path):
    path = rdtest.write_config(tmp_path / "good", tools=[{"id": "search", "timeout_ms": 5000}])
    proc = subprocess.run([str(recoveryctl_binary), "check-config", str(path)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"{path}: ok (1 tool manifest,")

    proc = subprocess.run([str(recoveryctl_binary), "--json", "check-config", str(path)],
                          stdout=subprocess.PIPE, text=True, timeout=30)
    doc = json.loads(proc.stdout)
    assert doc["ok"] is True and doc["tools"] == 1 and doc["rules"] > 0


def _line_of(path: Path, needle: str) -> int:
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in {path}")


def test_check_config_reports_file_and_line(recoveryctl_binary, tmp_path):
    path = rdtest.write_config(tmp_path / "bad", defaults={"retry_policy": {"max_attempts": -3}})
    line = _line_of(path, "max_attempts:")
    proc = subprocess.run([str(recoveryctl_binary), "check-config", str(path)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
    assert proc.returncode == 1
    assert re.match(rf"^{re.escape(str(path))}:{line}: .*max_attempts", proc.stderr), proc.stderr

    proc = subprocess.run([str(recoveryctl_binary), "--json", "check-config", str(path)],
                          stdout=subprocess.PIPE, text=True, timeout=30)
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    assert doc["ok"] is False and f"{path}:{line}:" in doc["error"]


def test_check_config_names_a_broken_manifest(recoveryctl_binary, tmp_path):
    path = rdtest.write_config(tmp_path / "badtool", tools=[{"id": "search", "timeout_ms": 5000}])
    manifest = path.parent / "tools.d" / "search.yaml"
    manifest.write_text(manifest.read_text().replace("timeout_ms: 5000", "timeout_ms: soon"))
    proc = subprocess.run([str(recoveryctl_binary), "check-config", str(path)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
    assert proc.returncode == 1
    line = _line_of(manifest, "timeout_ms:")
    assert re.search(rf"search\.yaml:{line}: ", proc.stderr), proc.stderr


def test_check_config_missing_file(recoveryctl_binary, tmp_path):
    proc = subprocess.run([str(recoveryctl_binary), "check-config", str(tmp_path / "nope.yaml")],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
    assert proc.returncode == 1
    assert "nope.yaml" in proc.stderr
