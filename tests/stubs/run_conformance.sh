#!/usr/bin/env bash
# Cross-language conformance of the client stubs: installs what they need
# (skip with RD_STUBS_SKIP_INSTALL=1), builds each language's example
# executor and recoveryd (or uses RECOVERYD=path), then runs the scenarios of
# tests/stubs/conformance/run.py (the shared breaker; VERIFY with each
# language in its own tenant) against live recoveryd servers on free
# 127.0.0.1 ports. Prints PASS/FAIL per language; exits non-zero on a failure.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
tools="${RD_STUB_TOOLS:-$root/build-stubs-tools}"
export RD_STUB_TOOLS="$tools"
cd "$root"

[ "${RD_STUBS_SKIP_INSTALL:-0}" = 1 ] || scripts/install-stub-deps.sh
. scripts/lib.sh
rd_go_env "$(basename "$0")"

recoveryd="${RECOVERYD:-}"
if [ -z "$recoveryd" ]; then
  cmake -S . -B build-stubs-server -DRD_E2E=OFF >/dev/null
  cmake --build build-stubs-server -j2 --target recoveryd >/dev/null
  recoveryd="$root/build-stubs-server/recoveryd"
fi

echo "building the example executors"
(cd stubs/go && go build -o "$tools/bin/rd-go-executor" ./examples/executor)
cmake -S stubs/c -B "$tools/c-build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$tools/c-build" -j2 >/dev/null
(cd stubs/java && mvn -B -q -o -DskipTests test-compile dependency:build-classpath \
   -Dmdep.includeScope=test -Dmdep.outputFile=target/classpath.txt >/dev/null)
java_cp="$root/stubs/java/target/classes:$root/stubs/java/target/test-classes:$(cat stubs/java/target/classpath.txt)"
"$tools/venv/bin/pip" install -q --disable-pip-version-check --force-reinstall --no-deps ./stubs/python >/dev/null

exec "$tools/venv/bin/python" tests/stubs/conformance/run.py --root "$root" --tools "$tools" \
  --recoveryd "$recoveryd" --java-cp "$java_cp"
