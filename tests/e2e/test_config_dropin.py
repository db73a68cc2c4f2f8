"""Drop-in configuration: `--config DIR` reads DIR/recovery.yaml and the
fragments of DIR/recovery.d in name order; the service answers by the
merged result, reloads when a fragment changes, and names a bad fragment's
own file and line (docs/DEPLOYMENT.md, "Drop-in configuration")."""
import os

import yaml

from ops_support import ops_launcher, sighup, wait_for_log  # noqa: F401
from rdtest import decide, expect_action, network_timeout, pb, run_check_config, unique


def put_fragment(directory, name, data):
    """Written atomically (write, then rename), as a ConfigMap swap is."""
    dropin = directory / "recovery.d"
    dropin.mkdir(exist_ok=True)
    scratch = dropin / f".{name}.tmp"
    scratch.write_text(data if isinstance(data, str) else yaml.safe_dump(data))
    os.replace(scratch, dropin / name)


def max_attempts(n):
    return {"defaults": {"retry_policy": {"max_attempts": n}}}


def attempt3(server, tool):
    """RETRY while max_attempts > 3, GIVE_UP once it is 3."""
    return decide(server.stub, tool, network_timeout(), attempt=3)


def test_directory_with_fragments_in_name_order(ops_launcher):
    main = ops_launcher.config()                      # defaults.retry_policy.max_attempts: 5
    put_fragment(main.parent, "20-later.yaml", max_attempts(3))
    put_fragment(main.parent, "10-earlier.yaml", max_attempts(9))
    server = ops_launcher.start(config=main.parent)
    expect_action(attempt3(server, unique("t")), pb.ACTION_GIVE_UP)


def test_fragment_deep_merges_into_the_main_file(ops_launcher):
    main = ops_launcher.config(defaults={"retry_policy": {"max_delay_ms": 800}})
    put_fragment(main.parent, "10.yaml", {"defaults": {"retry_policy": {"initial_delay_ms": 50}}})
    code, out = run_check_config(ops_launcher.binary, main.parent)
    assert code == 0, out
    server = ops_launcher.start(config=main.parent)
    answer = decide(server.stub, unique("t"), network_timeout(), attempt=0)
    expect_action(answer, pb.ACTION_RETRY)
    # initial_delay_ms from the fragment (jitter 10 %), the rest of the
    # policy (max_attempts 5) still from the main file.
    assert 45 <= answer.delay_ms <= 55, answer
    expect_action(attempt3(server, unique("t")), pb.ACTION_RETRY)


def test_watch_reloads_when_a_fragment_appears_changes_and_goes(ops_launcher):
    main = ops_launcher.config(top={"reload": {"watch": True}})
    (main.parent / "recovery.d").mkdir()
    server = ops_launcher.start(config=main.parent)
    tool = unique("t")
    expect_action(attempt3(server, tool), pb.ACTION_RETRY)

    mark = len(server.log_text(10**7))
    put_fragment(main.parent, "50-tight.yaml", max_attempts(3))
    assert wait_for_log(server, "configuration reloaded", after=mark), server.log_text()
    expect_action(attempt3(server, tool), pb.ACTION_GIVE_UP)

    mark = len(server.log_text(10**7))
    put_fragment(main.parent, "50-tight.yaml", max_attempts(4))
    assert wait_for_log(server, "configuration reloaded", after=mark), server.log_text()
    expect_action(attempt3(server, tool), pb.ACTION_RETRY)

    mark = len(server.log_text(10**7))
    put_fragment(main.parent, "50-tight.yaml", max_attempts(3))
    assert wait_for_log(server, "configuration reloaded", after=mark), server.log_text()
    mark = len(server.log_text(10**7))
    (main.parent / "recovery.d" / "50-tight.yaml").unlink()
    assert wait_for_log(server, "configuration reloaded", after=mark), server.log_text()
    expect_action(attempt3(server, tool), pb.ACTION_RETRY)


def test_sighup_reads_the_fragments_again(ops_launcher):
    main = ops_launcher.config()  # watch off
    server = ops_launcher.start(config=main)  # the main file: its recovery.d applies too
    tool = unique("t")
    expect_action(attempt3(server, tool), pb.ACTION_RETRY)
    put_fragment(main.parent, "10.yaml", max_attempts(3))
    sighup(server)
    assert wait_for_log(server, "configuration reloaded"), server.log_text()
    expect_action(attempt3(server, tool), pb.ACTION_GIVE_UP)


def test_bad_fragment_on_reload_keeps_the_previous_config(ops_launcher):
    main = ops_launcher.config()
    put_fragment(main.parent, "10.yaml", max_attempts(3))
    server = ops_launcher.start(config=main.parent)
    tool = unique("t")
    expect_action(attempt3(server, tool), pb.ACTION_GIVE_UP)
    put_fragment(main.parent, "20-bad.yaml",
                 "# a typo in a fragment\ndefaults:\n  retry_policy:\n    max_attempts: 0\n")
    sighup(server)
    assert wait_for_log(server, "reload failed"), server.log_text()
    line = next(l for l in server.log_text().splitlines() if "reload failed" in l)
    assert "recovery.d/20-bad.yaml:4: defaults.retry_policy.max_attempts" in line, line
    expect_action(attempt3(server, tool), pb.ACTION_GIVE_UP)


def test_check_config_names_the_fragment(ops_launcher):
    main = ops_launcher.config()
    put_fragment(main.parent, "10-ok.yaml", max_attempts(3))
    put_fragment(main.parent, "20-typo.yaml", "store:\n  max_turn: 10\n")
    code, out = run_check_config(ops_launcher.binary, main.parent)
    assert code != 0, out
    assert f"{main.parent}/recovery.d/20-typo.yaml:2: store.max_turn: unknown key" in out, out
