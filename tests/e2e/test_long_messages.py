"""Long error messages are classified, not refused: any message the gRPC
receive limit allows is accepted; the classifier reads its head and tail
(a traceback's cause is its last line); the text for the model and the
trace keep a bounded head and tail with a marker where the middle was cut;
the Python helper cuts before sending."""
import sys
from pathlib import Path

import pytest

from rdtest import breaker, classify, decide, err, events_of, expect_action, pb, turn_trace, unique

STUBS_PYTHON = Path(__file__).resolve().parents[2] / "stubs" / "python" / "src"
LLM_MESSAGE_MAX = 6 * 1024   # 2 KiB head + 2 KiB tail of the error, the frame, the ids


def traceback_text(size: int, cause: str) -> str:
    frame = '  File "/srv/app/agent/tools/flights.py", line 214, in search\n    resp = s.get(url)\n'
    body = "Traceback (most recent call last):\n" + frame * (size // len(frame))
    return body + cause


RESET = "ConnectionResetError: [Errno 104] Connection reset by peer"
AUTH = "PermissionError: 401 Unauthorized: invalid API key"


@pytest.fixture(scope="module")
def stub(module_launcher):
    return module_launcher.start().stub


def test_90kb_traceback_is_classified_from_its_last_line(stub):
    tool, turn = unique("flight_search"), unique("turn")
    message = traceback_text(90 * 1024, RESET)
    assert len(message) > 90 * 1024
    c = classify(stub, tool, err(message))
    assert c.retryability == pb.RETRYABILITY_TRANSIENT, c.rule_id
    resp = decide(stub, tool, err(message), attempt=1, turn_id=turn)
    expect_action(resp, pb.ACTION_RETRY)
    assert breaker(stub, tool).consecutive_failures == 1

    permanent = decide(stub, unique("flight_search"), err(traceback_text(90 * 1024, AUTH)),
                       attempt=1, turn_id=turn)
    assert permanent.classification.retryability == pb.RETRYABILITY_PERMANENT
    text = permanent.classification.llm_message
    assert 0 < len(text.encode()) <= LLM_MESSAGE_MAX, len(text)
    assert "bytes cut ...]" in text
    assert "Traceback (most recent call last)" in text and AUTH in text

    for ev in events_of(turn_trace(stub, turn).events, "ToolError"):
        assert len(ev.error.encode()) <= 255
        assert "bytes cut ...]" in ev.error
        assert ev.error.startswith("Traceback")


def test_message_near_the_receive_limit_is_accepted(stub):
    """The default receive limit is 1 MiB: a 900 KB message is classified."""
    message = traceback_text(900 * 1024, RESET)
    c = classify(stub, unique("tool"), err(message))
    assert c.retryability == pb.RETRYABILITY_TRANSIENT
    assert len(c.llm_message.encode()) <= LLM_MESSAGE_MAX


def test_short_messages_are_not_cut(stub):
    c = classify(stub, unique("tool"), err("x" * 4000 + " " + RESET))
    assert "bytes cut" not in c.llm_message
    assert "x" * 4000 in c.llm_message


def test_python_helper_cuts_before_sending():
    sys.path.insert(0, str(STUBS_PYTHON))
    try:
        from recoveryd_client import tool_error_from_exception
        from recoveryd_client._errors import MESSAGE_SEND_MAX
    finally:
        sys.path.remove(str(STUBS_PYTHON))
    sent = tool_error_from_exception(RuntimeError(traceback_text(300 * 1024, RESET))).message
    assert len(sent.encode()) <= MESSAGE_SEND_MAX
    assert sent.startswith("Traceback") and sent.endswith(RESET)
    assert "bytes cut ...]" in sent
    assert tool_error_from_exception(RuntimeError("short")).message == "short"
