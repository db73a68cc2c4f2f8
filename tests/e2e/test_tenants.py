"""Tenants that cannot see each other (docs/TENANTS.md), over gRPC: a token
maps to a tenant; two tenants with the same tool id have separate breakers,
turns and outcome ids; a tenant's token cannot read another's trace
(NOT_FOUND), list or watch another's breakers, or force any breaker
(PERMISSION_DENIED); the admin token acts for the tenant it names; per-tenant
limits answer RESOURCE_EXHAUSTED naming the limit; a reload adds and removes
tenants; a bad tenants section is a file:line error. On the memory store,
on three replicas sharing Redis, and on a Redis Cluster (the tenant's prefix
inside the key's hash tag)."""
import json
import queue
import subprocess
import threading
import urllib.request

import grpc
import pytest

from cluster_support import cluster_env, module_cluster_env, wait_until  # noqa: F401
import yaml

from ops_support import (BearerInterceptor, admin_grpc, admin_pb, ops_launcher,  # noqa: F401
                         sighup, wait_for_log)
from rdtest import err, expect_action, pb, pb_grpc, run_check_config, unique, write_config

TOKENS = {"team-a": "token-of-team-a", "team-b": "token-of-team-b"}
ADMIN = "token-of-the-operator"


def tenants_server(tmp_path, max_tools=0, max_turns=0):
    files = {}
    for name, token in {**TOKENS, "admin": ADMIN}.items():
        f = tmp_path / f"{name}.token"
        f.write_text(token + "\n")
        files[name] = str(f)
    tenants = [{"id": t, "token_file": files[t]} for t in TOKENS]
    tenants.append({"id": "small", "token_env": "RD_E2E_SMALL_TOKEN",
                    "max_tools": max_tools, "max_turns": max_turns})
    return {"tenants": tenants, "admin": {"token_file": files["admin"]}}


def flaky(tool_id, threshold=2):
    return {"id": tool_id, "circuit_breaker": {"failure_threshold": threshold,
                                               "success_threshold": 1, "timeout_ms": 60000}}


class Client:
    """RecoveryService and AdminService stubs sending one bearer token."""

    def __init__(self, address, token, tenant=None):
        md = [("x-recoveryd-tenant", tenant)] if tenant else []
        self.channel = grpc.intercept_channel(grpc.insecure_channel(address),
                                              BearerInterceptor(token))
        self.rpc = pb_grpc.RecoveryServiceStub(self.channel)
        self.admin = admin_grpc.AdminServiceStub(self.channel)
        self.md = md

    def decide(self, tool, status=None, **kw):
        error = err("upstream error", http_status=status) if status else None
        return self.rpc.Decide(pb.DecideRequest(tool_id=tool, attempt=1 if error else 0,
                                                executor_id="e2e", error=error, **kw),
                               timeout=10, metadata=self.md)

    def breakers(self, *tools):
        return self.rpc.GetBreakerState(pb.GetBreakerStateRequest(tool_ids=list(tools)),
                                        timeout=10, metadata=self.md).breakers

    def trace(self, turn):
        return self.rpc.GetTurnTrace(pb.GetTurnTraceRequest(turn_id=turn), timeout=10,
                                     metadata=self.md)

    def force(self, tool, mode):
        return self.admin.ForceBreaker(admin_pb.ForceBreakerRequest(tool_id=tool, mode=mode,
                                                                    operator="e2e"),
                                       timeout=10, metadata=self.md)

    def close(self):
        self.channel.close()


def expect_code(code, fn, *args, contains=""):
    with pytest.raises(grpc.RpcError) as e:
        fn(*args)
    assert e.value.code() == code, (e.value.code(), e.value.details())
    assert contains in e.value.details(), e.value.details()
    return e.value.details()


def open_breaker(client, tool):
    client.decide(tool, 503)
    d = client.decide(tool, 503)
    assert d.breaker.state == pb.BREAKER_STATUS_OPEN, d
    return d


# ---------------------------------------------------------------- memory store

@pytest.fixture()
def server(ops_launcher, tmp_path, monkeypatch):  # noqa: F811
    monkeypatch.setenv("RD_E2E_SMALL_TOKEN", "token-of-small")
    srv = ops_launcher.start(tools=[flaky("search"), flaky("search_alt")],
                             server=tenants_server(tmp_path, max_tools=2, max_turns=2))
    clients = {t: Client(srv.address, tok) for t, tok in TOKENS.items()}
    clients["small"] = Client(srv.address, "token-of-small")
    yield srv, clients
    for c in clients.values():
        c.close()


def test_same_tool_id_separate_breakers(server):
    _, c = server
    open_breaker(c["team-a"], "search")
    expect_action(c["team-a"].decide("search"), pb.ACTION_FAIL_FAST)
    expect_action(c["team-b"].decide("search"), pb.ACTION_PROCEED)
    assert c["team-b"].breakers("search")[0].state == pb.BREAKER_STATUS_CLOSED
    mine = {b.tool_id: b.state for b in c["team-a"].breakers()}
    assert mine == {"search": pb.BREAKER_STATUS_OPEN}
    # team-b lists only what it tracks itself, by the ids it used
    assert [b.tool_id for b in c["team-b"].breakers()] == ["search"]
    assert c["team-b"].breakers()[0].state == pb.BREAKER_STATUS_CLOSED


def test_a_tenant_cannot_read_anothers_trace(server):
    _, c = server
    turn = unique("turn")
    c["team-a"].decide("search", 503, turn_id=turn)
    assert len(c["team-a"].trace(turn).events) > 0
    details = expect_code(grpc.StatusCode.NOT_FOUND, c["team-b"].trace, turn)
    assert "upstream error" not in details
    # nor a key it builds to look like the other tenant's
    expect_code(grpc.StatusCode.NOT_FOUND, c["team-b"].trace, f"team-a/{turn}")


def test_outcome_ids_are_per_tenant(server):
    _, c = server
    oid = unique("outcome")
    for name in ("team-a", "team-b"):
        r = c[name].rpc.RecordOutcome(pb.RecordOutcomeRequest(
            tool_id="search", success=True, outcome_id=oid, attempt=1), timeout=10)
        assert not r.duplicate, name
    r = c["team-a"].rpc.RecordOutcome(pb.RecordOutcomeRequest(
        tool_id="search", success=True, outcome_id=oid, attempt=1), timeout=10)
    assert r.duplicate


def test_a_tenant_cannot_force_breakers(server):
    _, c = server
    expect_code(grpc.StatusCode.PERMISSION_DENIED, c["team-a"].force, "search",
                admin_pb.FORCE_MODE_OPEN, contains="admin token")
    expect_action(c["team-b"].decide("search"), pb.ACTION_PROCEED)


def test_admin_acts_for_the_tenant_it_names(server):
    srv, c = server
    admin_b = Client(srv.address, ADMIN, tenant="team-b")
    try:
        held = admin_b.force("search", admin_pb.FORCE_MODE_OPEN)
        assert held.breaker.tool_id == "search"
        expect_action(c["team-b"].decide("search"), pb.ACTION_FAIL_FAST)
        expect_action(c["team-a"].decide("search"), pb.ACTION_PROCEED)
        # the admin reads the tenant it names too
        turn = unique("turn")
        c["team-b"].decide("search", 503, turn_id=turn)
        assert admin_b.trace(turn).events
    finally:
        admin_b.close()
    assert "tenant=team-b" in srv.log_text() or '"tenant":"team-b"' in srv.log_text()
    nobody = Client(srv.address, ADMIN)
    try:
        expect_code(grpc.StatusCode.INVALID_ARGUMENT, nobody.force, "search",
                    admin_pb.FORCE_MODE_OPEN, contains="x-recoveryd-tenant")
    finally:
        nobody.close()
    ghost = Client(srv.address, ADMIN, tenant="team-z")
    try:
        expect_code(grpc.StatusCode.NOT_FOUND, ghost.force, "search", admin_pb.FORCE_MODE_OPEN)
    finally:
        ghost.close()


def test_unknown_or_missing_tokens_are_refused(server):
    srv, _ = server
    stranger = Client(srv.address, "not-a-token")
    try:
        expect_code(grpc.StatusCode.UNAUTHENTICATED, stranger.decide, "search")
    finally:
        stranger.close()
    expect_code(grpc.StatusCode.UNAUTHENTICATED, srv.stub.Decide,
                pb.DecideRequest(tool_id="search"))


def test_watch_streams_only_the_tenants_changes(server):
    _, c = server
    got = queue.Queue()
    stream = c["team-b"].rpc.WatchBreakers(pb.WatchBreakersRequest(), timeout=10)

    def read():
        try:
            for change in stream:
                got.put(change)
        except grpc.RpcError:
            pass

    t = threading.Thread(target=read, daemon=True)
    t.start()
    open_breaker(c["team-a"], "search_alt")  # another tenant's change: never seen
    open_breaker(c["team-b"], "search")
    changes = []
    while True:
        change = got.get(timeout=5)
        changes.append(change)
        if change.breaker.state == pb.BREAKER_STATUS_OPEN:
            break
    stream.cancel()
    assert change.breaker.tool_id == "search"
    assert all(ch.breaker.tool_id != "search_alt" for ch in changes), changes
    assert not any("team-a" in ch.breaker.tool_id for ch in changes)


def test_per_tenant_limits(server):
    _, c = server
    small = c["small"]
    expect_action(small.decide("one"), pb.ACTION_PROCEED)
    expect_action(small.decide("two"), pb.ACTION_PROCEED)
    expect_action(small.decide("one"), pb.ACTION_PROCEED)  # known tools stay usable
    expect_code(grpc.StatusCode.RESOURCE_EXHAUSTED, small.decide, "three",
                contains="max_tools")
    expect_action(c["team-a"].decide("three"), pb.ACTION_PROCEED)  # others unaffected
    small.decide("one", turn_id="t1")
    small.decide("one", turn_id="t2")
    expect_code(grpc.StatusCode.RESOURCE_EXHAUSTED, lambda: small.decide("one", turn_id="t3"),
                contains="max_turns")
    assert small.trace("t1").turn_id == "t1"  # the turns it keeps stay readable
    expect_code(grpc.StatusCode.NOT_FOUND, small.trace, "t3")  # the refused one was not kept


def refusal_counts(metrics_text, tenant):
    """{limit: count} of recoveryd_tenant_limit_refusals_total for tenant."""
    counts = {}
    for line in metrics_text.splitlines():
        if line.startswith("recoveryd_tenant_limit_refusals_total{") and \
                f'tenant="{tenant}"' in line:
            limit = line.split('limit="')[1].split('"')[0]
            counts[limit] = float(line.split()[-1])
    return counts


def metrics_of(server):
    port = next(int(e["metrics_port"]) for e in map(json.loads, filter(
        lambda l: l.startswith("{"), server.log_text().splitlines()))
        if e.get("msg") == "serving")
    return urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()


def test_limit_refusals_are_counted_per_tenant(server):
    srv, c = server
    small = c["small"]
    small.decide("one")
    small.decide("two")
    for _ in range(3):
        expect_code(grpc.StatusCode.RESOURCE_EXHAUSTED, small.decide, "three",
                    contains="max_tools")
    small.decide("one", turn_id="t1")
    small.decide("one", turn_id="t2")
    expect_code(grpc.StatusCode.RESOURCE_EXHAUSTED, lambda: small.decide("one", turn_id="t3"),
                contains="max_turns")
    text = metrics_of(srv)
    assert refusal_counts(text, "small") == {"max_tools": 3.0, "max_turns": 1.0}, text
    assert refusal_counts(text, "team-a") == {}  # no limit: no series


def test_recoveryctl_names_the_tenant(server, recoveryd_binary):
    srv, c = server
    ctl = recoveryd_binary.parent / "tools" / "recoveryctl"

    def run(*args):
        return subprocess.run([str(ctl), "--addr", srv.address, "--admin-token", ADMIN, *args],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              timeout=30, stdin=subprocess.DEVNULL)

    proc = run("--tenant", "team-a", "force-open", "search_alt")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    expect_action(c["team-a"].decide("search_alt"), pb.ACTION_FAIL_FAST)
    expect_action(c["team-b"].decide("search_alt"), pb.ACTION_PROCEED)
    proc = run("force-open", "search_alt")
    assert proc.returncode == 1 and "x-recoveryd-tenant" in proc.stderr, proc.stderr
    proc = subprocess.run([str(ctl), "--addr", srv.address, "--token", TOKENS["team-b"],
                           "state"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=30, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("search_alt ")]
    assert len(lines) == 1 and " closed " in lines[0] and "open" not in lines[0], proc.stdout


def test_tenants_are_reloaded(server):
    srv, c = server
    open_breaker(c["team-a"], "search")
    main = yaml.safe_load(srv.config.read_text())
    token_c = srv.config.parent / "team-c.token"
    token_c.write_text("token-of-team-c\n")
    main["server"]["tenants"] = [t for t in main["server"]["tenants"] if t["id"] != "team-b"]
    main["server"]["tenants"].append({"id": "team-c", "token_file": str(token_c)})
    srv.config.write_text(yaml.safe_dump(main))
    sighup(srv)
    assert wait_for_log(srv, "configuration reloaded"), srv.log_text()
    expect_code(grpc.StatusCode.UNAUTHENTICATED, c["team-b"].decide, "search")
    team_c = Client(srv.address, "token-of-team-c")
    try:
        expect_action(team_c.decide("search"), pb.ACTION_PROCEED)
        expect_action(c["team-a"].decide("search"), pb.ACTION_FAIL_FAST)  # state kept
    finally:
        team_c.close()


def test_tenant_config_errors_name_file_and_line(recoveryd_binary, tmp_path):
    token = tmp_path / "t.token"
    token.write_text("s3cr3t-tok\n")
    bad = [
        ([{"id": "a b", "token_file": str(token)}], "only letters"),
        ([{"id": "a", "token_file": str(token)}, {"id": "a", "token_file": str(token)}],
         "given twice"),
        ([{"id": "a", "token_file": str(token)}, {"id": "b", "token_file": str(token)}],
         "has the token of tenant 'a'"),
        ([{"token_file": str(token)}], "id"),
        ([{"id": "a"}], "token_file: missing (required: token_file or token_env)"),
    ]
    for tenants, message in bad:
        cfg = write_config(tmp_path / unique("cfg"), server={"tenants": tenants})
        rc, out = run_check_config(recoveryd_binary, cfg)
        assert rc != 0, out
        assert "server.tenants[" in out and message in out, out
        assert "s3cr3t-tok" not in out, out
    cfg = write_config(tmp_path / unique("cfg"), server={
        "tenants": [{"id": "a", "token_file": str(token)}], "auth": {"token_file": str(token)}})
    rc, out = run_check_config(recoveryd_binary, cfg)
    assert rc != 0 and "server.auth" in out and "not with tenants" in out, out


# ---------------------------------------------------------------- three replicas sharing Redis

@pytest.fixture(scope="module")
def cluster(module_cluster_env, tmp_path_factory):  # noqa: F811
    import os
    os.environ["RD_E2E_SMALL_TOKEN"] = "token-of-small"
    topo = module_cluster_env.redis()
    return module_cluster_env.recoveryd(
        topo.store_config(key_prefix="tenants:", command_timeout_ms=1000),
        tools=[flaky("search", threshold=1)],
        server=tenants_server(tmp_path_factory.mktemp("tenants"), max_tools=2, max_turns=2))


def test_replicas_keep_tenants_apart(cluster):
    a = [Client(r.address, TOKENS["team-a"]) for r in cluster.replicas]
    b = [Client(r.address, TOKENS["team-b"]) for r in cluster.replicas]
    try:
        turn = unique("turn")
        d = a[0].decide("search", 503, turn_id=turn)
        assert d.breaker.state == pb.BREAKER_STATUS_OPEN
        for i in range(3):
            expect_action(a[i].decide("search"), pb.ACTION_FAIL_FAST)
            expect_action(b[i].decide("search"), pb.ACTION_PROCEED)
            assert a[i].trace(turn).events
            expect_code(grpc.StatusCode.NOT_FOUND, b[i].trace, turn)
            assert [x.tool_id for x in b[i].breakers()] in (["search"], [])
            assert all(x.state == pb.BREAKER_STATUS_CLOSED for x in b[i].breakers())
            expect_code(grpc.StatusCode.PERMISSION_DENIED, b[i].force, "search",
                        admin_pb.FORCE_MODE_CLOSED)
        admin_a = Client(cluster.replicas[2].address, ADMIN, tenant="team-a")
        try:
            admin_a.force("search", admin_pb.FORCE_MODE_CLOSED)
        finally:
            admin_a.close()
        # the other replicas follow the shared store's notification
        assert wait_until(lambda: a[1].decide("search").action == pb.ACTION_PROCEED, 5.0)
    finally:
        for c in a + b:
            c.close()


def test_tenant_limits_are_shared_by_the_replicas(cluster):
    """max_tools counts the tenant's tools in the shared store: two tools
    used through two replicas fill it for the third, which refuses a third
    tool and still serves the two; the refusal is counted where it happened."""
    small = [Client(r.address, "token-of-small") for r in cluster.replicas]
    try:
        expect_action(small[0].decide("one"), pb.ACTION_PROCEED)
        expect_action(small[1].decide("two"), pb.ACTION_PROCEED)
        expect_code(grpc.StatusCode.RESOURCE_EXHAUSTED, small[2].decide, "three",
                    contains="max_tools")
        for i in range(3):
            expect_action(small[i].decide("one"), pb.ACTION_PROCEED)
            expect_action(small[i].decide("two"), pb.ACTION_PROCEED)
        small[0].decide("one", turn_id="limit-t1")
        small[1].decide("one", turn_id="limit-t2")
        expect_code(grpc.StatusCode.RESOURCE_EXHAUSTED,
                    lambda: small[2].decide("one", turn_id="limit-t3"), contains="max_turns")
        assert refusal_counts(cluster.metrics_text(2), "small") == \
            {"max_tools": 1.0, "max_turns": 1.0}
        assert refusal_counts(cluster.metrics_text(0), "small") == \
            {"max_tools": 0.0, "max_turns": 0.0}
    finally:
        for c in small:
            c.close()


# ---------------------------------------------------------------- Redis Cluster

def test_a_tenants_keys_keep_their_hash_tag_on_redis_cluster(cluster_env, tmp_path):  # noqa: F811
    """The tenant prefix is inside the key's hash tag: a tenant's breaker
    lives on the primary of the slot of "<tenant>/<tool>", every key of it
    on that one slot."""
    from cluster_support import redis_command
    from redis_cluster_support import RedisClusterTopology, require_cluster_tools, tool_slot
    require_cluster_tools()
    import os
    os.environ["RD_E2E_SMALL_TOKEN"] = "token-of-small"
    topo = RedisClusterTopology(tmp_path / "redis-cluster", node_timeout_ms=1000)
    try:
        topo.start()
        cluster = cluster_env.recoveryd(
            topo.store_config(key_prefix="tn:", command_timeout_ms=1000), n=1,
            tools=[flaky("search", threshold=1)], server=tenants_server(tmp_path))
        a = Client(cluster.replicas[0].address, TOKENS["team-a"])
        b = Client(cluster.replicas[0].address, TOKENS["team-b"])
        try:
            assert a.decide("search", 503).breaker.state == pb.BREAKER_STATUS_OPEN
            expect_action(b.decide("search"), pb.ACTION_PROCEED)
            key = "tn:{tool:team-a/search}:breaker"
            port = topo.primary_port(tool_slot("tn:", "team-a/search"))
            assert redis_command(port, "EXISTS", key) == 1
            assert [x.state for x in b.breakers("search")] == [pb.BREAKER_STATUS_CLOSED]
        finally:
            a.close()
            b.close()
        cluster_env.close()
    finally:
        topo.stop()
