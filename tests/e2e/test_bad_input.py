"""Issue 2, bad input: requests the server must refuse with
INVALID_ARGUMENT naming the field, and keep serving (state intact)
afterwards; unknown methods, unknown turns and expired deadlines; broken
configuration files rejected with file:line and the key."""
import concurrent.futures
import subprocess
import textwrap

import grpc
import pytest

from rdtest import (SERVICE, admit, breaker, decide, err, expect_state, network_timeout, pb,
                    raw_grpc_call,
                    record, run_check_config, step, turn_trace, unique, write_config)


@pytest.fixture(scope="module")
def server(module_launcher):
    return module_launcher.start()


@pytest.fixture(scope="module")
def stub(server):
    return server.stub


def raw_call(server, method, payload: bytes, timeout=10):
    """A unary call with the bytes sent as they are (no serializer)."""
    call = server.channel.unary_unary(f"/{SERVICE}/{method}",
                                      request_serializer=None, response_deserializer=None)
    return call(payload, timeout=timeout)


def expect_rejected(call, field, code=grpc.StatusCode.INVALID_ARGUMENT):
    with pytest.raises(grpc.RpcError) as info:
        call()
    got = info.value
    assert got.code() == code, f"expected {code}, got {got.code()}: {got.details()!r}"
    if field:
        assert field in (got.details() or ""), \
            f"status details {got.details()!r} do not name {field!r}"
    return got


def decide_req(tool="flight_search", error=None, **fields):
    req = pb.DecideRequest(tool_id=tool, **fields)
    if error is not None:
        req.error.CopyFrom(error)
        if not req.attempt:
            req.attempt = 1
    return req


# Each entry: (name, method, request builder, field the status must name)
INVALID_REQUESTS = [
    ("classify without tool_id", "Classify",
     lambda t: pb.ClassifyRequest(tool_id="", error=network_timeout()), "tool_id"),
    ("decide without tool_id", "Decide", lambda t: decide_req(""), "tool_id"),
    ("record without tool_id", "RecordOutcome",
     lambda t: pb.RecordOutcomeRequest(tool_id="", success=True), "tool_id"),
    ("tool_id of 257 bytes", "Decide", lambda t: decide_req("t" * 257), "tool_id"),
    ("classify tool_id of 257 bytes", "Classify",
     lambda t: pb.ClassifyRequest(tool_id="t" * 257, error=network_timeout()), "tool_id"),
    ("breaker state for a 257-byte tool_id", "GetBreakerState",
     lambda t: pb.GetBreakerStateRequest(tool_ids=[t, "t" * 257]), "tool_ids[1]"),
    ("breaker state for an empty tool_id", "GetBreakerState",
     lambda t: pb.GetBreakerStateRequest(tool_ids=[t, t, ""]), "tool_ids[2]: required"),
    ("negative attempt", "Decide",
     lambda t: decide_req(t, network_timeout(), attempt=-1), "attempt"),
    ("record negative attempt", "RecordOutcome",
     lambda t: pb.RecordOutcomeRequest(tool_id=t, success=True, attempt=-3), "attempt"),
    ("absurd attempt", "Decide",
     lambda t: decide_req(t, network_timeout(), attempt=2**31 - 1), "attempt"),
    ("negative elapsed_ms", "Decide",
     lambda t: decide_req(t, network_timeout(), elapsed_ms=-1), "elapsed_ms"),
    ("negative latency_ms", "RecordOutcome",
     lambda t: pb.RecordOutcomeRequest(tool_id=t, success=False, error=network_timeout(),
                                       latency_ms=-5), "latency_ms"),
    ("unknown error kind", "Decide", lambda t: decide_req(t, err("boom", kind=99)), "kind"),
    ("classify unknown error kind", "Classify",
     lambda t: pb.ClassifyRequest(tool_id=t, error=err("boom", kind=99)), "kind"),
    ("unknown error source", "Decide",
     lambda t: decide_req(t, err("boom", source=42)), "source"),
    ("record unknown error kind", "RecordOutcome",
     lambda t: pb.RecordOutcomeRequest(tool_id=t, success=False, error=err("x", kind=99)),
     "kind"),
    ("plan step without tool_id", "Decide",
     lambda t: decide_req(t, network_timeout(), plan=[step("a"), step("")]), "plan"),
    ("plan of 257 steps", "Decide",
     lambda t: decide_req(t, network_timeout(), plan=[step(f"s{i}") for i in range(257)]),
     "plan"),
    ("plan step with 65 dependencies", "Decide",
     lambda t: decide_req(t, network_timeout(),
                          plan=[step("a", [f"d{i}" for i in range(65)])]), "depends_on"),
    ("malformed permit_id", "Decide",
     lambda t: decide_req(t, network_timeout(), permit_id="not-a-permit"), "permit_id"),
    ("record malformed permit_id", "RecordOutcome",
     lambda t: pb.RecordOutcomeRequest(tool_id=t, success=True, permit_id="garbage!"),
     "permit_id"),
    ("turn_id of 257 bytes", "Decide",
     lambda t: decide_req(t, network_timeout(), turn_id="u" * 257), "turn_id"),
    ("outcome_id of 257 bytes", "RecordOutcome",
     lambda t: pb.RecordOutcomeRequest(tool_id=t, success=True, outcome_id="o" * 257),
     "outcome_id"),
]


def call_method(stub, method, request):
    return getattr(stub, method)(request, timeout=10)


@pytest.mark.parametrize("name,method,build,field", INVALID_REQUESTS,
                         ids=[r[0].replace(" ", "_") for r in INVALID_REQUESTS])
def test_invalid_field_rejected_naming_it(stub, name, method, build, field):
    """INVALID_ARGUMENT, and the status details name the offending field."""
    request = build(unique("flight_search"))
    expect_rejected(lambda: call_method(stub, method, request), field)


def test_limits_themselves_are_accepted(stub):
    """The limits are inclusive: a 256-byte tool_id, a 64 KiB message, a
    plan of 256 steps with 64 dependencies each are fine."""
    tool = "t" * 256
    assert pb.Retryability.Name(stub.Classify(pb.ClassifyRequest(
        tool_id=tool, error=network_timeout())).classification.retryability) != \
        "RETRYABILITY_UNSPECIFIED"
    stub.Classify(pb.ClassifyRequest(tool_id="flight_search", error=err("x" * 65536)))
    plan = [step(f"s{i}", [f"s{j}" for j in range(max(0, i - 64), i)]) for i in range(256)]
    decide(stub, unique("flight_search"), network_timeout(), plan=plan)


@pytest.mark.parametrize("payload", [b"\xff\xff\xff\xff", b"\x0a\x05ab", b"\x12\x80"],
                         ids=["bad_varint", "truncated_string", "truncated_submessage"])
@pytest.mark.parametrize("method", ["Classify", "Decide", "RecordOutcome",
                                    "GetBreakerState", "GetTurnTrace"])
def test_undecodable_bytes_rejected(server, method, payload):
    """Bytes that are no protobuf message: INVALID_ARGUMENT, not a crash."""
    expect_rejected(lambda: raw_call(server, method, payload), None)


def test_request_over_max_receive_size_rejected(stub):
    """A request larger than server.max_receive_bytes (1 MiB) is refused
    with RESOURCE_EXHAUSTED before it is decoded."""
    huge = pb.DecideRequest(tool_id="flight_search",
                            plan=[step("s" * 200, default="v" * 60000) for _ in range(20)])
    expect_rejected(lambda: stub.Decide(huge, timeout=10), None,
                    code=grpc.StatusCode.RESOURCE_EXHAUSTED)


def test_unknown_method_unimplemented(server):
    """An RPC the service does not have: UNIMPLEMENTED."""
    expect_rejected(lambda: raw_call(server, "Frobnicate", b""), None,
                    code=grpc.StatusCode.UNIMPLEMENTED)
    call = server.channel.unary_unary("/recovery.v1.NoSuchService/Decide")
    expect_rejected(lambda: call(b"", timeout=10), None, code=grpc.StatusCode.UNIMPLEMENTED)


def test_unknown_turn_not_found(stub):
    """GetTurnTrace for a turn never seen: NOT_FOUND naming turn_id."""
    expect_rejected(lambda: turn_trace(stub, unique("no-such-turn")), "turn_id",
                    code=grpc.StatusCode.NOT_FOUND)


def test_expired_deadline(server, stub):
    """A call whose deadline has passed before the server handles it is
    not answered (DEADLINE_EXCEEDED, no response message), and the server
    goes on serving. Spoken in raw HTTP/2 so the deadline really is past on
    arrival: the request body is held back until after the deadline. The
    same request with a long deadline, held back just as long, is answered."""
    message = decide_req("flight_search").SerializeToString()
    control = raw_grpc_call(server.address, "Decide", message, "10S", pause_before_body=0.2)
    assert control == {"answered": True, "ended": True}
    late = raw_grpc_call(server.address, "Decide", message, "50m", pause_before_body=0.2)
    assert late == {"answered": False, "ended": True}
    expired = raw_grpc_call(server.address, "Decide", message, "1n", pause_before_body=0.05)
    assert expired == {"answered": False, "ended": True}

    admit(stub, "flight_search")


def test_server_survives_a_flood_and_keeps_its_state(server, stub):
    """After a flood of every bad input above (from several threads, some
    naming a tool with live breaker state), the server answers a good call
    and the tool's breaker is exactly as before: refused requests record
    nothing."""
    tool = unique("flight_search")
    for attempt in range(1, 4):
        decide(stub, tool, network_timeout(), attempt=attempt)
    before = breaker(stub, tool)
    assert before.consecutive_failures == 3

    def flood(i):
        refused = 0
        for name, method, build, field in INVALID_REQUESTS:
            try:
                call_method(stub, method, build(tool))
            except grpc.RpcError as e:
                refused += e.code() == grpc.StatusCode.INVALID_ARGUMENT
        for payload in (b"\xff\xff\xff\xff", b"\x0a\x05ab"):
            for method in ("Decide", "RecordOutcome"):
                try:
                    raw_call(server, method, payload)
                except grpc.RpcError as e:
                    refused += e.code() == grpc.StatusCode.INVALID_ARGUMENT
        return refused

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        refused = sum(pool.map(flood, range(16)))
    assert refused == 16 * (len(INVALID_REQUESTS) + 4)

    assert server.proc.poll() is None, "recoveryd died during the flood"
    after = breaker(stub, tool)
    expect_state(after, pb.BREAKER_STATUS_CLOSED)
    assert after.consecutive_failures == before.consecutive_failures
    assert after.opens_total == before.opens_total
    good = decide(stub, tool, network_timeout(), attempt=4)
    assert good.action == pb.ACTION_RETRY
    assert breaker(stub, tool).consecutive_failures == 4


# ---------------------------------------------------------------- config files

GOOD_MAIN = textwrap.dedent("""\
    server:
      workers: 2
    defaults:
      timeout_ms: 30000
      retry_policy:
        initial_delay_ms: 100
        multiplier: 2.0
        jitter_percent: 10
        max_attempts: 5
    tools:
      directory: tools.d
    classification:
      rules_file: rules.yaml
    """)


def line_of(text, needle):
    """1-based line of the first line containing needle."""
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in the test config")


def prepared(tmp_path):
    path = write_config(tmp_path)
    path.write_text(GOOD_MAIN)
    return path


def check_fails(binary, config, *expected):
    rc, out = run_check_config(binary, config)
    assert rc != 0, f"--check-config accepted a broken config:\n{out}"
    for text in expected:
        assert text in out, f"{text!r} missing from the error output:\n{out}"
    return out


def test_good_config_accepted(recoveryd_binary, tmp_path):
    rc, out = run_check_config(recoveryd_binary, prepared(tmp_path))
    assert rc == 0, out


@pytest.mark.parametrize("good,bad,key", [
    ("    multiplier: 2.0", "    multiplierr: 2.0", "defaults.retry_policy.multiplierr"),
    ("    max_attempts: 5", "    max_attempts: five", "defaults.retry_policy.max_attempts"),
    ("    jitter_percent: 10", "    jitter_percent: 150",
     "defaults.retry_policy.jitter_percent"),
    ("    initial_delay_ms: 100", "    initial_delay_ms: [100]",
     "defaults.retry_policy.initial_delay_ms"),
    ("  workers: 2", "  workers: 2\n  workers: 3", "server.workers"),
], ids=["unknown_key", "wrong_type", "out_of_range", "list_for_number", "duplicate_key"])
def test_broken_main_config_names_file_line_and_key(recoveryd_binary, tmp_path, good, bad, key):
    """A broken recovery.yaml: non-zero exit, "recovery.yaml:LINE" and the
    dotted key in the message (LINE: the offending key or value)."""
    path = prepared(tmp_path)
    text = GOOD_MAIN.replace(good, bad)
    path.write_text(text)
    line = line_of(text, bad.split("\n")[-1].strip())
    if "\n" in bad:  # a duplicate: the second occurrence is the offender
        line = line_of(text, bad.split("\n")[0].strip()) + 1
    check_fails(recoveryd_binary, path, f"recovery.yaml:{line}", key)


def test_yaml_syntax_error_reported_with_line(recoveryd_binary, tmp_path):
    path = prepared(tmp_path)
    text = GOOD_MAIN.replace("  workers: 2", "  workers: [2, 3")
    path.write_text(text)
    check_fails(recoveryd_binary, path, "recovery.yaml:")


def test_broken_manifest_names_file_line_and_key(recoveryd_binary, tmp_path):
    path = prepared(tmp_path)
    manifest = "tool:\n  id: flight_search\n  timeout_ms: -5\n"
    (tmp_path / "tools.d" / "flight_search.yaml").write_text(manifest)
    check_fails(recoveryd_binary, path, "flight_search.yaml:3", "tool.timeout_ms")


def test_duplicate_tool_ids_name_both_files(recoveryd_binary, tmp_path):
    path = prepared(tmp_path)
    for name in ("a.yaml", "b.yaml"):
        (tmp_path / "tools.d" / name).write_text("tool:\n  id: flight_search\n")
    check_fails(recoveryd_binary, path, "a.yaml:", "b.yaml:", "flight_search")


def test_broken_rules_file_names_file_line_and_key(recoveryd_binary, tmp_path):
    path = prepared(tmp_path)
    suggestions = "".join(f"  {c}: \"{c}\"\n" for c in (
        "transient", "input_validation", "external_service", "permission", "logic",
        "resource", "unknown"))
    rules = ("unknown:\n  retryability: transient\nsuggestions:\n" + suggestions +
             "rules:\n  - id: net.timeout\n    when:\n      colour: [red]\n"
             "    result:\n      retryability: transient\n      category: transient\n")
    (tmp_path / "rules.yaml").write_text(rules)
    check_fails(recoveryd_binary, path, f"rules.yaml:{line_of(rules, 'colour')}", "colour")


def test_server_start_with_broken_config_exits_non_zero(recoveryd_binary, tmp_path):
    """Not only --check-config: starting on a broken config fails too."""
    path = prepared(tmp_path)
    text = GOOD_MAIN.replace("    max_attempts: 5", "    max_attempts: 0")
    path.write_text(text)
    proc = subprocess.run([str(recoveryd_binary), "--config", str(path), "--listen",
                           "127.0.0.1:0"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          timeout=30, stdin=subprocess.DEVNULL)
    out = proc.stdout.decode("utf-8", "replace")
    assert proc.returncode != 0, out
    assert f"recovery.yaml:{line_of(text, 'max_attempts: 0')}" in out, out
    assert "defaults.retry_policy.max_attempts" in out, out
