#!/usr/bin/env bash
# Installs what the RPC benchmark (bench/rpc/run.sh) needs, as root on Debian
# bookworm: h2load (nghttp2-client), perf, valgrind, redis-server, protoc and
# taskset from Debian, and ghz, pinned, through the Go module proxy. Safe to
# run again: it skips what is already there.
#
# ghz goes to $RD_BENCH_TOOLS/bin (default build-bench-tools/bin), which
# bench/rpc/run.sh looks in first.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tools="${RD_BENCH_TOOLS:-$root/build-bench-tools}"
export PATH="/usr/local/go/bin:$PATH"

GHZ_VERSION=v0.120.0

DEBS=(nghttp2-client linux-perf valgrind redis-server protobuf-compiler util-linux procps)
missing=()
for p in "${DEBS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# go install stamps the module version into the binary (ghz --version says "dev").
if [[ -x "$tools/bin/ghz" ]] && go version -m "$tools/bin/ghz" 2>/dev/null | grep -q "bojand/ghz[[:space:]]*${GHZ_VERSION}"; then
  echo "ghz ${GHZ_VERSION} already in $tools/bin"
else
  command -v go >/dev/null || { echo "install-bench-deps.sh: go is needed for ghz (apt-get install golang-go)" >&2; exit 1; }
  mkdir -p "$tools/bin"
  GOBIN="$tools/bin" go install "github.com/bojand/ghz/cmd/ghz@${GHZ_VERSION}"
fi
echo "bench tools: $(command -v h2load) $tools/bin/ghz"
