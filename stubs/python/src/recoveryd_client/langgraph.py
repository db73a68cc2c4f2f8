"""recoveryd for LangGraph's ToolNode (``pip install recoveryd-client[langgraph]``).

``RecoveryToolWrapper`` is a ToolNode tool-call wrapper (``wrap_tool_call``
and ``awrap_tool_call``): each tool call the model makes runs under the
service's decisions.

* The tool runs with the hard timeout the service gives (the blocking path
  abandons an overrunning call on a thread; the async path cancels it).
* A raised exception reaches the classifier with every structured field it
  carries (type name, errno, HTTP status and Retry-After of httpx /
  requests / openai errors, gRPC code, MCP JSON-RPC code); a ToolMessage
  with status "error" and an MCP result with ``isError`` count as failures.
* RETRY sleeps the given delay and calls again; USE_ALTERNATIVE calls the
  named tool (registered in the same node) with the same arguments; a
  dependent refused because its dependency failed in this turn answers
  "skipped" or its default value; ESCALATE / GIVE_UP / FAIL_FAST answer the
  model with the service's ``llm_message``.
* Successes and failures are reported to the service (RecordOutcome /
  Decide); the graph's ``thread_id`` is the turn id.
* The wrapper never raises for a tool failure, so a node ``RetryPolicy``
  does not retry on top of the service's decisions; interrupts
  (GraphBubbleUp) pass through untouched.

The run's summary (status, tool actually used, attempts, cascade) is in
``ToolMessage.response_metadata["recoveryd"]``.

    node = recovery_tool_node([search, search_backup], client=RecoveryClient(addr))
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Dict, Mapping, Optional, Sequence

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langgraph.errors import GraphBubbleUp
from langgraph.prebuilt import ToolNode
from langgraph.prebuilt.tool_node import ToolCallRequest

from ._client import RecoveryClient
from ._errors import ToolFailure
from ._integration import mcp_failure_in, outcome, summary
from ._run import RunResult, Verifiers
from .aio import AsyncRecoveryClient
from .v1 import recovery_pb2 as pb

TurnIdFn = Callable[[ToolCallRequest], str]


def thread_turn_id(request: ToolCallRequest) -> str:
    """The graph's thread id (``config["configurable"]["thread_id"]``)."""
    runtime = getattr(request, "runtime", None)
    config = getattr(runtime, "config", None) or {}
    return str((config.get("configurable") or {}).get("thread_id") or "")


def _check_result(result: Any) -> Any:
    """A tool's ToolMessage that reports an error is a failure here."""
    if isinstance(result, ToolMessage):
        failure = mcp_failure_in(result.artifact) or mcp_failure_in(result.content)
        if failure is not None:
            raise failure
        if result.status == "error":
            raise ToolFailure(str(result.content), kind=pb.ERROR_KIND_EXECUTION_ERROR)
    return result


class RecoveryToolWrapper:
    """Runs ToolNode tool calls under recoveryd's decisions.

    ``tools``: the node's tools (the alternatives the service may name must
    be among them). ``client`` serves ``wrap_tool_call`` (sync graphs),
    ``aclient`` serves ``awrap_tool_call`` (async graphs); give either or
    both. ``plan``: PlanSteps for cascade decisions (default: the service's
    manifests). ``turn_id``: how a request names its turn (default: the
    thread id). ``verifiers``: as in run_tool (without them, a VERIFY
    answers the model with the service's text, which names the verify
    tool to call)."""

    def __init__(self, tools: Sequence[BaseTool], *,
                 client: Optional[RecoveryClient] = None,
                 aclient: Optional[AsyncRecoveryClient] = None,
                 plan: Sequence[pb.PlanStep] = (),
                 turn_id: TurnIdFn = thread_turn_id,
                 verifiers: Verifiers = None):
        if client is None and aclient is None:
            raise ValueError("RecoveryToolWrapper needs client (sync) or aclient (async)")
        self.tools_by_name: Dict[str, BaseTool] = {t.name: t for t in tools}
        self.client = client
        self.aclient = aclient
        self.plan = list(plan)
        self.turn_id = turn_id
        self.verifiers = verifiers

    def _requests(self, request: ToolCallRequest) -> Mapping[str, ToolCallRequest]:
        # The called tool as the node built it, and every other registered
        # tool with the same arguments and call id.
        called = request.tool_call["name"]
        out = {called: request}
        for name, tool in self.tools_by_name.items():
            if name != called:
                out[name] = dataclasses.replace(
                    request, tool=tool, tool_call={**request.tool_call, "name": name})
        return out

    def _message(self, request: ToolCallRequest, res: RunResult) -> Any:
        called = request.tool_call["name"]
        meta = {"recoveryd": summary(res, called)}
        seen = outcome(res, called)
        if res.ok and res.verified:
            return ToolMessage(content=seen.text, name=called,
                               tool_call_id=request.tool_call["id"], status="success",
                               response_metadata=meta)
        if res.ok and isinstance(res.value, ToolMessage):
            msg = res.value.model_copy()
            msg.response_metadata = {**msg.response_metadata, **meta}
            return msg
        if res.ok:  # a Command from the tool
            return res.value
        return ToolMessage(content=seen.text, name=called,
                           tool_call_id=request.tool_call["id"],
                           status="success" if seen.ok else "error", response_metadata=meta)

    def wrap_tool_call(self, request: ToolCallRequest,
                       execute: Callable[[ToolCallRequest], Any]) -> Any:
        if self.client is None:
            raise RuntimeError("RecoveryToolWrapper: sync tool call without a RecoveryClient")
        calls = {name: (lambda timeout_s, r=r: _check_result(execute(r)))
                 for name, r in self._requests(request).items()}
        res = self.client.run_tool(request.tool_call["name"], calls,
                                   turn_id=self.turn_id(request), plan=self.plan,
                                   propagate=(GraphBubbleUp,), verifiers=self.verifiers)
        return self._message(request, res)

    async def awrap_tool_call(self, request: ToolCallRequest,
                              execute: Callable[[ToolCallRequest], Any]) -> Any:
        if self.aclient is None:
            raise RuntimeError("RecoveryToolWrapper: async tool call without an AsyncRecoveryClient")

        def call(r: ToolCallRequest):
            async def run(timeout_s: float) -> Any:
                return _check_result(await execute(r))
            return run

        calls = {name: call(r) for name, r in self._requests(request).items()}
        res = await self.aclient.run_tool(request.tool_call["name"], calls,
                                          turn_id=self.turn_id(request), plan=self.plan,
                                          propagate=(GraphBubbleUp,), verifiers=self.verifiers)
        return self._message(request, res)


def recovery_tool_node(tools: Sequence[BaseTool], *,
                       client: Optional[RecoveryClient] = None,
                       aclient: Optional[AsyncRecoveryClient] = None,
                       plan: Sequence[pb.PlanStep] = (),
                       turn_id: TurnIdFn = thread_turn_id, verifiers: Verifiers = None,
                       **node_kwargs: Any) -> ToolNode:
    """A ToolNode whose tool calls run under recoveryd. The node's own
    error handling is off (``handle_tool_errors=False``) so the real
    exception reaches the classifier; the wrapper answers the model."""
    wrapper = RecoveryToolWrapper(tools, client=client, aclient=aclient, plan=plan,
                                  turn_id=turn_id, verifiers=verifiers)
    return ToolNode(list(tools), handle_tool_errors=False,
                    wrap_tool_call=wrapper.wrap_tool_call if client is not None else None,
                    awrap_tool_call=wrapper.awrap_tool_call if aclient is not None else None,
                    **node_kwargs)


__all__ = ["RecoveryToolWrapper", "recovery_tool_node", "thread_turn_id"]
