"""An OpenAI Agents SDK agent whose tools run under recoveryd.

    pip install "recoveryd-client[openai-agents]"
    recoveryd --config config/recovery.yaml          # the shipped travel tools
    python examples/openai_agents_agent.py --addr 127.0.0.1:50051

The model is the SDK's own deterministic ScriptedModel (agents.testing), so
the example runs without an API key: it asks for hotels, whose provider
fails twice with HTTP 503 and then answers. With a real model, drop
``model=`` from the Agent (and set OPENAI_API_KEY); nothing else changes.
"""
import argparse
import asyncio
import uuid

import httpx
from agents import Agent, RunConfig, Runner, function_tool
from agents.testing import ScriptedModel, assistant_message, function_call

from recoveryd_client.aio import AsyncRecoveryClient
from recoveryd_client.openai_agents import recovery_tools

_calls = {"hotel_search": 0}


@function_tool
async def hotel_search(city: str) -> str:
    """Search hotels in a city."""
    _calls["hotel_search"] += 1
    if _calls["hotel_search"] <= 2:  # the provider is having a bad minute
        request = httpx.Request("GET", "https://hotels.example/search")
        raise httpx.HTTPStatusError("Server error '503 Service Unavailable'", request=request,
                                    response=httpx.Response(503, request=request))
    return f"4 hotels in {city}"


def scripted_model() -> ScriptedModel:
    return ScriptedModel([
        [function_call("hotel_search", {"city": "Porto"}, call_id="call-1")],
        [assistant_message("Here are hotels in Porto.")],
    ])


async def run(addr: str) -> None:
    async with AsyncRecoveryClient(addr, executor_id="openai-agents-example") as aclient:
        def report(ctx, res):
            print(f"recoveryd: {ctx.tool_name} -> {res.status} via {res.tool_id} "
                  f"after {res.attempts} attempt(s)")

        agent = Agent(name="travel", instructions="Help plan trips.", model=scripted_model(),
                      tools=recovery_tools([hotel_search], aclient, on_result=report))
        result = await Runner.run(agent, "Find a hotel in Porto", run_config=RunConfig(
            group_id=f"example-{uuid.uuid4().hex[:8]}", tracing_disabled=True))
        for item in result.new_items:
            if item.type == "tool_call_output_item":
                print("tool output:", item.output)
        print("final:", result.final_output)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--addr", default="127.0.0.1:50051")
    asyncio.run(run(ap.parse_args().addr))


if __name__ == "__main__":
    main()
