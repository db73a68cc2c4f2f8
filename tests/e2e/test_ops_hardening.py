"""Operational hardening of issue 39: token_env trimmed like a file,
failed authentication logged (peer, method, rate-limited), reflection
switchable off, a reload that drops a protection warned about, and a limit
on WatchBreakers streams."""
import json
import subprocess
import time
import urllib.request
from pathlib import Path

import grpc
import pytest
import yaml

from ops_support import ops_launcher, sighup, wait_for_log  # noqa: F401
import rdtest
from rdtest import pb, unique
from recovery.v1 import recovery_pb2_grpc as pb_grpc

REFLECTION = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"
LIST_SERVICES = b"\x3a\x00"  # ServerReflectionRequest{list_services: ""}


def log_entries(server, msg: str) -> list[dict]:
    out = []
    for line in server.log_text(10**7).splitlines():
        entry = json.loads(line)
        if entry.get("msg") == msg:
            out.append(entry)
    return out


def test_token_env_with_a_trailing_newline_is_trimmed(ops_launcher, monkeypatch):
    """A Kubernetes Secret mounted as an environment variable usually ends
    with a newline; the token is the line without it."""
    monkeypatch.setenv("RD_E2E_NEWLINE_TOKEN", "env-secret\n")
    server = ops_launcher.start(server={"auth": {"token_env": "RD_E2E_NEWLINE_TOKEN"}},
                                token="env-secret")
    server.stub.Classify(pb.ClassifyRequest(tool_id="t", error=pb.ToolError(message="x")),
                         timeout=5)


def test_failed_authentication_is_logged_with_peer_and_method(ops_launcher, tmp_path):
    token = tmp_path / "client.token"
    token.write_text("right-token\n")
    server = ops_launcher.start(server={"auth": {"token_file": str(token)}}, token="wrong")
    for _ in range(30):
        with pytest.raises(grpc.RpcError) as e:
            server.stub.Classify(pb.ClassifyRequest(tool_id="t", error=pb.ToolError(message="x")),
                                 timeout=5)
        assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert wait_for_log(server, "authentication failed")
    lines = log_entries(server, "authentication failed")
    assert 1 <= len(lines) <= 3, lines  # one a second at most
    first = lines[0]
    assert first["level"] == "warn"
    assert first["peer"].startswith("ipv4:127.0.0.1:"), first
    assert first["method"] == "/recovery.v1.RecoveryService/Classify"
    assert first["reason"] == "invalid bearer token"
    assert "right-token" not in server.log_text(10**7) and "wrong" not in first["reason"]


def reflection_call(server):
    call = server.channel.stream_stream(REFLECTION, request_serializer=None,
                                        response_deserializer=None)
    return list(call(iter([LIST_SERVICES]), timeout=5))


def test_reflection_can_be_switched_off_and_on_by_reload(ops_launcher):
    server = ops_launcher.start(server={"reflection": False})
    with pytest.raises(grpc.RpcError) as e:
        reflection_call(server)
    assert e.value.code() == grpc.StatusCode.UNIMPLEMENTED
    assert "server.reflection" in e.value.details()
    main = yaml.safe_load(server.config.read_text())
    main["server"]["reflection"] = True
    server.config.write_text(yaml.safe_dump(main))
    sighup(server)
    assert wait_for_log(server, "configuration reloaded")
    answers = reflection_call(server)
    assert b"recovery.v1.RecoveryService" in answers[0]


def test_a_reload_that_drops_auth_is_a_warning_naming_it(ops_launcher, tmp_path):
    token = tmp_path / "client.token"
    token.write_text("tok\n")
    server = ops_launcher.start(server={"auth": {"token_file": str(token)}}, token="tok")
    main = yaml.safe_load(server.config.read_text())
    del main["server"]["auth"]
    server.config.write_text(yaml.safe_dump(main))
    sighup(server)
    assert wait_for_log(server, "configuration reloaded")
    dropped = log_entries(server, "a reload removed a protection")
    assert [d["key"] for d in dropped] == ["server.auth"], dropped
    assert dropped[0]["level"] == "warn"
    assert "without a token" in dropped[0]["effect"]


def test_watch_streams_past_the_limit_are_refused(ops_launcher):
    server = ops_launcher.start(server={"max_watch_streams": 2})
    tool = unique("watched")
    req = pb.WatchBreakersRequest(tool_ids=[tool])
    streams = [server.stub.WatchBreakers(req, timeout=30) for _ in range(2)]
    for s in streams:
        next(s)  # the snapshot: the stream is open
    with pytest.raises(grpc.RpcError) as e:
        next(server.stub.WatchBreakers(req, timeout=5))
    assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "server.max_watch_streams" in e.value.details()
    streams[0].cancel()
    reopened = False
    for _ in range(50):  # the cancelled stream is closed on its worker's next wake
        try:
            third = server.stub.WatchBreakers(req, timeout=30)
            next(third)
            third.cancel()
            reopened = True
            break
        except grpc.RpcError:
            time.sleep(0.05)
    assert reopened
    streams[1].cancel()


def bound_address(port: int) -> str | None:
    """Where the listening TCP socket on `port` is bound, as `ss` shows it:
    "127.0.0.1" (also when IPv4-mapped), "0.0.0.0" for every address, or
    None while nothing listens there."""
    out = subprocess.run(["ss", "-ltnH", f"sport = :{port}"], capture_output=True,
                         text=True).stdout
    for line in out.splitlines():
        local = line.split()[3].rsplit(":", 1)[0]
        if local in ("0.0.0.0", "[::]", "*"):
            return "0.0.0.0"
        return local.strip("[]").removeprefix("::ffff:")
    return None


@pytest.mark.parametrize("server_keys, expected", [
    ({}, "127.0.0.1"),
    ({"allow_unauthenticated": True}, "0.0.0.0"),
    ({"auth": {"token_env": "RD_E2E_PROTECTED_TOKEN"}}, "0.0.0.0"),
])
def test_without_auth_only_loopback_unless_allowed(recoveryd_binary, tmp_path, monkeypatch,
                                                   server_keys, expected):
    """Protected mode: no server.auth and no server.allow_unauthenticated
    means loopback only, whatever server.listen says."""
    monkeypatch.setenv("RD_E2E_PROTECTED_TOKEN", "tok")
    port = rdtest.free_port()
    config = rdtest.write_config(tmp_path / "cfg", server=server_keys)
    log = tmp_path / "log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([str(recoveryd_binary), "--config", str(config), "--listen",
                                 f"0.0.0.0:{port}"], stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 20
        while bound_address(port) is None and time.monotonic() < deadline:
            assert proc.poll() is None, log.read_text()
            time.sleep(0.05)
        assert bound_address(port) == expected, log.read_text()
        warned = "listening on loopback only" in log.read_text()
        assert warned == (expected == "127.0.0.1"), log.read_text()
    finally:
        proc.terminate()
        assert proc.wait(timeout=15) == 0


def test_redis_refusing_the_password_is_logged_with_its_reason_and_a_gauge(
        ops_launcher, tmp_path, monkeypatch):
    """A wrong store.redis password: the service answers from local state
    (degraded), and the log and /metrics say it is the password."""
    from cluster_support import RedisProc
    redis = RedisProc(tmp_path, "redis").start()
    try:
        redis.cmd("CONFIG", "SET", "requirepass", "the-right-one")
        monkeypatch.setenv("RD_E2E_REDIS_PASSWORD", "a-wrong-one\n")
        port = rdtest.free_port()
        server = ops_launcher.start(
            store={"backend": "redis",
                   "redis": {"address": redis.address, "password_env": "RD_E2E_REDIS_PASSWORD",
                             "key_prefix": unique("auth") + ":"}},
            top={"metrics": {"listen": f"127.0.0.1:{port}"}})
        try:  # a call makes the store connect; it is answered from local state
            server.stub.Decide(pb.DecideRequest(tool_id="t", attempt=1,
                                                error=pb.ToolError(message="timeout")), timeout=5)
        except grpc.RpcError:
            pass
        assert wait_for_log(server, "Redis refuses the configured password", timeout=10), \
            server.log_text()
        refused = log_entries(server,
                              "Redis refuses the configured password (store.redis.password_*)")
        assert "AUTH refused: WRONGPASS" in refused[0]["reason"], refused
        assert "a-wrong-one" not in server.log_text(10**7)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
            text = resp.read().decode()
        assert "recoveryd_redis_auth_refused 1" in text
    finally:
        redis.stop()


def served_not_after(port: int, ca: str) -> str:
    """notAfter of the certificate a new TLS handshake with the server gets."""
    import ssl
    import socket
    ctx = ssl.create_default_context(cafile=ca)
    ctx.set_alpn_protocols(["h2"])
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        with ctx.wrap_socket(raw, server_hostname="localhost") as tls:
            return tls.getpeercert()["notAfter"]


def scrape_metric(port: int, name: str) -> float | None:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
        for line in resp.read().decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
    return None


def test_certificate_rotation_is_picked_up_and_expiry_is_watched(ops_launcher, tmp_path):
    """The certificate files are replaced (as cert-manager or a Secret
    update does): new connections get the new certificate without a
    restart; the expiry metric follows, and a certificate that expires
    within 14 days is warned about."""
    from ops_support import make_certs
    certs = make_certs(tmp_path / "certs")  # valid for 2 days
    live = tmp_path / "live"
    live.mkdir()
    for name in ("server.crt", "server.key"):
        (live / name).write_bytes(Path(certs[name]).read_bytes())
    mport = rdtest.free_port()
    server = ops_launcher.start(
        server={"tls": {"cert_file": str(live / "server.crt"),
                        "key_file": str(live / "server.key")}},
        top={"metrics": {"listen": f"127.0.0.1:{mport}"}}, tls={"ca": certs["ca.crt"]})
    assert wait_for_log(server, "TLS certificate expires soon"), server.log_text()
    soon = log_entries(server, "the server's TLS certificate expires soon; replace "
                               "server.tls.cert_file (picked up without a restart)")[0]
    assert soon["days_left"] in ("1", "2"), soon
    before = served_not_after(server.port, certs["ca.crt"])
    expiry_before = scrape_metric(mport, "recoveryd_tls_certificate_expiry_timestamp_seconds")
    assert expiry_before == float(soon["not_after_unix"])

    # a 30-day certificate from the same CA, moved into place
    d = Path(certs["ca.crt"]).parent
    subprocess.run(["openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.crt",
                    "-CAkey", "ca.key", "-CAcreateserial", "-days", "30", "-out", "new.crt",
                    "-extfile", "san.cnf"], cwd=d, check=True, capture_output=True)
    (live / "server.crt.tmp").write_bytes((d / "new.crt").read_bytes())
    (live / "server.crt.tmp").replace(live / "server.crt")
    time.sleep(1.2)  # the files are looked at once a second at most
    after = served_not_after(server.port, certs["ca.crt"])
    assert after != before
    assert wait_for_log(server, "TLS certificate reloaded"), server.log_text()
    deadline = time.monotonic() + 5
    while scrape_metric(mport, "recoveryd_tls_certificate_expiry_timestamp_seconds") == \
            expiry_before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert scrape_metric(mport, "recoveryd_tls_certificate_expiry_timestamp_seconds") > \
        expiry_before + 20 * 86400
    # calls still work over a fresh connection with the new certificate
    channel = server.new_channel(own_connection=True)
    pb_grpc.RecoveryServiceStub(channel).Classify(
        pb.ClassifyRequest(tool_id="t", error=pb.ToolError(message="x")), timeout=5)
    channel.close()


def test_unsent_answer_limit_counts_only_answers_still_waiting(ops_launcher):
    """server.max_unsent_answer_bytes holds answers clients have not taken
    yet; answers that were read leave it. Twenty ~130 KB lists in turn, 2.5
    MiB in all, pass a 1 MiB limit."""
    server = ops_launcher.start(server={"max_unsent_answer_bytes": 1048576})
    futures = [server.stub.RecordOutcome.future(pb.RecordOutcomeRequest(
        tool_id=f"listed-{i:04d}-" + "x" * 100, success=True, attempt=1), timeout=10)
        for i in range(1000)]
    for f in futures:
        f.result()
    for _ in range(20):
        answer = server.stub.GetBreakerState(pb.GetBreakerStateRequest(), timeout=10)
        assert len(answer.breakers) >= 1000


def redis_commands(redis) -> int:
    info = redis.cmd("INFO", "stats")
    text = info.decode() if isinstance(info, bytes) else str(info)
    for line in text.splitlines():
        if line.startswith("total_commands_processed:"):
            return int(line.split(":")[1])
    raise AssertionError(f"no total_commands_processed in {text[:200]!r}")


def test_scrape_with_the_shared_store_costs_no_redis_command_per_tool(ops_launcher, tmp_path):
    """With the Redis store a scrape reads the breaker snapshot
    (metrics.breaker_refresh_ms): its cost does not grow with the tools."""
    from cluster_support import RedisProc
    redis = RedisProc(tmp_path, "redis").start()
    try:
        port = rdtest.free_port()
        server = ops_launcher.start(
            store={"backend": "redis",
                   "redis": {"address": redis.address, "key_prefix": unique("scrape") + ":"}},
            top={"metrics": {"listen": f"127.0.0.1:{port}", "breaker_refresh_ms": 2000}})
        futures = [server.stub.RecordOutcome.future(pb.RecordOutcomeRequest(
            tool_id=f"scraped-{i:04d}", success=True, attempt=1), timeout=10)
            for i in range(2000)]
        for f in futures:
            f.result()
        time.sleep(4.5)  # a refresh has listed them
        # The background refresh lists every tool (about 1,200 commands for
        # these 2,000) and on a loaded machine can take much of its period:
        # a scrape that costs nothing per tool is seen as such in at least
        # one of several windows spread over the period.
        for attempt in range(10):
            before = redis_commands(redis)
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
                text = resp.read().decode()
            spent = redis_commands(redis) - before - 1  # the INFO itself
            if spent < 50:
                break  # a background refresh may have run in between: measure again
            time.sleep(0.37)
        assert spent < 50, spent
        assert 'recoveryd_breakers{state="closed"} 2000' in text
        # a change shows at the next refresh
        for _ in range(6):
            server.stub.Decide(pb.DecideRequest(tool_id="scraped-0001", attempt=1,
                                                error=pb.ToolError(message="connection timeout")),
                               timeout=5)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
                if 'recoveryd_breaker_state{tool="scraped-0001",state="open"} 1' in resp.read().decode():
                    break
            time.sleep(0.2)
        else:
            raise AssertionError("the opened breaker did not show within 5 s")
    finally:
        redis.stop()
