"""Hostile HTTP/2 peers against a fresh recoveryd each (memory store,
server.auth on), while a legitimate executor calls Decide throughout; the
bounds of issue 39 (docs/SECURITY.md has the figures and what the
gRPC core of Debian, 1.51, cannot bound on its own):

* peak resident growth <= 256 MiB during an HTTP/2 attack, <= 64 MiB for
  the gzip bomb (answered within 1 s);
* the executor >= 99 % successful while the attacker is at work and in the
  3 s after it left; the process alive;
* resident size back within 64 MiB of the start 10 s after the attacker
  left.

Memory is measured on the binary under test; run it on a Release build
(the default, build-rel/): the sanitizers' allocator keeps freed memory in
quarantine and says nothing about the service's."""
import pytest

import hostile_support as hs

TOKEN = "hostile-suite-token"
HTTP2_PEAK_MIB = 256
BOMB_PEAK_MIB = 64
RETURN_MIB = 64


def secured_server(fresh_server, tmp_path, **server):
    token_file = tmp_path / "client-token"
    token_file.write_text(TOKEN + "\n")
    return fresh_server(server={"auth": {"token_file": str(token_file)}, **server})


def assert_survived(f: dict, peak_mib: int | None = HTTP2_PEAK_MIB) -> None:
    assert f["alive"], f
    assert f["executor_calls"] > 0 and f["after_calls"] > 0, f
    assert f["executor_success"] >= 0.99, f
    assert f["after_success"] >= 0.99, f
    assert f["recovered_success"] >= 0.99, f
    assert f["rss_after_growth_mib"] <= RETURN_MIB, f
    if peak_mib is not None:
        assert f["rss_peak_growth_mib"] <= peak_mib, f


def assert_survived_past_libgrpc(f: dict, why: str) -> None:
    """For the attacks libgrpc 1.51 gives no handle on: what holds is
    asserted (alive, the memory freed and given back, if later than 10 s,
    and an executor served again then); the peak, the 10-s return and the
    executor's share during the attack and in the 3 s after are reported,
    and where they are past the bounds the test says so as an expected
    failure with the figures (a libgrpc that meets them makes it pass)."""
    assert f["alive"], f
    assert f["rss_returned_after_s"] is not None, f
    assert f["recovered_calls"] > 0 and f["recovered_success"] >= 0.99, f
    if f["rss_peak_growth_mib"] > HTTP2_PEAK_MIB or f["rss_after_growth_mib"] > RETURN_MIB \
            or f["executor_success"] < 0.99 or f["after_success"] < 0.99:
        pytest.xfail(f"peak +{f['rss_peak_growth_mib']} MiB, back after "
                     f"{f['rss_returned_after_s']} s, executor {f['executor_success']:.1%} "
                     f"during the attack and {f['after_success']:.1%} in the 3 s after: "
                     f"{why}; the front proxy of deploy/envoy bounds it (docs/SECURITY.md)")


def test_gzip_bomb_is_refused_before_it_is_inflated(fresh_server, tmp_path, figures):
    """The default: identity only; a compressed request is refused
    (UNIMPLEMENTED) as soon as its headers say gzip."""
    server = secured_server(fresh_server, tmp_path)
    f = hs.attack(server, "gzip_bomb", 10, token=TOKEN, connections=3)
    figures.record("3 x 1 MB of gzip inflating to 1000 MiB, to Health/Check", **f)
    assert_survived(f, BOMB_PEAK_MIB)
    calls = f["attack"]["calls"]
    assert len(calls) == 3, f
    for call in calls:
        assert call["status"] == "12", call  # UNIMPLEMENTED: gzip is not accepted
        assert call["seconds"] <= 1.0, call


def test_gzip_bomb_stops_inflating_at_the_ceiling(fresh_server, tmp_path, figures):
    """server.accept_compressed: the request is inflated by recoveryd, which
    stops at server.max_receive_bytes (RESOURCE_EXHAUSTED)."""
    server = secured_server(fresh_server, tmp_path, accept_compressed=True)
    f = hs.attack(server, "gzip_bomb", 10, token=TOKEN, connections=3)
    figures.record("3 bombs, accept_compressed: true", **f)
    assert_survived(f, BOMB_PEAK_MIB)
    for call in f["attack"]["calls"]:
        assert call["status"] == "8", call  # RESOURCE_EXHAUSTED
        assert "server.max_receive_bytes" in call["message"], call
        assert call["seconds"] <= 1.0, call


def test_unread_answers_are_bounded(fresh_server, tmp_path, figures):
    """2,000 GetBreakerState calls for 5,000 tracked tools on a connection
    whose window is 0: ~600 KB answers that can never be sent."""
    server = secured_server(fresh_server, tmp_path)
    hs.track_tools(server, 5000, TOKEN)
    f = hs.attack(server, "unread_streams", 6, token=TOKEN)
    figures.record("2000 unread GetBreakerState streams, 5000 tools", **f)
    assert_survived(f)


def test_half_sent_streams_within_the_stream_limit(fresh_server, tmp_path, figures):
    """A peer that acknowledges SETTINGS is held to max_concurrent_streams."""
    server = secured_server(fresh_server, tmp_path)
    f = hs.attack(server, "half_sent", 4, token=TOKEN, ack="")
    figures.record("half-sent streams, SETTINGS acknowledged", **f)
    assert_survived(f)
    assert f["attack"]["refused"] > 0 or f["attack"]["connections_closed"] > 0, f


def test_half_sent_streams_settings_never_acknowledged(fresh_server, tmp_path, figures):
    server = secured_server(fresh_server, tmp_path)
    f = hs.attack(server, "half_sent", 4, token=TOKEN, extra_wait=40)
    figures.record("half-sent streams, SETTINGS never acknowledged", **f)
    assert_survived_past_libgrpc(f, "libgrpc 1.51 applies max_concurrent_streams only once the "
                                    "peer has acknowledged it, and has no SETTINGS timeout")


def test_rapid_reset(fresh_server, tmp_path, figures):
    """HEADERS + DATA + RST_STREAM(CANCEL) in a loop for 5 s (CVE-2023-44487)."""
    server = secured_server(fresh_server, tmp_path)
    f = hs.attack(server, "rapid_reset", 5, token=TOKEN, extra_wait=40)
    figures.record("rapid reset, 5 s", **f)
    assert_survived_past_libgrpc(f, "libgrpc 1.51 frees a reset stream's slot at once but "
                                    "keeps its call until the application has taken it, and "
                                    "reads on")
