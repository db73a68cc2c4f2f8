#!/usr/bin/env bash
# Installs what building and testing recoveryd needs, on Debian bookworm as
# root: the Debian packages, and a Python venv (.venv) for the end-to-end
# tests. Safe to run again: it skips what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

DEBS=(build-essential cmake pkg-config
      libgrpc-dev protobuf-c-compiler libprotobuf-c-dev libyaml-dev
      libhiredis-dev redis-server grpc-proto libcmocka-dev
      python3-venv)

missing=()
for p in "${DEBS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The end-to-end tests talk to recoveryd over real gRPC from Python.
if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c "import grpc, grpc_tools, pytest" 2>/dev/null; then
  python3 -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check -r tests/e2e/requirements.txt
fi
