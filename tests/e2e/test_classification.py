"""003 section 1: error classification, through Classify (stateless) and
through Decide (classification inside a recovery decision)."""
import pytest

from rdtest import (auth_failure, classify, decide, err, expect_action, invalid_input,
                    network_timeout, pb, rate_limit, unique)

CUSTOM_API = {
    "id": "custom_api",
    "classification": {
        "overrides": [
            {"when": {"http_status": [503]},
             "retryability": "permanent",
             "suggestion": "503 from this API means the account is suspended"},
        ],
    },
}


@pytest.fixture(scope="module")
def stub(module_launcher):
    return module_launcher.start(tools=[CUSTOM_API]).stub


def service_unavailable():
    # An HTTP client knows the status it received, so it sends it along.
    return err("Service unavailable (503)", http_status=503)


def assert_explained(c):
    """Every answer says which rule decided and what to do about it."""
    assert c.rule_id, f"classification without rule_id: {c}"
    assert c.suggestion, f"classification without suggestion: {c}"


# ---- via Classify

def test_1_1_network_timeout_is_transient(stub):
    """1.1: "Connection timeout after 30s" -> Transient, retry: yes
    (network timeouts are temporary)."""
    c = classify(stub, "flight_search", network_timeout())
    assert c.retryability == pb.RETRYABILITY_TRANSIENT, c
    assert not c.overridden
    assert_explained(c)


def test_1_2_invalid_input_is_permanent(stub):
    """1.2: "Invalid airport code: XYZ" -> Permanent, retry: no (invalid
    input won't change on retry)."""
    c = classify(stub, "flight_search", invalid_input())
    assert c.retryability == pb.RETRYABILITY_PERMANENT, c
    assert c.category == pb.CATEGORY_INPUT_VALIDATION, c
    assert_explained(c)


def test_1_3_rate_limit_is_transient(stub):
    """1.3: "Rate limit exceeded (429)" -> Transient, retry: yes (rate
    limits reset over time)."""
    c = classify(stub, "flight_search", rate_limit())
    assert c.retryability == pb.RETRYABILITY_TRANSIENT, c
    assert_explained(c)


def test_1_4_auth_failure_is_permanent(stub):
    """1.4: "Authentication failed (401)" -> Permanent, retry: no (auth
    won't change on retry)."""
    c = classify(stub, "flight_search", auth_failure())
    assert c.retryability == pb.RETRYABILITY_PERMANENT, c
    assert c.category == pb.CATEGORY_PERMISSION, c
    assert_explained(c)


def test_1_5_manifest_override_makes_503_permanent(stub):
    """1.5: custom_api's manifest says "treat 503 as permanent"; "Service
    unavailable (503)" -> Permanent (overridden), retry: no. The same error
    on a tool without that manifest stays transient, so the manifest is
    what changed it."""
    c = classify(stub, "custom_api", service_unavailable())
    assert c.retryability == pb.RETRYABILITY_PERMANENT, c
    assert c.overridden, c
    assert c.suggestion == "503 from this API means the account is suspended", c

    base = classify(stub, "flight_search", service_unavailable())
    assert base.retryability == pb.RETRYABILITY_TRANSIENT, base
    assert not base.overridden, base


# ---- via Decide (first failed attempt of a call)

def test_1_1_network_timeout_is_transient_via_decide(stub):
    """1.1 through Decide: a transient error on the first attempt -> RETRY."""
    resp = decide(stub, unique("flight_search"), network_timeout(), attempt=1)
    assert resp.classification.retryability == pb.RETRYABILITY_TRANSIENT
    expect_action(resp, pb.ACTION_RETRY)
    assert resp.delay_ms > 0


def test_1_2_invalid_input_is_permanent_via_decide(stub):
    """1.2 through Decide: a permanent error is never retried; with no
    alternative it escalates with the "Tool Execution Failed" text."""
    tool = unique("flight_search")
    resp = decide(stub, tool, invalid_input(), attempt=1)
    assert resp.classification.retryability == pb.RETRYABILITY_PERMANENT
    expect_action(resp, pb.ACTION_ESCALATE)
    assert resp.delay_ms == 0
    llm = resp.classification.llm_message
    assert llm.startswith("Tool Execution Failed"), llm
    assert f"Tool: {tool}" in llm and "Invalid airport code: XYZ" in llm, llm


def test_1_3_rate_limit_is_transient_via_decide(stub):
    """1.3 through Decide: rate limit -> RETRY."""
    resp = decide(stub, unique("flight_search"), rate_limit(), attempt=1)
    assert resp.classification.retryability == pb.RETRYABILITY_TRANSIENT
    expect_action(resp, pb.ACTION_RETRY)
    # the model is told only when the tool is given up, not before a retry
    assert resp.classification.rule_id and resp.classification.llm_message == ""


def test_1_4_auth_failure_is_permanent_via_decide(stub):
    """1.4 through Decide: auth failure -> no retry (ESCALATE)."""
    resp = decide(stub, unique("flight_search"), auth_failure(), attempt=1)
    assert resp.classification.retryability == pb.RETRYABILITY_PERMANENT
    expect_action(resp, pb.ACTION_ESCALATE)


def test_1_5_manifest_override_respected_via_decide(stub):
    """1.5 through Decide: custom_api's 503 is permanent -> not retried."""
    resp = decide(stub, "custom_api", service_unavailable(), attempt=1)
    assert resp.classification.retryability == pb.RETRYABILITY_PERMANENT
    assert resp.classification.overridden
    expect_action(resp, pb.ACTION_ESCALATE)


def test_classify_changes_no_state(stub):
    """Classify is stateless: classifying transient errors many times
    does not count against the tool's breaker."""
    tool = unique("flight_search")
    for _ in range(10):
        classify(stub, tool, network_timeout())
    state = stub.GetBreakerState(pb.GetBreakerStateRequest(tool_ids=[tool])).breakers[0]
    assert state.consecutive_failures == 0
    assert state.state == pb.BREAKER_STATUS_CLOSED


def test_executed_follows_the_kind_map(stub):
    """004 decision A: a timeout ran the tool, invalid parameters did not."""
    ran = classify(stub, "flight_search", err("timed out", kind=pb.ERROR_KIND_TIMEOUT))
    assert ran.executed and ran.kind == pb.ERROR_KIND_TIMEOUT
    not_ran = classify(stub, "flight_search",
                       err("bad args", kind=pb.ERROR_KIND_INVALID_PARAMETERS))
    assert not not_ran.executed and not_ran.kind == pb.ERROR_KIND_INVALID_PARAMETERS
    assert not_ran.retryability == pb.RETRYABILITY_PERMANENT
