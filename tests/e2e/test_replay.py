"""recoveryctl export / replay (docs/RECOVERYCTL.md): a turn recorded by a
real recoveryd, exported as JSON lines and replayed through the decision
engine under a changed configuration, with the diff asserted."""
import json

import pytest

import rdtest
from rdtest import pb
from test_recoveryctl import Ctl, recoveryctl_binary  # noqa: F401

TOOL = "replay_api"


@pytest.fixture
def recorded(launcher, recoveryctl_binary, tmp_path):
    """One turn on a server with the test defaults (breaker opens after 5
    transient failures, 5 attempts): attempts 1-4 RETRY, attempt 5 opens the
    breaker (FAIL_FAST), then an admission check is refused (FAIL_FAST)."""
    server = launcher.start()
    turn = rdtest.unique("replay-turn")
    answers = []
    for attempt in range(1, 6):
        d = rdtest.decide(server.stub, TOOL, rdtest.network_timeout(), attempt=attempt,
                          turn_id=turn)
        answers.append(rdtest.action_name(d.action))
    answers.append(rdtest.action_name(rdtest.admit(server.stub, TOOL, turn_id=turn).action))
    assert answers == ["ACTION_RETRY"] * 4 + ["ACTION_FAIL_FAST"] * 2, answers
    ctl = Ctl(recoveryctl_binary, server.address)
    export = tmp_path / "export.jsonl"
    export.write_text(ctl.ok("export", turn))
    return ctl, export


def candidate(tmp_path, name, breaker):
    return rdtest.write_config(tmp_path / name, defaults={"circuit_breaker": breaker})


def test_export_is_json_lines_of_the_turn(recorded):
    ctl, export = recorded
    lines = [json.loads(l) for l in export.read_text().splitlines()]
    assert len(lines) >= 6 and all(l["tool_id"] == TOOL for l in lines)
    assert [l["event_type"] for l in lines].count("CircuitOpened") == 1


def test_same_config_changes_nothing(recorded, tmp_path):
    ctl, export = recorded
    same = candidate(tmp_path, "same", {"failure_threshold": 5})
    doc = ctl.json("replay", "--config", str(same.parent), str(export))
    assert (doc["decisions"], doc["changed"], doc["changes"]) == (6, 0, [])
    assert doc["breaker_opens"] == [{"tool": TOOL, "recorded": 1, "replayed": 1}]


def test_lower_threshold_fails_fast_sooner(recorded, tmp_path):
    ctl, export = recorded
    strict = candidate(tmp_path, "strict", {"failure_threshold": 3})
    doc = ctl.json("replay", "--config", str(strict), str(export))
    # Attempt 3 opens the breaker: attempts 3 and 4 fail fast instead of retrying.
    assert doc["changed"] == 2
    assert doc["changes"] == [{"tool": TOOL, "from": "retry", "to": "fail_fast", "count": 2}]
    text = ctl.ok("replay", "--config", str(strict), str(export))
    assert text.splitlines() == ["6 decisions replayed, 2 changed",
                                 f"{TOOL}: 2 retry -> fail_fast"], text


def test_higher_threshold_never_opens(recorded, tmp_path):
    ctl, export = recorded
    lenient = candidate(tmp_path, "lenient", {"failure_threshold": 10})
    doc = ctl.json("replay", "--config", str(lenient.parent), str(export))
    # Attempt 5 now only runs out of attempts, and the admission goes ahead.
    assert sorted((c["from"], c["to"], c["count"]) for c in doc["changes"]) == [
        ("fail_fast", "give_up", 1), ("fail_fast", "proceed", 1)]
    assert doc["breaker_opens"] == [{"tool": TOOL, "recorded": 1, "replayed": 0}]
    text = ctl.ok("replay", "--config", str(lenient), str(export))
    assert f"{TOOL}: breaker opened 0 times instead of 1" in text.splitlines()


def test_bad_input_is_named(recorded, tmp_path):
    ctl, export = recorded
    broken = tmp_path / "broken.jsonl"
    broken.write_text(export.read_text() + "not json\n")
    same = candidate(tmp_path, "same", {"failure_threshold": 5})
    proc = ctl.run("replay", "--config", str(same), str(broken))
    assert proc.returncode == 1 and "broken.jsonl:" in proc.stderr, proc.stderr
    proc = ctl.run("replay", str(export))
    assert proc.returncode == 2 and "--config" in proc.stderr, proc.stderr
    bad_cfg = candidate(tmp_path, "bad", {"failure_threshold": 0})
    proc = ctl.run("replay", "--config", str(bad_cfg), str(export))
    assert proc.returncode == 1 and "failure_threshold" in proc.stderr, proc.stderr
