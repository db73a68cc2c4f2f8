"""Ids are taken whole or refused: a NUL byte or another control character
in an id is INVALID_ARGUMENT naming the field, on every path that reads
requests, in both stores. "nulx\\0a" must never act on the breaker of "nulx"
(C strings end at the NUL), nor a turn id collapse into a shorter one."""
import grpc
import pytest

from cluster_support import RedisTopology, require_redis
from rdtest import (breaker, decide, expect_action, network_timeout, pb, step, turn_trace,
                    unique)


@pytest.fixture(params=["memory", "redis"], scope="module")
def stub(request, module_launcher, tmp_path_factory):
    if request.param == "memory":
        yield module_launcher.start().stub
        return
    require_redis()
    topo = RedisTopology(tmp_path_factory.mktemp("redis-ids"))
    topo.start()
    try:
        yield module_launcher.start(store=topo.store_config(key_prefix=unique("ids"))).stub
    finally:
        topo.stop()


def refused(call, field):
    with pytest.raises(grpc.RpcError) as info:
        call()
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT, info.value
    assert info.value.details().startswith(field + ":"), info.value.details()
    return info.value.details()


def test_nul_in_tool_id_does_not_open_the_shorter_tools_breaker(stub):
    base = unique("nulx")
    for attempt in range(1, 8):
        details = refused(lambda: decide(stub, base + "\0a", network_timeout(), attempt=attempt),
                          "tool_id")
        assert "NUL" in details
    state = breaker(stub, base)
    assert state.consecutive_failures == 0 and state.opens_total == 0
    expect_action(decide(stub, base), pb.ACTION_PROCEED)


@pytest.mark.parametrize("method, build, field", [
    ("Classify", lambda t: pb.ClassifyRequest(tool_id=t + "\0b", error=network_timeout()),
     "tool_id"),
    ("RecordOutcome", lambda t: pb.RecordOutcomeRequest(tool_id=t + "\0", success=True),
     "tool_id"),
    ("RecordOutcome", lambda t: pb.RecordOutcomeRequest(tool_id=t, success=True,
                                                        turn_id="turn\0b"), "turn_id"),
    ("GetBreakerState", lambda t: pb.GetBreakerStateRequest(tool_ids=[t, t + "\0x"]),
     "tool_ids[1]"),
    ("GetTurnTrace", lambda t: pb.GetTurnTraceRequest(turn_id="turn\0x"), "turn_id"),
    ("Decide", lambda t: pb.DecideRequest(tool_id=t, attempt=1, error=network_timeout(),
                                          plan=[step("a"), step("b", ["a", "c\0d"])]),
     "plan[1].depends_on[1]"),
    ("Decide", lambda t: pb.DecideRequest(tool_id=t, attempt=1,
                                          error=pb.ToolError(message="boom\0hidden")),
     "error.message"),
])
def test_nul_refused_in_every_request(stub, method, build, field):
    req = build(unique("tool"))
    refused(lambda: getattr(stub, method)(req, timeout=10), field)


def test_nul_in_turn_id_does_not_merge_turns(stub):
    turn = unique("turn")
    refused(lambda: decide(stub, unique("tool"), network_timeout(), attempt=1,
                           turn_id=turn + "\0other"), "turn_id")
    with pytest.raises(grpc.RpcError) as info:
        turn_trace(stub, turn)
    assert info.value.code() == grpc.StatusCode.NOT_FOUND


@pytest.mark.parametrize("char", ["\n", "\r", "\t", "\x1b", "\x7f"])
@pytest.mark.parametrize("field", ["tool_id", "turn_id", "outcome_id", "executor_id"])
def test_control_characters_in_ids_refused(stub, char, field):
    kw = {"tool_id": unique("tool"), "attempt": 1, "error": network_timeout()}
    kw[field] = kw.get(field, unique("v")) + char + "injected"
    refused(lambda: stub.Decide(pb.DecideRequest(**kw), timeout=10), field)


def test_control_character_in_admission_and_breaker_list(stub):
    refused(lambda: decide(stub, "line\nbreak"), "tool_id")
    refused(lambda: stub.GetBreakerState(pb.GetBreakerStateRequest(tool_ids=["a\tb"]),
                                         timeout=10), "tool_ids[0]")
