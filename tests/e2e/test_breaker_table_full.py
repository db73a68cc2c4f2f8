"""A full breaker table makes room instead of refusing new tools: with
store.max_tools reached, the least recently used CLOSED breaker is
forgotten for the new one (counted in
recoveryd_store_breakers_displaced_total); OPEN, HALF_OPEN and held
breakers are never displaced, and a new tool is refused only when nothing
else is left. Both stores; resident memory stays flat under churn."""
import json
import os
import urllib.request

import grpc
import pytest

from cluster_support import RedisTopology, require_redis
from ops_support import admin_pb, ops_launcher  # noqa: F401
from rdtest import breaker, decide, expect_action, expect_state, network_timeout, pb, unique

MAX_TOOLS = 40
ADMIN_TOKEN = "table-admin-token"
# Under AddressSanitizer freed memory waits in a quarantine (256 MB) before
# reuse, which reads as growth; the server here runs without it.
NO_QUARANTINE = "quarantine_size_mb=0:thread_local_quarantine_size_kb=0"


@pytest.fixture(params=["memory", "redis"])
def server(request, ops_launcher, tmp_path):
    token = tmp_path / "admin.token"
    token.write_text(ADMIN_TOKEN + "\n")
    store = {"max_tools": MAX_TOOLS}
    topo = None
    if request.param == "redis":
        require_redis()
        topo = RedisTopology(tmp_path / "redis")
        topo.start()
        store.update(topo.store_config(key_prefix=unique("full")))
    try:
        before = os.environ.get("ASAN_OPTIONS")
        os.environ["ASAN_OPTIONS"] = ":".join(filter(None, [before, NO_QUARANTINE]))
        try:
            started = ops_launcher.start(store=store,
                                         server={"admin": {"token_file": str(token)}})
        finally:
            if before is None:
                del os.environ["ASAN_OPTIONS"]
            else:
                os.environ["ASAN_OPTIONS"] = before
        yield started
    finally:
        if topo:
            topo.stop()


def metric(server, name):
    port = None
    for line in server.log_text().splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if entry.get("msg") == "serving":
            port = int(entry["metrics_port"])
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def rss_kb(server):
    with open(f"/proc/{server.proc.pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_churn_of_new_tools_is_never_refused(server):
    stub = server.stub
    kept_open = unique("broken")
    for attempt in range(1, 6):
        decide(stub, kept_open, network_timeout(), attempt=attempt)
    expect_state(breaker(stub, kept_open), pb.BREAKER_STATUS_OPEN)

    for i in range(3 * MAX_TOOLS):
        resp = decide(stub, unique("churn"), network_timeout(), attempt=1)
        expect_action(resp, pb.ACTION_RETRY)
    assert metric(server, "recoveryd_store_breakers_displaced_total") >= 2 * MAX_TOOLS
    # The OPEN breaker outlived the churn.
    expect_state(breaker(stub, kept_open), pb.BREAKER_STATUS_OPEN)
    assert len(stub.GetBreakerState(pb.GetBreakerStateRequest(), timeout=10).breakers) \
        <= MAX_TOOLS


def test_refused_only_when_every_breaker_is_worth_keeping(server):
    channel, admin = server.admin(token=ADMIN_TOKEN)
    try:
        for _ in range(MAX_TOOLS):
            admin.ForceBreaker(admin_pb.ForceBreakerRequest(
                tool_id=unique("held"), mode=admin_pb.FORCE_MODE_OPEN), timeout=10)
    finally:
        channel.close()
    with pytest.raises(grpc.RpcError) as info:
        decide(server.stub, unique("newcomer"), network_timeout(), attempt=1)
    assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "tool_id" in info.value.details()


def test_memory_stays_flat_under_churn(server):
    stub = server.stub
    for _ in range(500):
        decide(stub, unique("warm"), network_timeout(), attempt=1)
    before = rss_kb(server)
    for _ in range(3000):
        decide(stub, unique("churn"), network_timeout(), attempt=1)
    grown = rss_kb(server) - before
    assert grown < 8 * 1024, f"resident memory grew by {grown} KiB over 3000 new tools"
