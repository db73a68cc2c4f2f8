"""Breakers scoped to the narrowest failing key (docs/SCOPES.md), over
gRPC: one credential's 429 opens that credential's breaker only, a
provider's 503 the provider's breaker that every credential of it shares,
an auth error counts against nothing shared; admission checks the key and
its parents and says which is open; GetBreakerState lists the scoped keys;
bad scopes are INVALID_ARGUMENT naming the field. On the memory store, and
on three replicas sharing Redis (exactly one probe per scoped key). An
alternative with a breaker_scope of its own is admitted at the call's scope."""
import time

import grpc
import pytest

from cluster_support import module_cluster_env  # noqa: F401
from ops_support import admin_pb, ops_launcher  # noqa: F401
from rdtest import err, expect_action, now_ms, pb, unique

SCOPE = {"dimensions": ["provider", "credential"],
         "levels": [{"when": {"http_status": [429]}, "level": "credential"},
                    {"when": {"http_status": [503]}, "level": "provider"},
                    {"when": {"http_status": [401, 403]}, "level": "none"}]}


def chat_tool(tool_id, threshold=2, open_ms=30000):
    return {"id": tool_id, "breaker_scope": SCOPE,
            "circuit_breaker": {"failure_threshold": threshold, "success_threshold": 1,
                                "timeout_ms": open_ms}}


def labels(provider=None, credential=None):
    out = []
    if provider:
        out.append(pb.ScopeLabel(dimension="provider", value=provider))
    if credential:
        out.append(pb.ScopeLabel(dimension="credential", value=credential))
    return out


def fail(stub, tool, status, scope, **kw):
    return stub.Decide(pb.DecideRequest(tool_id=tool, attempt=1, executor_id="e2e",
                                        error=err("upstream error", http_status=status),
                                        scope=scope, **kw), timeout=10)


def admit(stub, tool, scope, **kw):
    return stub.Decide(pb.DecideRequest(tool_id=tool, executor_id="e2e", scope=scope, **kw),
                       timeout=10)


# ---------------------------------------------------------------- memory store

@pytest.fixture(scope="module")
def stub(module_launcher):
    return module_launcher.start(tools=[chat_tool("chat"), chat_tool("chat_b"),
                                        chat_tool("chat_c")]).stub


def test_a_credentials_rate_limit_blocks_only_that_credential(stub):
    k1, k2 = labels("openai", "k1"), labels("openai", "k2")
    fail(stub, "chat", 429, k1)
    d = fail(stub, "chat", 429, k1)
    expect_action(d, pb.ACTION_FAIL_FAST)
    assert d.breaker.tool_id == "chat|provider=openai|credential=k1"
    assert d.breaker.scope_level == "credential"
    assert d.breaker.state == pb.BREAKER_STATUS_OPEN
    d = admit(stub, "chat", k1)
    expect_action(d, pb.ACTION_FAIL_FAST)
    assert "circuit open for chat|provider=openai|credential=k1" in d.reason
    expect_action(admit(stub, "chat", k2), pb.ACTION_PROCEED)
    expect_action(admit(stub, "chat", []), pb.ACTION_PROCEED)


def test_a_providers_overload_blocks_every_credential_of_it(stub):
    fail(stub, "chat_b", 503, labels("openai", "k1"))
    d = fail(stub, "chat_b", 503, labels("openai", "k2"))
    assert d.breaker.tool_id == "chat_b|provider=openai"
    assert d.breaker.scope_level == "provider"
    d = admit(stub, "chat_b", labels("openai", "k9"))
    expect_action(d, pb.ACTION_FAIL_FAST)
    assert "circuit open for chat_b|provider=openai" in d.reason
    assert "credential" not in d.reason
    expect_action(admit(stub, "chat_b", labels("azure", "k1")), pb.ACTION_PROCEED)
    states = stub.GetBreakerState(pb.GetBreakerStateRequest(), timeout=10).breakers
    scoped = {b.tool_id: b.scope_level for b in states if b.tool_id.startswith("chat_b")}
    assert scoped.get("chat_b|provider=openai") == "provider", scoped
    assert scoped.get("chat_b") == "", scoped
    one = stub.GetBreakerState(pb.GetBreakerStateRequest(tool_ids=["chat_b|provider=openai"]),
                               timeout=10).breakers
    assert len(one) == 1 and one[0].state == pb.BREAKER_STATUS_OPEN


def test_an_auth_error_counts_against_nothing_shared(stub):
    for _ in range(4):
        d = fail(stub, "chat_c", 401, labels("openai", "k1"))
        assert d.breaker.consecutive_failures == 0
    expect_action(admit(stub, "chat_c", labels("openai", "k1")), pb.ACTION_PROCEED)
    expect_action(admit(stub, "chat_c", labels("openai", "k2")), pb.ACTION_PROCEED)


def test_an_alternative_is_admitted_at_the_calls_scope(launcher):
    backup = {"id": "sum_backup", "breaker_scope": {"dimensions": ["provider"]},
              "circuit_breaker": {"failure_threshold": 1, "success_threshold": 1,
                                  "timeout_ms": 30000}}
    spare = dict(backup, id="sum_spare")
    primary = dict(chat_tool("sum"), alternatives=["sum_backup", "sum_spare"],
                   alternatives_ranking="live")
    stub = launcher.start(tools=[primary, backup, spare]).stub
    fail(stub, "sum_backup", 503, labels("openai", "k1"))  # the backup's openai key opens
    for _ in range(2):
        d = fail(stub, "sum", 429, labels("openai", "k1"))
    expect_action(d, pb.ACTION_USE_ALTERNATIVE)
    assert d.alternative_tool_id == "sum_spare", d
    for _ in range(2):
        d = fail(stub, "sum", 429, labels("azure", "k1"))
    expect_action(d, pb.ACTION_USE_ALTERNATIVE)
    assert d.alternative_tool_id == "sum_backup", d


@pytest.mark.parametrize("scope, message", [
    ([pb.ScopeLabel(dimension="provider", value="a")] * 2,
     'scope[1].dimension: "provider" given twice'),
    ([pb.ScopeLabel(dimension="d%d" % i, value="v") for i in range(9)],
     "scope: more than 8 labels"),
    ([pb.ScopeLabel(dimension="Provider", value="a")], "scope[0].dimension: must be 1 to 32"),
    ([pb.ScopeLabel(dimension="provider", value="v" * 65)],
     "scope[0].value: longer than 64 bytes"),
    ([pb.ScopeLabel(dimension="provider", value="a|b")], "scope[0].value: contains '|'"),
    ([pb.ScopeLabel(dimension="provider", value="")], "scope[0].value: required"),
])
def test_bad_scopes_are_named(stub, scope, message):
    for call in (lambda: admit(stub, "chat", scope),
                 lambda: stub.RecordOutcome(pb.RecordOutcomeRequest(
                     tool_id="chat", success=True, scope=scope), timeout=10)):
        with pytest.raises(grpc.RpcError) as e:
            call()
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert message in e.value.details()


def test_manifest_errors_name_file_line_and_key(recoveryd_binary, tmp_path):
    from rdtest import run_check_config, write_config
    bad = dict(chat_tool("chat"))
    bad["breaker_scope"] = {"dimensions": ["provider"],
                            "levels": [{"when": {"http_status": [429]}, "level": "credential"}]}
    config = write_config(tmp_path, tools=[bad])
    code, out = run_check_config(recoveryd_binary, config)
    assert code != 0, out
    assert "chat.yaml:" in out and "tool.breaker_scope.levels[0].level" in out, out
    assert 'unknown level "credential"' in out, out


# ---------------------------------------------------------------- three replicas on Redis

@pytest.fixture(scope="module")
def cluster(module_cluster_env):  # noqa: F811
    topo = module_cluster_env.redis()
    return module_cluster_env.recoveryd(
        topo.store_config(key_prefix="scopes:", command_timeout_ms=1000),
        tools=[chat_tool("chat_r", threshold=1, open_ms=500)])


def test_one_probe_per_scoped_key_across_replicas(cluster):
    stubs = cluster.stubs
    k1 = labels("openai", "k1")
    d = fail(stubs[0], "chat_r", 429, k1)
    assert d.breaker.state == pb.BREAKER_STATUS_OPEN
    # the other replicas see the scoped breaker open, and the sibling key closed
    for s in stubs[1:]:
        expect_action(admit(s, "chat_r", k1), pb.ACTION_FAIL_FAST)
        expect_action(admit(s, "chat_r", labels("openai", "k2")), pb.ACTION_PROCEED)
    for trial in range(5):
        state = stubs[trial % 3].GetBreakerState(pb.GetBreakerStateRequest(
            tool_ids=["chat_r|provider=openai|credential=k1"]), timeout=10).breakers[0]
        assert state.state == pb.BREAKER_STATUS_OPEN, (trial, state)
        delay = (state.open_until_ms + 30 - now_ms()) / 1000
        if delay > 0:
            time.sleep(delay)
        futures = [stubs[i % 3].Decide.future(pb.DecideRequest(
            tool_id="chat_r", executor_id=f"exec-{i}", scope=k1), timeout=10)
            for i in range(30)]
        answers = [f.result() for f in futures]
        granted = [(i, a) for i, a in enumerate(answers) if a.action == pb.ACTION_PROCEED]
        assert len(granted) == 1, (trial, [pb.Action.Name(a.action) for a in answers])
        winner, probe = granted[0]
        assert probe.permit_id
        assert probe.breaker.tool_id == "chat_r|provider=openai|credential=k1"
        # the probe fails again, reported through another replica: re-opened
        resp = stubs[(winner + 1) % 3].RecordOutcome(pb.RecordOutcomeRequest(
            tool_id="chat_r", success=False, permit_id=probe.permit_id, scope=k1,
            error=err("Too Many Requests", http_status=429)), timeout=10)
        assert resp.breaker.state == pb.BREAKER_STATUS_OPEN
        assert resp.breaker.generation > state.generation
    # a successful probe closes it for every replica
    state = stubs[0].GetBreakerState(pb.GetBreakerStateRequest(
        tool_ids=["chat_r|provider=openai|credential=k1"]), timeout=10).breakers[0]
    time.sleep(max(0, (state.open_until_ms + 30 - now_ms()) / 1000))
    probe = admit(stubs[1], "chat_r", k1)
    expect_action(probe, pb.ACTION_PROCEED)
    resp = stubs[2].RecordOutcome(pb.RecordOutcomeRequest(
        tool_id="chat_r", success=True, permit_id=probe.permit_id, scope=k1), timeout=10)
    assert resp.breaker.state == pb.BREAKER_STATUS_CLOSED, resp
    for s in stubs:
        expect_action(admit(s, "chat_r", k1), pb.ACTION_PROCEED)


# ---------------------------------------------------------------- operator control

def test_force_and_watch_a_scoped_key(ops_launcher, tmp_path):  # noqa: F811
    token = tmp_path / "admin.token"
    token.write_text("scope-admin-token\n")
    server = ops_launcher.start(tools=[chat_tool("chat_f")],
                                server={"admin": {"token_file": str(token)}})
    key = "chat_f|provider=openai"
    watch = server.stub.WatchBreakers(pb.WatchBreakersRequest(tool_ids=[key]), timeout=10)
    first = next(watch)
    assert first.breaker.tool_id == key and first.cause == "snapshot", first
    channel, admin = server.admin(token="scope-admin-token")
    try:
        held = admin.ForceBreaker(admin_pb.ForceBreakerRequest(
            tool_id=key, mode=admin_pb.FORCE_MODE_OPEN), timeout=10)
        assert held.breaker.tool_id == key and held.breaker.scope_level == "provider"
    finally:
        channel.close()
    change = next(watch)
    assert change.breaker.tool_id == key and change.breaker.forced == pb.BREAKER_STATUS_OPEN
    watch.cancel()
    d = admit(server.stub, "chat_f", labels("openai", "k1"))
    expect_action(d, pb.ACTION_FAIL_FAST)
    assert key in d.reason
    expect_action(admit(server.stub, "chat_f", labels("azure", "k1")), pb.ACTION_PROCEED)
