"""Answers larger than the room the server first packs them in must arrive
whole: a turn trace beyond the 4 KiB of stack that pbpack.c packs into
(server/transport/call.c: pack_to_slice, which then sizes it and packs it
into a slice of its own), and breaker lists beyond the room answers.c is
first given (server/transport/methods.c: pack_answer, which doubles it
until the answer fits). Every event and every breaker, each with its own
text."""
import grpc
import pytest

from rdtest import breaker, classify, decide, err, pb, turn_trace, unique

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
    """About 96 bytes a breaker is expected; ids of 236-247 bytes (the
    limit is 256; unique() adds the pid and a counter, whose digits vary)
    make each over 245, so 140 of them (over 34 KB) fit neither the
    worker's answer room (at most its 32 KiB slab) nor the first room in
    the arena, which is doubled until the answer fits, and the answer is
    copied out of the arena. (With 200 bytes of padding the answer came to
    about 33 KB, and a pytest pid of few digits could leave it under 32 KiB.)"""
    tools = [unique(f"long_id_{i:03d}_" + "y" * 220) for i in range(140)]
    for tool in tools:
        decide(stub, tool, err("503 Service Unavailable", http_status=503), attempt=1)
    resp = stub.GetBreakerState(pb.GetBreakerStateRequest(tool_ids=tools), timeout=10)
    assert resp.ByteSize() > 32 * 1024
    assert [b.tool_id for b in resp.breakers] == tools
    assert all(b.consecutive_failures == 1 for b in resp.breakers)


# ---- requests as gRPC hands them over ----
#
# call.c reads a request that arrived in one uncompressed slice in place and
# any other through gRPC's reader; both must see every byte.

RATE_LIMIT_TEXT = "429 Too Many Requests: rate limit exceeded"


def test_request_spread_over_frames_is_read_whole(stub):
    """A 60 KB message spans several HTTP/2 frames (16 KiB each by default);
    what decides its classification is at its very end."""
    tool = unique("long_request")
    alone = classify(stub, tool, err(RATE_LIMIT_TEXT))
    assert alone.rule_id not in ("", "unknown")
    long_message = "." * 60000 + " " + RATE_LIMIT_TEXT
    spread = classify(stub, tool, err(long_message))
    assert spread.rule_id == alone.rule_id
    assert spread.category == alone.category


def test_compressed_request_is_refused_by_default(stub):
    """Only identity is accepted unless server.accept_compressed says so
    (docs/SECURITY.md: libgrpc 1.51 would inflate a bomb whole)."""
    req = pb.DecideRequest(tool_id=unique("gzip_refused"), attempt=1, error=err("timeout"))
    with pytest.raises(grpc.RpcError) as e:
        stub.Decide(req, timeout=10, compression=grpc.Compression.Gzip)
    assert e.value.code() == grpc.StatusCode.UNIMPLEMENTED


@pytest.fixture(scope="module")
def compressed_stub(module_launcher):
    return module_launcher.start(server={"accept_compressed": True}).stub


def test_compressed_request_is_read(compressed_stub):
    stub = compressed_stub
    tool = unique("gzip_request")
    req = pb.DecideRequest(tool_id=tool, attempt=1,
                           error=err(RATE_LIMIT_TEXT + " " + "z" * 2000, http_status=429))
    resp = stub.Decide(req, timeout=10, compression=grpc.Compression.Gzip)
    assert resp.breaker.tool_id == tool
    assert resp.classification.rule_id not in ("", "unknown")
    assert resp.trace[0].error.startswith(RATE_LIMIT_TEXT)


def test_compressed_request_inflating_past_the_limit(compressed_stub):
    """Inflated by recoveryd, which stops at server.max_receive_bytes."""
    req = pb.DecideRequest(tool_id=unique("gzip_big"), attempt=1, error=err("z" * 2_000_000))
    with pytest.raises(grpc.RpcError) as e:
        compressed_stub.Decide(req, timeout=10, compression=grpc.Compression.Gzip)
    assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "server.max_receive_bytes" in e.value.details()
