"""Side-effect-safe retries over gRPC (docs/EFFECTS.md): a non-idempotent
tool (send_email) is retried only when the error proves it did not run;
when the effect may have happened the answer is VERIFY with the manifest's
verify_tool, or ESCALATE, never RETRY; an idempotency key makes the retry
safe and comes back in the answer; MCP hints declare tools without a
manifest; the trace and the metrics record what was decided."""
import re
import urllib.request

import grpc
import pytest
import yaml

import rdtest
from rdtest import decide, err, expect_action, pb, run_check_config, turn_trace, unique, \
    write_config

# Tests share the server: breakers that never open keep them independent.
NEVER_OPENS = {"failure_threshold": 10000}
TOOLS = [
    {"id": "send_email", "timeout_ms": 10000, "effects": "non_idempotent",
     "verify_tool": "find_sent_email", "circuit_breaker": NEVER_OPENS},
    {"id": "find_sent_email", "timeout_ms": 2000, "effects": "none"},
    {"id": "charge_card", "effects": "non_idempotent", "idempotency": "key",
     "circuit_breaker": NEVER_OPENS},
    {"id": "create_ticket", "effects": "non_idempotent", "circuit_breaker": NEVER_OPENS,
     "alternatives": ["create_ticket_backup"]},
    {"id": "create_ticket_backup"},
]


@pytest.fixture(scope="module")
def server(module_launcher):
    path = module_launcher.config(tools=TOOLS)
    main = yaml.safe_load(path.read_text())
    port = rdtest.free_port()
    main["metrics"] = {"listen": f"127.0.0.1:{port}"}
    path.write_text(yaml.safe_dump(main, sort_keys=False))
    s = module_launcher.start(path)
    s.metrics_url = f"http://127.0.0.1:{port}/metrics"
    return s


@pytest.fixture(scope="module")
def stub(server):
    return server.stub


def timeout_error(**hints):
    return err("Tool timeout after 10s", kind=pb.ERROR_KIND_TIMEOUT, **hints)


def decide_with_key(stub, tool_id, error, key, **kw):
    req = pb.DecideRequest(tool_id=tool_id, attempt=1, error=error, idempotency_key=key,
                           executor_id="e2e", **kw)
    return stub.Decide(req, timeout=10)


def test_a_timeout_is_verified_not_retried(stub):
    turn = unique("turn")
    d = decide(stub, "send_email", timeout_error(), attempt=1, turn_id=turn)
    expect_action(d, pb.ACTION_VERIFY)
    assert d.verify_tool_id == "find_sent_email"
    assert d.timeout_ms == 2000  # the verify tool's own timeout
    assert d.delay_ms == 0
    c = d.classification
    assert c.effects == pb.TOOL_EFFECTS_NON_IDEMPOTENT
    assert c.effect_safety == pb.EFFECT_SAFETY_UNKNOWN
    assert "timed out" in c.effect_reason
    assert "may have carried out its action" in c.llm_message
    assert "Do not call it again: first call find_sent_email" in c.llm_message
    assert "effect unknown" in d.reason
    events = turn_trace(stub, turn).events
    checked = [e for e in events if e.event_type == "EffectChecked"]
    assert len(checked) == 1, events
    assert checked[0].decision == "verify"
    assert checked[0].detail.startswith("effects non_idempotent, unknown: ")
    assert not [e for e in events if e.event_type == "Retry"], events


def test_verify_cycles_end_at_max_attempts(stub):
    """Each call again after a verify that found nothing done is one more
    attempt: at max_attempts (5, the defaults') the answer is ESCALATE."""
    for attempt in range(1, 5):
        expect_action(decide(stub, "send_email", timeout_error(), attempt=attempt),
                      pb.ACTION_VERIFY)
    d = decide(stub, "send_email", timeout_error(), attempt=5)
    expect_action(d, pb.ACTION_ESCALATE)
    assert d.verify_tool_id == ""
    assert "max attempts (5) reached and the effect is unknown" in d.reason
    assert "Do not call it again" in d.classification.llm_message


@pytest.mark.parametrize("error", [
    err("connect failed", code="ECONNREFUSED"),
    err("dial tcp 10.1.2.3:443: connect: connection refused"),
    err("Too Many Requests", http_status=429),
    err("Service Unavailable", http_status=503),
    err("Unknown tool: send_emial", kind=pb.ERROR_KIND_UNKNOWN_TOOL),
], ids=["econnrefused", "refused-text", "429", "503", "not-executed-kind"])
def test_errors_proving_the_tool_did_not_run(stub, error):
    d = decide(stub, "send_email", error, attempt=1)
    assert d.classification.effect_safety == pb.EFFECT_SAFETY_NOT_EXECUTED, d
    assert d.classification.effect_reason
    if d.classification.retryability == pb.RETRYABILITY_TRANSIENT:
        expect_action(d, pb.ACTION_RETRY)
        assert d.delay_ms > 0


@pytest.mark.parametrize("error", [
    err("upstream failed", http_status=500),
    err("Bad Gateway", http_status=502),
    err("Gateway Timeout", http_status=504),
    err("Connection reset by peer", code="ECONNRESET"),
], ids=["500", "502", "504", "reset"])
def test_errors_leaving_the_effect_unknown(stub, error):
    d = decide(stub, "send_email", error, attempt=1)
    expect_action(d, pb.ACTION_VERIFY)
    assert d.classification.effect_safety == pb.EFFECT_SAFETY_UNKNOWN


def test_an_idempotency_key_is_repeated_in_the_retry(stub):
    d = decide_with_key(stub, "charge_card", timeout_error(), "order-7731")
    expect_action(d, pb.ACTION_RETRY)
    assert d.idempotency_key == "order-7731"
    assert d.classification.effect_safety == pb.EFFECT_SAFETY_IDEMPOTENCY_KEY
    # No key sent, no verify tool named: ESCALATE
    d = decide(stub, "charge_card", timeout_error(), attempt=1)
    expect_action(d, pb.ACTION_ESCALATE)
    assert d.idempotency_key == ""
    assert "no idempotency_key" in d.classification.effect_reason
    assert "ask whether it happened" in d.classification.llm_message


def test_no_alternative_when_the_effect_is_unknown(stub):
    d = decide(stub, "create_ticket", timeout_error(), attempt=1)
    expect_action(d, pb.ACTION_ESCALATE)
    assert d.alternative_tool_id == ""


def test_mcp_hints_declare_a_tool_and_the_manifest_wins(stub):
    tool = unique("delete_file")
    d = decide(stub, tool, timeout_error(destructive_hint=pb.HINT_TRUE), attempt=1)
    expect_action(d, pb.ACTION_ESCALATE)
    assert d.classification.effects == pb.TOOL_EFFECTS_NON_IDEMPOTENT
    d = decide(stub, unique("list_files"), timeout_error(read_only_hint=pb.HINT_TRUE),
               attempt=1)
    expect_action(d, pb.ACTION_RETRY)
    assert d.classification.effect_safety == pb.EFFECT_SAFETY_DECLARED_SAFE
    d = decide(stub, "send_email", timeout_error(idempotent_hint=pb.HINT_TRUE), attempt=1)
    expect_action(d, pb.ACTION_VERIFY)


def test_undeclared_tools_are_retried_as_before(stub):
    turn = unique("turn")
    d = decide(stub, unique("web_search"), timeout_error(), attempt=1, turn_id=turn)
    expect_action(d, pb.ACTION_RETRY)
    assert d.classification.effects == pb.TOOL_EFFECTS_UNSPECIFIED
    assert d.classification.effect_safety == pb.EFFECT_SAFETY_UNSPECIFIED
    assert d.classification.effect_reason == ""
    assert not [e for e in turn_trace(stub, turn).events if e.event_type == "EffectChecked"]


def test_classify_reports_the_case(stub):
    c = stub.Classify(pb.ClassifyRequest(tool_id="send_email", error=timeout_error()),
                      timeout=10).classification
    assert c.effect_safety == pb.EFFECT_SAFETY_UNKNOWN
    c = stub.Classify(pb.ClassifyRequest(tool_id="send_email", error=err("x", http_status=429)),
                      timeout=10).classification
    assert c.effect_safety == pb.EFFECT_SAFETY_NOT_EXECUTED


@pytest.mark.parametrize("request_fields, field", [
    ({"idempotency_key": "k\nforged"}, "idempotency_key: contains a control character"),
    ({"idempotency_key": "k" * 257}, "idempotency_key: longer than 256 bytes"),
    ({"error": err("x", read_only_hint=7)}, "error.read_only_hint: unknown value 7"),
    ({"error": err("x", destructive_hint=-1)}, "error.destructive_hint: unknown value -1"),
    ({"error": err("x", idempotent_hint=3)}, "error.idempotent_hint: unknown value 3"),
])
def test_bad_fields_are_named(stub, request_fields, field):
    req = pb.DecideRequest(tool_id="charge_card", attempt=1, **request_fields)
    if "error" not in request_fields:
        req.error.CopyFrom(timeout_error())
    with pytest.raises(grpc.RpcError) as e:
        stub.Decide(req, timeout=10)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert field in e.value.details()


def test_refused_retries_are_counted(stub, server):
    def sample(action):
        with urllib.request.urlopen(server.metrics_url, timeout=10) as resp:
            text = resp.read().decode()
        m = re.search(r'^recoveryd_retries_refused_for_safety_total\{action="%s"\} (\d+)$'
                      % action, text, re.M)
        assert m, text
        return int(m.group(1))
    verify, escalate = sample("verify"), sample("escalate")
    decide(stub, "send_email", timeout_error(), attempt=1)
    decide(stub, "charge_card", timeout_error(), attempt=1)
    decide(stub, "send_email", err("x", http_status=429), attempt=1)  # retried: not counted
    assert sample("verify") == verify + 1
    assert sample("escalate") == escalate + 1


def test_manifest_errors_name_file_line_and_key(recoveryd_binary, tmp_path):
    config = write_config(tmp_path, tools=[{"id": "send_email", "effects": "non_idempotent",
                                            "verify_tool": "find_sent_mail"}])
    code, out = run_check_config(recoveryd_binary, config)
    assert code != 0, out
    assert "send_email.yaml:4: tool.verify_tool" in out, out
    assert 'unknown tool "find_sent_mail"' in out, out
    (tmp_path / "tools.d" / "send_email.yaml").write_text(
        "tool:\n  id: send_email\n  effects: maybe\n")
    code, out = run_check_config(recoveryd_binary, config)
    assert code != 0, out
    assert "send_email.yaml:3: tool.effects: unknown effects \"maybe\"" in out, out
