"""TLS, mutual TLS and the bearer token: accepted with the right
credentials, refused without them. Certificates are made at test time."""
import grpc
import pytest

from ops_support import OpsRecoveryd, make_certs, ops_launcher  # noqa: F401
from rdtest import classify, network_timeout, pb_grpc


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return make_certs(tmp_path_factory.mktemp("certs"))


def classify_over(channel):
    stub = pb_grpc.RecoveryServiceStub(channel)
    return classify(stub, "tls_tool", network_timeout(), timeout=5)


def refused(channel):
    with pytest.raises(grpc.RpcError) as e:
        classify_over(channel)
    channel.close()
    return e.value.code()


def test_tls_accepted_with_the_right_ca(ops_launcher, certs):
    server = ops_launcher.start(
        server={"tls": {"cert_file": certs["server.crt"], "key_file": certs["server.key"]}},
        tls={"ca": certs["ca.crt"]})
    assert classify_over(server.channel).retryability


def test_tls_refused_with_another_ca_or_plaintext(ops_launcher, certs):
    server = ops_launcher.start(
        server={"tls": {"cert_file": certs["server.crt"], "key_file": certs["server.key"]}},
        tls={"ca": certs["ca.crt"]})
    assert refused(server.new_channel(tls={"ca": certs["other_ca.crt"]})) == \
        grpc.StatusCode.UNAVAILABLE
    plain = grpc.insecure_channel(server.address)
    assert refused(plain) == grpc.StatusCode.UNAVAILABLE


def test_mtls_requires_a_client_certificate(ops_launcher, certs):
    server = ops_launcher.start(
        server={"tls": {"cert_file": certs["server.crt"], "key_file": certs["server.key"],
                        "client_ca_file": certs["ca.crt"]}},
        tls={"ca": certs["ca.crt"], "cert": certs["client.crt"], "key": certs["client.key"]})
    assert classify_over(server.channel).retryability
    assert refused(server.new_channel(tls={"ca": certs["ca.crt"]})) == \
        grpc.StatusCode.UNAVAILABLE


def test_token_accepted_and_refused(ops_launcher, tmp_path):
    token = tmp_path / "client.token"
    token.write_text("client-secret-1\n")
    server = ops_launcher.start(server={"auth": {"token_file": str(token)}},
                                token="client-secret-1")
    assert classify_over(server.channel).retryability
    for wrong in ("", "client-secret-2", "client-secret-1x"):
        channel = server.new_channel(token=wrong) if wrong else grpc.insecure_channel(
            server.address)
        code = refused(channel)
        assert code == grpc.StatusCode.UNAUTHENTICATED, (wrong, code)
    assert "client-secret-1" not in server.log_text()


def test_token_from_environment_over_tls(ops_launcher, certs, monkeypatch):
    monkeypatch.setenv("RD_E2E_TOKEN", "env-secret")
    server = ops_launcher.start(
        server={"tls": {"cert_file": certs["server.crt"], "key_file": certs["server.key"]},
                "auth": {"token_env": "RD_E2E_TOKEN"}},
        tls={"ca": certs["ca.crt"]}, token="env-secret")
    assert classify_over(server.channel).retryability
    assert refused(server.new_channel(token="nope")) == grpc.StatusCode.UNAUTHENTICATED
