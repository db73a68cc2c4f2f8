"""A LangGraph agent whose tools run under recoveryd.

    pip install "recoveryd-client[langgraph]"
    recoveryd --config config/recovery.yaml          # the shipped travel tools
    python examples/langgraph_agent.py --addr 127.0.0.1:50051

The model here is scripted (langchain_core's FakeMessagesListChatModel), so
the example runs without an API key: it asks for flights, which fail twice
with HTTP 503 and then answer. Put any tool-calling chat model in its place
(``ChatOpenAI(model=...).bind_tools(TOOLS)``); nothing else changes.

What recoveryd adds is in the ToolNode: ``recovery_tool_node`` runs each
tool call with the service's timeout, retries, alternatives and cascade,
reports outcomes, and hands the model the service's text when a call cannot
succeed. The graph's thread id is the turn id.
"""
import argparse
import asyncio
import uuid

import httpx
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import tools_condition
from langgraph.types import RetryPolicy

from recoveryd_client import RecoveryClient
from recoveryd_client.aio import AsyncRecoveryClient
from recoveryd_client.langgraph import recovery_tool_node

_calls = {"flight_search": 0}


def _http_error(status: int, url: str) -> httpx.HTTPStatusError:
    request = httpx.Request("GET", url)
    response = httpx.Response(status, request=request)
    return httpx.HTTPStatusError(f"Server error '{status}' for url '{url}'",
                                 request=request, response=response)


@tool
def flight_search(destination: str) -> str:
    """Search flights to a destination."""
    _calls["flight_search"] += 1
    if _calls["flight_search"] <= 2:  # the provider is having a bad minute
        raise _http_error(503, "https://flights.example/search")
    return f"3 flights to {destination}"


@tool
def flight_search_backup(destination: str) -> str:
    """Search flights with the backup provider."""
    return f"2 flights to {destination} (backup provider)"


TOOLS = [flight_search, flight_search_backup]


def scripted_model() -> FakeMessagesListChatModel:
    return FakeMessagesListChatModel(responses=[
        AIMessage(content="", tool_calls=[{"name": "flight_search", "args": {"destination": "Lisbon"},
                                           "id": "call-1", "type": "tool_call"}]),
        AIMessage(content="Found flights to Lisbon."),
    ])


def build_graph(model, tool_node):
    def agent(state: MessagesState):
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    # A node retry policy only sees exceptions the node raises; the wrapper
    # answers every tool failure itself, so retries are never doubled.
    graph.add_node("tools", tool_node, retry_policy=RetryPolicy(max_attempts=3))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--addr", default="127.0.0.1:50051")
    ap.add_argument("--async", dest="use_async", action="store_true",
                    help="run the graph with ainvoke and the asyncio client")
    args = ap.parse_args()
    config = {"configurable": {"thread_id": f"example-{uuid.uuid4().hex[:8]}"}}
    question = {"messages": [HumanMessage("Find me a flight to Lisbon")]}

    if args.use_async:
        async def run():
            async with AsyncRecoveryClient(args.addr, executor_id="langgraph-example") as aclient:
                graph = build_graph(scripted_model(), recovery_tool_node(TOOLS, aclient=aclient))
                return await graph.ainvoke(question, config)
        state = asyncio.run(run())
    else:
        with RecoveryClient(args.addr, executor_id="langgraph-example") as client:
            graph = build_graph(scripted_model(), recovery_tool_node(TOOLS, client=client))
            state = graph.invoke(question, config)

    for message in state["messages"]:
        meta = getattr(message, "response_metadata", {}).get("recoveryd")
        print(f"{message.type:>5}: {message.content}" + (f"   {meta}" if meta else ""))


if __name__ == "__main__":
    main()
