"""Manual control (AdminService.ForceBreaker) and the WatchBreakers stream."""
import threading
import time

import grpc
import pytest

from ops_support import admin_pb, ops_launcher  # noqa: F401
from rdtest import admit, breaker, expect_action, network_timeout, pb, record, unique

ADMIN_TOKEN = "admin-Token-123"
OPEN, CLOSED = pb.BREAKER_STATUS_OPEN, pb.BREAKER_STATUS_CLOSED


@pytest.fixture
def admin_server(ops_launcher, tmp_path):
    token = tmp_path / "admin.token"
    token.write_text(ADMIN_TOKEN + "\n")
    return ops_launcher.start(server={"admin": {"token_file": str(token)}},
                              defaults={"circuit_breaker": {"failure_threshold": 2}})


def force(server, tool, mode, ttl_ms=0, token=ADMIN_TOKEN):
    channel, stub = server.admin(token=token)
    try:
        return stub.ForceBreaker(admin_pb.ForceBreakerRequest(
            tool_id=tool, mode=mode, ttl_ms=ttl_ms, reason="e2e", operator="tester"),
            timeout=5).breaker
    finally:
        channel.close()


def test_force_open_fails_fast_until_released(admin_server):
    tool = unique("forced")
    state = force(admin_server, tool, admin_pb.FORCE_MODE_OPEN)
    assert state.state == OPEN and state.forced == OPEN and state.forced_until_ms == 0
    expect_action(admit(admin_server.stub, tool), pb.ACTION_FAIL_FAST)
    assert breaker(admin_server.stub, tool).forced == OPEN
    force(admin_server, tool, admin_pb.FORCE_MODE_RELEASE)
    expect_action(admit(admin_server.stub, tool), pb.ACTION_PROCEED)
    assert breaker(admin_server.stub, tool).forced == pb.BREAKER_STATUS_UNSPECIFIED


def test_force_closed_admits_an_open_breaker(admin_server):
    tool = unique("stuck")
    for _ in range(2):
        record(admin_server.stub, tool, success=False, error=network_timeout())
    expect_action(admit(admin_server.stub, tool), pb.ACTION_FAIL_FAST)
    force(admin_server, tool, admin_pb.FORCE_MODE_CLOSED)
    expect_action(admit(admin_server.stub, tool), pb.ACTION_PROCEED)
    # failures during the hold are not counted
    for _ in range(5):
        record(admin_server.stub, tool, success=False, error=network_timeout())
    expect_action(admit(admin_server.stub, tool), pb.ACTION_PROCEED)


def test_reset_gives_a_fresh_closed_breaker(admin_server):
    tool = unique("reset")
    for _ in range(2):
        record(admin_server.stub, tool, success=False, error=network_timeout())
    before = breaker(admin_server.stub, tool)
    assert before.state == OPEN
    state = force(admin_server, tool, admin_pb.FORCE_MODE_RESET)
    assert state.state == CLOSED and state.consecutive_failures == 0
    assert state.generation == before.generation + 1
    expect_action(admit(admin_server.stub, tool), pb.ACTION_PROCEED)


def test_hold_ends_after_its_ttl(admin_server):
    tool = unique("ttl")
    state = force(admin_server, tool, admin_pb.FORCE_MODE_OPEN, ttl_ms=400)
    assert state.forced_until_ms > 0
    expect_action(admit(admin_server.stub, tool), pb.ACTION_FAIL_FAST)
    time.sleep(0.6)
    expect_action(admit(admin_server.stub, tool), pb.ACTION_PROCEED)


def test_admin_needs_the_admin_token(admin_server):
    for token, code in (("", grpc.StatusCode.UNAUTHENTICATED),
                        ("wrong", grpc.StatusCode.UNAUTHENTICATED)):
        with pytest.raises(grpc.RpcError) as e:
            force(admin_server, "t", admin_pb.FORCE_MODE_OPEN, token=token)
        assert e.value.code() == code
    assert "breaker forced by an operator" not in admin_server.log_text()


def test_admin_without_configured_token_is_denied(ops_launcher):
    server = ops_launcher.start()
    with pytest.raises(grpc.RpcError) as e:
        force(server, "t", admin_pb.FORCE_MODE_OPEN, token="anything")
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert "admin token not configured" in e.value.details()


def test_force_is_logged(admin_server):
    tool = unique("logged")
    force(admin_server, tool, admin_pb.FORCE_MODE_OPEN)
    log = admin_server.log_text()
    line = next(l for l in log.splitlines() if "breaker forced by an operator" in l)
    assert tool in line and '"operator":"tester"' in line and '"action":"forced_open"' in line
    assert ADMIN_TOKEN not in log


def test_bad_force_request_is_invalid(admin_server):
    with pytest.raises(grpc.RpcError) as e:
        force(admin_server, "t", admin_pb.FORCE_MODE_UNSPECIFIED)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as e:
        force(admin_server, "t", admin_pb.FORCE_MODE_OPEN, ttl_ms=-1)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT


# ---------------------------------------------------------------- watch

def collect(stream, out, until):
    try:
        for msg in stream:
            out.append(msg)
            if until(out):
                return
    except grpc.RpcError:
        pass


def test_watch_sends_snapshot_then_changes(admin_server):
    tool = unique("watched")
    admit(admin_server.stub, tool)  # tracked, CLOSED
    stream = admin_server.stub.WatchBreakers(pb.WatchBreakersRequest(tool_ids=[tool]), timeout=20)
    seen = []
    reader = threading.Thread(target=collect, args=(
        stream, seen, lambda s: any(m.cause == "forced_open" for m in s)))
    reader.start()
    time.sleep(0.3)
    for _ in range(2):  # opens the breaker
        record(admin_server.stub, tool, success=False, error=network_timeout())
    force(admin_server, tool, admin_pb.FORCE_MODE_OPEN)
    reader.join(timeout=5)
    stream.cancel()
    causes = [m.cause for m in seen]
    assert causes[0] == "snapshot" and seen[0].breaker.state == CLOSED, causes
    assert "opened" in causes and causes[-1] == "forced_open", causes
    opened = seen[causes.index("opened")]
    assert opened.breaker.tool_id == tool and opened.breaker.state == OPEN
    assert opened.timestamp.endswith("Z")


def test_watch_all_tools_sees_other_tools(admin_server):
    tool = unique("any")
    stream = admin_server.stub.WatchBreakers(pb.WatchBreakersRequest(), timeout=20)
    seen = []
    reader = threading.Thread(target=collect, args=(
        stream, seen, lambda s: any(m.breaker.tool_id == tool and m.cause == "opened"
                                    for m in s)))
    reader.start()
    time.sleep(0.3)
    for _ in range(2):
        record(admin_server.stub, tool, success=False, error=network_timeout())
    reader.join(timeout=5)
    stream.cancel()
    assert any(m.breaker.tool_id == tool and m.cause == "opened" for m in seen), seen


def test_watch_ends_cleanly_on_sigterm(admin_server):
    stream = admin_server.stub.WatchBreakers(pb.WatchBreakersRequest(tool_ids=["x"]),
                                             timeout=20)
    assert next(stream).cause == "snapshot"
    admin_server.send_signal(15)
    with pytest.raises(grpc.RpcError) as e:
        next(stream)
    assert e.value.code() == grpc.StatusCode.UNAVAILABLE
    assert admin_server.wait(timeout=10) == 0, admin_server.log_text()


BAD_UTF8 = b"\xc3\x28"  # a lead byte whose continuation is missing


def raw_rejection(channel, path, payload, streaming=False):
    """The status of a call whose request bytes are sent as they are."""
    make = channel.unary_stream if streaming else channel.unary_unary
    call = make(path, request_serializer=None, response_deserializer=None)
    with pytest.raises(grpc.RpcError) as info:
        result = call(payload, timeout=5)
        if streaming:
            list(result)
    return info.value


@pytest.mark.parametrize("path,payload,field,streaming", [
    ("/recovery.v1.AdminService/ForceBreaker", b"\x0a\x02" + BAD_UTF8 + b"\x10\x01",
     "tool_id", False),
    ("/recovery.v1.AdminService/ForceBreaker", b"\x0a\x01t\x10\x01\x22\x02" + BAD_UTF8,
     "reason", False),
    ("/recovery.v1.RecoveryService/WatchBreakers", b"\x0a\x02" + BAD_UTF8, "tool_ids[0]", True),
], ids=["force-tool_id", "force-reason", "watch-tool_ids"])
def test_text_that_is_not_utf8_is_rejected_naming_the_field(admin_server, path, payload, field,
                                                            streaming):
    """Answers echo these strings, and a proto3 string must be valid UTF-8:
    the request is refused before anything is recorded or watched."""
    channel, _ = admin_server.admin(token=ADMIN_TOKEN)
    try:
        got = raw_rejection(channel, path, payload, streaming)
    finally:
        channel.close()
    assert got.code() == grpc.StatusCode.INVALID_ARGUMENT, got.details()
    assert field in got.details() and "UTF-8" in got.details()
    assert breaker(admin_server.stub, "t").forced == pb.BREAKER_STATUS_UNSPECIFIED
