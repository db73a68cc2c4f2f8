"""recoveryd for the OpenAI Agents SDK (``pip install recoveryd-client[openai-agents]``).

``recovery_tools`` wraps an agent's function tools so each call the model
makes runs under the service's decisions (on the asyncio client):

* the tool's own failure handling (``failure_error_function``, which turns
  an exception into text for the model) is bypassed so the real exception
  reaches the classifier with every structured field it carries (type
  name, errno, HTTP status and Retry-After of httpx / requests / openai
  errors, gRPC code, MCP JSON-RPC code); an MCP result with ``isError``
  counts as a failure too;
* the call runs with the service's hard timeout (its coroutine is
  cancelled past it; the SDK's per-tool ``timeout_seconds`` is left off,
  as it would bound the retries as well);
* RETRY sleeps the given delay and calls again; USE_ALTERNATIVE calls the
  named tool (one of ``tools``) with the same arguments; a dependent refused
  because its dependency failed in this turn answers "skipped" or its
  default value; ESCALATE / GIVE_UP / FAIL_FAST give the model the service's
  ``llm_message`` as the tool's output;
* outcomes are reported; the turn id is the run's ``group_id`` (the SDK's
  conversation id), else its trace id.

Cancelling the run cancels the tool and the RPC in flight and reports
nothing.

    agent = Agent(name="travel", tools=recovery_tools([search, search_backup], aclient))
"""
from __future__ import annotations

import copy
from typing import Any, Callable, Dict, List, Optional, Sequence

from agents import FunctionTool
from agents.tool import set_function_tool_failure_error_function
from agents.tool_context import ToolContext

from ._integration import mcp_failure_in, outcome
from ._run import RunResult, Verifiers
from .aio import AsyncRecoveryClient
from .v1 import recovery_pb2 as pb

TurnIdFn = Callable[[ToolContext], str]
OnResult = Callable[[ToolContext, RunResult], None]


def run_turn_id(ctx: ToolContext) -> str:
    """The run's group_id (a conversation or thread id), else its trace id."""
    run_config = getattr(ctx, "run_config", None)
    for name in ("group_id", "trace_id"):
        value = getattr(run_config, name, None)
        if value:
            return str(value)
    try:
        from agents.tracing import get_current_trace
        trace = get_current_trace()
    except Exception:
        trace = None
    trace_id = getattr(trace, "trace_id", "") or ""
    return "" if trace_id == "no-op" else trace_id


def _raising(tool: FunctionTool) -> FunctionTool:
    """A copy of tool whose invocation raises the tool's exception instead
    of turning it into text."""
    raw = copy.copy(tool)
    set_function_tool_failure_error_function(raw, None)
    return raw


def recovery_tools(tools: Sequence[FunctionTool], aclient: AsyncRecoveryClient, *,
                   plan: Sequence[pb.PlanStep] = (),
                   turn_id: TurnIdFn = run_turn_id,
                   on_result: Optional[OnResult] = None,
                   verifiers: Verifiers = None) -> List[FunctionTool]:
    """Copies of ``tools`` whose calls run under recoveryd. Alternatives the
    service names must be among ``tools``. ``plan``: PlanSteps for cascade
    decisions (default: the service's manifests). ``on_result(ctx, result)``
    sees every finished run (the tool used, attempts, the cascade for the
    rest of the turn). ``verifiers``: as in run_tool (without them, a
    VERIFY answers the model with the service's text, which names the
    verify tool to call)."""
    raw: Dict[str, FunctionTool] = {t.name: _raising(t) for t in tools}
    return [_wrap(t, raw, aclient, list(plan), turn_id, on_result, verifiers) for t in tools]


def _wrap(tool: FunctionTool, raw: Dict[str, FunctionTool], aclient: AsyncRecoveryClient,
          plan: List[pb.PlanStep], turn_id: TurnIdFn,
          on_result: Optional[OnResult], verifiers: Verifiers = None) -> FunctionTool:
    called = tool.name

    async def on_invoke_tool(ctx: ToolContext, input_json: str) -> Any:
        def call(target: FunctionTool):
            async def run(timeout_s: float) -> Any:
                value = await target.on_invoke_tool(ctx, input_json)
                failure = mcp_failure_in(value)
                if failure is not None:
                    raise failure
                return value
            return run

        calls = {name: call(t) for name, t in raw.items()}
        res = await aclient.run_tool(called, calls, turn_id=turn_id(ctx), plan=plan,
                                     verifiers=verifiers)
        if on_result is not None:
            on_result(ctx, res)
        if res.ok and not res.verified:
            return res.value
        return outcome(res, called).text

    wrapped = copy.copy(tool)
    wrapped.on_invoke_tool = on_invoke_tool
    wrapped.timeout_seconds = None
    return wrapped


__all__ = ["recovery_tools", "run_turn_id"]
