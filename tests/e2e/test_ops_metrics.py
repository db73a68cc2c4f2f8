"""The Prometheus endpoint of a running recoveryd (issue 6): counters move
with the calls made, the exposition is well formed, tool series are capped,
and config reloads are counted."""
from __future__ import annotations

import math
import re
import signal
import subprocess
import time
import urllib.error
import urllib.request

import pytest
import yaml

import rdtest
from rdtest import pb

MAIN_C = rdtest.REPO / "server" / "main.c"

pytestmark = pytest.mark.skipif(
    "rd_metrics_http_start" not in MAIN_C.read_text(),
    reason="server/main.c does not call rd_metrics_http_start yet: recoveryd parses "
           "metrics.listen but serves no metrics endpoint")

DECIDE = ("recovery.v1.RecoveryService", "Decide")


# ---------------------------------------------------------------- exposition parser

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL_VALUE = r'"(?:[^"\\\n]|\\[\\"n])*"'
LABELS = rf"\{{(?:[a-zA-Z_][a-zA-Z0-9_]*={LABEL_VALUE}(?:,[a-zA-Z_][a-zA-Z0-9_]*={LABEL_VALUE})*)?\}}"
SAMPLE = re.compile(rf"^({NAME})({LABELS})? (\S+)$")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), value)


def _family_of(name: str, families: dict) -> str:
    for suffix in ("_bucket", "_sum", "_count"):
        base = name[: -len(suffix)]
        if name.endswith(suffix) and families.get(base, {}).get("type") == "histogram":
            return base
    return name


def parse(text: str) -> dict:
    """Families by name: {"type", "help", "samples": [(name, labels, value)]}.
    Fails on any line that is not HELP, TYPE or `name{labels} value`, on a
    sample without HELP/TYPE before it, and on a family split in two."""
    assert text.endswith("\n")
    families: dict = {}
    current, closed = None, set()
    for line in text.splitlines():
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            kind, name, rest = line[2:6], *line[7:].split(" ", 1)
            assert re.fullmatch(NAME, name), line
            assert name not in closed, f"family {name} split: {line}"
            if current and current != name:
                closed.add(current)
            current = name
            fam = families.setdefault(name, {"samples": []})
            fam["help" if kind == "HELP" else "type"] = rest
            continue
        assert not line.startswith("#") and line, f"unexpected line {line!r}"
        m = SAMPLE.match(line)
        assert m, f"malformed sample line {line!r}"
        name, labels, value = m.group(1), m.group(2) or "", m.group(3)
        family = _family_of(name, families)
        assert family == current, f"sample outside its family block: {line!r}"
        assert "help" in families[family] and "type" in families[family], line
        parsed = {k: _unescape(v) for k, v in LABEL.findall(labels)}
        families[family]["samples"].append((name, parsed, float(value)))
    for name, fam in families.items():
        assert fam.get("type") in ("counter", "gauge", "histogram"), name
        if fam["type"] == "counter":
            assert name.endswith("_total"), name
    return families


def value(families: dict, name: str, default: float | None = None, **labels) -> float:
    fam = families.get(_family_of(name, families), {"samples": []})
    found = [v for n, lab, v in fam["samples"] if n == name and lab == labels]
    if not found:
        if default is not None:
            return default
        raise AssertionError(f"no sample {name}{labels}")
    assert len(found) == 1, f"{name}{labels} appears {len(found)} times"
    return found[0]


# ---------------------------------------------------------------- helpers

def start_with_metrics(launcher, **metrics):
    port = rdtest.free_port()
    path = launcher.config()
    main = yaml.safe_load(path.read_text())
    main["metrics"] = {"listen": f"127.0.0.1:{port}", **metrics}
    path.write_text(yaml.safe_dump(main, sort_keys=False))
    server = launcher.start(path)
    server.metrics_url = f"http://127.0.0.1:{port}"
    return server


def get(server, path: str = "/metrics", method: str = "GET"):
    req = urllib.request.Request(server.metrics_url + path, method=method)
    deadline = time.monotonic() + 10
    while True:
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                return resp.status, resp.headers, resp.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read().decode()
        except urllib.error.URLError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)  # the endpoint may come up just after gRPC


def scrape(server) -> dict:
    status, headers, body = get(server)
    assert status == 200
    assert headers["Content-Type"].startswith("text/plain; version=0.0.4")
    return parse(body)


def rpc_samples(families: dict, service: str, method: str, code: str | None = None):
    return [v for n, lab, v in families["grpc_server_handled_total"]["samples"]
            if lab.get("grpc_method") == method and lab.get("grpc_service") == service
            and (code is None or lab.get("grpc_code") == code)]


# ---------------------------------------------------------------- tests

def test_counters_move_with_decisions_and_outcomes(launcher):
    server = start_with_metrics(launcher)
    tool, other = rdtest.unique("m-tool"), rdtest.unique("m-other")
    before = scrape(server)

    responses = [rdtest.decide(server.stub, tool, rdtest.network_timeout(), attempt=1)
                 for _ in range(5)]  # failure_threshold 5: the last one opens it
    events = [e.event_type for r in responses for e in r.trace]
    retries = sum(r.action == pb.ACTION_RETRY for r in responses)
    rdtest.decide(server.stub, other, rdtest.auth_failure(), attempt=1)
    rdtest.record(server.stub, other, success=True, attempt=3)
    with pytest.raises(Exception):
        rdtest.decide(server.stub, "", rdtest.network_timeout())  # INVALID_ARGUMENT

    after = scrape(server)
    assert value(after, "recoveryd_tool_errors_total", tool=tool, retryability="transient") == 5
    assert value(after, "recoveryd_tool_errors_total", tool=tool, retryability="permanent") == 0
    assert value(after, "recoveryd_tool_errors_total", tool=other, retryability="permanent") == 1
    assert value(after, "recoveryd_tool_retries_total", tool=tool) == retries > 0
    assert value(after, "recoveryd_tool_breaker_opens_total", tool=tool) == \
        events.count("CircuitOpened") == 1
    assert value(after, "recoveryd_tool_timeouts_total", tool=tool) == events.count("ToolTimeout")
    assert value(after, "recoveryd_tool_retry_successes_total", tool=other) == 1
    assert value(after, "recoveryd_breaker_state", tool=tool, state="open") == 1
    assert value(after, "recoveryd_breaker_state", tool=tool, state="closed") == 0
    assert value(after, "recoveryd_breaker_state", tool=other, state="open") == 0
    assert value(after, "recoveryd_breaker_state", tool=other, state="closed") == 1

    moved = (value(after, "recoveryd_decisions_total", action="retry") -
             value(before, "recoveryd_decisions_total", action="retry"))
    assert moved == retries
    ok_decides = rpc_samples(after, *DECIDE, code="OK")
    assert ok_decides == [6.0]
    assert rpc_samples(after, *DECIDE, code="INVALID_ARGUMENT") == [1.0]
    assert rpc_samples(after, "recovery.v1.RecoveryService", "RecordOutcome", code="OK") == [1.0]

    labels = dict(grpc_type="unary", grpc_service=DECIDE[0], grpc_method=DECIDE[1])
    count = value(after, "grpc_server_handling_seconds_count", **labels)
    assert count == 7
    inf = value(after, "grpc_server_handling_seconds_bucket", le="+Inf", **labels)
    assert inf == count
    assert 0 < value(after, "grpc_server_handling_seconds_sum", **labels) < 60


def test_histogram_buckets_are_cumulative(launcher):
    server = start_with_metrics(launcher)
    for _ in range(20):
        rdtest.admit(server.stub, rdtest.unique("m-hist"))
    fam = scrape(server)["grpc_server_handling_seconds"]
    assert fam["type"] == "histogram"
    buckets = [(lab["le"], v) for n, lab, v in fam["samples"]
               if n.endswith("_bucket") and lab.get("grpc_method") == "Decide"]
    bounds = [math.inf if le == "+Inf" else float(le) for le, _ in buckets]
    counts = [v for _, v in buckets]
    assert bounds == sorted(bounds) and bounds[-1] == math.inf
    assert counts == sorted(counts) and counts[-1] == 20


def test_store_degraded_and_reload_series_exist(launcher):
    families = scrape(start_with_metrics(launcher))
    assert value(families, "recoveryd_store_degraded") == 0
    assert value(families, "recoveryd_store_errors_total") == 0
    assert value(families, "recoveryd_config_reloads_total", result="success") == 0
    assert value(families, "recoveryd_config_reloads_total", result="failure") == 0


def test_tool_series_are_capped(launcher):
    server = start_with_metrics(launcher, max_tools=2)
    tools = [rdtest.unique("m-cap") for _ in range(5)]
    for tool in tools:
        rdtest.decide(server.stub, tool, rdtest.network_timeout(), attempt=1)
    families = scrape(server)
    labelled = {lab["tool"] for _, lab, _ in
                families["recoveryd_tool_errors_total"]["samples"]}
    assert labelled == set(tools[:2]) | {"_other"}
    assert value(families, "recoveryd_tool_errors_total", tool="_other",
                 retryability="transient") == 3
    assert value(families, "recoveryd_metrics_tools_max") == 2


def test_reloads_are_counted(launcher):
    server = start_with_metrics(launcher)
    server.send_signal(signal.SIGHUP)
    _wait_for(server, "success", 1)

    good = server.config.read_text()
    server.config.write_text(good.replace("max_attempts: 5", "max_attempts: -1"))
    server.send_signal(signal.SIGHUP)
    _wait_for(server, "failure", 1)
    rdtest.admit(server.stub, rdtest.unique("m-after-reload"))  # still serving
    server.config.write_text(good)


def _wait_for(server, result: str, expected: float, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while True:
        got = value(scrape(server), "recoveryd_config_reloads_total", result=result)
        if got >= expected:  # a file watch may reload too
            return
        assert time.monotonic() < deadline, f"reloads {result}: {got}, expected {expected}"
        time.sleep(0.1)


def test_healthz_404_and_405(launcher):
    server = start_with_metrics(launcher)
    status, _, body = get(server, "/healthz")
    assert (status, body.strip()) == (200, "ok")
    assert get(server, "/nope")[0] == 404
    assert get(server, "/metrics", method="POST")[0] == 405


def test_bearer_token_guards_metrics_not_healthz(launcher, tmp_path):
    token_file = tmp_path / "scrape-token"
    token_file.write_text("prom-token\n")  # trimmed like every secret file
    server = start_with_metrics(launcher, auth={"token_file": str(token_file)})
    assert get(server, "/healthz")[0] == 200  # probes carry no token
    status, headers, body = get(server)
    assert status == 401 and "bearer token required" in body
    req = urllib.request.Request(server.metrics_url + "/metrics",
                                 headers={"Authorization": "Bearer wrong-token"})
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=10)
    assert e.value.code == 401
    req = urllib.request.Request(server.metrics_url + "/metrics",
                                 headers={"Authorization": "Bearer prom-token"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        assert resp.status == 200
        assert resp.read().decode().startswith("#")


def test_readyz_follows_grpc_health_through_shutdown(launcher):
    """/readyz is the API's gRPC health over plain HTTP (for probes that
    cannot speak TLS to the gRPC port): 503 from the first step of shutdown."""
    port = rdtest.free_port()
    path = launcher.config(server={"drain_delay_ms": 1500})
    main = yaml.safe_load(path.read_text())
    main["metrics"] = {"listen": f"127.0.0.1:{port}"}
    path.write_text(yaml.safe_dump(main, sort_keys=False))
    server = launcher.start(path)
    server.metrics_url = f"http://127.0.0.1:{port}"
    status, _, body = get(server, "/readyz")
    assert (status, body) == (200, "serving\n")
    server.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + 1.0
    while get(server, "/readyz")[0] == 200 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert get(server, "/readyz")[:3:2] == (503, "not serving\n")
    assert server.wait(10) == 0


def test_exposition_passes_the_prometheus_linter(launcher):
    """The Prometheus client library's own linter (promlint, built by
    scripts/install-deps.sh --test) finds nothing to fix in a scrape that
    has every family populated: tools, breakers in each state, RPCs of each
    kind and errors."""
    promlint = rdtest.REPO / "build-tools" / "bin" / "promlint"
    assert promlint.is_file(), "scripts/install-deps.sh --test builds build-tools/bin/promlint"
    server = start_with_metrics(launcher)
    tool = rdtest.unique("lint")
    for attempt in range(1, 7):
        rdtest.decide(server.stub, tool, rdtest.network_timeout(), attempt=attempt)
    rdtest.record(server.stub, rdtest.unique("lint-ok"), success=True, attempt=2)
    rdtest.breaker(server.stub, tool)
    with pytest.raises(Exception):
        rdtest.decide(server.stub, "", rdtest.network_timeout())
    status, _, body = get(server)
    assert status == 200
    families = parse(body)
    for name in ("grpc_server_handled_total", "grpc_server_handling_seconds",
                 "recoveryd_build_info", "process_cpu_seconds_total", "recoveryd_breaker_state"):
        assert name in families, name
    proc = subprocess.run([str(promlint)], input=body, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stdout + proc.stderr
