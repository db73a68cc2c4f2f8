"""The LangGraph integration with the real langgraph / langchain-core
packages, a scripted model from langchain_core's own fakes, and a live
recoveryd (conftest.py): a tool that fails twice then succeeds, a permanent
error escalated with the service's text for the model, an open breaker
routed to the alternative with the same arguments, a dependent skipped, a
call whose effect is unknown verified instead of repeated; the same on the
async path, and cancellation of an async graph."""
import asyncio
import uuid

import grpc
import httpx
import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import tools_condition
from langgraph.types import RetryPolicy

from conftest import open_breaker
from recoveryd_client import RecoveryClient, ToolFailure, recovery_pb2 as pb
from recoveryd_client import recovery_pb2_grpc as pb_grpc
from recoveryd_client.aio import AsyncRecoveryClient
from recoveryd_client.langgraph import recovery_tool_node


def http_error(status):
    req = httpx.Request("GET", "https://api.example/x")
    return httpx.HTTPStatusError(f"HTTP {status}", request=req,
                                 response=httpx.Response(status, request=req))


class Tools:
    """The scenarios' tools, counting their calls and arguments."""

    def __init__(self):
        self.calls = {}
        calls = self.calls

        def note(name, args):
            calls.setdefault(name, []).append(args)
            return len(calls[name])

        @tool
        def flaky_search(query: str) -> str:
            """Search (fails twice with HTTP 503, then answers)."""
            if note("flaky_search", query) <= 2:
                raise http_error(503)
            return f"3 results for {query}"

        @tool
        def lookup_hotel(city: str) -> str:
            """Look up hotels (the API key is refused)."""
            note("lookup_hotel", city)
            raise http_error(403)

        @tool
        def rank_hotels(city: str) -> str:
            """Rank the hotels found."""
            note("rank_hotels", city)
            return "ranked"

        @tool
        def train_search(destination: str) -> str:
            """Search trains."""
            note("train_search", destination)
            return "primary"

        @tool
        def train_search_backup(destination: str) -> str:
            """Search trains with the backup provider."""
            note("train_search_backup", destination)
            return f"backup trains to {destination}"

        @tool
        def send_email(to: str) -> str:
            """Send an email (the connection is reset after sending, once)."""
            if note("send_email", to) == 1:
                raise ToolFailure("read ECONNRESET", code="ECONNRESET")
            return f"sent to {to}"

        self.all = [flaky_search, lookup_hotel, rank_hotels, train_search, train_search_backup,
                    send_email]


def call(name, args, call_id):
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def scripted(*tool_calls):
    """A model that makes each tool call in turn, then answers."""
    return FakeMessagesListChatModel(
        responses=[AIMessage(content="", tool_calls=[c]) for c in tool_calls] +
        [AIMessage(content="done")])


def graph_for(model, node):
    def agent(state: MessagesState):
        return {"messages": [model.invoke(state["messages"])]}

    g = StateGraph(MessagesState)
    g.add_node("agent", agent)
    g.add_node("tools", node, retry_policy=RetryPolicy(max_attempts=3, initial_interval=0.01))
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", tools_condition)
    g.add_edge("tools", "agent")
    return g.compile()


def tool_messages(state):
    return {m.tool_call_id: m for m in state["messages"] if isinstance(m, ToolMessage)}


def trace_events(addr, turn):
    with grpc.insecure_channel(addr) as ch:
        resp = pb_grpc.RecoveryServiceStub(ch).GetTurnTrace(
            pb.GetTurnTraceRequest(turn_id=turn), timeout=5)
    return [(e.tool_id, e.event_type) for e in resp.events]


def run_sync(addr, model, tools, **node_kw):
    turn = "lg-" + uuid.uuid4().hex[:10]
    with RecoveryClient(addr, rpc_timeout=2, executor_id="langgraph-test") as client:
        graph = graph_for(model, recovery_tool_node(tools.all, client=client, **node_kw))
        state = graph.invoke({"messages": [HumanMessage("go")]},
                             {"configurable": {"thread_id": turn}})
    return state, turn


def run_async(addr, model, tools, **node_kw):
    turn = "lg-" + uuid.uuid4().hex[:10]

    async def main():
        async with AsyncRecoveryClient(addr, rpc_timeout=2, executor_id="langgraph-test") as ac:
            graph = graph_for(model, recovery_tool_node(tools.all, aclient=ac, **node_kw))
            return await graph.ainvoke({"messages": [HumanMessage("go")]},
                                       {"configurable": {"thread_id": turn}})
    return asyncio.run(main()), turn


@pytest.fixture(params=["sync", "async"])
def run(request):
    return run_sync if request.param == "sync" else run_async


def test_tool_failing_twice_then_succeeding(recoveryd_addr, run):
    tools = Tools()
    state, turn = run(recoveryd_addr, scripted(call("flaky_search", {"query": "lisbon"}, "c1")),
                      tools)
    msg = tool_messages(state)["c1"]
    assert (msg.status, msg.content) == ("success", "3 results for lisbon")
    assert msg.response_metadata["recoveryd"]["attempts"] == 3
    # Three calls in all: the node's RetryPolicy never retried on top.
    assert tools.calls["flaky_search"] == ["lisbon"] * 3
    assert state["messages"][-1].content == "done"
    events = [e for t, e in trace_events(recoveryd_addr, turn) if t == "flaky_search"]
    assert events == ["ToolError", "Retry", "ToolError", "Retry", "RetrySucceeded"]


def test_permanent_error_escalates_and_the_dependent_is_skipped(recoveryd_addr, run):
    tools = Tools()
    model = scripted(call("lookup_hotel", {"city": "Porto"}, "c1"),
                     call("rank_hotels", {"city": "Porto"}, "c2"))
    state, turn = run(recoveryd_addr, model, tools)
    msgs = tool_messages(state)
    failed = msgs["c1"]
    assert failed.status == "error"
    assert failed.content.startswith("Tool Execution Failed")
    assert "Tool: lookup_hotel" in failed.content and "HTTP 403" in failed.content
    meta = failed.response_metadata["recoveryd"]
    assert meta["status"] == "escalate"
    assert meta["classification"]["category"] == "CATEGORY_PERMISSION"
    assert {"tool_id": "rank_hotels", "action": "CASCADE_ACTION_SKIP"}.items() <= \
        meta["cascade"][0].items()
    assert tools.calls["lookup_hotel"] == ["Porto"]          # permanent: no retry
    skipped = msgs["c2"]
    assert skipped.status == "error" and skipped.content.startswith("rank_hotels was skipped")
    assert "rank_hotels" not in tools.calls                   # never ran
    events = trace_events(recoveryd_addr, turn)
    assert ("lookup_hotel", "Escalate") in events or ("lookup_hotel", "ToolError") in events


def test_an_unknown_effect_tells_the_model_to_verify(recoveryd_addr, run):
    tools = Tools()
    state, _ = run(recoveryd_addr, scripted(call("send_email", {"to": "ana"}, "c1")), tools)
    msg = tool_messages(state)["c1"]
    assert msg.status == "error" and "first call find_sent_email" in msg.content
    meta = msg.response_metadata["recoveryd"]
    assert (meta["status"], meta["verify_tool_id"]) == ("verification_required", "find_sent_email")
    assert tools.calls["send_email"] == ["ana"]              # never repeated blind


def test_a_verifier_that_finds_the_effect_answers_done(recoveryd_addr, run):
    tools = Tools()
    asked = []
    state, _ = run(recoveryd_addr, scripted(call("send_email", {"to": "ana"}, "c1")), tools,
                   verifiers={"find_sent_email": lambda req: asked.append(req.tool_id) or True})
    msg = tool_messages(state)["c1"]
    assert msg.status == "success"
    assert msg.content.startswith("send_email: done (verified by find_sent_email")
    assert msg.response_metadata["recoveryd"]["verified"] is True
    assert asked == ["send_email"] and tools.calls["send_email"] == ["ana"]


def test_open_breaker_routes_to_the_alternative_with_the_same_arguments(recoveryd_addr, run):
    open_breaker(recoveryd_addr, "train_search")
    tools = Tools()
    state, _ = run(recoveryd_addr,
                   scripted(call("train_search", {"destination": "Oslo"}, "c1")), tools)
    msg = tool_messages(state)["c1"]
    assert (msg.status, msg.content) == ("success", "backup trains to Oslo")
    assert msg.response_metadata["recoveryd"]["tool_id"] == "train_search_backup"
    assert "train_search" not in tools.calls
    assert tools.calls["train_search_backup"] == ["Oslo"]


def test_cancelling_an_async_graph_cancels_the_tool_and_reports_nothing(recoveryd_addr):
    started, cancelled = asyncio.Event(), []

    @tool
    async def flaky_search(query: str) -> str:
        """Search (hangs)."""
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.append(query)
            raise
        return "late"

    turn = "lg-" + uuid.uuid4().hex[:10]

    async def main():
        async with AsyncRecoveryClient(recoveryd_addr, rpc_timeout=2) as ac:
            graph = graph_for(scripted(call("flaky_search", {"query": "x"}, "c1")),
                              recovery_tool_node([flaky_search], aclient=ac))
            task = asyncio.ensure_future(graph.ainvoke(
                {"messages": [HumanMessage("go")]}, {"configurable": {"thread_id": turn}}))
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
    import subprocess
    import sys
    import pathlib
    example = pathlib.Path(__file__).resolve().parents[1] / "examples" / "langgraph_agent.py"
    for extra in ([], ["--async"]):
        out = subprocess.run([sys.executable, str(example), "--addr", recoveryd_addr] + extra,
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert "tool: 3 flights to Lisbon" in out.stdout and "'attempts': 3" in out.stdout


def test_arguments_the_node_refuses_are_not_retried(recoveryd_addr, run):
    tools = Tools()
    state, turn = run(recoveryd_addr, scripted(call("flaky_search", {"q": "typo"}, "c1")), tools)
    msg = tool_messages(state)["c1"]
    assert msg.status == "error" and "flaky_search" not in tools.calls
    meta = msg.response_metadata["recoveryd"]
    assert meta["status"] == "escalate" and meta["attempts"] == 1
    assert meta["classification"]["executed"] is False


def test_an_interrupt_passes_through_and_the_resumed_call_is_recorded(recoveryd_addr):
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command, interrupt
    asked = []

    @tool
    def flaky_search(query: str) -> str:
        """Search after a person approves."""
        answer = interrupt(f"search for {query}?")
        asked.append(answer)
        return f"approved: {answer}"

    turn = "lg-" + uuid.uuid4().hex[:10]
    config = {"configurable": {"thread_id": turn}}
    model = scripted(call("flaky_search", {"query": "q"}, "c1"))

    def agent(state: MessagesState):
        return {"messages": [model.invoke(state["messages"])]}

    with RecoveryClient(recoveryd_addr, rpc_timeout=2) as client:
        g = StateGraph(MessagesState)
        g.add_node("agent", agent)
        g.add_node("tools", recovery_tool_node([flaky_search], client=client))
        g.add_edge(START, "agent")
        g.add_conditional_edges("agent", tools_condition)
        g.add_edge("tools", "agent")
        graph = g.compile(checkpointer=InMemorySaver())
        first = graph.invoke({"messages": [HumanMessage("go")]}, config)
        assert first["__interrupt__"][0].value == "search for q?"
        events = [e for t, e in trace_events(recoveryd_addr, turn) if t == "flaky_search"]
        assert "ToolError" not in events
        state = graph.invoke(Command(resume="yes"), config)
    assert tool_messages(state)["c1"].content == "approved: yes" and asked == ["yes"]
    events = [e for t, e in trace_events(recoveryd_addr, turn) if t == "flaky_search"]
    assert "ToolError" not in events and events[-1] == "ToolSucceeded"
