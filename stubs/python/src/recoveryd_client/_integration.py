"""What the framework integrations share: the model-facing outcome of a
run (text, success or not, the cascade step for the called tool) and the
summary attached to the framework's tool message."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, Optional

from ._run import FAIL_FAST, RunResult
from .mcp import McpToolFailure, from_call_tool_result, is_error_result
from .v1 import recovery_pb2 as pb


@dataclass
class Outcome:
    ok: bool            # what the model is told: the tool answered (or its default stands in)
    text: str           # the content for the model when the value is not used
    skipped: bool = False
    defaulted: bool = False


def mcp_failure_in(output: Any) -> Optional[McpToolFailure]:
    """An MCP CallToolResult with isError set, returned by a tool as its
    value (as an object, a wire dict, or JSON text of one)."""
    if isinstance(output, str) and output.startswith("{") and "isError" in output:
        try:
            output = json.loads(output)
        except ValueError:
            return None
    return from_call_tool_result(output) if is_error_result(output) else None


def cascade_step_for(res: RunResult, tool_id: str) -> Optional[pb.CascadeStep]:
    for step in res.cascade:
        if step.tool_id == tool_id:
            return step
    return None


def outcome(res: RunResult, called: str) -> Outcome:
    """What the model sees for a finished run of the tool it called. A
    refusal because a dependency failed in this turn carries a cascade step
    for the tool itself: SKIP (the model is told it was skipped) or
    USE_DEFAULT (the default value answers in its place)."""
    if res.ok and res.verified:
        return Outcome(ok=True, text=f"{called}: done ({res.reason})")
    if res.ok:
        return Outcome(ok=True, text="")
    step = cascade_step_for(res, called) if res.status == FAIL_FAST else None
    if step is not None and step.action == pb.CASCADE_ACTION_USE_DEFAULT:
        return Outcome(ok=True, text=step.default_value, defaulted=True)
    if step is not None and step.action == pb.CASCADE_ACTION_SKIP:
        why = step.reason or res.reason
        return Outcome(ok=False, text=f"{called} was skipped: {why}", skipped=True)
    return Outcome(ok=False, text=res.llm_message)


def summary(res: RunResult, called: str) -> Dict[str, Any]:
    """The run in plain data, for the framework message's metadata (and
    for graph code that acts on the cascade)."""
    out: Dict[str, Any] = {
        "status": res.status, "tool_id": res.tool_id, "called": called,
        "attempts": res.attempts, "reason": res.reason, "fallback": res.fallback,
        "verified": res.verified, "verify_tool_id": res.verify_tool_id,
        "cascade": [{"tool_id": s.tool_id, "action": pb.CascadeAction.Name(s.action),
                     "default_value": s.default_value, "reason": s.reason}
                    for s in res.cascade],
    }
    if res.classification is not None and res.classification.rule_id:
        c = res.classification
        out["classification"] = {
            "retryability": pb.Retryability.Name(c.retryability),
            "category": pb.Category.Name(c.category), "rule_id": c.rule_id,
            "executed": c.executed,
        }
    if res.error is not None:
        out["error"] = f"{type(res.error).__name__}: {res.error}"
    return out
