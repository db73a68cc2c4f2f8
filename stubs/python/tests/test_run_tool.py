"""run_tool against a scripted in-process service, and against no service."""
import socket
import threading
import time
from concurrent import futures

import grpc
import pytest

from recoveryd_client import (ESCALATE, GIVE_UP, NO_ALTERNATIVE, SUCCEEDED, RecoveryClient,
                              ToolFailure)
from recoveryd_client import recovery_pb2 as pb
from recoveryd_client import recovery_pb2_grpc as pb_grpc


class FakeService(pb_grpc.RecoveryServiceServicer):
    def __init__(self, script, delay=0.0):
        self.script = list(script)
        self.delay = delay
        self.decides = []
        self.outcomes = []
        self.lock = threading.Lock()

    def Decide(self, request, context):
        time.sleep(self.delay)
        with self.lock:
            self.decides.append(request)
            return self.script.pop(0)

    def RecordOutcome(self, request, context):
        self.outcomes.append(request)
        return pb.RecordOutcomeResponse()


@pytest.fixture
def serve():
    servers, clients = [], []

    def start(fake, rpc_timeout=0.5):
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        pb_grpc.add_RecoveryServiceServicer_to_server(fake, server)
        port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        servers.append(server)
        client = RecoveryClient(f"127.0.0.1:{port}", rpc_timeout=rpc_timeout, executor_id="test")
        clients.append(client)
        return client

    yield start
    for c in clients:
        c.close()
    for s in servers:
        s.stop(0)


def resp(action, **kw):
    kw.setdefault("timeout_ms", 1000)
    return pb.DecideResponse(action=action, **kw)


def test_retry_then_success_reports_outcome_with_permit(serve):
    fake = FakeService([resp(pb.ACTION_PROCEED, permit_id="1:7"),
                        resp(pb.ACTION_RETRY, delay_ms=10, permit_id="1:8")])
    client = serve(fake)
    calls = []

    def search(timeout_s):
        calls.append(timeout_s)
        if len(calls) == 1:
            raise ToolFailure("503 Service Unavailable", http_status=503)
        return "ok"

    res = client.run_tool("search", {"search": search}, turn_id="t1")
    assert (res.status, res.value, res.attempts, res.outcome_recorded) == (SUCCEEDED, "ok", 2, True)
    assert calls == [1.0, 1.0]
    failed = fake.decides[1]
    assert failed.error.http_status == 503 and failed.attempt == 1
    assert failed.permit_id == "1:7" and failed.turn_id == "t1" and failed.outcome_id
    rec = fake.outcomes[0]
    assert rec.success and rec.attempt == 2 and rec.permit_id == "1:8"
    assert rec.outcome_id != failed.outcome_id


def run_with_one_retry(serve, **delay):
    fake = FakeService([resp(pb.ACTION_PROCEED), resp(pb.ACTION_RETRY, **delay)])
    client = serve(fake)
    calls = []

    def search(timeout_s):
        calls.append(time.monotonic())
        if len(calls) == 1:
            raise ToolFailure("503 Service Unavailable", http_status=503)
        return "ok"

    res = client.run_tool("search", {"search": search})
    assert res.status == SUCCEEDED and len(calls) == 2
    return calls[1] - calls[0]


def test_retry_sleeps_delay_us_when_sent(serve):
    waited = run_with_one_retry(serve, delay_ms=2000, delay_us=30_000)
    assert 0.030 <= waited < 1.0


def test_retry_sleeps_delay_ms_from_an_older_server(serve):
    waited = run_with_one_retry(serve, delay_ms=200)
    assert waited >= 0.200


def test_alternative_then_escalate_returns_cascade(serve):
    fake = FakeService([
        resp(pb.ACTION_PROCEED),
        resp(pb.ACTION_USE_ALTERNATIVE, alternative_tool_id="backup"),
        resp(pb.ACTION_ESCALATE, reason="permanent error: permission",
             cascade=[pb.CascadeStep(tool_id="book", action=pb.CASCADE_ACTION_SKIP)]),
    ])
    client = serve(fake)

    def forbidden(timeout_s):
        raise PermissionError(13, "Permission denied")

    res = client.run_tool("search", {"search": forbidden, "backup": forbidden})
    assert (res.status, res.tool_id, res.attempts) == (ESCALATE, "backup", 2)
    assert [s.tool_id for s in res.cascade] == ["book"]
    assert fake.decides[1].error.code == "EACCES"
    assert fake.decides[1].error.exception_type == "PermissionError"
    assert fake.decides[2].tool_id == "backup" and fake.decides[2].attempt == 1


def test_missing_alternative_callable(serve):
    client = serve(FakeService([resp(pb.ACTION_USE_ALTERNATIVE, alternative_tool_id="backup")]))
    res = client.run_tool("search", {"search": lambda t: "x"})
    assert (res.status, res.tool_id, res.attempts) == (NO_ALTERNATIVE, "backup", 0)


def test_tool_timeout_is_sent_as_timeout_kind(serve):
    fake = FakeService([resp(pb.ACTION_PROCEED, timeout_ms=50), resp(pb.ACTION_GIVE_UP)])
    client = serve(fake)
    start = time.monotonic()
    res = client.run_tool("slow", {"slow": lambda t: time.sleep(2)})
    assert res.status == GIVE_UP and time.monotonic() - start < 1.0
    assert fake.decides[1].error.kind == pb.ERROR_KIND_TIMEOUT


def test_elapsed_ms_is_retry_time_without_timed_out_attempts(serve):
    """elapsed_ms: 0 on attempt 1 (however long it ran), then the time since
    the first failure without the attempts that ran into their timeout."""
    fake = FakeService([resp(pb.ACTION_PROCEED, timeout_ms=200),
                        resp(pb.ACTION_RETRY, delay_ms=10, timeout_ms=200),
                        resp(pb.ACTION_RETRY, delay_ms=10, timeout_ms=200),
                        resp(pb.ACTION_GIVE_UP)])
    client = serve(fake)
    calls = []

    def tool(timeout_s):
        calls.append(timeout_s)
        if len(calls) == 1:
            time.sleep(0.15)
            raise ToolFailure("503 Service Unavailable", http_status=503)
        if len(calls) == 2:
            time.sleep(1.0)  # runs into the 200 ms timeout
        raise ToolFailure("503 Service Unavailable", http_status=503)

    res = client.run_tool("search", {"search": tool})
    assert res.status == GIVE_UP and len(calls) == 3
    first, timed_out, last = fake.decides[1:4]
    assert first.elapsed_ms == 0
    assert timed_out.error.kind == pb.ERROR_KIND_TIMEOUT
    assert timed_out.elapsed_ms < 150, timed_out.elapsed_ms
    assert last.elapsed_ms < 150, last.elapsed_ms


def test_unreachable_service_falls_back_locally():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    calls = []
    start = time.monotonic()
    with RecoveryClient(f"127.0.0.1:{port}") as client:
        res = client.run_tool("search", {"search": lambda t: calls.append(t) or 1 / 0})
    took = time.monotonic() - start
    assert res.status == GIVE_UP and res.fallback and len(calls) == 3
    assert isinstance(res.error, ZeroDivisionError) and res.fallback_reason.startswith("Decide:")
    assert 0.3 <= took < 3.0  # the 100 + 200 ms backoff, no hang


def test_slow_service_falls_back_after_rpc_timeout(serve):
    client = serve(FakeService([resp(pb.ACTION_PROCEED)], delay=1.0), rpc_timeout=0.1)
    start = time.monotonic()
    res = client.run_tool("search", {"search": lambda t: "ok"})
    assert res.status == SUCCEEDED and res.fallback and res.value == "ok"
    assert time.monotonic() - start < 0.7
