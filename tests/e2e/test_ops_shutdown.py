"""Graceful shutdown under load: NOT_SERVING, drain delay, stop accepting,
in-flight calls finish; no call that the server took fails."""
import signal
import time

from ops_support import Load, ops_launcher  # noqa: F401
from rdtest import step

PLAN = [step(f"tool_{i}", [f"tool_{i - 1}"] if i else [], optional=i % 2 == 0)
        for i in range(200)]
# A call the server had not taken yet when it stopped accepting may be
# refused (UNAVAILABLE, or CANCELLED by the gRPC core for a call it had
# received but not handed over); nothing else is acceptable.
REFUSED = {"UNAVAILABLE", "CANCELLED"}


def test_sigterm_under_load_with_drain_delay(ops_launcher):
    server = ops_launcher.start(server={"drain_delay_ms": 500, "shutdown_grace_ms": 5000})
    with Load(server, n_threads=16, plan=PLAN) as load:
        time.sleep(0.7)
        signalled = time.monotonic()
        server.send_signal(signal.SIGTERM)
        rc = server.wait(timeout=15)
        exited = time.monotonic()
    assert rc == 0, server.log_text()
    results = load.results
    assert load.codes() <= {"OK"} | REFUSED, load.codes()
    # during the drain delay the server still answers every call
    in_drain = [r for r in results if signalled < r[0] and r[1] < signalled + 0.4]
    assert in_drain and all(code == "OK" for _, _, code in in_drain)
    in_flight = [r for r in results if r[0] < signalled <= r[1]]
    assert in_flight and all(code == "OK" for _, _, code in in_flight)
    assert exited - signalled < 5.0
    log = server.log_text()
    assert "stopped" in log and "calls cancelled" not in log
