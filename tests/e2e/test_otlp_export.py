"""Decisions exported as OpenTelemetry spans over OTLP/HTTP (JSON) to a
collector: here a local OTLP receiver (http.server) whose requests are
also parsed with the OpenTelemetry protobuf schema. Batched, off the
request path, and dropped with a metric when the collector is away or the
queue is full."""
import json
import re
import socket
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import yaml
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from ops_support import ops_launcher  # noqa: F401
from rdtest import network_timeout, pb, run_check_config, unique
import rdtest

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
SPAN = "00f067aa0ba902b7"


class Receiver:
    """POST /v1/traces: keeps each JSON body, answers 200 {}."""

    def __init__(self):
        self.bodies = []
        self.paths = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                outer.paths.append((self.path, self.headers["Content-Type"]))
                outer.bodies.append(json.loads(body))
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *args):
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.http.server_address[1]
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()

    def spans(self):
        out = []
        for body in self.bodies:
            for rs in body["resourceSpans"]:
                for ss in rs["scopeSpans"]:
                    out.extend(ss["spans"])
        return out

    def stop(self):
        self.http.shutdown()
        self.http.server_close()


def start(ops_launcher, port, tools=(), **otlp):
    config = ops_launcher.config(tools=list(tools))
    metrics_port = rdtest.free_port()
    main = yaml.safe_load(config.read_text())
    main["metrics"] = {"listen": f"127.0.0.1:{metrics_port}"}
    main["tracing"] = {"otlp": {"endpoint": f"http://127.0.0.1:{port}/v1/traces",
                                "flush_interval_ms": 100, **otlp}}
    config.write_text(yaml.safe_dump(main, sort_keys=False))
    server = ops_launcher.start(config=config)
    server.metrics_port = metrics_port
    return server


def metric(server, name, **labels):
    with urllib.request.urlopen(f"http://127.0.0.1:{server.metrics_port}/metrics",
                                timeout=10) as resp:
        text = resp.read().decode()
    want = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    for line in text.splitlines():
        m = re.fullmatch(r"(\w+)(?:\{(.*)\})? (\S+)", line)
        if m and m.group(1) == name and (m.group(2) or "") == want:
            return float(m.group(3))
    return None


def wait_until(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def attrs(span):
    out = {}
    for a in span["attributes"]:
        (kind, value), = a["value"].items()
        out[a["key"]] = value
    return out


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.stop()


def test_decisions_become_spans(ops_launcher, receiver):
    server = start(ops_launcher, receiver.port,
                   tools=[{"id": "span_shadow", "mode": "shadow"}])
    turn = unique("otlp-turn")
    started_ns = time.time_ns()
    failed = server.stub.Decide(pb.DecideRequest(
        tool_id="span_tool", attempt=1, turn_id=turn, error=network_timeout()),
        metadata=[("traceparent", f"00-{TRACE}-{SPAN}-01"), ("tracestate", "rojo=1")],
        timeout=10)
    admitted = server.stub.Decide(pb.DecideRequest(tool_id="span_tool"), timeout=10)
    for _ in range(5):  # the fifth failure opens the shadowed tool's breaker
        server.stub.Decide(pb.DecideRequest(tool_id="span_shadow", attempt=1,
                                            error=network_timeout()), timeout=10)
    assert wait_until(lambda: len(receiver.spans()) == 7), receiver.spans()
    assert all(p == ("/v1/traces", "application/json") for p in receiver.paths)
    for body in receiver.bodies:  # the request is valid OTLP
        json_format.ParseDict(body, trace_service_pb2.ExportTraceServiceRequest())
        resource = body["resourceSpans"][0]["resource"]["attributes"]
        assert {"key": "service.name", "value": {"stringValue": "recoveryd"}} in resource

    spans = receiver.spans()
    child = next(s for s in spans if s.get("parentSpanId"))
    assert (child["traceId"], child["parentSpanId"], child["traceState"]) == (TRACE, SPAN,
                                                                               "rojo=1")
    assert child["name"] == "recoveryd.Decide" and child["kind"] == 2
    assert started_ns <= int(child["startTimeUnixNano"]) // 10**6 * 10**6 + 10**6
    assert int(child["startTimeUnixNano"]) <= int(child["endTimeUnixNano"]) <= time.time_ns()
    assert attrs(child) == {
        "recovery.tool_id": "span_tool", "recovery.action": "retry",
        "recovery.category": "transient",
        "recovery.rule_id": failed.classification.rule_id,
        "recovery.breaker_state": "closed", "recovery.scope": "failure",
        "recovery.turn_id": turn, "recovery.attempt": "1"}
    assert failed.classification.rule_id

    root = next(s for s in spans if attrs(s)["recovery.scope"] == "admission")
    assert admitted.action == pb.ACTION_PROCEED
    assert "parentSpanId" not in root and re.fullmatch(r"[0-9a-f]{32}", root["traceId"])
    assert root["traceId"] != TRACE and attrs(root)["recovery.action"] == "proceed"
    ids = [s["spanId"] for s in spans]
    assert len(set(ids)) == 7 and all(re.fullmatch(r"[0-9a-f]{16}", i) for i in ids)

    opened = [s for s in spans if attrs(s)["recovery.tool_id"] == "span_shadow"][-1]
    assert attrs(opened)["recovery.action"] == "retry"
    assert attrs(opened)["recovery.shadow_action"] == "fail_fast"
    assert attrs(opened)["recovery.breaker_state"] == "open"

    assert metric(server, "recoveryd_otlp_spans_exported_total") == 7
    assert metric(server, "recoveryd_otlp_spans_dropped_total", reason="export_failed") == 0


def test_any_tool_id_makes_valid_json(ops_launcher, receiver):
    server = start(ops_launcher, receiver.port)
    odd = 'quote" back\\slash ünï€ode 🚀 </script>'
    server.stub.Decide(pb.DecideRequest(tool_id=odd), timeout=10)
    assert wait_until(lambda: len(receiver.spans()) == 1)
    json_format.ParseDict(receiver.bodies[0], trace_service_pb2.ExportTraceServiceRequest())
    assert attrs(receiver.spans()[0])["recovery.tool_id"] == odd


def test_collector_away_drops_with_a_metric(ops_launcher, receiver):
    server = start(ops_launcher, receiver.port, timeout_ms=500)
    server.stub.Decide(pb.DecideRequest(tool_id="t"), timeout=10)
    assert wait_until(lambda: len(receiver.spans()) == 1)
    receiver.stop()  # the collector goes away
    slowest = 0.0
    for _ in range(5):
        t0 = time.monotonic()
        d = server.stub.Decide(pb.DecideRequest(tool_id="t"), timeout=10)
        slowest = max(slowest, time.monotonic() - t0)
        assert d.action == pb.ACTION_PROCEED
    assert slowest < 0.25, slowest  # never waits for the exporter
    assert wait_until(lambda: metric(server, "recoveryd_otlp_spans_dropped_total",
                                     reason="export_failed") == 5)
    assert metric(server, "recoveryd_otlp_spans_exported_total") == 1
    assert "OTLP collector did not accept spans" in server.log_text()


def test_full_queue_drops_with_a_metric(ops_launcher):
    # A collector that accepts the connection and never answers holds the
    # exporter for its whole timeout; meanwhile the queue fills.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)
    try:
        server = start(ops_launcher, silent.getsockname()[1], queue_spans=2, batch_spans=1,
                       timeout_ms=3000)
        for _ in range(10):
            t0 = time.monotonic()
            server.stub.Decide(pb.DecideRequest(tool_id="q"), timeout=10)
            assert time.monotonic() - t0 < 0.25
        dropped = metric(server, "recoveryd_otlp_spans_dropped_total", reason="queue_full")
        # One span in the exporter's hands, two queued: the rest dropped.
        assert dropped >= 7, dropped
    finally:
        silent.close()


def test_endpoint_must_be_plain_http(ops_launcher, recoveryd_binary):
    config = ops_launcher.config()
    main = yaml.safe_load(config.read_text())
    main["tracing"] = {"otlp": {"endpoint": "https://collector:4318/v1/traces"}}
    config.write_text(yaml.safe_dump(main, sort_keys=False))
    code, out = run_check_config(recoveryd_binary, config)
    assert code != 0
    assert re.search(r"recovery\.yaml:\d+: tracing\.otlp\.endpoint: expected http://host:port",
                     out), out
