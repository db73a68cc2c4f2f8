#!/usr/bin/env bash
# The Release build of recoveryd that the image ships and the benchmark
# measures: optimized with a profile of a training run (profile-guided).
#
#   scripts/build-release.sh BUILD_DIR [EXTRA_TARGET...]
#
# 1. configure BUILD_DIR with -DRD_PGO=generate and build recoveryd
#    (instrumented);
# 2. run it on the calls of scripts/pgo/calls.txt (scripts/pgo-train.py),
#    which writes the profile next to the objects;
# 3. reconfigure with -DRD_PGO=use and build recoveryd and EXTRA_TARGETs.
# Needs, besides the build packages, python3, protoc and h2load
# (nghttp2-client): scripts/install-deps.sh installs them.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -ge 1 ]] || { echo "usage: scripts/build-release.sh BUILD_DIR [EXTRA_TARGET...]" >&2; exit 2; }
build="$1"
shift
for tool in python3 protoc h2load; do
  command -v "$tool" >/dev/null || {
    echo "build-release.sh: $tool not found; run scripts/install-deps.sh --build-only" >&2
    exit 1
  }
done
jobs="$(nproc)"

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DRD_E2E=OFF -DRD_PGO=generate >/dev/null
cmake --build "$build" -j"$jobs" --target recoveryd >/dev/null
find "$build" -name '*.gcda' -delete # a profile of older code would only be refused
python3 scripts/pgo-train.py "$build/recoveryd"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DRD_E2E=OFF -DRD_PGO=use >/dev/null
cmake --build "$build" -j"$jobs" --target recoveryd "$@" >/dev/null
echo "build-release.sh: $build/recoveryd (profile-guided)"
