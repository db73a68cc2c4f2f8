"""deploy/grafana/recoveryd.json: a well-formed dashboard whose queries use
only metric families and labels recoveryd exports. The names are checked
against server/ops/metrics*.c, and, when the binary serves metrics, against
a live scrape of a recoveryd that has answered a few calls."""
from __future__ import annotations

import json
import re
import sys
import time
import urllib.request

import pytest
import yaml

import deployutil as du

DASHBOARD = du.REPO / "deploy/grafana/recoveryd.json"
# Labels Prometheus adds at scrape time, and the histogram bucket label.
SCRAPE_LABELS = {"job", "instance", "le"}


def dashboard() -> dict:
    return json.loads(DASHBOARD.read_text())


# Ours, and the gRPC ecosystem's server metrics that recoveryd exports under
# their standard names.
OUR_NAME = r"(?:recoveryd|grpc_server)_\w+"


def exprs() -> list[str]:
    return [t["expr"] for p in dashboard()["panels"] for t in p.get("targets", [])]


def family(metric: str) -> str:
    return re.sub(r"_(bucket|sum|count)$", "", metric)


def used_families() -> set[str]:
    return {family(m) for e in exprs() for m in re.findall(r"\b" + OUR_NAME, e)}


def used_labels() -> dict[str, set[str]]:
    """{family: labels the dashboard groups or filters it by}."""
    out: dict[str, set[str]] = {}
    for e in exprs():
        groups = {lbl.strip() for g in re.findall(r"by \(([^)]*)\)", e) for lbl in g.split(",")}
        for metric, matchers in re.findall(r"\b(" + OUR_NAME + r")(?:\{([^}]*)\})?", e):
            labels = set(re.findall(r"(\w+)\s*[=!]~?", matchers or "")) | groups
            out.setdefault(family(metric), set()).update(labels - SCRAPE_LABELS)
    return out


def test_dashboard_is_well_formed():
    d = dashboard()
    assert d["uid"] and d["title"]
    ids = [p["id"] for p in d["panels"]]
    assert len(ids) == len(set(ids)), "panel ids repeat"
    variables = {v["name"] for v in d["templating"]["list"]}
    assert {"datasource", "job", "tool"} <= variables
    for p in d["panels"]:
        if p["type"] == "row":
            continue
        assert p["datasource"]["uid"] == "${datasource}", p["title"]
        assert p["targets"], p["title"]
        for t in p["targets"]:
            assert t["expr"].count("(") == t["expr"].count(")"), t["expr"]
            assert 'job=~"$job"' in t["expr"], f"{p['title']}: ignores the job variable"
    positions = [(p["gridPos"]["x"], p["gridPos"]["y"]) for p in d["panels"]]
    assert len(positions) == len(set(positions)), "panels overlap"


def test_every_metric_is_one_recoveryd_exports():
    source = "\n".join(p.read_text() for p in (du.REPO / "server/ops").glob("*.c"))
    exported = set(re.findall(r'"(' + OUR_NAME + ')', source))
    if not exported:
        pytest.skip("server/ops exports no recoveryd_* metric yet")
    missing = used_families() - exported
    assert not missing, f"the dashboard queries metrics recoveryd does not export: {missing}"


def test_metrics_and_labels_match_a_live_scrape(recoveryd_binary, tmp_path):
    sys.path.insert(0, str(du.REPO / "tests/e2e"))
    import rdtest

    metrics_port = rdtest.free_port()
    config = rdtest.write_config(tmp_path / "cfg")
    cfg = yaml.safe_load(config.read_text())
    cfg["metrics"] = {"listen": f"127.0.0.1:{metrics_port}"}
    config.write_text(yaml.safe_dump(cfg, sort_keys=False))
    rc, out = rdtest.run_check_config(recoveryd_binary, config)
    if rc != 0 and "metrics: unknown key" in out:
        pytest.skip(f"this recoveryd has no metrics endpoint yet: {out.strip()}")
    assert rc == 0, out
    server = rdtest.Recoveryd(recoveryd_binary, config, tmp_path / "log").start()
    try:
        err = rdtest.network_timeout()
        for attempt in range(1, 7):
            rdtest.decide(server.stub, "dash_tool", err, attempt=attempt)
        rdtest.record(server.stub, "dash_tool", success=True, attempt=2)
        rdtest.breaker(server.stub, "dash_tool")
        text = ""
        for _ in range(50):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics",
                                            timeout=5) as r:
                    text = r.read().decode()
                break
            except OSError:
                time.sleep(0.1)
    finally:
        server.stop()
    labels: dict[str, set[str]] = {}
    for line in text.splitlines():
        m = re.match(r"(" + OUR_NAME + r")(?:\{(.*)\})? ", line)
        if m:
            labels.setdefault(family(m.group(1)), set()).update(
                re.findall(r'(\w+)="', m.group(2) or ""))
    missing = used_families() - set(labels)
    assert not missing, f"families missing from the scrape: {missing}\n{text}"
    for fam, wanted in used_labels().items():
        assert wanted <= labels[fam], f"{fam}: dashboard uses labels {wanted - labels[fam]} " \
                                      f"the scrape does not have ({labels[fam]})"
