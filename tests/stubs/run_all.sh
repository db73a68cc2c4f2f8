#!/usr/bin/env bash
# Every test of the client stubs, in one go: installs their dependencies
# (scripts/install-stub-deps.sh; skip with RD_STUBS_SKIP_INSTALL=1), checks
# the committed stubs are fresh and every package states the VERSION file's
# version, runs each language's tests (pytest, with the Python integrations
# against a live recoveryd; go test, node --test + tsc type check, Maven
# Surefire, the C client against TLS and server.auth and its VERIFY and
# tenant handling; the Go, Node and C ones
# start recoveryd themselves), installs the built Python package into a fresh
# venv and runs its examples, installs each package into a fresh project and
# calls it (test_install_as_user.sh), then the cross-language conformance run
# against a live recoveryd (RECOVERYD=path to use an existing binary;
# otherwise one is built). Exits non-zero on the first failing part.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
tools="${RD_STUB_TOOLS:-$root/build-stubs-tools}"
export RD_STUB_TOOLS="$tools"
cd "$root"

[ "${RD_STUBS_SKIP_INSTALL:-0}" = 1 ] || scripts/install-stub-deps.sh
. scripts/lib.sh
rd_go_env "$(basename "$0")"

# The live tests of each language start this binary ($RECOVERYD).
if [ -z "${RECOVERYD:-}" ]; then
  cmake -S . -B build-stubs-server -DRD_E2E=OFF >/dev/null
  cmake --build build-stubs-server -j2 --target recoveryd >/dev/null
  RECOVERYD="$root/build-stubs-server/recoveryd"
fi
export RECOVERYD

tests/stubs/test_stubs_fresh.sh
tests/stubs/test_versions.sh
"$tools/venv/bin/pip" install -q --disable-pip-version-check --force-reinstall --no-deps ./stubs/python >/dev/null
(cd stubs/python && "$tools/venv/bin/python" -m pytest -q tests)
tests/stubs/test_python_package.sh
(cd stubs/go && go vet ./... && go test -count=1 ./...) # the live tests never from the cache
(cd stubs/node && node --test test/*.test.js && node_modules/.bin/tsc -p test/tsconfig.json && echo "node types: ok")
(cd stubs/java && mvn -B -o test | grep -E "Tests run:|BUILD|ERROR")
cmake -S stubs/c -B "$tools/c-build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$tools/c-build" -j2 >/dev/null
tests/stubs/test_c_tls_auth.sh "$RECOVERYD" "$tools/c-build/rdc_executor"
tests/stubs/test_c_verify_tenant.sh "$RECOVERYD" "$tools/c-build/rdc_verify_tenant_test"
tests/stubs/test_install_as_user.sh "$RECOVERYD"
RD_STUBS_SKIP_INSTALL=1 tests/stubs/run_conformance.sh
