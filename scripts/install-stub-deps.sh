#!/usr/bin/env bash
# Installs what building and testing the client stubs (stubs/) needs, as root
# on Debian bookworm: Debian packages for the C client and the code
# generators, the pinned Go protoc plugins, a Python venv with the pinned
# grpcio-tools and pytest, the npm packages of stubs/node (from its lock
# file) and the Maven dependencies of stubs/java. Everything comes from the
# ecosystems' own registries. Safe to run again: it skips what is there.
#
# Tool locations (override with RD_STUB_TOOLS): build-stubs-tools/bin holds
# protoc-gen-go and protoc-gen-go-grpc, build-stubs-tools/venv the Python venv.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tools="${RD_STUB_TOOLS:-$root/build-stubs-tools}"
export PATH="/usr/local/go/bin:$PATH"

GRPCIO_TOOLS_VERSION=1.66.2
PROTOC_GEN_GO_VERSION=v1.36.11
PROTOC_GEN_GO_GRPC_VERSION=v1.6.1

DEBS=(build-essential cmake pkg-config protobuf-compiler protobuf-c-compiler
      libprotobuf-c-dev libgrpc-dev python3-venv)
command -v node >/dev/null && command -v npm >/dev/null || DEBS+=(nodejs npm)
command -v mvn >/dev/null || DEBS+=(maven)
command -v javac >/dev/null || DEBS+=(default-jdk-headless)
command -v go >/dev/null || DEBS+=(golang-go)

missing=()
for p in "${DEBS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-stub-deps: apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

mkdir -p "$tools/bin"
# Go protoc plugins, pinned; protoc 3.21 speaks the same plugin protocol.
if ! "$tools/bin/protoc-gen-go" --version 2>/dev/null | grep -q "$PROTOC_GEN_GO_VERSION"; then
  GOBIN="$tools/bin" go install "google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO_VERSION"
fi
if ! "$tools/bin/protoc-gen-go-grpc" --version 2>/dev/null | grep -q "${PROTOC_GEN_GO_GRPC_VERSION#v}"; then
  GOBIN="$tools/bin" go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC_VERSION"
fi
(cd "$root/stubs/go" && go mod download)

# Python: the pinned generator, pytest, and the stub package itself (a real
# install, so packaging mistakes show up).
venv="$tools/venv"
if ! "$venv/bin/python" -c "import grpc_tools, pytest" 2>/dev/null ||
   [ "$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("grpcio-tools"))' 2>/dev/null)" != "$GRPCIO_TOOLS_VERSION" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check \
    "grpcio-tools==$GRPCIO_TOOLS_VERSION" "grpcio==$GRPCIO_TOOLS_VERSION" pytest
fi
"$venv/bin/pip" install -q --disable-pip-version-check --force-reinstall --no-deps "$root/stubs/python" >/dev/null

# Node: exactly the locked versions.
if [ ! -d "$root/stubs/node/node_modules/@grpc/grpc-js" ] ||
   [ "$root/stubs/node/package-lock.json" -nt "$root/stubs/node/node_modules/.package-lock.json" ]; then
  (cd "$root/stubs/node" && npm ci --no-audit --no-fund --loglevel=error)
fi

# Java: fetches plugins (with protoc and protoc-gen-grpc-java) and
# dependencies from Maven Central into ~/.m2 once; later builds are offline.
# (verify runs the unit tests once so the Surefire provider is fetched too.)
(cd "$root/stubs/java" && mvn -B -q verify dependency:build-classpath -Dmdep.includeScope=test \
   -Dmdep.outputFile=target/classpath.txt >/dev/null)
echo "install-stub-deps: done"
