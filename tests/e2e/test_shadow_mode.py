"""Shadow mode (docs/OPERATIONS.md, "Shadow mode"): a tool whose manifest,
or the defaults, say `mode: shadow` is decided and recorded exactly as in
enforce mode, while the executor gets the permissive answer together with
what enforce mode answers; switching modes is a reload that keeps every
breaker and trace."""
import re
import urllib.request

import yaml

from ops_support import ops_launcher, sighup, wait_for_log  # noqa: F401
from rdtest import (admit, breaker, decide, expect_action, expect_state, network_timeout, pb,
                    run_check_config, turn_trace, unique)
import rdtest


def open_breaker(server, tool):
    for _ in range(5):
        decide(server.stub, tool, network_timeout(), attempt=1)
    expect_state(breaker(server.stub, tool), pb.BREAKER_STATUS_OPEN)


def with_metrics(config):
    port = rdtest.free_port()
    main = yaml.safe_load(config.read_text())
    main["metrics"] = {"listen": f"127.0.0.1:{port}"}
    config.write_text(yaml.safe_dump(main, sort_keys=False))
    return port


def metric(port, name, **labels):
    """The sample's value, 0 when it is not there."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
        text = resp.read().decode()
    want = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    for line in text.splitlines():
        m = re.fullmatch(r"(\w+)(?:\{(.*)\})? (\S+)", line)
        if m and m.group(1) == name and ",".join(sorted((m.group(2) or "").split(","))) == want:
            return float(m.group(3))
    return 0.0


def set_default_mode(config, mode):
    main = yaml.safe_load(config.read_text())
    main["defaults"]["mode"] = mode
    config.write_text(yaml.safe_dump(main, sort_keys=False))


def test_manifest_in_shadow_mode_answers_permissively(ops_launcher):
    shadowed, enforced = "shadowed_search", "enforced_search"
    config = ops_launcher.config(tools=[{"id": shadowed, "mode": "shadow"}, {"id": enforced}])
    port = with_metrics(config)
    server = ops_launcher.start(config=config)
    for tool in (shadowed, enforced):
        open_breaker(server, tool)

    expect_action(admit(server.stub, enforced), pb.ACTION_FAIL_FAST)
    turn = unique("shadow-turn")
    d = admit(server.stub, shadowed, turn_id=turn)
    expect_action(d, pb.ACTION_PROCEED)
    assert d.shadow_action == pb.ACTION_FAIL_FAST, d
    assert d.shadow_reason == "circuit open", d
    assert d.reason.startswith("shadow mode: enforce mode answers fail_fast"), d.reason
    assert not d.HasField("classification"), d  # no "Tool Not Called" text
    # Recorded as enforce mode records it: the breaker stays open, the turn
    # keeps the fail-fast decision, the metrics count it.
    expect_state(d.breaker, pb.BREAKER_STATUS_OPEN)
    events = turn_trace(server.stub, turn).events
    assert [e.decision for e in events if e.event_type == "FailFast"] == ["fail_fast"], events

    # A failed attempt on the open breaker is retried while attempts remain.
    r = decide(server.stub, shadowed, network_timeout(), attempt=2, elapsed_ms=150)
    expect_action(r, pb.ACTION_RETRY)
    assert r.shadow_action == pb.ACTION_FAIL_FAST and 180 <= r.delay_ms <= 220, r
    last = decide(server.stub, shadowed, network_timeout(), attempt=5, elapsed_ms=150)
    expect_action(last, pb.ACTION_FAIL_FAST)  # max_attempts spent: nothing to relax

    # The failure that opened the breaker, the admission and attempt 2 were
    # relaxed; attempt 5 was not.
    assert metric(port, "recoveryd_tool_shadow_refusals_total", tool=shadowed) == 3
    assert metric(port, "recoveryd_tool_shadow_refusals_total", tool=enforced) == 0
    # Every decision counted as enforce mode made it: each tool's opening
    # failure and admission, and the shadowed tool's attempts 2 and 5.
    assert metric(port, "recoveryd_decisions_total", action="fail_fast") == 6


def test_reload_switches_modes_and_keeps_state(ops_launcher):
    tool = "switched_api"
    config = ops_launcher.config(tools=[{"id": tool}])
    server = ops_launcher.start(config=config)
    turn = unique("reload-turn")
    open_breaker(server, tool)
    before = admit(server.stub, tool, turn_id=turn)
    expect_action(before, pb.ACTION_FAIL_FAST)
    assert before.shadow_action == pb.ACTION_UNSPECIFIED and before.shadow_reason == ""

    log_at = len(server.log_text(10**7))
    set_default_mode(config, "shadow")  # the manifest names no mode: it follows the defaults
    sighup(server)
    assert wait_for_log(server, "configuration reloaded", after=log_at), server.log_text()
    shadow = admit(server.stub, tool, turn_id=turn)
    expect_action(shadow, pb.ACTION_PROCEED)
    assert shadow.shadow_action == pb.ACTION_FAIL_FAST
    state = breaker(server.stub, tool)
    expect_state(state, pb.BREAKER_STATUS_OPEN)
    assert (state.opened_at_ms, state.opens_total, state.generation) == (
        before.breaker.opened_at_ms, before.breaker.opens_total, before.breaker.generation)

    log_at = len(server.log_text(10**7))
    set_default_mode(config, "enforce")
    sighup(server)
    assert wait_for_log(server, "configuration reloaded", after=log_at), server.log_text()
    expect_action(admit(server.stub, tool, turn_id=turn), pb.ACTION_FAIL_FAST)
    # The turn kept every decision across both reloads.
    decisions = [e.decision for e in turn_trace(server.stub, turn).events
                 if e.event_type == "FailFast"]
    assert decisions == ["fail_fast"] * 3, decisions


def test_unknown_mode_is_a_file_line_error(ops_launcher, recoveryd_binary):
    config = ops_launcher.config(tools=[{"id": "odd_tool", "mode": "maybe"}])
    code, out = run_check_config(recoveryd_binary, config)
    assert code != 0
    assert re.search(r"odd_tool\.yaml:\d+: tool\.mode: unknown mode \"maybe\" "
                     r"\(enforce \| shadow\)", out), out
