"""Tool references in manifests: every tool named in `alternatives` or
`depends_on` exists (a manifest, or tools.external), else the file:line of
the reference is reported; a reload with such a reference keeps the running
configuration, so executors are never sent to a tool that does not exist."""
from ops_support import ops_launcher, sighup, wait_for_log  # noqa: F401
from rdtest import (decide, expect_action, invalid_input, pb, run_check_config, unique,
                    write_config)

FLIGHTS = [{"id": "flight_search", "alternatives": ["flight_search_backup"]},
           {"id": "flight_search_backup"}]
MISSPELT = "tool:\n  id: flight_search\n  alternatives: [flight_serch_backup]\n"


def test_check_config_rejects_a_misspelt_alternative(recoveryd_binary, tmp_path):
    config = write_config(tmp_path, tools=FLIGHTS)
    assert run_check_config(recoveryd_binary, config)[0] == 0
    (tmp_path / "tools.d" / "flight_search.yaml").write_text(MISSPELT)
    code, out = run_check_config(recoveryd_binary, config)
    assert code != 0, out
    assert "flight_search.yaml:3: tool.alternatives[0]" in out, out
    assert 'unknown tool "flight_serch_backup"' in out, out


def test_check_config_rejects_an_unknown_dependency(recoveryd_binary, tmp_path):
    config = write_config(tmp_path, tools=[
        {"id": "compare_prices", "depends_on": ["flight_search"], "optional": True}])
    code, out = run_check_config(recoveryd_binary, config)
    assert code != 0, out
    assert "compare_prices.yaml:3: tool.depends_on[0]" in out, out


def test_external_tools_may_be_named(recoveryd_binary, tmp_path):
    """tools.external lists tools served without a manifest: by id, or a
    family by "prefix*"."""
    config = write_config(tmp_path, tools=[
        {"id": "compare_prices", "depends_on": ["flight_search", "mcp_hotels"],
         "alternatives": ["mcp_prices"]}])
    text = config.read_text().replace(
        "tools:\n", "tools:\n  external: [flight_search, 'mcp_*']\n", 1)
    config.write_text(text)
    code, out = run_check_config(recoveryd_binary, config)
    assert code == 0, out


def test_reload_with_a_misspelt_alternative_keeps_the_old_config(ops_launcher):
    server = ops_launcher.start(tools=FLIGHTS)
    (server.config.parent / "tools.d" / "flight_search.yaml").write_text(MISSPELT)
    sighup(server)
    assert wait_for_log(server, "reload failed"), server.log_text()
    assert "flight_serch_backup" in server.log_text()
    resp = decide(server.stub, "flight_search", invalid_input(), attempt=1,
                  turn_id=unique("turn"))
    expect_action(resp, pb.ACTION_USE_ALTERNATIVE)
    assert resp.alternative_tool_id == "flight_search_backup"
