"""Server reflection: grpcurl lists, describes and calls the API without
the .proto files."""
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ops_support import ops_launcher  # noqa: F401


def find_grpcurl():
    """The pinned grpcurl that scripts/install-deps.sh --test builds into
    build-tools/bin, else one on PATH."""
    pinned = Path(__file__).resolve().parents[2] / "build-tools" / "bin" / "grpcurl"
    return str(pinned) if pinned.is_file() else shutil.which("grpcurl")


GRPCURL = find_grpcurl()
pytestmark = pytest.mark.skipif(
    GRPCURL is None,
    reason="grpcurl not found in build-tools/bin or on PATH (scripts/install-deps.sh --test)")


def grpcurl(server, *args, data=None):
    cmd = [GRPCURL, "-plaintext", "-max-time", "10"]
    if data is not None:
        cmd += ["-d", json.dumps(data)]
    cmd += [server.address, *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, f"{cmd}: {proc.stderr}"
    return proc.stdout


def test_list_services(ops_launcher):
    server = ops_launcher.start()
    services = grpcurl(server, "list").split()
    assert "recovery.v1.RecoveryService" in services
    assert "recovery.v1.AdminService" in services
    methods = grpcurl(server, "list", "recovery.v1.RecoveryService").split()
    assert "recovery.v1.RecoveryService.Decide" in methods
    assert "recovery.v1.RecoveryService.WatchBreakers" in methods


def test_describe_service_and_message(ops_launcher):
    server = ops_launcher.start()
    text = grpcurl(server, "describe", "recovery.v1.RecoveryService")
    assert "rpc Classify" in text and "stream .recovery.v1.BreakerChange" in text
    text = grpcurl(server, "describe", "recovery.v1.ToolError")
    assert "retry_after_ms" in text
    text = grpcurl(server, "describe", "recovery.v1.ForceBreakerRequest")
    assert "ttl_ms" in text


def test_every_served_service_is_listed(ops_launcher):
    """Health and reflection are listed beside ours, so a client that
    describes everything it lists (grpcurl, Postman, grpcui) finds them all."""
    server = ops_launcher.start()
    services = grpcurl(server, "list").split()
    for name in ("grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection",
                 "grpc.reflection.v1alpha.ServerReflection"):
        assert name in services
    for name in services:
        grpcurl(server, "describe", name)


def test_health_check_without_proto_files(ops_launcher):
    server = ops_launcher.start()
    out = json.loads(grpcurl(server, "grpc.health.v1.Health/Check", data={"service": ""}))
    assert out == {"status": "SERVING"}


def test_describe_shows_the_proto_comments(ops_launcher):
    server = ops_launcher.start()
    text = grpcurl(server, "describe", "recovery.v1.RecoveryService.Decide")
    assert "// Admission check" in text
    text = grpcurl(server, "describe", "recovery.v1.PlanStep")
    assert "// One tool of the turn's plan" in text


def test_call_classify_through_reflection(ops_launcher):
    server = ops_launcher.start()
    out = grpcurl(server, "recovery.v1.RecoveryService/Classify",
                  data={"tool_id": "search", "error": {"message": "connection reset by peer"}})
    result = json.loads(out)
    assert result["classification"]["retryability"] == "RETRYABILITY_TRANSIENT"


def test_unknown_symbol_is_reported(ops_launcher):
    server = ops_launcher.start()
    proc = subprocess.run([GRPCURL, "-plaintext", server.address, "describe", "no.Such"],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode != 0
    assert "not found" in proc.stderr.lower()
