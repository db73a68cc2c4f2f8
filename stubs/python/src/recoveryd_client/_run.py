"""One tool call under the service's decisions, as a state machine that does
no I/O: ``steps()`` is a generator that yields what to do next (Decide,
call the tool, sleep, RecordOutcome) and is sent the result. The blocking
client (_client.py) and the asyncio client (aio.py) drive the same machine,
so both follow the service identically."""
from __future__ import annotations

import contextvars
import inspect
import re
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Generator, List, Mapping, Optional, Sequence, Tuple, Union

from ._errors import ToolTimeout, tool_error_from_exception
from .v1 import recovery_pb2 as pb

SUCCEEDED = "succeeded"
FAIL_FAST = "fail_fast"            # circuit open: the tool was not called (again)
ESCALATE = "escalate"              # permanent error: a person or the model must act
GIVE_UP = "give_up"                # attempts or time used up (also: local fallback exhausted)
PARTIAL = "partial"                # turn deadline reached
NO_ALTERNATIVE = "no_alternative"  # the service named a tool the caller gave no callable for
# The effect of a non-idempotent call is unknown (VERIFY) and no verifier
# could tell whether it happened: the tool was not called again.
VERIFICATION_REQUIRED = "verification_required"

_STOP_STATUS = {
    pb.ACTION_FAIL_FAST: FAIL_FAST,
    pb.ACTION_ESCALATE: ESCALATE,
    pb.ACTION_GIVE_UP: GIVE_UP,
    pb.ACTION_PARTIAL: PARTIAL,
}


@dataclass(frozen=True)
class FallbackPolicy:
    """What run_tool does alone while the service is unreachable or slow:
    every failure counts as retryable, nothing is classified, no breaker."""
    max_attempts: int = 3                      # attempts in total, the first included
    delays_ms: Sequence[int] = (100, 200)      # before attempt 2, 3, ...; the last repeats
    timeout_ms: int = 30000                    # per call, when the service gave none


@dataclass(frozen=True)
class Attempt:
    """The attempt a tool callable is running, from ``current_attempt()``:
    a tool that honours an idempotency key sends ``idempotency_key`` with
    every call (the run's key; on a retry, the key the service repeated)."""
    tool_id: str
    number: int                      # 1 for the first call of this tool in the run
    idempotency_key: str = ""
    timeout_s: float = 0.0


_CURRENT_ATTEMPT: "contextvars.ContextVar[Optional[Attempt]]" = contextvars.ContextVar(
    "recoveryd_attempt", default=None)


def current_attempt() -> Optional[Attempt]:
    """The Attempt of the tool call running in this context (None outside
    a call run by run_tool)."""
    return _CURRENT_ATTEMPT.get()


@dataclass(frozen=True)
class VerifyRequest:
    """What a verifier is asked: did the failed call of ``tool_id`` have
    its effect? Answer True (it happened: the run succeeds without calling
    the tool again) or False (it did not: the tool may be called again);
    raise when it cannot tell (anything but a bool counts as that)."""
    tool_id: str                     # the tool whose effect is unknown
    verify_tool_id: str              # the read-only tool the manifest names
    attempt: int                     # the failed attempt
    error: Optional[BaseException]   # what the failed attempt raised
    reason: str                      # the service's reason
    classification: Optional[pb.Classification]
    idempotency_key: str = ""
    turn_id: str = ""
    timeout_s: float = 0.0           # the verify tool's timeout


#: A verifier: one per verify tool id (a mapping), or one for all.
Verifier = Callable[[VerifyRequest], Any]
Verifiers = Union[Verifier, Mapping[str, Verifier], None]

_TENANT_RE = re.compile(r"[A-Za-z0-9_.-]+")
TENANT_ID_MAX = 64


def check_tenant(tenant: Optional[str]) -> str:
    """The tenant the server would accept in x-recoveryd-tenant, or
    ValueError naming what is wrong; None or "" means no tenant."""
    if not tenant:
        return ""
    if not isinstance(tenant, str):
        raise ValueError(f"tenant: must be a str, not {type(tenant).__name__}")
    if len(tenant.encode()) > TENANT_ID_MAX:
        raise ValueError(f"tenant: longer than {TENANT_ID_MAX} bytes")
    if not _TENANT_RE.fullmatch(tenant):
        raise ValueError(f"tenant: {tenant!r}: only letters, digits, '_', '.' and '-'")
    return tenant


def call_metadata(token: str, tenant: str) -> Tuple[Tuple[str, str], ...]:
    """The metadata every service call carries: the bearer token
    (server.auth, a tenant's token or the admin token) and the tenant the
    admin token acts for."""
    md = []
    if token:
        md.append(("authorization", f"Bearer {token}"))
    if tenant:
        md.append(("x-recoveryd-tenant", tenant))
    return tuple(md)


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
    verified: bool = False           # succeeded: a verifier said the failed call's effect happened
    verify_tool_id: str = ""         # the verify tool the service named (VERIFY)
    idempotency_key: str = ""        # the key the last call was sent with

    @property
    def ok(self) -> bool:
        return self.status == SUCCEEDED

    @property
    def llm_message(self) -> str:
        """The text for the model when the run did not succeed: the
        service's llm_message, else the reason and the last error."""
        if self.classification is not None and self.classification.llm_message:
            return self.classification.llm_message
        text = f"{self.tool_id}: {self.status}"
        if self.reason:
            text += f" ({self.reason})"
        if self.error is not None:
            text += f": {self.error}"
        return text


class ServiceUnusable(Exception):
    """A service call failed; thrown into the machine, which falls back."""


# What the machine asks its driver to do.
@dataclass
class Decide:
    request: pb.DecideRequest             # answer: DecideResponse, or throw ServiceUnusable


@dataclass
class Invoke:
    fn: Callable[[float], Any]
    timeout_s: float                      # answer: (True, value) or (False, exception)
    attempt: Optional[Attempt] = None     # current_attempt() while fn runs


@dataclass
class Sleep:
    seconds: float                        # answer: None


@dataclass
class Record:
    request: pb.RecordOutcomeRequest      # answer: True when recorded


Effect = Union[Decide, Invoke, Sleep, Record]
Steps = Generator[Effect, Any, RunResult]


class Run:
    """One run_tool call. ``client`` gives executor_id and fallback (a
    FallbackPolicy); ``tools`` maps tool ids to callables taking the hard
    timeout in seconds; exceptions of the ``propagate`` types are control
    flow (a framework's interrupt), not tool failures: they end the run and
    reach run_tool's caller unchanged, with nothing reported."""

    def __init__(self, client: Any, tool_id: str, tools: Mapping[str, Any],
                 turn_id: str, turn_deadline: Optional[float], plan: List[pb.PlanStep],
                 propagate: Tuple[type, ...] = (), verifiers: Verifiers = None,
                 idempotency_key: str = ""):
        self.c = client
        self.propagate = tuple(propagate)
        self.tools = tools
        self.turn_id = turn_id
        self.turn_deadline = turn_deadline
        self.plan = plan
        self.verifiers = verifiers
        self.key = idempotency_key
        self.res = RunResult(status=GIVE_UP, tool_id=tool_id)

    def steps(self) -> Steps:
        tool = self.res.tool_id
        visited = {tool}
        key = self.key
        try:
            resp = yield from self._decide(tool, None, 0, 0, "", "", key)
        except ServiceUnusable as e:
            return (yield from self._fallback(tool, 0, 0, str(e)))
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
            ok, value = yield from self._invoke(fn, timeout_ms, Attempt(tool, attempt, key))
            if ok:
                return (yield from self._succeed(tool, value, attempt, tool_start, outcome_id,
                                                 permit))
            elapsed_ms = clock.failed(attempt_start, isinstance(self.res.error, ToolTimeout))
            try:
                resp = yield from self._decide(tool, tool_error_from_exception(self.res.error),
                                               attempt, elapsed_ms, outcome_id, permit, key)
            except ServiceUnusable as e:
                return (yield from self._fallback(tool, attempt, timeout_ms, str(e)))
            self.res.classification = resp.classification
            permit, timeout_ms = resp.permit_id, resp.timeout_ms
            if resp.action == pb.ACTION_RETRY:
                key = resp.idempotency_key or key
                yield Sleep(_retry_wait_s(resp))
            elif resp.action == pb.ACTION_VERIFY:
                happened = yield from self._verify(tool, resp, attempt, key)
                if happened is None:
                    return self._verification_required(tool, resp)
                if happened:
                    return (yield from self._succeed_verified(tool, attempt, permit))
                # It did not happen: calling the tool again is safe, once
                # admission allows it (the breaker may have opened meanwhile).
                try:
                    resp = yield from self._decide(tool, None, attempt, 0, "", "", key)
                except ServiceUnusable as e:
                    return (yield from self._fallback(tool, attempt, timeout_ms, str(e)))
                permit, timeout_ms = resp.permit_id, resp.timeout_ms
                if resp.action == pb.ACTION_USE_ALTERNATIVE:
                    tool = resp.alternative_tool_id
                    if not self._switch_to(tool, visited):
                        return self.res
                    attempt, tool_start, clock = 0, time.monotonic(), _RetryClock()
                elif resp.action != pb.ACTION_PROCEED:
                    return self._stop(tool, resp)
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

    def _verification_required(self, tool: str, resp: pb.DecideResponse) -> RunResult:
        self.res.cascade = list(resp.cascade)
        if resp.HasField("classification"):
            self.res.classification = resp.classification
        self.res.verify_tool_id = resp.verify_tool_id
        return self._end(VERIFICATION_REQUIRED, tool, resp.reason)

    def _verifier_for(self, verify_tool: str) -> Optional[Verifier]:
        if self.verifiers is None:
            return None
        if callable(self.verifiers):
            return self.verifiers
        return self.verifiers.get(verify_tool)

    def _verify(self, tool: str, resp: pb.DecideResponse, attempt: int, key: str):
        """Asks the caller's verifier whether the failed call had its
        effect: True, False, or None when there is no verifier or it could
        not tell (the run then stops: never a blind retry)."""
        self.res.verify_tool_id = resp.verify_tool_id
        verifier = self._verifier_for(resp.verify_tool_id)
        if verifier is None:
            return None
        timeout_ms = resp.timeout_ms if resp.timeout_ms > 0 else self.c.fallback.timeout_ms
        req = VerifyRequest(tool_id=tool, verify_tool_id=resp.verify_tool_id, attempt=attempt,
                            error=self.res.error, reason=resp.reason,
                            classification=resp.classification, idempotency_key=key,
                            turn_id=self.turn_id, timeout_s=timeout_ms / 1000.0)
        ok, value = yield Invoke(lambda _timeout_s: verifier(req), timeout_ms / 1000.0,
                                 Attempt(resp.verify_tool_id, 1, "", timeout_ms / 1000.0))
        if not ok:
            if self.propagate and isinstance(value, self.propagate):
                raise value
            return None
        if not isinstance(value, bool):
            # A verifier that forgot to return (None), or a coroutine given
            # to the blocking client, said nothing: repeating the effect on
            # that would be a blind retry.
            if inspect.iscoroutine(value):
                value.close()
            return None
        return value

    def _succeed_verified(self, tool: str, attempt: int, permit: str):
        """The failed call did have its effect: a success of the tool, so
        the breaker and the trace count it as one."""
        self.res.value, self.res.permit_id, self.res.verified = None, permit, True
        self._end(SUCCEEDED, tool, f"verified by {self.res.verify_tool_id}: the effect happened")
        req = pb.RecordOutcomeRequest(
            tool_id=tool, success=True, attempt=attempt, turn_id=self.turn_id, latency_ms=0,
            outcome_id=uuid.uuid4().hex, permit_id=permit, executor_id=self.c.executor_id)
        self.res.outcome_recorded = bool((yield Record(req)))
        return self.res

    def _decide(self, tool: str, error: Optional[pb.ToolError], attempt: int,
                elapsed_ms: int, outcome_id: str, permit: str, key: str = ""):
        req = pb.DecideRequest(tool_id=tool, attempt=attempt, elapsed_ms=elapsed_ms,
                               turn_id=self.turn_id, plan=self.plan,
                               executor_id=self.c.executor_id, outcome_id=outcome_id,
                               permit_id=permit, idempotency_key=key)
        if error is not None:
            req.error.CopyFrom(error)
        if self.turn_deadline is not None:
            req.turn_remaining_ms = int((self.turn_deadline - time.monotonic()) * 1000)
        resp = yield Decide(req)
        self.res.trace.extend(resp.trace)
        self.res.decisions.append(Decision(tool, resp.action, resp.delay_ms, resp.reason))
        return resp

    def _succeed(self, tool: str, value: Any, attempt: int, tool_start: float,
                 outcome_id: str, permit: str):
        self.res.value, self.res.permit_id, self.res.error = value, permit, None
        self._end(SUCCEEDED, tool, "")
        req = pb.RecordOutcomeRequest(
            tool_id=tool, success=True, attempt=attempt, turn_id=self.turn_id,
            latency_ms=int((time.monotonic() - tool_start) * 1000), outcome_id=outcome_id,
            permit_id=permit, executor_id=self.c.executor_id)
        # The tool succeeded; a lost report must not undo that.
        self.res.outcome_recorded = bool((yield Record(req)))
        return self.res

    def _fallback(self, tool: str, attempts_made: int, timeout_ms: int, cause: str):
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
                yield Sleep(delay / 1000.0)
            ok, value = yield from self._invoke(fn, timeout_ms,
                                                Attempt(tool, attempt + 1, self.key))
            if ok:
                self.res.value, self.res.error = value, None
                return self._end(SUCCEEDED, tool, "local fallback")
        return self._end(GIVE_UP, tool,
                         f"local fallback: {policy.max_attempts} attempts failed")

    def _invoke(self, fn: Callable[[float], Any], timeout_ms: int,
                attempt: Optional[Attempt] = None):
        if timeout_ms <= 0:
            timeout_ms = self.c.fallback.timeout_ms
        self.res.attempts += 1
        if attempt is not None:
            attempt = Attempt(attempt.tool_id, attempt.number, attempt.idempotency_key,
                              timeout_ms / 1000.0)
            self.res.idempotency_key = attempt.idempotency_key
        ok, value = yield Invoke(fn, timeout_ms / 1000.0, attempt)
        if ok:
            return True, value
        if self.propagate and isinstance(value, self.propagate):
            raise value  # not a tool failure: leaves run_tool unchanged
        if isinstance(value, ToolTimeout) and not str(value):
            value = ToolTimeout(f"tool call timed out after {timeout_ms} ms")
        self.res.error = value
        return False, None


def drive_sync(steps: Steps, perform: Callable[[Effect], Any]) -> RunResult:
    """Runs the machine with a blocking ``perform``; a ServiceUnusable it
    raises goes back into the machine."""
    try:
        effect = next(steps)
        while True:
            try:
                answer = perform(effect)
            except ServiceUnusable as e:
                effect = steps.throw(e)
                continue
            effect = steps.send(answer)
    except StopIteration as stop:
        return stop.value


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


def describe_rpc_error(e: BaseException) -> str:
    code = getattr(e, "code", None)
    details = getattr(e, "details", None)
    if callable(code) and callable(details):
        try:
            return f"{code().name}: {details()}"
        except Exception:
            pass
    return f"{type(e).__name__}: {e}"


def _retry_wait_s(resp) -> float:
    """The wait a RETRY asks for: delay_us, the delay to the microsecond, or
    delay_ms from a server that predates delay_us (it sends delay_us 0)."""
    us = resp.delay_us if resp.delay_us > 0 else resp.delay_ms * 1000
    return max(us, 0) / 1e6

