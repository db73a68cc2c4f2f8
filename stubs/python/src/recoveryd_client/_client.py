"""RecoveryClient: the plain service calls plus run_tool, a retry loop that
follows the service's decisions and falls back to a local policy when the
service cannot be reached. The loop itself is _run.Run; this module runs it
with blocking calls."""
from __future__ import annotations

import contextvars
import threading
import time
from typing import Any, Callable, Dict, Mapping, Optional, Sequence

import grpc

from ._errors import ToolTimeout
from ._run import (_CURRENT_ATTEMPT, Attempt, Decide, Effect, FallbackPolicy, Invoke, Record,
                   Run, RunResult, ServiceUnusable, Sleep, Verifiers, call_metadata,
                   check_tenant, describe_rpc_error, drive_sync)
from .v1 import recovery_pb2 as pb
from .v1 import recovery_pb2_grpc as pb_grpc

#: A tool implementation: called with the hard timeout in seconds it must
#: respect; returns the tool's value or raises.
ToolCallable = Callable[[float], Any]

DEFAULT_RPC_TIMEOUT_S = 0.2


class RecoveryClient:
    """A connection to recoveryd.

    ``stub`` is the generated RecoveryServiceStub for callers who run their
    own loop; the methods below add the per-call deadline (``rpc_timeout``
    seconds, 0.2 by default) and ``metadata`` (pass it to ``stub`` calls
    of your own): ``token`` as ``authorization: Bearer <token>``
    (server.auth, or a tenant's or the admin token of server.tenants) and
    ``tenant`` as ``x-recoveryd-tenant`` (the tenant the admin token acts
    for: letters, digits, '_', '.', '-', at most 64 bytes; ValueError
    otherwise)."""

    def __init__(self, target: str = "127.0.0.1:50051", *,
                 channel: Optional[grpc.Channel] = None,
                 rpc_timeout: float = DEFAULT_RPC_TIMEOUT_S,
                 executor_id: str = "",
                 fallback: FallbackPolicy = FallbackPolicy(),
                 token: str = "",
                 tenant: Optional[str] = None):
        self.tenant = check_tenant(tenant)
        self.metadata = call_metadata(token, self.tenant)
        self._own_channel = channel is None
        self.channel = channel if channel is not None else grpc.insecure_channel(target)
        self.stub = pb_grpc.RecoveryServiceStub(self.channel)
        self.rpc_timeout = rpc_timeout
        self.executor_id = executor_id
        self.fallback = fallback

    def close(self) -> None:
        if self._own_channel:
            self.channel.close()

    def __enter__(self) -> "RecoveryClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # Plain calls (raise grpc.RpcError like any grpcio stub).
    def classify(self, tool_id: str, error: pb.ToolError) -> pb.ClassifyResponse:
        return self.stub.Classify(pb.ClassifyRequest(tool_id=tool_id, error=error),
                                  timeout=self.rpc_timeout, metadata=self.metadata)

    def decide(self, request: pb.DecideRequest) -> pb.DecideResponse:
        return self.stub.Decide(request, timeout=self.rpc_timeout, metadata=self.metadata)

    def record_outcome(self, request: pb.RecordOutcomeRequest) -> pb.RecordOutcomeResponse:
        return self.stub.RecordOutcome(request, timeout=self.rpc_timeout,
                                       metadata=self.metadata)

    def get_breaker_state(self, tool_ids: Sequence[str] = ()) -> pb.GetBreakerStateResponse:
        return self.stub.GetBreakerState(pb.GetBreakerStateRequest(tool_ids=list(tool_ids)),
                                         timeout=self.rpc_timeout, metadata=self.metadata)

    def get_turn_trace(self, turn_id: str) -> pb.GetTurnTraceResponse:
        return self.stub.GetTurnTrace(pb.GetTurnTraceRequest(turn_id=turn_id),
                                      timeout=self.rpc_timeout, metadata=self.metadata)

    def run_tool(self, tool_id: str, tools: Mapping[str, ToolCallable], *,
                 turn_id: str = "", turn_deadline: Optional[float] = None,
                 plan: Sequence[pb.PlanStep] = (),
                 propagate: Sequence[type] = (),
                 verifiers: Verifiers = None,
                 idempotency_key: str = "") -> RunResult:
        """Run one logical tool call under the service's decisions.

        ``tools`` maps the tool and every alternative the service may name to
        a callable taking the hard timeout in seconds. ``turn_deadline`` is a
        ``time.monotonic()`` instant; without it the service keeps the turn
        clock. ``verifiers`` answer VERIFY (the effect of a non-idempotent
        call is unknown): a callable per verify tool id, or one callable,
        taking a VerifyRequest and returning whether the effect happened;
        without one the run ends ``verification_required``.
        ``idempotency_key`` is sent with Decide, and to the tool through
        ``current_attempt().idempotency_key``."""
        run = Run(self, tool_id, tools, turn_id, turn_deadline, list(plan), tuple(propagate),
                  verifiers, idempotency_key)
        return drive_sync(run.steps(), self._perform)

    def _perform(self, effect: Effect) -> Any:
        if isinstance(effect, Decide):
            try:
                return self.decide(effect.request)
            except Exception as e:  # grpc.RpcError and anything the channel raises
                raise ServiceUnusable(f"Decide: {describe_rpc_error(e)}") from e
        if isinstance(effect, Invoke):
            return _invoke(effect.fn, effect.timeout_s, effect.attempt)
        if isinstance(effect, Sleep):
            time.sleep(effect.seconds)
            return None
        if isinstance(effect, Record):
            try:
                self.record_outcome(effect.request)
                return True
            except Exception:
                return False
        raise TypeError(f"unknown step {effect!r}")


def _invoke(fn: ToolCallable, timeout_s: float, attempt: Optional[Attempt] = None):
    """Call fn under a hard timeout, in a copy of the caller's context
    (context variables such as a framework's run configuration stay
    visible, and current_attempt() is this attempt). A tool that overruns
    is abandoned on its daemon thread so the run never hangs."""
    box: Dict[str, Any] = {}
    ctx = contextvars.copy_context()
    ctx.run(_CURRENT_ATTEMPT.set, attempt)

    def target() -> None:
        try:
            box["value"] = ctx.run(fn, timeout_s)
        except Exception as e:
            box["error"] = e

    worker = threading.Thread(target=target, name="recoveryd-tool", daemon=True)
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        return False, ToolTimeout()
    if "error" in box:
        return False, box["error"]
    return True, box.get("value")


