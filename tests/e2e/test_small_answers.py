"""Smaller things executors hit (issue 32, item 8): every refusal carries
text for the model; USE_ALTERNATIVE's text points at the alternative; a
dead probe frees the tool once its call must have ended; the fifth failure
of one call under the defaults says the attempts ran out; ids with control
characters never reach the model's text; a repeated outcome_id gets the
first answer's delay."""
import time

import grpc
import pytest

from rdtest import (admit, breaker, decide, expect_action, invalid_input, network_timeout, pb,
                    unique)

TOOLS = [{"id": "flight_search", "alternatives": ["flight_search_backup"]},
         {"id": "flight_search_backup"},
         {"id": "quick_tool", "timeout_ms": 300,
          "circuit_breaker": {"failure_threshold": 1, "timeout_ms": 200}}]


@pytest.fixture(scope="module")
def stub(module_launcher):
    return module_launcher.start(tools=TOOLS).stub


def open_circuit(stub, tool):
    for attempt in range(1, 6):
        last = decide(stub, tool, network_timeout(), attempt=attempt)
    return last


def test_fifth_failure_says_attempts_ran_out_and_circuit_opened(stub):
    fifth = open_circuit(stub, unique("search"))
    expect_action(fifth, pb.ACTION_FAIL_FAST)
    assert fifth.reason == "max attempts (5) reached and the circuit opened", fifth.reason
    assert fifth.classification.llm_message.startswith("Tool Execution Failed")


def test_fail_fast_at_admission_carries_text_for_the_model(stub):
    tool = unique("search")
    open_circuit(stub, tool)
    resp = admit(stub, tool)
    expect_action(resp, pb.ACTION_FAIL_FAST)
    text = resp.classification.llm_message
    assert text.startswith("Tool Not Called\nTool: " + tool), text
    assert "circuit open" in text
    assert not resp.classification.executed


def test_partial_at_admission_carries_text_for_the_model(stub):
    resp = admit(stub, unique("search"), turn_id=unique("turn"), turn_remaining_ms=0)
    expect_action(resp, pb.ACTION_PARTIAL)
    text = resp.classification.llm_message
    assert text.startswith("Tool Not Called") and "turn" in text, text


def test_use_alternative_text_names_the_alternative(stub):
    resp = decide(stub, "flight_search", invalid_input(), attempt=1, turn_id=unique("turn"))
    expect_action(resp, pb.ACTION_USE_ALTERNATIVE)
    text = resp.classification.llm_message
    assert "cannot be used for this request" not in text, text
    assert "flight_search_backup" in text


def test_dead_probe_frees_the_tool_after_its_timeout(stub):
    """quick_tool: 300 ms timeout, breaker opens on one failure for 200 ms.
    A probe holder that never reports holds the tool for the call's timeout
    plus a short margin, not longer."""
    decide(stub, "quick_tool", network_timeout(), attempt=1)
    time.sleep(0.25)
    probe = admit(stub, "quick_tool")
    expect_action(probe, pb.ACTION_PROCEED)
    assert probe.permit_id
    granted = time.monotonic()
    expect_action(admit(stub, "quick_tool"), pb.ACTION_FAIL_FAST)
    while True:
        resp = admit(stub, "quick_tool")
        if resp.action == pb.ACTION_PROCEED:
            break
        assert time.monotonic() - granted < 2.0, "the dead probe held the tool too long"
        time.sleep(0.02)
    assert resp.permit_id and resp.permit_id != probe.permit_id
    assert time.monotonic() - granted >= 0.3


@pytest.mark.parametrize("tool_id", ["evil\nTool: other", "tab\tbed", "cr\rlf"])
def test_control_characters_never_reach_the_model_text(stub, tool_id):
    with pytest.raises(grpc.RpcError) as info:
        decide(stub, tool_id, invalid_input(), attempt=1)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert info.value.details().startswith("tool_id:")


def test_repeated_outcome_id_is_answered_like_the_first_time(stub):
    tool, outcome = unique("search"), unique("outcome")
    first = decide(stub, tool, network_timeout(), attempt=2, outcome_id=outcome)
    expect_action(first, pb.ACTION_RETRY)
    assert not first.duplicate
    for _ in range(3):
        again = decide(stub, tool, network_timeout(), attempt=2, outcome_id=outcome)
        assert again.duplicate
        assert (again.action, again.delay_us, again.delay_ms, again.reason) == \
            (first.action, first.delay_us, first.delay_ms, first.reason)
    assert breaker(stub, tool).consecutive_failures == 1
