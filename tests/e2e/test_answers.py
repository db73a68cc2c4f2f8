"""Answers larger than the room the server first packs them in must arrive
whole: a turn trace beyond the 4 KiB of stack that pbpack.c packs into
(server/transport/call.c: pack_to_slice, which then sizes it and packs it
into a slice of its own), and breaker lists beyond the room answers.c is
first given (server/transport/methods.c: pack_answer, which doubles it
until the answer fits). Every event and every breaker, each with its own
text."""
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


def test_breakers_with_long_ids_outgrow_the_first_room(stub):
    """About 96 bytes a breaker is expected; ids of ~225 bytes make each
    ~260, so the answer needs the room doubled twice."""
    tools = [unique(f"long_id_{i:02d}_" + "y" * 200) for i in range(40)]
    for tool in tools:
        decide(stub, tool, err("503 Service Unavailable", http_status=503), attempt=1)
    resp = stub.GetBreakerState(pb.GetBreakerStateRequest(tool_ids=tools), timeout=10)
    assert resp.ByteSize() > 2 * STACK_BYTES
    assert [b.tool_id for b in resp.breakers] == tools
    assert all(b.consecutive_failures == 1 for b in resp.breakers)
