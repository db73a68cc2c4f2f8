"""AsyncRecoveryClient.run_tool against a scripted in-process service:
the same decisions as the blocking client, the hard timeout cancelling the
tool coroutine, and cancellation of the awaiting task reaching the RPC in
flight and the tool, with nothing reported."""
import asyncio
import threading
import time
from concurrent import futures

import grpc
import pytest

from recoveryd_client import ESCALATE, SUCCEEDED, ToolFailure, recovery_pb2 as pb
from recoveryd_client import recovery_pb2_grpc as pb_grpc
from recoveryd_client.aio import AsyncRecoveryClient


class FakeService(pb_grpc.RecoveryServiceServicer):
    def __init__(self, script, hold_decide=None):
        self.script = list(script)
        self.hold_decide = hold_decide   # index of a Decide that blocks until cancelled
        self.decides, self.outcomes = [], []
        self.rpc_cancelled = threading.Event()
        self.lock = threading.Lock()

    def Decide(self, request, context):
        with self.lock:
            index = len(self.decides)
            self.decides.append(request)
        if index == self.hold_decide:
            context.add_callback(self.rpc_cancelled.set)
            while context.is_active():
                time.sleep(0.01)
            return pb.DecideResponse()
        with self.lock:
            return self.script.pop(0)

    def RecordOutcome(self, request, context):
        self.outcomes.append(request)
        return pb.RecordOutcomeResponse()


@pytest.fixture
def server():
    servers = []

    def start(fake):
        s = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        pb_grpc.add_RecoveryServiceServicer_to_server(fake, s)
        port = s.add_insecure_port("127.0.0.1:0")
        s.start()
        servers.append(s)
        return f"127.0.0.1:{port}"

    yield start
    for s in servers:
        s.stop(0)


def resp(action, **kw):
    kw.setdefault("timeout_ms", 1000)
    return pb.DecideResponse(action=action, **kw)


def test_retry_then_success_reports_outcome(server):
    fake = FakeService([resp(pb.ACTION_PROCEED, permit_id="1:7"),
                        resp(pb.ACTION_RETRY, delay_us=20_000, permit_id="1:8")])
    addr = server(fake)
    calls = []

    async def search(timeout_s):
        calls.append(timeout_s)
        await asyncio.sleep(0)
        if len(calls) == 1:
            raise ToolFailure("503 Service Unavailable", http_status=503)
        return "ok"

    async def main():
        async with AsyncRecoveryClient(addr, rpc_timeout=2, executor_id="t") as c:
            return await c.run_tool("search", {"search": search}, turn_id="t1")

    res = asyncio.run(main())
    assert (res.status, res.value, res.attempts, res.outcome_recorded) == (SUCCEEDED, "ok", 2, True)
    assert calls == [1.0, 1.0]
    assert fake.decides[1].error.http_status == 503 and fake.decides[1].permit_id == "1:7"
    assert fake.outcomes[0].permit_id == "1:8" and fake.outcomes[0].attempt == 2


def test_hard_timeout_cancels_the_tool_and_reports_a_timeout(server):
    fake = FakeService([resp(pb.ACTION_PROCEED, timeout_ms=100),
                        resp(pb.ACTION_ESCALATE, reason="stop")])
    addr = server(fake)
    cancelled = []

    async def hang(timeout_s):
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise

    async def main():
        async with AsyncRecoveryClient(addr, rpc_timeout=2) as c:
            t0 = time.monotonic()
            res = await c.run_tool("slow", {"slow": hang})
            await asyncio.sleep(0)
            return res, time.monotonic() - t0

    res, took = asyncio.run(main())
    assert res.status == ESCALATE and took < 2
    assert cancelled == [True]
    assert fake.decides[1].error.kind == pb.ERROR_KIND_TIMEOUT
    assert "timed out after 100 ms" in fake.decides[1].error.message


def test_cancelling_during_the_tool_cancels_it_and_reports_nothing(server):
    fake = FakeService([resp(pb.ACTION_PROCEED, timeout_ms=30_000)])
    addr = server(fake)
    started, cancelled = [], []

    async def hang(timeout_s):
        started.append(True)
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise

    async def main():
        async with AsyncRecoveryClient(addr, rpc_timeout=2) as c:
            task = asyncio.ensure_future(c.run_tool("slow", {"slow": hang}))
            while not started:
                await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await asyncio.sleep(0.05)

    asyncio.run(main())
    assert cancelled == [True]
    assert len(fake.decides) == 1 and not fake.decides[0].HasField("error")
    assert fake.outcomes == []


def test_cancelling_during_decide_cancels_the_rpc(server):
    fake = FakeService([resp(pb.ACTION_PROCEED)], hold_decide=1)
    addr = server(fake)
    tool_calls = []

    async def fails(timeout_s):
        tool_calls.append(True)
        raise ToolFailure("503", http_status=503)

    async def main():
        async with AsyncRecoveryClient(addr, rpc_timeout=10) as c:
            task = asyncio.ensure_future(c.run_tool("search", {"search": fails}))
            while len(fake.decides) < 2:
                await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    asyncio.run(main())
    assert fake.rpc_cancelled.wait(5), "the server never saw the Decide call end"
    assert tool_calls == [True] and fake.outcomes == []


def test_unreachable_service_uses_the_local_fallback():
    calls = []

    async def flaky(timeout_s):
        calls.append(timeout_s)
        if len(calls) < 3:
            raise ConnectionResetError(104, "Connection reset by peer")
        return "ok"

    async def main():
        async with AsyncRecoveryClient("127.0.0.1:1", rpc_timeout=0.2) as c:
            return await c.run_tool("search", {"search": flaky})

    res = asyncio.run(main())
    assert res.ok and res.fallback and len(calls) == 3
    assert "Decide" in res.fallback_reason
