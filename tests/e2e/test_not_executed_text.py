"""Seed 004's not-executed kinds recognised from the message alone: an
executor that sends only the text ("Unknown tool: foo_bar", "Validation
error: ...", "tool not permitted", "tool call limit exceeded") gets the
typed kind, executed = false, and a turn whose only errors are these fails
(004 decision B: a turn fails only when no tool was executed)."""
import pytest

from rdtest import classify, decide, err, pb, record, turn_trace, unique

NOT_EXECUTED = [
    ("Unknown tool: foo_bar", pb.ERROR_KIND_UNKNOWN_TOOL),
    ("Validation error: missing required field 'origin'", pb.ERROR_KIND_INVALID_PARAMETERS),
    ("tool not permitted", pb.ERROR_KIND_NOT_PERMITTED),
    ("tool call limit exceeded", pb.ERROR_KIND_LIMIT_EXCEEDED),
]


@pytest.fixture(scope="module")
def stub(module_launcher):
    return module_launcher.start().stub


@pytest.mark.parametrize("message, kind", NOT_EXECUTED)
def test_kind_and_executed_from_text(stub, message, kind):
    c = classify(stub, "router", err(message))
    assert c.kind == kind, (message, pb.ErrorKind.Name(c.kind), c.rule_id)
    assert not c.executed
    assert c.retryability == pb.RETRYABILITY_PERMANENT


def test_turn_with_only_refusals_fails(stub):
    turn = unique("turn")
    for i, (message, _) in enumerate(NOT_EXECUTED):
        decide(stub, f"tool_{i}", err(message), attempt=1, turn_id=turn)
    assert turn_trace(stub, turn).summary.turn_failed


def test_turn_with_a_tool_that_ran_does_not_fail(stub):
    turn = unique("turn")
    decide(stub, "tool_a", err("Unknown tool: foo_bar"), attempt=1, turn_id=turn)
    record(stub, "flight_search", success=True, turn_id=turn)
    assert not turn_trace(stub, turn).summary.turn_failed
    # A tool that ran and failed counts as executed too (004: tool errors
    # do not fail the turn).
    other = unique("turn")
    decide(stub, "tool_a", err("Validation error: bad field"), attempt=1, turn_id=other)
    decide(stub, "tool_b", err("Connection reset by peer"), attempt=1, turn_id=other)
    assert not turn_trace(stub, other).summary.turn_failed
