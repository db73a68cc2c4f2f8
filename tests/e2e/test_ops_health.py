"""grpc.health.v1: SERVING once started, NOT_SERVING as the first step of
shutdown (Watch streams are told before they end), unknown services."""
import signal
import threading
import time

import grpc
import pytest

from ops_support import health_pb2, health_pb2_grpc, ops_launcher  # noqa: F401

pytestmark = pytest.mark.skipif(health_pb2 is None,
                                reason="grpcio-health-checking is not installed")

SERVING = 1
NOT_SERVING = 2
SERVICE_UNKNOWN = 3


def check(server, service):
    stub = health_pb2_grpc.HealthStub(server.channel)
    return stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=5).status


def test_check_serving_for_known_services(ops_launcher):
    server = ops_launcher.start()
    assert check(server, "") == SERVING
    assert check(server, "recovery.v1.RecoveryService") == SERVING


def test_check_unknown_service_is_not_found(ops_launcher):
    server = ops_launcher.start()
    with pytest.raises(grpc.RpcError) as e:
        check(server, "no.such.Service")
    assert e.value.code() == grpc.StatusCode.NOT_FOUND


def test_watch_unknown_service_says_service_unknown(ops_launcher):
    server = ops_launcher.start()
    stub = health_pb2_grpc.HealthStub(server.channel)
    stream = stub.Watch(health_pb2.HealthCheckRequest(service="no.such.Service"), timeout=5)
    assert next(stream).status == SERVICE_UNKNOWN
    stream.cancel()


def test_health_needs_no_token(ops_launcher, tmp_path):
    """Probes (kubelet, load balancers) carry no credentials."""
    token_file = tmp_path / "token"
    token_file.write_text("sekrit\n")
    server = ops_launcher.start(server={"auth": {"token_file": str(token_file)}},
                               token="sekrit")
    plain = server.new_channel(token="")
    stub = health_pb2_grpc.HealthStub(plain)
    assert stub.Check(health_pb2.HealthCheckRequest(), timeout=5).status == SERVING
    plain.close()


def test_sigterm_turns_watch_not_serving_then_ends_it(ops_launcher):
    """SIGTERM: Watch streams receive NOT_SERVING first (during the drain
    delay Check answers NOT_SERVING too), then the stream ends, and the
    process exits 0."""
    server = ops_launcher.start(server={"drain_delay_ms": 800})
    channel = server.new_channel(own_connection=True)
    stub = health_pb2_grpc.HealthStub(channel)
    stream = stub.Watch(health_pb2.HealthCheckRequest(service=""), timeout=20)
    seen = [next(stream).status]
    assert seen == [SERVING]

    def read_rest():
        try:
            for msg in stream:
                seen.append(msg.status)
        except grpc.RpcError as e:
            seen.append(e.code().name)

    reader = threading.Thread(target=read_rest)
    reader.start()
    server.send_signal(signal.SIGTERM)
    time.sleep(0.3)  # inside the drain delay: still answering, NOT_SERVING
    assert check(server, "") == NOT_SERVING
    reader.join(timeout=10)
    assert not reader.is_alive()
    assert seen[1] == NOT_SERVING, seen
    assert seen[-1] in ("UNAVAILABLE", "CANCELLED"), seen
    assert server.wait(timeout=10) == 0, server.log_text()
    channel.close()
