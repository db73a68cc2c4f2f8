#!/usr/bin/env bash
# Installs each client package as a user would, into a fresh project in a
# temporary directory, and runs one call through it against a live recoveryd
# (a tool that fails once, then answers: "succeeded attempts=2" with real
# decisions, not the local fallback):
#   node  npm pack, then `npm install <tarball> ai zod` in a new project
#         (the peer @grpc/grpc-js comes with it); an ESM agent on the AI SDK
#   go    a new module requiring github.com/recoveryd/recoveryd/stubs/go
#         (replace to this checkout, as the README says), go build
#   java  mvn install, then a new project whose POM depends on
#         io.recoveryd:recoveryd-client:VERSION
#   c     cmake --install to a prefix, then cc with `pkg-config recoveryd-client`
# The consumers are in tests/stubs/consumers/. Registries are read through the
# ecosystems' caches that scripts/install-stub-deps.sh fills.
# Usage: test_install_as_user.sh RECOVERYD
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
recoveryd="$(realpath "$1")"
consumers="$root/tests/stubs/consumers"
version="$(cat "$root/VERSION")"
tmp="$(mktemp -d)"
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "test_install_as_user: FAIL: $*" >&2; exit 1; }
expect() { # LANG OUTPUT
  grep -qx "succeeded attempts=2 fallback=false" <<<"$2" || fail "$1: got '$2'"
  echo "ok: $1 installed into a fresh project and called recoveryd"
}

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$tmp/server/tools.d"
cp "$root/config/rules.yaml" "$tmp/server/"
cat > "$tmp/server/recovery.yaml" <<YAML
server:
  listen: "127.0.0.1:$port"
metrics:
  listen: "127.0.0.1:0"
tools:
  directory: tools.d
classification:
  rules_file: rules.yaml
YAML
"$recoveryd" --config "$tmp/server/recovery.yaml" > "$tmp/server/log" 2>&1 &
server_pid=$!
for _ in $(seq 150); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
addr="127.0.0.1:$port"

# node
(cd "$root/stubs/node" && npm pack --silent --pack-destination "$tmp" >/dev/null)
if [ -f "$root/LICENSE" ]; then
  tar tzf "$tmp/recoveryd-client-$version.tgz" | grep -x package/LICENSE >/dev/null || fail "node: the tarball has no LICENSE"
fi
mkdir "$tmp/node" && cd "$tmp/node"
npm init -y >/dev/null
ai_v="$(node -p 'require(process.argv[1]).devDependencies.ai' "$root/stubs/node/package.json")"
zod_v="$(node -p 'require(process.argv[1]).devDependencies.zod' "$root/stubs/node/package.json")"
npm install --prefer-offline --no-audit --no-fund --loglevel=error \
  "$tmp/recoveryd-client-$version.tgz" "ai@$ai_v" "zod@$zod_v" >/dev/null
[ "$(npm ls @grpc/grpc-js --parseable 2>/dev/null | grep -c 'node_modules/@grpc/grpc-js$')" = 1 ] ||
  fail "node: @grpc/grpc-js is installed more than once"
cp "$consumers/node/agent.mjs" .
expect node "$(node agent.mjs "$addr")"

# go
mkdir "$tmp/go" && cd "$tmp/go"
cp "$consumers/go/main.go" .
go mod init example.com/agent >/dev/null 2>&1
go mod edit -require "github.com/recoveryd/recoveryd/stubs/go@v$version" \
  -replace "github.com/recoveryd/recoveryd/stubs/go=$root/stubs/go"
GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1 || fail "go: go mod tidy failed"
go build -o agent . || fail "go: build failed"
expect go "$(./agent "$addr")"

# java
(cd "$root/stubs/java" && mvn -B -q -o install -DskipTests >/dev/null) || fail "java: mvn install failed"
mkdir "$tmp/java" && cp -r "$consumers/java/." "$tmp/java/" && cd "$tmp/java"
sed -i "s|<version>0.1.0</version><!-- recoveryd-client -->|<version>$version</version>|" pom.xml
mvn -B -q -o compile dependency:build-classpath -Dmdep.outputFile=cp.txt >/dev/null || fail "java: consumer build failed"
expect java "$(java -cp "target/classes:$(cat cp.txt)" demo.Agent "$addr")"

# c
cmake -S "$root/stubs/c" -B "$tmp/c-build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$tmp/c-prefix" >/dev/null
cmake --build "$tmp/c-build" -j2 >/dev/null
cmake --install "$tmp/c-build" >/dev/null
pc_dir="$(dirname "$(find "$tmp/c-prefix" -name recoveryd-client.pc)")"
[ "$(PKG_CONFIG_PATH="$pc_dir" pkg-config --modversion recoveryd-client)" = "$version" ] ||
  fail "c: recoveryd-client.pc does not say $version"
libdir="$(PKG_CONFIG_PATH="$pc_dir" pkg-config --variable=libdir recoveryd-client)"
# shellcheck disable=SC2046
cc -o "$tmp/c-agent" "$consumers/c/agent.c" $(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs recoveryd-client) \
  -Wl,-rpath,"$libdir" || fail "c: consumer build failed"
expect c "$("$tmp/c-agent" "$addr")"
echo "test_install_as_user: all passed"
