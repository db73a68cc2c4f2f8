"""RecoveryClient: the plain service calls plus run_tool, a retry loop that
follows the service's decisions and falls back to a local policy when the
service cannot be reached."""
from __future__ import annotations

import errno as _errno
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

import grpc

from .v1 import recovery_pb2 as pb
from .v1 import recovery_pb2_grpc as pb_grpc

#: A tool implementation: called with the hard timeout in seconds it must
#: respect; returns the tool's value or raises.
ToolCallable = Callable[[float], Any]

DEFAULT_RPC_TIMEOUT_S = 0.2

SUCCEEDED = "succeeded"
FAIL_FAST = "fail_fast"            # circuit open: the tool was not called (again)
ESCALATE = "escalate"              # permanent error: a person or the model must act
GIVE_UP = "give_up"                # attempts or time used up (also: local fallback exhausted)
PARTIAL = "partial"                # turn deadline reached
NO_ALTERNATIVE = "no_alternative"  # the service named a tool the caller gave no callable for

_STOP_STATUS = {
    pb.ACTION_FAIL_FAST: FAIL_FAST,
    pb.ACTION_ESCALATE: ESCALATE,
    pb.ACTION_GIVE_UP: GIVE_UP,
    pb.ACTION_PARTIAL: PARTIAL,
}


class ToolFailure(Exception):
    """Raise from a tool to hand the service structured signals beside the
    message. Any other exception is sent as its text and type name."""

    def __init__(self, message: str, *, http_status: int = 0, grpc_code: int = 0,
                 code: str = "", exception_type: str = "", kind: int = 0,
                 source: int = 0, retry_after_ms: int = 0):
        super().__init__(message)
        self.message = message
        self.http_status = http_status
        self.grpc_code = grpc_code
        self.code = code
        self.exception_type = exception_type
        self.kind = kind
        self.source = source
        self.retry_after_ms = retry_after_ms


class ToolTimeout(TimeoutError):
    """A tool call overran the hard timeout; run_tool stopped waiting for it."""


@dataclass(frozen=True)
class FallbackPolicy:
    """What run_tool does alone while the service is unreachable or slow:
    every failure counts as retryable, nothing is classified, no breaker."""
    max_attempts: int = 3                      # attempts in total, the first included
    delays_ms: Sequence[int] = (100, 200)      # before attempt 2, 3, ...; the last repeats
    timeout_ms: int = 30000                    # per call, when the service gave none


@dataclass
class Decision:
    tool_id: str
    action: int          # pb.ACTION_*
    delay_ms: int = 0
    reason: str = ""


@dataclass
class RunResult:
    """The typed end of run_tool. run_tool never raises for tool or service
    trouble; everything is in here."""
    status: str
    tool_id: str                     # the tool that succeeded, or the one the run stopped on
    value: Any = None
    attempts: int = 0                # tool invocations over the whole run
    reason: str = ""
    error: Optional[BaseException] = None   # the last tool error
    classification: Optional[pb.Classification] = None
    cascade: List[pb.CascadeStep] = field(default_factory=list)
    trace: List[pb.TraceEvent] = field(default_factory=list)
    decisions: List[Decision] = field(default_factory=list)
    permit_id: str = ""              # probe permit the successful call held
    outcome_recorded: bool = False   # False when a success could not be reported
    fallback: bool = False           # the local policy decided (service unreachable)
    fallback_reason: str = ""

    @property
    def ok(self) -> bool:
        return self.status == SUCCEEDED


class _ServiceUnusable(Exception):
    pass


class RecoveryClient:
    """A connection to recoveryd.

    ``stub`` is the generated RecoveryServiceStub for callers who run their
    own loop; the methods below add the per-call deadline (``rpc_timeout``
    seconds, 0.2 by default)."""

    def __init__(self, target: str = "127.0.0.1:50051", *,
                 channel: Optional[grpc.Channel] = None,
                 rpc_timeout: float = DEFAULT_RPC_TIMEOUT_S,
                 executor_id: str = "",
                 fallback: FallbackPolicy = FallbackPolicy()):
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
                                  timeout=self.rpc_timeout)

    def decide(self, request: pb.DecideRequest) -> pb.DecideResponse:
        return self.stub.Decide(request, timeout=self.rpc_timeout)

    def record_outcome(self, request: pb.RecordOutcomeRequest) -> pb.RecordOutcomeResponse:
        return self.stub.RecordOutcome(request, timeout=self.rpc_timeout)

    def get_breaker_state(self, tool_ids: Sequence[str] = ()) -> pb.GetBreakerStateResponse:
        return self.stub.GetBreakerState(pb.GetBreakerStateRequest(tool_ids=list(tool_ids)),
                                         timeout=self.rpc_timeout)

    def get_turn_trace(self, turn_id: str) -> pb.GetTurnTraceResponse:
        return self.stub.GetTurnTrace(pb.GetTurnTraceRequest(turn_id=turn_id),
                                      timeout=self.rpc_timeout)

    def run_tool(self, tool_id: str, tools: Mapping[str, ToolCallable], *,
                 turn_id: str = "", turn_deadline: Optional[float] = None,
                 plan: Sequence[pb.PlanStep] = ()) -> RunResult:
        """Run one logical tool call under the service's decisions.

        ``tools`` maps the tool and every alternative the service may name to
        a callable taking the hard timeout in seconds. ``turn_deadline`` is a
        ``time.monotonic()`` instant; without it the service keeps the turn
        clock."""
        return _Run(self, tool_id, tools, turn_id, turn_deadline, list(plan)).run()


class _Run:
    def __init__(self, client: RecoveryClient, tool_id: str,
                 tools: Mapping[str, ToolCallable], turn_id: str,
                 turn_deadline: Optional[float], plan: List[pb.PlanStep]):
        self.c = client
        self.tools = tools
        self.turn_id = turn_id
        self.turn_deadline = turn_deadline
        self.plan = plan
        self.res = RunResult(status=GIVE_UP, tool_id=tool_id)

    def run(self) -> RunResult:
        tool = self.res.tool_id
        visited = {tool}
        try:
            resp = self._decide(tool, None, 0, 0, "", "")
        except _ServiceUnusable as e:
            return self._fallback(tool, 0, 0, str(e))
        permit, timeout_ms = resp.permit_id, resp.timeout_ms
        if resp.action == pb.ACTION_USE_ALTERNATIVE:
            tool = resp.alternative_tool_id
            if not self._switch_to(tool, visited):
                return self.res
        elif resp.action != pb.ACTION_PROCEED:
            return self._stop(tool, resp)

        attempt, tool_start, clock = 0, time.monotonic(), _RetryClock()
        while True:
            fn = self.tools.get(tool)
            if fn is None:
                return self._end(NO_ALTERNATIVE, tool, f"no callable for tool {tool}")
            attempt += 1
            outcome_id = uuid.uuid4().hex
            attempt_start = time.monotonic()
            ok, value = self._invoke(fn, timeout_ms)
            if ok:
                return self._succeed(tool, value, attempt, tool_start, outcome_id, permit)
            elapsed_ms = clock.failed(attempt_start, isinstance(self.res.error, ToolTimeout))
            try:
                resp = self._decide(tool, _to_proto(self.res.error), attempt, elapsed_ms,
                                    outcome_id, permit)
            except _ServiceUnusable as e:
                return self._fallback(tool, attempt, timeout_ms, str(e))
            self.res.classification = resp.classification
            permit, timeout_ms = resp.permit_id, resp.timeout_ms
            if resp.action == pb.ACTION_RETRY:
                time.sleep(_retry_wait_s(resp))
            elif resp.action == pb.ACTION_USE_ALTERNATIVE:
                tool = resp.alternative_tool_id
                if not self._switch_to(tool, visited):
                    return self.res
                attempt, tool_start, clock = 0, time.monotonic(), _RetryClock()
            else:
                return self._stop(tool, resp)

    def _switch_to(self, tool: str, visited: set) -> bool:
        # Two tools failing over to each other would otherwise loop.
        if tool in visited:
            self._end(GIVE_UP, tool, f"alternative {tool} was already tried in this run")
            return False
        visited.add(tool)
        return True

    def _end(self, status: str, tool: str, reason: str) -> RunResult:
        self.res.status, self.res.tool_id, self.res.reason = status, tool, reason
        return self.res

    def _stop(self, tool: str, resp: pb.DecideResponse) -> RunResult:
        self.res.cascade = list(resp.cascade)
        if resp.HasField("classification"):
            self.res.classification = resp.classification
        status = _STOP_STATUS.get(resp.action)
        if status is None:
            return self._end(GIVE_UP, tool, f"unexpected action {pb.Action.Name(resp.action)}")
        return self._end(status, tool, resp.reason)

    def _decide(self, tool: str, error: Optional[pb.ToolError], attempt: int,
                elapsed_ms: int, outcome_id: str, permit: str) -> pb.DecideResponse:
        req = pb.DecideRequest(tool_id=tool, attempt=attempt, elapsed_ms=elapsed_ms,
                               turn_id=self.turn_id, plan=self.plan,
                               executor_id=self.c.executor_id, outcome_id=outcome_id,
                               permit_id=permit)
        if error is not None:
            req.error.CopyFrom(error)
        if self.turn_deadline is not None:
            req.turn_remaining_ms = int((self.turn_deadline - time.monotonic()) * 1000)
        try:
            resp = self.c.decide(req)
        except Exception as e:  # grpc.RpcError and anything the channel raises
            raise _ServiceUnusable(f"Decide: {_describe_rpc_error(e)}") from e
        self.res.trace.extend(resp.trace)
        self.res.decisions.append(Decision(tool, resp.action, resp.delay_ms, resp.reason))
        return resp

    def _succeed(self, tool: str, value: Any, attempt: int, tool_start: float,
                 outcome_id: str, permit: str) -> RunResult:
        self.res.value, self.res.permit_id, self.res.error = value, permit, None
        self._end(SUCCEEDED, tool, "")
        req = pb.RecordOutcomeRequest(
            tool_id=tool, success=True, attempt=attempt, turn_id=self.turn_id,
            latency_ms=int((time.monotonic() - tool_start) * 1000), outcome_id=outcome_id,
            permit_id=permit, executor_id=self.c.executor_id)
        try:
            self.c.record_outcome(req)
            self.res.outcome_recorded = True
        except Exception:  # the tool succeeded; a lost report must not undo that
            self.res.outcome_recorded = False
        return self.res

    def _fallback(self, tool: str, attempts_made: int, timeout_ms: int,
                  cause: str) -> RunResult:
        policy = self.c.fallback
        self.res.fallback, self.res.fallback_reason = True, cause
        fn = self.tools.get(tool)
        if fn is None:
            return self._end(NO_ALTERNATIVE, tool, f"no callable for tool {tool}")
        timeout_ms = timeout_ms if timeout_ms > 0 else policy.timeout_ms
        for attempt in range(attempts_made, policy.max_attempts):
            if attempt > 0:
                delays = list(policy.delays_ms) or [0]
                delay = delays[min(attempt - 1, len(delays) - 1)]
                self.res.decisions.append(Decision(tool, pb.ACTION_RETRY, delay, "local fallback"))
                time.sleep(delay / 1000.0)
            ok, value = self._invoke(fn, timeout_ms)
            if ok:
                self.res.value, self.res.error = value, None
                return self._end(SUCCEEDED, tool, "local fallback")
        return self._end(GIVE_UP, tool,
                         f"local fallback: {policy.max_attempts} attempts failed")

    def _invoke(self, fn: ToolCallable, timeout_ms: int):
        """Call fn under a hard timeout. A tool that overruns is abandoned on
        its daemon thread so the run never hangs."""
        if timeout_ms <= 0:
            timeout_ms = self.c.fallback.timeout_ms
        self.res.attempts += 1
        timeout_s = timeout_ms / 1000.0
        box: Dict[str, Any] = {}

        def target() -> None:
            try:
                box["value"] = fn(timeout_s)
            except Exception as e:
                box["error"] = e

        worker = threading.Thread(target=target, name="recoveryd-tool", daemon=True)
        worker.start()
        worker.join(timeout_s)
        if worker.is_alive():
            self.res.error = ToolTimeout(f"tool call timed out after {timeout_ms} ms")
            return False, None
        if "error" in box:
            self.res.error = box["error"]
            return False, None
        return True, box.get("value")


class _RetryClock:
    """The retry time DecideRequest.elapsed_ms carries: wall time since the
    first attempt failed, without the attempts that ran into their timeout
    (the service bounds those by the tool timeout and the turn deadline, so
    counting them would spend the retry budget on a single timeout)."""

    def __init__(self) -> None:
        self.first_failed: Optional[float] = None
        self.timed_out_s = 0.0

    def failed(self, attempt_start: float, timed_out: bool) -> int:
        now = time.monotonic()
        if self.first_failed is None:
            self.first_failed = now
            return 0
        if timed_out:
            self.timed_out_s += now - attempt_start
        return max(0, int((now - self.first_failed - self.timed_out_s) * 1000))


def _describe_rpc_error(e: BaseException) -> str:
    if isinstance(e, grpc.RpcError) and hasattr(e, "code"):
        try:
            return f"{e.code().name}: {e.details()}"
        except Exception:
            pass
    return f"{type(e).__name__}: {e}"


def _exception_type(e: BaseException) -> str:
    cls = type(e)
    module = cls.__module__
    if module == "builtins":
        return cls.__qualname__
    return f"{module.split('.')[0]}.{cls.__qualname__}"


def _retry_wait_s(resp) -> float:
    """The wait a RETRY asks for: delay_us, the delay to the microsecond, or
    delay_ms from a server that predates delay_us (it sends delay_us 0)."""
    us = resp.delay_us if resp.delay_us > 0 else resp.delay_ms * 1000
    return max(us, 0) / 1e6


# The most of an error message sent: its head and tail (a traceback's cause
# is its last line), the middle replaced by a marker. The service reads 8 KiB
# of each end and accepts up to its receive limit; cutting here keeps a huge
# message from costing the request, or being refused by a smaller limit.
MESSAGE_SEND_MAX = 32 * 1024


def _cut_message(text: str) -> str:
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= MESSAGE_SEND_MAX:
        return text
    room = MESSAGE_SEND_MAX - 48
    head = data[:room // 2].decode("utf-8", "ignore")
    tail = data[-(room - room // 2):].decode("utf-8", "ignore")
    cut = len(data) - len(head.encode()) - len(tail.encode())
    return f"{head}\n[... {cut} bytes cut ...]\n{tail}"


def _to_proto(e: Optional[BaseException]) -> pb.ToolError:
    """The wire form of a tool's exception: structured fields when the tool
    gave them, otherwise text, type name, errno name and the timeout kind."""
    if isinstance(e, ToolFailure):
        return pb.ToolError(message=_cut_message(e.message), http_status=e.http_status,
                            grpc_code=e.grpc_code, code=e.code,
                            exception_type=e.exception_type, kind=e.kind, source=e.source,
                            retry_after_ms=e.retry_after_ms)
    if e is None:
        return pb.ToolError(message="tool failed")
    err = pb.ToolError(message=_cut_message(str(e) or type(e).__name__),
                       exception_type=_exception_type(e))
    if isinstance(e, TimeoutError):
        err.kind = pb.ERROR_KIND_TIMEOUT
    if isinstance(e, OSError) and e.errno in _errno.errorcode:
        err.code = _errno.errorcode[e.errno]
    return err
