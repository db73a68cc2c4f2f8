#!/usr/bin/env bash
# Installs what the reliability checks need, as root on Debian bookworm:
# clang 14 with its libFuzzer/sanitizer runtimes (tests/fuzz, -DRD_FUZZ=ON)
# and redis-server for the fault-injection suite (tests/faults). ThreadSanitizer
# builds (scripts/run-tsan.sh) use gcc from build-essential. Safe to run
# again: it skips what is already there.
set -euo pipefail

DEBS=(clang libclang-rt-14-dev llvm redis-server)
missing=()
for p in "${DEBS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "fuzz tools: $(command -v clang) ($(clang --version | head -1))"
