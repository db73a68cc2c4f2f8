"""Bursts of calls on one worker. The worker takes every completion that is
already queued as one cohort: it runs the cohort's handlers back to back,
then starts their replies, requests the calls that replace the ones that
arrived, and frees the finished ones (server/transport/server.c). These
tests check that each reply reaches its own call, that refusals and
answers mixed in one cohort keep their statuses, and that the worker keeps
accepting calls burst after burst."""
import grpc
import pytest

from rdtest import SERVICE, classify, err, network_timeout, pb, pb_grpc, unique

BURST = 120  # well above the calls a worker keeps requested per method (16)


@pytest.fixture(scope="module")
def server(module_launcher):
    return module_launcher.start(server={"workers": 1})


def classify_burst(channel, tool_ids):
    """Every Classify of the burst in flight at once on one connection."""
    stub = pb_grpc.RecoveryServiceStub(channel)
    futures = [stub.Classify.future(pb.ClassifyRequest(tool_id=t, error=network_timeout()),
                                    timeout=30) for t in tool_ids]
    return [f.result() for f in futures]


def test_each_reply_reaches_its_own_call(server):
    """120 Classify calls with distinct tool ids at once: every answer's
    text for the model names the tool of its own request."""
    tools = [unique("burst") for _ in range(BURST)]
    answers = classify_burst(server.channel, tools)
    for tool, answer in zip(tools, answers):
        assert f"Tool: {tool}\n" in answer.classification.llm_message


def test_bursts_keep_the_worker_accepting(server):
    """Five bursts in a row, each larger than the calls kept requested:
    every call of every burst is answered, so each cohort requested as
    many calls as arrived in it."""
    for _ in range(5):
        tools = [unique("again") for _ in range(BURST)]
        answers = classify_burst(server.channel, tools)
        assert len(answers) == BURST
        assert all(a.classification.retryability == pb.RETRYABILITY_TRANSIENT for a in answers)


def test_refusals_and_answers_in_one_cohort(server):
    """A burst that mixes valid calls, requests with a missing tool id and
    calls of a method the server does not have: each gets its own status,
    and the valid ones their own answers."""
    stub = pb_grpc.RecoveryServiceStub(server.channel)
    unknown = server.channel.unary_unary(f"/{SERVICE}/NoSuchMethod",
                                         request_serializer=lambda b: b,
                                         response_deserializer=lambda b: b)
    calls = []
    for i in range(60):
        kind = i % 3
        if kind == 0:
            tool = unique("mixed")
            calls.append((kind, tool, stub.Decide.future(
                pb.DecideRequest(tool_id=tool, error=err("boom", http_status=503), attempt=1),
                timeout=30)))
        elif kind == 1:
            calls.append((kind, None, stub.Decide.future(
                pb.DecideRequest(tool_id="", error=network_timeout()), timeout=30)))
        else:
            calls.append((kind, None, unknown.future(b"", timeout=30)))
    for kind, tool, future in calls:
        if kind == 0:
            answer = future.result()
            assert answer.action == pb.ACTION_RETRY
            assert answer.breaker.tool_id == tool
        else:
            with pytest.raises(grpc.RpcError) as refused:
                future.result()
            expected = (grpc.StatusCode.INVALID_ARGUMENT if kind == 1
                        else grpc.StatusCode.UNIMPLEMENTED)
            assert refused.value.code() == expected
            if kind == 1:
                assert "tool_id" in refused.value.details()


def test_one_call_alone_after_the_bursts(server):
    """A single call (a cohort of one) is answered as before."""
    tool = unique("alone")
    classification = classify(server.stub, tool, network_timeout())
    assert f"Tool: {tool}\n" in classification.llm_message
