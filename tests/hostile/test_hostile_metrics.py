"""Slowloris on the metrics endpoint: 300 connections from one client
(127.0.0.2), each sending a header line now and then, while the scraper
(127.0.0.1) asks for /metrics and /healthz (the image's HEALTHCHECK). Every
scrape must be answered, within 2 s."""
import subprocess
import sys
import time
import urllib.request

import rdtest
from hostile_support import HERE


def fetch(url: str, token: str | None = None) -> tuple[int, float]:
    req = urllib.request.Request(url)
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    t0 = time.monotonic()
    try:
        with urllib.request.urlopen(req, timeout=2) as resp:
            resp.read()
            return resp.status, time.monotonic() - t0
    except urllib.error.HTTPError as e:
        return e.code, time.monotonic() - t0
    except OSError:
        return 0, time.monotonic() - t0


def test_slowloris_does_not_blind_metrics_or_healthz(fresh_server, tmp_path, figures):
    port = rdtest.free_port()
    token_file = tmp_path / "metrics-token"
    token_file.write_text("scrape-token\n")
    server = fresh_server(metrics={"listen": f"127.0.0.1:{port}",
                                   "auth": {"token_file": str(token_file)}})
    base = f"http://127.0.0.1:{port}"
    assert fetch(base + "/healthz")[0] == 200
    attacker = subprocess.Popen(
        [sys.executable, str(HERE / "attacks.py"), "slowloris", f"127.0.0.1:{port}", "8",
         "--connections", "300"], stdout=subprocess.PIPE, text=True)
    time.sleep(2.0)  # the connections are open and dribbling
    results = []
    for _ in range(5):
        results.append(("metrics",) + fetch(base + "/metrics", "scrape-token"))
        results.append(("healthz",) + fetch(base + "/healthz"))
        time.sleep(0.5)
    unauthorized = fetch(base + "/metrics")[0]
    out, _ = attacker.communicate(timeout=60)
    figures.record("slowloris, 300 connections from 127.0.0.2", attack=out.strip(),
                   scrapes=[(k, s, round(t, 3)) for k, s, t in results])
    assert all(status == 200 for _, status, _ in results), results
    assert all(t <= 2.0 for _, _, t in results), results
    assert unauthorized == 401
    assert server.proc.poll() is None
