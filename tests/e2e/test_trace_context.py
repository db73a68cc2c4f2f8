"""W3C trace context on every RPC: a valid `traceparent` puts its trace id
and the caller's span id into the turn's trace events (Decide and
RecordOutcome answers, GetTurnTrace) and the JSON log; an invalid one, or
two, is ignored and the call is answered as without one."""
import json

import pytest

from ops_support import ops_launcher  # noqa: F401
from rdtest import network_timeout, pb, unique

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
SPAN = "00f067aa0ba902b7"
PARENT = f"00-{TRACE}-{SPAN}-01"


def decide_with(server, metadata, tool="traced_tool", turn=None, error=True):
    req = pb.DecideRequest(tool_id=tool, attempt=1, turn_id=turn or unique("tc-turn"),
                           executor_id="e2e")
    if error:
        req.error.CopyFrom(network_timeout())
    return server.stub.Decide(req, metadata=metadata, timeout=10)


@pytest.fixture
def server(ops_launcher):
    return ops_launcher.start(top={"log": {"level": "debug"}})


def test_valid_traceparent_reaches_events_and_log(server):
    turn = unique("tc-turn")
    d = decide_with(server, [("traceparent", PARENT), ("tracestate", "rojo=00f067aa0ba902b7")],
                    turn=turn)
    assert d.action == pb.ACTION_RETRY
    assert d.trace and all((e.trace_id, e.span_id) == (TRACE, SPAN) for e in d.trace), d.trace

    other_span = "b7ad6b7169203331"
    r = server.stub.RecordOutcome(pb.RecordOutcomeRequest(
        tool_id="traced_tool", success=True, attempt=2, latency_ms=5, turn_id=turn),
        metadata=[("traceparent", f"00-{TRACE}-{other_span}-00")], timeout=10)
    assert r.breaker.state == pb.BREAKER_STATUS_CLOSED

    events = server.stub.GetTurnTrace(pb.GetTurnTraceRequest(turn_id=turn), timeout=10).events
    assert [(e.event_type, e.span_id) for e in events] == \
        [(e.event_type, SPAN) for e in d.trace] + [("RetrySucceeded", other_span)], events
    assert all(e.trace_id == TRACE for e in events)

    lines = [json.loads(l) for l in server.log_text(10**7).splitlines() if l.startswith("{")]
    traced = [l for l in lines if l.get("msg") == "trace event" and l.get("turn_id") == turn]
    assert len(traced) == len(events), traced
    assert {(l["trace_id"], l["span_id"]) for l in traced} == {(TRACE, SPAN), (TRACE, other_span)}


BAD_PARENTS = [
    "", "garbage", PARENT.upper(), PARENT + "-extra", "ff" + PARENT[2:],
    f"00-{'0' * 32}-{SPAN}-01", f"00-{TRACE}-{'0' * 16}-01", PARENT[:-1],
    "cc-" + PARENT[3:] + "x", "00-" + "a" * 8000, " " + PARENT,
]


@pytest.mark.parametrize("value", BAD_PARENTS, ids=range(len(BAD_PARENTS)))
def test_invalid_traceparent_is_ignored(server, value):
    d = decide_with(server, [("traceparent", value), ("tracestate", "k=v")])
    assert d.action == pb.ACTION_RETRY
    assert d.trace and all(e.trace_id == "" and e.span_id == "" for e in d.trace), d.trace


def test_two_traceparents_name_no_parent(server):
    d = decide_with(server, [("traceparent", PARENT),
                             ("traceparent", f"00-{TRACE}-b7ad6b7169203331-01")])
    assert all(e.trace_id == "" for e in d.trace), d.trace


def test_later_version_is_read_as_00(server):
    d = decide_with(server, [("traceparent", f"cc-{TRACE}-{SPAN}-01-future-field")])
    assert all((e.trace_id, e.span_id) == (TRACE, SPAN) for e in d.trace), d.trace


def test_every_rpc_takes_trace_context(server):
    """Huge or malformed metadata on the other RPCs is harmless too."""
    for md in ([("traceparent", PARENT), ("tracestate", "x" * 6000)],
               [("traceparent", "00-" + "z" * 60), ("tracestate", "=,=,=")]):
        c = server.stub.Classify(pb.ClassifyRequest(tool_id="t", error=network_timeout()),
                                 metadata=md, timeout=10)
        assert c.classification.retryability == pb.RETRYABILITY_TRANSIENT
        server.stub.GetBreakerState(pb.GetBreakerStateRequest(), metadata=md, timeout=10)
        turn = unique("tc-any")
        admission = decide_with(server, md, turn=turn, error=False)
        assert admission.action == pb.ACTION_PROCEED
        server.stub.GetTurnTrace(pb.GetTurnTraceRequest(turn_id=turn), metadata=md, timeout=10)
    assert server.returncode is None
