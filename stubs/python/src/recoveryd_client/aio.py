"""AsyncRecoveryClient: RecoveryClient on asyncio (grpc.aio).

The same calls and the same ``run_tool`` loop (_run.Run) as the blocking
client, with coroutines: tools are ``async def tool(timeout_s)``, the hard
timeout cancels the tool's coroutine, and cancelling the task that awaits
``run_tool`` cancels the RPC in flight or the tool coroutine and re-raises
``asyncio.CancelledError``; a cancelled run reports nothing to the service
(it was not a tool failure)."""
from __future__ import annotations

import asyncio
import inspect
from typing import Any, Awaitable, Callable, Mapping, Optional, Sequence

import grpc
import grpc.aio

from ._errors import ToolFailure, ToolTimeout
from ._run import (_CURRENT_ATTEMPT, Attempt, Decide, Effect, FallbackPolicy, Invoke, Record,
                   Run, RunResult, ServiceUnusable, Sleep, Steps, Verifiers, call_metadata,
                   check_tenant, describe_rpc_error)
from .v1 import recovery_pb2 as pb
from .v1 import recovery_pb2_grpc as pb_grpc

#: An async tool implementation: called with the hard timeout in seconds;
#: returns an awaitable of the tool's value or raises. A plain function
#: returning a value is accepted too (it runs on the event loop).
AsyncToolCallable = Callable[[float], Awaitable[Any]]

DEFAULT_RPC_TIMEOUT_S = 0.2


class AsyncRecoveryClient:
    """A grpc.aio connection to recoveryd. Create it inside the event loop
    that uses it; close it with ``await client.close()`` or ``async with``.

    ``stub`` is the generated RecoveryServiceStub on the aio channel;
    ``token``, ``tenant`` and ``metadata`` as in RecoveryClient."""

    def __init__(self, target: str = "127.0.0.1:50051", *,
                 channel: Optional[grpc.aio.Channel] = None,
                 rpc_timeout: float = DEFAULT_RPC_TIMEOUT_S,
                 executor_id: str = "",
                 fallback: FallbackPolicy = FallbackPolicy(),
                 token: str = "",
                 tenant: Optional[str] = None):
        self.tenant = check_tenant(tenant)
        self.metadata = call_metadata(token, self.tenant)
        self._own_channel = channel is None
        self.channel = channel if channel is not None else grpc.aio.insecure_channel(target)
        self.stub = pb_grpc.RecoveryServiceStub(self.channel)
        self.rpc_timeout = rpc_timeout
        self.executor_id = executor_id
        self.fallback = fallback

    async def close(self) -> None:
        if self._own_channel:
            await self.channel.close()

    async def __aenter__(self) -> "AsyncRecoveryClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # Plain calls (raise grpc.aio.AioRpcError like any grpc.aio stub).
    async def classify(self, tool_id: str, error: pb.ToolError) -> pb.ClassifyResponse:
        return await self.stub.Classify(pb.ClassifyRequest(tool_id=tool_id, error=error),
                                        timeout=self.rpc_timeout, metadata=self.metadata)

    async def decide(self, request: pb.DecideRequest) -> pb.DecideResponse:
        return await self.stub.Decide(request, timeout=self.rpc_timeout, metadata=self.metadata)

    async def record_outcome(self, request: pb.RecordOutcomeRequest) -> pb.RecordOutcomeResponse:
        return await self.stub.RecordOutcome(request, timeout=self.rpc_timeout,
                                             metadata=self.metadata)

    async def get_breaker_state(self, tool_ids: Sequence[str] = ()) -> pb.GetBreakerStateResponse:
        return await self.stub.GetBreakerState(
            pb.GetBreakerStateRequest(tool_ids=list(tool_ids)), timeout=self.rpc_timeout,
            metadata=self.metadata)

    async def get_turn_trace(self, turn_id: str) -> pb.GetTurnTraceResponse:
        return await self.stub.GetTurnTrace(pb.GetTurnTraceRequest(turn_id=turn_id),
                                            timeout=self.rpc_timeout, metadata=self.metadata)

    async def run_tool(self, tool_id: str, tools: Mapping[str, AsyncToolCallable], *,
                       turn_id: str = "", turn_deadline: Optional[float] = None,
                       plan: Sequence[pb.PlanStep] = (),
                       propagate: Sequence[type] = (),
                       verifiers: Verifiers = None,
                       idempotency_key: str = "") -> RunResult:
        """Run one logical tool call under the service's decisions (see
        RecoveryClient.run_tool). ``tools`` maps the tool and every
        alternative the service may name to an async callable taking the
        hard timeout in seconds; ``verifiers`` may be async too. Raises
        only asyncio.CancelledError, when the awaiting task is cancelled."""
        run = Run(self, tool_id, tools, turn_id, turn_deadline, list(plan), tuple(propagate),
                  verifiers, idempotency_key)
        return await self._drive(run.steps())

    async def _drive(self, steps: Steps) -> RunResult:
        try:
            effect = next(steps)
            while True:
                try:
                    answer = await self._perform(effect)
                except ServiceUnusable as e:
                    effect = steps.throw(e)
                    continue
                effect = steps.send(answer)
        except StopIteration as stop:
            return stop.value
        finally:
            steps.close()

    async def _perform(self, effect: Effect) -> Any:
        if isinstance(effect, Decide):
            try:
                return await self.decide(effect.request)
            except Exception as e:  # AioRpcError and anything the channel raises
                raise ServiceUnusable(f"Decide: {describe_rpc_error(e)}") from e
        if isinstance(effect, Invoke):
            return await _invoke(effect.fn, effect.timeout_s, effect.attempt)
        if isinstance(effect, Sleep):
            await asyncio.sleep(effect.seconds)
            return None
        if isinstance(effect, Record):
            try:
                await self.record_outcome(effect.request)
                return True
            except Exception:
                return False
        raise TypeError(f"unknown step {effect!r}")


async def _invoke(fn: AsyncToolCallable, timeout_s: float, attempt: Optional[Attempt] = None):
    """Await fn's coroutine for at most timeout_s; past it the coroutine is
    cancelled and the attempt is a ToolTimeout. Cancelling the caller
    cancels the coroutine too and propagates: it is no tool failure.
    current_attempt() is ``attempt`` in fn and its task (which copies the
    context when created), and unchanged in the caller."""
    token = _CURRENT_ATTEMPT.set(attempt)
    try:
        result = fn(timeout_s)
        task = asyncio.ensure_future(result) if inspect.isawaitable(result) else None
    except Exception as e:
        return False, e
    finally:
        _CURRENT_ATTEMPT.reset(token)
    if task is None:
        return True, result
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout_s)
    except asyncio.CancelledError:
        _abandon(task)
        raise
    if not done:
        _abandon(task)
        return False, ToolTimeout()
    if task.cancelled():
        # The tool cancelled itself (the caller was not cancelled).
        return False, ToolFailure("tool call was cancelled", kind=pb.ERROR_KIND_CANCELED)
    error = task.exception()
    if error is not None:
        return False, error
    return True, task.result()


def _abandon(task: "asyncio.Future[Any]") -> None:
    """Cancel a tool's task without waiting for it (a tool that ignores
    cancellation must not hold the run); its late end is collected."""
    task.cancel()
    task.add_done_callback(lambda t: t.cancelled() or t.exception())
