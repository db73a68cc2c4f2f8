"""Hot reload: SIGHUP and directory changes swap the configuration without
failing a call; an invalid file keeps the previous configuration."""
import os
import time

import yaml

from ops_support import Load, ops_launcher, sighup, wait_for_log  # noqa: F401
from rdtest import decide, expect_action, network_timeout, pb


def set_max_attempts(config_path, tool_id, max_attempts):
    """Replaces the manifest atomically (write, then rename), as a careful
    operator or a ConfigMap swap does, so a reload never sees half a file."""
    manifest = config_path.parent / "tools.d" / f"{tool_id}.yaml"
    scratch = manifest.with_suffix(".yaml.tmp")
    scratch.write_text(yaml.safe_dump({"tool": {
        "id": tool_id, "retry_policy": {"max_attempts": max_attempts}}}))
    os.replace(scratch, manifest)


def attempt3(server, tool):
    return decide(server.stub, tool, network_timeout(), attempt=3)


def test_sighup_applies_a_valid_change(ops_launcher):
    server = ops_launcher.start(tools=[{"id": "flaky", "retry_policy": {"max_attempts": 5}}])
    expect_action(attempt3(server, "flaky"), pb.ACTION_RETRY)
    set_max_attempts(server.config, "flaky", 3)
    sighup(server)
    assert wait_for_log(server, "configuration reloaded"), server.log_text()
    expect_action(attempt3(server, "flaky"), pb.ACTION_GIVE_UP)


def test_invalid_file_keeps_the_previous_config(ops_launcher):
    server = ops_launcher.start(tools=[{"id": "steady", "retry_policy": {"max_attempts": 5}}])
    manifest = server.config.parent / "tools.d" / "steady.yaml"
    manifest.write_text("tool:\n  id: steady\n  retry_policy:\n    max_attempts: 0\n")
    sighup(server)
    assert wait_for_log(server, "reload failed"), server.log_text()
    line = next(l for l in server.log_text().splitlines() if "reload failed" in l)
    assert "steady.yaml:4: tool.retry_policy.max_attempts" in line, line
    expect_action(attempt3(server, "steady"), pb.ACTION_RETRY)


def test_restart_only_keys_are_reported(ops_launcher):
    server = ops_launcher.start()
    main = yaml.safe_load(server.config.read_text())
    main["server"]["workers"] = 7
    main.setdefault("store", {}).setdefault("redis", {})["read_cache_ms"] = 0
    main.setdefault("log", {})["level"] = "debug"  # reloadable: applied, not reported
    server.config.write_text(yaml.safe_dump(main))
    sighup(server)
    assert wait_for_log(server, "configuration reloaded")
    assert '"key":"server.workers"' in server.log_text()
    assert '"key":"store.redis.read_cache_ms"' in server.log_text()
    assert '"key":"store.redis.closed_cache_ms"' not in server.log_text()  # unchanged
    assert '"key":"log.level"' not in server.log_text()


def test_directory_change_reloads_like_a_configmap_swap(ops_launcher, tmp_path):
    """Kubernetes mounts a ConfigMap as ..data -> ..<timestamp>/ and swaps
    the ..data symlink; the service notices and reloads."""
    real = ops_launcher.config(tools=[{"id": "cm_tool", "retry_policy": {"max_attempts": 5}}],
                               top={"reload": {"watch": True}})
    mount = tmp_path / "mount"
    mount.mkdir()
    (mount / "..v1").symlink_to(real.parent)
    (mount / "..data").symlink_to("..v1")
    (mount / "recovery.yaml").symlink_to("..data/recovery.yaml")
    (mount / "rules.yaml").symlink_to("..data/rules.yaml")
    (mount / "tools.d").symlink_to("..data/tools.d")
    server = ops_launcher.start(config=mount / "recovery.yaml")
    expect_action(attempt3(server, "cm_tool"), pb.ACTION_RETRY)

    new_dir = tmp_path / "v2"
    new_dir.mkdir()
    for name in ("recovery.yaml", "rules.yaml"):
        (new_dir / name).write_bytes((real.parent / name).read_bytes())
    (new_dir / "tools.d").mkdir()
    set_max_attempts(new_dir / "recovery.yaml", "cm_tool", 2)
    (mount / "..v2").symlink_to(new_dir)
    (mount / "..data_tmp").symlink_to("..v2")
    os.replace(mount / "..data_tmp", mount / "..data")  # the atomic swap
    assert wait_for_log(server, "configuration reloaded"), server.log_text()
    expect_action(attempt3(server, "cm_tool"), pb.ACTION_GIVE_UP)


def test_reload_under_load_fails_no_call(ops_launcher):
    """Ten SIGHUPs under load: no call fails, and the change written last is
    the one in force, though signals that arrive during a reload coalesce
    and how many reloads run depends on the machine's speed."""
    server = ops_launcher.start(tools=[{"id": "busy", "retry_policy": {"max_attempts": 5}}])
    with Load(server, n_threads=8) as load:
        for i in range(10):
            # 4 and 6 keep attempt 3 retrying; only the last value, 3, gives up.
            set_max_attempts(server.config, "busy", 3 if i == 9 else 4 + 2 * (i % 2))
            sighup(server)
            time.sleep(0.1)
        time.sleep(0.3)
    assert load.codes() == {"OK"}, load.codes()
    assert len(load.results) > 100
    deadline = time.monotonic() + 10
    while attempt3(server, "busy").action != pb.ACTION_GIVE_UP:
        assert time.monotonic() < deadline, server.log_text()
        time.sleep(0.05)
    assert server.log_text().count("configuration reloaded") >= 2, server.log_text()


def test_unrelated_file_in_the_config_directory_does_not_reload(ops_launcher):
    """Only *.yaml/*.yml files and ConfigMap swaps count: a log or editor
    file written next to the config must not trigger a reload."""
    server = ops_launcher.start(top={"reload": {"watch": True}})
    (server.config.parent / "notes.log").write_text("operator notes\n")
    (server.config.parent / ".recovery.yaml.swp").write_text("x")
    assert not wait_for_log(server, "configuration reloaded", timeout=1.5), server.log_text()
    manifest = server.config.parent / "tools.d" / "late.yaml"
    manifest.write_text(yaml.safe_dump({"tool": {"id": "late"}}))
    assert wait_for_log(server, "configuration reloaded"), server.log_text()
