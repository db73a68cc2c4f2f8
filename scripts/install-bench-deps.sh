#!/usr/bin/env bash
# Installs what the RPC benchmark (bench/rpc/run.sh) needs, as root on Debian
# bookworm: h2load (nghttp2-client), perf, valgrind, redis-server, protoc and
# taskset from Debian, and ghz, pinned (scripts/versions.sh), built with the
# pinned Go through the Go module proxy. Safe to run again: it skips what is
# already there.
#
# ghz goes to build-tools/bin, which bench/rpc/run.sh looks in first.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
WHO=install-bench-deps

rd_apt_install "$WHO" nghttp2-client linux-perf valgrind redis-server protobuf-compiler util-linux procps
rd_go_env "$WHO"
rd_go_install "$WHO" "github.com/bojand/ghz/cmd/ghz@$GHZ_VERSION" ghz
echo "bench tools: $(command -v h2load) $RD_TOOLS/bin/ghz"
