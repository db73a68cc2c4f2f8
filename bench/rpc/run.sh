#!/usr/bin/env bash
# The RPC benchmark: builds a release recoveryd and the null server in
# build-perf/, then runs bench/rpc/run.py (recoveryd vs the bare gRPC core,
# alternating, same load, same machine). docs/PERFORMANCE.md explains the
# method and the figures.
#
#   bench/rpc/run.sh [--quick] [run.py options...]
#
#   --no-build       use the binaries already in the build directory (a tree that
#                    is mid-edit elsewhere need not compile)
#   --quick          one round of short runs, 20,000 tools for the memory test (~2 min)
#   (default)        eleven throughput rounds, three latency rounds, 100,000 tools (~23 min)
#   --skip LIST      parts to leave out: workers2,redis,memory,profile,ghz
#   --server-cores / --client-cores   taskset lists (default 0 and 1)
#
# Environment: RD_BENCH_BUILD (default build-perf), RD_BENCH_OUT (default
# $RD_BENCH_BUILD/bench-rpc), RD_TOOLS (ghz in its bin/, default build-tools).
# Install the tools first with scripts/install-bench-deps.sh.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
build="${RD_BENCH_BUILD:-$root/build-perf}"
out="${RD_BENCH_OUT:-$build/bench-rpc}"
tools="${RD_TOOLS:-$root/build-tools}"

ghz="$tools/bin/ghz"
[[ -x "$ghz" ]] || ghz="$(command -v ghz || true)"
for tool in h2load protoc curl taskset "$ghz"; do
  if [[ -z "$tool" ]] || ! command -v "$tool" >/dev/null; then
    echo "run.sh: ${tool:-ghz} not found; run scripts/install-bench-deps.sh" >&2
    exit 1
  fi
done

build_first=true
args=()
for arg in "$@"; do
  if [[ "$arg" == --no-build ]]; then build_first=false; else args+=("$arg"); fi
done
if $build_first; then
  # The image's build: Release, profile-guided (scripts/build-release.sh).
  "$root/scripts/build-release.sh" "$build" null_server store_sizes
fi

exec python3 "$root/bench/rpc/run.py" --recoveryd "$build/recoveryd" \
  --null-server "$build/bench/rpc/null_server" --ghz "$ghz" --out "$out" ${args[@]+"${args[@]}"}
