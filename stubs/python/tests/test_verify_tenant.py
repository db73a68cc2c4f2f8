"""VERIFY, idempotency keys and tenants against a live recoveryd (the
manifests of conftest.py: send_email is non-idempotent with the verify tool
find_sent_email; charge_card honours an idempotency key)."""
import asyncio
import itertools

import grpc
import pytest

from conftest import launch
from recoveryd_client import (ESCALATE, SUCCEEDED, VERIFICATION_REQUIRED, AsyncRecoveryClient,
                              RecoveryClient, ToolFailure, VerifyRequest, current_attempt)
from recoveryd_client import recovery_pb2 as pb

_turns = itertools.count()


def turn() -> str:
    return f"verify-{next(_turns)}"


def reset_then(value):
    """A send_email that is reset after sending on its first call (the
    effect is unknown) and returns value after."""
    calls = []

    def tool(timeout_s):
        calls.append(current_attempt())
        if len(calls) == 1:
            raise ToolFailure("read ECONNRESET", code="ECONNRESET")
        return value
    return tool, calls


def failures(client, tool):
    return client.get_breaker_state([tool]).breakers[0].consecutive_failures


def test_verifier_says_it_happened_records_a_success(recoveryd_addr):
    with RecoveryClient(recoveryd_addr, rpc_timeout=2) as client:
        tool, calls = reset_then("sent")
        asked = []

        def find_sent_email(req: VerifyRequest) -> bool:
            asked.append(req)
            assert current_attempt().tool_id == "find_sent_email"
            return True

        t = turn()
        res = client.run_tool("send_email", {"send_email": tool}, turn_id=t,
                              verifiers={"find_sent_email": find_sent_email})
        assert (res.status, res.verified, res.value, res.attempts) == (SUCCEEDED, True, None, 1)
        assert res.outcome_recorded and res.verify_tool_id == "find_sent_email"
        assert len(calls) == 1  # the tool was not called again
        (req,) = asked
        assert (req.tool_id, req.verify_tool_id, req.attempt) == ("send_email", "find_sent_email", 1)
        assert isinstance(req.error, ToolFailure) and "effect unknown" in req.reason
        assert req.timeout_s == pytest.approx(0.7)
        assert [d.action for d in res.decisions] == [pb.ACTION_PROCEED, pb.ACTION_VERIFY]
        # The success reached the breaker (the failure before it no longer counts).
        assert failures(client, "send_email") == 0
        events = [e.event_type for e in client.get_turn_trace(t).events]
        assert events == ["ToolError", "EffectChecked", "ToolSucceeded"]


def test_verifier_says_it_did_not_happen_calls_the_tool_again(recoveryd_addr):
    with RecoveryClient(recoveryd_addr, rpc_timeout=2) as client:
        tool, calls = reset_then("sent")
        res = client.run_tool("send_email", {"send_email": tool}, turn_id=turn(),
                              verifiers=lambda req: False)
        assert (res.status, res.verified, res.value, res.attempts) == (SUCCEEDED, False, "sent", 2)
        assert [c.number for c in calls] == [1, 2]
        # VERIFY, then admission before the second call.
        assert [d.action for d in res.decisions] == [
            pb.ACTION_PROCEED, pb.ACTION_VERIFY, pb.ACTION_PROCEED]
        assert res.outcome_recorded and failures(client, "send_email") == 0


@pytest.mark.parametrize("verifiers", [None, {"another_tool": lambda req: True}, lambda req: None],
                         ids=["none", "not-for-this-tool", "returns-no-bool"])
def test_without_a_verifier_the_run_stops_verification_required(recoveryd_addr, verifiers):
    with RecoveryClient(recoveryd_addr, rpc_timeout=2) as client:
        tool, calls = reset_then("sent")
        res = client.run_tool("send_email", {"send_email": tool}, turn_id=turn(),
                              verifiers=verifiers)
        assert res.status == VERIFICATION_REQUIRED and not res.ok and len(calls) == 1
        assert res.verify_tool_id == "find_sent_email" and "effect unknown" in res.reason
        assert "find_sent_email" in res.llm_message
        assert res.classification.effect_safety == pb.EFFECT_SAFETY_UNKNOWN


def test_a_failing_verifier_stops_verification_required(recoveryd_addr):
    with RecoveryClient(recoveryd_addr, rpc_timeout=2) as client:
        tool, calls = reset_then("sent")

        def broken(req):
            raise RuntimeError("mail API down")

        res = client.run_tool("send_email", {"send_email": tool}, turn_id=turn(),
                              verifiers=broken)
        assert res.status == VERIFICATION_REQUIRED and len(calls) == 1


def test_idempotency_key_is_passed_to_the_tool_on_the_retry(recoveryd_addr):
    with RecoveryClient(recoveryd_addr, rpc_timeout=2) as client:
        tool, calls = reset_then("charged")
        res = client.run_tool("charge_card", {"charge_card": tool}, turn_id=turn(),
                              idempotency_key="order-7731")
        assert (res.status, res.value, res.idempotency_key) == (SUCCEEDED, "charged", "order-7731")
        assert [(c.number, c.idempotency_key) for c in calls] == [(1, "order-7731"),
                                                                   (2, "order-7731")]
        assert res.decisions[1].action == pb.ACTION_RETRY

        # Without the key the same failure is never retried blind.
        tool, calls = reset_then("charged")
        res = client.run_tool("charge_card", {"charge_card": tool}, turn_id=turn())
        assert res.status == ESCALATE and len(calls) == 1 and calls[0].idempotency_key == ""


def test_async_verifier_and_attempt(recoveryd_addr):
    async def main():
        async with AsyncRecoveryClient(recoveryd_addr, rpc_timeout=2) as client:
            seen = []

            async def send_email(timeout_s):
                seen.append(current_attempt())
                if len(seen) == 1:
                    raise ToolFailure("read ECONNRESET", code="ECONNRESET")
                return "sent"

            async def find_sent_email(req):
                await asyncio.sleep(0)
                return len(seen) > 5

            res = await client.run_tool("send_email", {"send_email": send_email},
                                        verifiers={"find_sent_email": find_sent_email})
            assert current_attempt() is None  # the caller's context is unchanged
            return res, seen

    res, seen = asyncio.run(main())
    assert (res.status, res.value) == (SUCCEEDED, "sent")
    assert [(a.tool_id, a.number) for a in seen] == [("send_email", 1), ("send_email", 2)]


@pytest.mark.parametrize("bad, why", [("a b", "only letters"), ("x" * 65, "longer than 64"),
                                      ("é", "only letters")])
def test_a_bad_tenant_is_refused_locally(bad, why):
    with pytest.raises(ValueError, match=why):
        RecoveryClient("127.0.0.1:1", tenant=bad)
    with pytest.raises(ValueError, match="tenant"):
        AsyncRecoveryClient("127.0.0.1:1", tenant=bad)


@pytest.fixture(scope="module")
def tenants_server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("tenants")
    tokens = {"team-a": "token-a-0123456789", "team-b": "token-b-0123456789",
              "admin": "token-admin-0123456789"}
    for name, token in tokens.items():
        (tmp / f"{name}.token").write_text(token)
    server = f"""  tenants:
    - id: team-a
      token_file: {tmp}/team-a.token
    - id: team-b
      token_file: {tmp}/team-b.token
  admin:
    token_file: {tmp}/admin.token"""
    addr, stop = launch(tmp, {"search": "tool:\n  id: search\n"}, server)
    yield addr, tokens
    stop()


def test_the_admin_token_acts_for_the_tenant_it_names(tenants_server):
    addr, tokens = tenants_server
    admin_b = RecoveryClient(addr, rpc_timeout=2, token=tokens["admin"], tenant="team-b")
    team_a = RecoveryClient(addr, rpc_timeout=2, token=tokens["team-a"])
    team_b = RecoveryClient(addr, rpc_timeout=2, token=tokens["team-b"])
    admin = RecoveryClient(addr, rpc_timeout=2, token=tokens["admin"])
    try:
        assert admin_b.metadata == (("authorization", f"Bearer {tokens['admin']}"),
                                    ("x-recoveryd-tenant", "team-b"))

        def fails_once(timeout_s, calls=[]):
            calls.append(1)
            if len(calls) == 1:
                raise ToolFailure("503 Service Unavailable", http_status=503)
            return "ok"

        res = admin_b.run_tool("search", {"search": fails_once}, turn_id="tenant-turn")
        assert res.status == SUCCEEDED and not res.fallback and res.attempts == 2
        # The run's state is team-b's: its token reads the trace, team-a's cannot.
        assert team_b.get_turn_trace("tenant-turn").events
        with pytest.raises(grpc.RpcError) as err:
            team_a.get_turn_trace("tenant-turn")
        assert err.value.code() == grpc.StatusCode.NOT_FOUND
        # Without the tenant the admin token is refused by the server.
        with pytest.raises(grpc.RpcError) as err:
            admin.get_turn_trace("tenant-turn")
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "x-recoveryd-tenant" in err.value.details()
    finally:
        for c in (admin_b, team_a, team_b, admin):
            c.close()
