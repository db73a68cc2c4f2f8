"""Answers larger than the 4 KiB the server packs them in on its stack
(server/transport/call.c: pack_to_slice) take the other path: sized first,
packed into a slice of their own. They must arrive whole: every event of a
long turn trace, every breaker of a long list, each with its own text."""
import pytest

from rdtest import breaker, decide, err, pb, turn_trace, unique

STACK_BYTES = 4096


@pytest.fixture(scope="module")
def stub(module_launcher):
    return module_launcher.start().stub


def test_long_turn_trace_arrives_whole(stub):
    turn, tool = unique("turn-long"), unique("long_trace")
    texts = [f"upstream failure {i:03d}: " + "x" * 150 for i in range(30)]
    for text in texts:
        decide(stub, tool, err(text, http_status=503), attempt=1, turn_id=turn)
    trace = turn_trace(stub, turn)
    assert trace.ByteSize() > STACK_BYTES
    errors = [e.error for e in trace.events if e.event_type == "ToolError"]
    assert errors == texts, "every ToolError event, in order, with its own text"
    assert all(e.turn_id == turn and e.tool_id == tool for e in trace.events)


def test_long_breaker_list_arrives_whole(stub):
    tools = [unique(f"many_breakers_{i:03d}") for i in range(120)]
    for tool in tools:
        decide(stub, tool, err("503 Service Unavailable", http_status=503), attempt=1)
    resp = stub.GetBreakerState(pb.GetBreakerStateRequest(tool_ids=tools), timeout=10)
    assert resp.ByteSize() > STACK_BYTES
    assert [b.tool_id for b in resp.breakers] == tools
    assert all(b.consecutive_failures == 1 for b in resp.breakers)
    assert breaker(stub, tools[-1]).consecutive_failures == 1
