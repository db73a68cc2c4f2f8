#!/usr/bin/env bash
# Installs what building and testing the client stubs (stubs/) needs, as root
# on Debian bookworm: Debian packages for the C client and the code
# generators, the pinned Go (build-tools/) and Go protoc plugins, a Python
# venv with the pinned grpcio-tools, pytest and the agent frameworks the
# Python integrations are tested with, the npm packages of stubs/node (from
# its lock file) and the Maven dependencies of stubs/java. Everything comes
# from the ecosystems' own registries; the versions are in scripts/versions.sh
# and stubs/python/requirements-test.txt. Safe to run again: it skips what is
# there.
#
# Tool locations (override with RD_STUB_TOOLS): build-stubs-tools/bin holds
# protoc-gen-go and protoc-gen-go-grpc, build-stubs-tools/venv the Python venv.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
. "$root/scripts/lib.sh"
WHO=install-stub-deps
tools="${RD_STUB_TOOLS:-$root/build-stubs-tools}"

DEBS=(build-essential cmake pkg-config protobuf-compiler protobuf-c-compiler
      libprotobuf-c-dev libgrpc-dev python3-venv)
command -v node >/dev/null && command -v npm >/dev/null || DEBS+=(nodejs npm)
command -v mvn >/dev/null || DEBS+=(maven)
command -v javac >/dev/null || DEBS+=(default-jdk-headless)
rd_apt_install "$WHO" "${DEBS[@]}"
rd_go_env "$WHO"

mkdir -p "$tools/bin"
# Go protoc plugins, pinned; protoc 3.21 speaks the same plugin protocol.
if ! "$tools/bin/protoc-gen-go" --version 2>/dev/null | grep -q "$PROTOC_GEN_GO_VERSION"; then
  GOBIN="$tools/bin" go install "google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO_VERSION" ||
    rd_fail "$WHO" "go install protoc-gen-go@$PROTOC_GEN_GO_VERSION failed (Go module proxy)"
fi
if ! "$tools/bin/protoc-gen-go-grpc" --version 2>/dev/null | grep -q "${PROTOC_GEN_GO_GRPC_VERSION#v}"; then
  GOBIN="$tools/bin" go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC_VERSION" ||
    rd_fail "$WHO" "go install protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC_VERSION failed (Go module proxy)"
fi
(cd "$root/stubs/go" && go mod download) || rd_fail "$WHO" "go mod download in stubs/go failed (Go module proxy)"

# Python: the pinned generator, pytest, and the stub package itself (a real
# install, so packaging mistakes show up).
venv="$tools/venv"
if ! "$venv/bin/python" -c "import grpc_tools, pytest" 2>/dev/null ||
   [ "$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("grpcio-tools"))' 2>/dev/null)" != "$GRPCIO_TOOLS_VERSION" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check \
    "grpcio-tools==$GRPCIO_TOOLS_VERSION" "grpcio==$GRPCIO_TOOLS_VERSION" pytest ||
    rd_fail "$WHO" "pip could not install grpcio-tools==$GRPCIO_TOOLS_VERSION and pytest from PyPI"
fi
# The integrations' frameworks and the libraries the tests use, pinned in
# stubs/python/requirements-test.txt; re-run when it is newer than the stamp.
if [ "$root/stubs/python/requirements-test.txt" -nt "$venv/.requirements-test-stamp" ]; then
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$root/stubs/python/requirements-test.txt" ||
    rd_fail "$WHO" "pip could not install stubs/python/requirements-test.txt from PyPI"
  touch "$venv/.requirements-test-stamp"
fi
"$venv/bin/pip" install -q --disable-pip-version-check --force-reinstall --no-deps "$root/stubs/python" >/dev/null
# Every wheel a user's `pip install recoveryd-client[langgraph,openai-agents]`
# pulls in, with the newest protobuf major, so tests/stubs/test_python_package.sh
# installs the built package into a fresh venv offline (--no-index).
wheels="$tools/python-wheels"
user_protobuf=7.36.2   # the newest protobuf; the stubs venv keeps grpcio-tools' protobuf 5
if [ "$root/stubs/python/requirements-test.txt" -nt "$wheels/.stamp" ] ||
   [ "$root/stubs/python/pyproject.toml" -nt "$wheels/.stamp" ]; then
  rm -rf "$wheels"
  "$venv/bin/pip" download -q --disable-pip-version-check -d "$wheels" \
    -c "$root/stubs/python/requirements-test.txt" "$root/stubs/python[langgraph,openai-agents]" \
    "protobuf==$user_protobuf" ||
    rd_fail "$WHO" "pip download of the Python package's dependencies failed (PyPI)"
  rm -f "$wheels"/recoveryd_client-* "$wheels"/recoveryd-client-*
  touch "$wheels/.stamp"
fi

# Node: exactly the locked versions.
if [ ! -d "$root/stubs/node/node_modules/@grpc/grpc-js" ] ||
   [ "$root/stubs/node/package-lock.json" -nt "$root/stubs/node/node_modules/.package-lock.json" ]; then
  (cd "$root/stubs/node" && npm ci --no-audit --no-fund --loglevel=error) ||
    rd_fail "$WHO" "npm ci in stubs/node failed (npm registry)"
fi

# Java: fetches plugins (with protoc and protoc-gen-grpc-java) and
# dependencies from Maven Central into ~/.m2 once; later builds are offline.
# (verify runs the unit tests once so the Surefire provider is fetched too.)
(cd "$root/stubs/java" && mvn -B -q verify dependency:build-classpath -Dmdep.includeScope=test \
   -Dmdep.outputFile=target/classpath.txt) ||
  rd_fail "$WHO" "mvn verify in stubs/java failed (Maven Central; run it there to see why)"
# The install plugin too: tests/stubs/test_install_as_user.sh installs the
# artifact into ~/.m2 offline, as a user's `mvn install` would.
(cd "$root/stubs/java" && mvn -B -q install -DskipTests >/dev/null) ||
  rd_fail "$WHO" "mvn install in stubs/java failed (Maven Central; run it there to see why)"
echo "install-stub-deps: done"
