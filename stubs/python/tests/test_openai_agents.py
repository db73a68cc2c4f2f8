"""The OpenAI Agents SDK integration with the real openai-agents package,
its deterministic ScriptedModel (agents.testing) and a live recoveryd
(conftest.py): a tool that fails twice then succeeds, a permanent error
escalated with the service's text handed to the model, an open breaker
routed to the alternative with the same arguments, a dependent skipped, an
MCP isError result counted as a failure, a cancelled run, and a call whose
effect is unknown verified instead of repeated."""
import asyncio
import pathlib
import subprocess
import sys
import uuid

import grpc
import httpx
import openai
import pytest
from agents import Agent, RunConfig, Runner, function_tool
from agents.testing import ScriptedModel, assistant_message, function_call

from conftest import open_breaker
from recoveryd_client import VERIFICATION_REQUIRED, ToolFailure
from recoveryd_client import recovery_pb2 as pb
from recoveryd_client import recovery_pb2_grpc as pb_grpc
from recoveryd_client.aio import AsyncRecoveryClient
from recoveryd_client.openai_agents import recovery_tools


def trace_events(addr, turn):
    with grpc.insecure_channel(addr) as ch:
        resp = pb_grpc.RecoveryServiceStub(ch).GetTurnTrace(
            pb.GetTurnTraceRequest(turn_id=turn), timeout=5)
    return [(e.tool_id, e.event_type) for e in resp.events]


def scripted(*calls):
    """Each tool call in turn (name, args), then a final answer."""
    return ScriptedModel(
        [[function_call(name, args, call_id=f"c{i}")] for i, (name, args) in enumerate(calls)] +
        [[assistant_message("done")]])


def outputs(result):
    return [item.output for item in result.new_items if item.type == "tool_call_output_item"]


def run_agent(addr, model, tools, *, results=None, verifiers=None):
    turn = "oa-" + uuid.uuid4().hex[:10]

    async def main():
        async with AsyncRecoveryClient(addr, rpc_timeout=2, executor_id="agents-test") as ac:
            wrapped = recovery_tools(tools, ac, on_result=lambda ctx, res: results.append(res)
                                     if results is not None else None, verifiers=verifiers)
            agent = Agent(name="t", instructions="test", model=model, tools=wrapped)
            return await Runner.run(agent, "go", run_config=RunConfig(
                group_id=turn, tracing_disabled=True))
    return asyncio.run(main()), turn


def test_tool_failing_twice_then_succeeding(recoveryd_addr):
    calls = []

    @function_tool
    async def flaky_search(query: str) -> str:
        """Search."""
        calls.append(query)
        if len(calls) <= 2:
            req = httpx.Request("POST", "https://api.example/v1/search")
            raise openai.InternalServerError("upstream overloaded", body=None,
                                             response=httpx.Response(503, request=req))
        return f"3 results for {query}"

    results = []
    result, turn = run_agent(recoveryd_addr, scripted(("flaky_search", {"query": "rome"})),
                             [flaky_search], results=results)
    assert outputs(result) == ["3 results for rome"] and result.final_output == "done"
    assert calls == ["rome"] * 3 and results[0].attempts == 3
    events = [e for t, e in trace_events(recoveryd_addr, turn) if t == "flaky_search"]
    assert events == ["ToolError", "Retry", "ToolError", "Retry", "RetrySucceeded"]


@pytest.mark.parametrize("found", [None, True], ids=["no-verifier", "verified"])
def test_an_unknown_effect_is_verified_never_repeated(recoveryd_addr, found):
    calls = []

    @function_tool
    async def send_email(to: str) -> str:
        """Send an email."""
        calls.append(to)
        raise ToolFailure("read ECONNRESET", code="ECONNRESET")

    async def find_sent_email(req):
        return found

    results = []
    result, _ = run_agent(recoveryd_addr, scripted(("send_email", {"to": "ana"})), [send_email],
                          results=results,
                          verifiers=None if found is None else {"find_sent_email": find_sent_email})
    (out,) = outputs(result)
    assert calls == ["ana"]                                  # never repeated blind
    if found is None:
        assert results[0].status == VERIFICATION_REQUIRED
        assert "first call find_sent_email" in out
    else:
        assert results[0].verified and out.startswith("send_email: done (verified by find_sent_email")


def test_permanent_error_escalates_to_the_model_and_the_dependent_is_skipped(recoveryd_addr):
    calls = []

    @function_tool
    async def lookup_hotel(city: str) -> str:
        """Look up hotels."""
        calls.append(("lookup_hotel", city))
        req = httpx.Request("GET", "https://api.example/hotels")
        raise openai.PermissionDeniedError("Your API key cannot use this model",
                                           body={"error": {"code": "permission_error"}},
                                           response=httpx.Response(403, request=req))

    @function_tool
    async def rank_hotels(city: str) -> str:
        """Rank hotels."""
        calls.append(("rank_hotels", city))
        return "ranked"

    model = scripted(("lookup_hotel", {"city": "Porto"}), ("rank_hotels", {"city": "Porto"}))
    results = []
    result, turn = run_agent(recoveryd_addr, model, [lookup_hotel, rank_hotels],
                             results=results)
    escalated, skipped = outputs(result)
    assert escalated.startswith("Tool Execution Failed") and "Tool: lookup_hotel" in escalated
    assert results[0].status == "escalate"
    assert results[0].classification.category == pb.CATEGORY_PERMISSION
    assert skipped.startswith("rank_hotels was skipped")
    assert calls == [("lookup_hotel", "Porto")]           # no retry; the dependent never ran
    # The model's next call carried the service's text as the tool output.
    second_input = model.calls[1].input
    assert any(isinstance(i, dict) and i.get("type") == "function_call_output"
               and i.get("output") == escalated for i in second_input)


def test_open_breaker_routes_to_the_alternative_with_the_same_arguments(recoveryd_addr):
    open_breaker(recoveryd_addr, "train_search")
    calls = []

    @function_tool
    async def train_search(destination: str, seats: int) -> str:
        """Search trains."""
        calls.append(("train_search", destination, seats))
        return "primary"

    @function_tool
    def train_search_backup(destination: str, seats: int) -> str:
        """Search trains with the backup provider."""
        calls.append(("train_search_backup", destination, seats))
        return f"{seats} seats to {destination} (backup)"

    result, _ = run_agent(recoveryd_addr,
                          scripted(("train_search", {"destination": "Oslo", "seats": 2})),
                          [train_search, train_search_backup])
    assert outputs(result) == ["2 seats to Oslo (backup)"]
    assert calls == [("train_search_backup", "Oslo", 2)]


def test_mcp_is_error_result_is_a_failure(recoveryd_addr):
    calls = []

    @function_tool
    async def flaky_search(query: str) -> dict:
        """An MCP-backed search returning the server's CallToolResult."""
        calls.append(query)
        if len(calls) == 1:
            return {"isError": True, "content": [{"type": "text", "text": "upstream timed out"}]}
        return {"isError": False, "content": [{"type": "text", "text": "ok"}]}

    results = []
    result, turn = run_agent(recoveryd_addr, scripted(("flaky_search", {"query": "q"})),
                             [flaky_search], results=results)
    assert len(calls) == 2 and results[0].ok
    assert [e for t, e in trace_events(recoveryd_addr, turn)
            if t == "flaky_search"][:2] == ["ToolError", "Retry"]


def test_cancelling_the_run_cancels_the_tool_and_reports_nothing(recoveryd_addr):
    started, cancelled = asyncio.Event(), []

    @function_tool
    async def flaky_search(query: str) -> str:
        """Hangs."""
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.append(query)
            raise
        return "late"

    turn = "oa-" + uuid.uuid4().hex[:10]

    async def main():
        async with AsyncRecoveryClient(recoveryd_addr, rpc_timeout=2) as ac:
            agent = Agent(name="t", model=scripted(("flaky_search", {"query": "x"})),
                          tools=recovery_tools([flaky_search], ac))
            task = asyncio.ensure_future(Runner.run(agent, "go", run_config=RunConfig(
                group_id=turn, tracing_disabled=True)))
            await asyncio.wait_for(started.wait(), 10)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await asyncio.sleep(0.1)

    asyncio.run(main())
    assert cancelled == ["x"]
    events = [e for t, e in trace_events(recoveryd_addr, turn) if t == "flaky_search"]
    assert "ToolError" not in events and "ToolSucceeded" not in events


def test_example_agent_runs(recoveryd_addr):
    example = pathlib.Path(__file__).resolve().parents[1] / "examples" / "openai_agents_agent.py"
    out = subprocess.run([sys.executable, str(example), "--addr", recoveryd_addr],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "hotel_search -> succeeded via hotel_search after 3 attempt(s)" in out.stdout
    assert "tool output: 4 hotels in Porto" in out.stdout
