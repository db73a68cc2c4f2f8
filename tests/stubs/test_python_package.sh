#!/usr/bin/env bash
# The Python client as a user gets it: builds the sdist and the wheel of
# stubs/python, checks their metadata (version from VERSION, Apache-2.0 with
# the LICENSE text, project URLs, no protobuf upper bound), installs the wheel
# with both integration extras into a fresh venv together with the newest
# protobuf major (7), starts recoveryd with the shipped configuration on a
# free 127.0.0.1 port and runs the example agents from that venv.
#
#   RECOVERYD=path  the recoveryd binary (required)
#   RD_STUB_TOOLS   the stubs' tools (default build-stubs-tools; its venv builds)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
tools="${RD_STUB_TOOLS:-$root/build-stubs-tools}"
recoveryd="${RECOVERYD:?set RECOVERYD to a recoveryd binary}"
version="$(cat "$root/VERSION")"
tmp="$(mktemp -d)"
server=
cleanup() { [ -z "$server" ] || kill "$server" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
fail() { echo "python package: FAIL: $*" >&2; exit 1; }

"$tools/venv/bin/python" -m build -q --no-isolation --outdir "$tmp/dist" "$root/stubs/python" >"$tmp/build.log" 2>&1 ||
  { tail -20 "$tmp/build.log"; fail "python -m build failed"; }
wheel="$tmp/dist/recoveryd_client-$version-py3-none-any.whl"
sdist="$tmp/dist/recoveryd_client-$version.tar.gz"
[ -f "$wheel" ] && [ -f "$sdist" ] || fail "expected $(basename "$wheel") and $(basename "$sdist"); built: $(ls "$tmp/dist")"

"$tools/venv/bin/python" - "$wheel" "$sdist" "$root/LICENSE" "$version" <<'PY'
import sys, tarfile, zipfile
from email.parser import Parser
wheel, sdist, license_path, version = sys.argv[1:]
license_text = open(license_path, "rb").read()
with zipfile.ZipFile(wheel) as z:
    names = z.namelist()
    meta = Parser().parsestr(z.read(f"recoveryd_client-{version}.dist-info/METADATA").decode())
    lic = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
    assert lic and z.read(lic[0]) == license_text, f"wheel LICENSE missing or different: {names}"
    for module in ("aio.py", "langgraph.py", "openai_agents.py", "mcp.py", "v1/recovery_pb2.pyi"):
        assert f"recoveryd_client/{module}" in names, module
assert meta["Version"] == version, meta["Version"]
assert meta["License-Expression"] == "Apache-2.0", meta["License-Expression"]
urls = meta.get_all("Project-URL") or []
assert any(u.startswith("Source,") for u in urls), urls
requires = meta.get_all("Requires-Dist") or []
proto = [r for r in requires if r.startswith("protobuf")]
assert proto and "<" not in proto[0], proto
extras = set(meta.get_all("Provides-Extra") or [])
assert {"langgraph", "openai-agents"} <= extras, extras
with tarfile.open(sdist) as t:
    base = f"recoveryd_client-{version}"
    member = t.extractfile(f"{base}/LICENSE")
    assert member is not None and member.read() == license_text, "sdist LICENSE"
    assert t.extractfile(f"{base}/VERSION").read().decode().strip() == version, "sdist VERSION"
print(f"python package: metadata ok (version {version}, Apache-2.0, {len(urls)} project URLs, {proto[0]})")
PY

# A fresh venv, as a user would make it; the dependencies come from the
# wheels scripts/install-stub-deps.sh downloaded from PyPI (the frameworks
# at the versions the tests pin, the newest protobuf: 7).
python3 -m venv "$tmp/user"
"$tmp/user/bin/pip" install -q --disable-pip-version-check --no-index --find-links "$tools/python-wheels" \
  "$wheel[langgraph,openai-agents]" ||
  fail "pip install of the wheel with [langgraph,openai-agents] failed (run scripts/install-stub-deps.sh)"
"$tmp/user/bin/python" -c 'import google.protobuf as p; assert p.__version__.startswith("7."), p.__version__'

port="$("$tmp/user/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
mkdir -p "$tmp/config"
cp -r "$root/config/rules.yaml" "$root/config/tools.d" "$tmp/config/"
cat >"$tmp/config/recovery.yaml" <<YAML
server:
  listen: "127.0.0.1:$port"
tools:
  directory: tools.d
classification:
  rules_file: rules.yaml
metrics:
  listen: ""
YAML
"$recoveryd" --config "$tmp/config/recovery.yaml" >"$tmp/recoveryd.log" 2>&1 &
server=$!
"$tmp/user/bin/python" -c "import grpc,sys; grpc.channel_ready_future(grpc.insecure_channel('127.0.0.1:$port')).result(timeout=15)" ||
  { cat "$tmp/recoveryd.log"; fail "recoveryd did not start"; }

# The examples from outside the checkout, so only the installed package is importable.
cp "$root/stubs/python/examples/"*.py "$tmp/"
cd "$tmp"
out="$("$tmp/user/bin/python" langgraph_agent.py --addr "127.0.0.1:$port")" || fail "langgraph_agent.py: $out"
grep -q "tool: 3 flights to Lisbon" <<<"$out" || fail "langgraph_agent.py printed: $out"
out="$("$tmp/user/bin/python" langgraph_agent.py --addr "127.0.0.1:$port" --async)" || fail "langgraph_agent.py --async: $out"
grep -q "tool: 3 flights to Lisbon" <<<"$out" || fail "langgraph_agent.py --async printed: $out"
out="$("$tmp/user/bin/python" openai_agents_agent.py --addr "127.0.0.1:$port")" || fail "openai_agents_agent.py: $out"
grep -q "tool output: 4 hotels in Porto" <<<"$out" || fail "openai_agents_agent.py printed: $out"
out="$("$tmp/user/bin/python" executor.py --addr "127.0.0.1:$port" --tool hotel_search --mode flaky)" || fail "executor.py: $out"
grep -q '"status": "succeeded"' <<<"$out" || fail "executor.py printed: $out"
echo "python package: installed with [langgraph,openai-agents] and protobuf 7 in a fresh venv; 4 examples ran against recoveryd"
