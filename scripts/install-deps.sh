#!/usr/bin/env bash
# Installs what building and testing recoveryd needs, on Debian bookworm as
# root: the Debian packages, and a Python venv (.venv) for the end-to-end
# tests. Safe to run again: it skips what is already there.
#
#   scripts/install-deps.sh               build + test packages and the venv (default)
#   scripts/install-deps.sh --build-only  only what compiling recoveryd needs (image build stage)
#   scripts/install-deps.sh --runtime     only the shared libraries recoveryd runs with
#                                         (image runtime stage)
#   add --list to print the selected Debian packages, one a line, and install nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

# Compiling recoveryd (headers, code generators, the health proto), and
# the training run of the profile-guided Release build (python3, h2load;
# scripts/build-release.sh).
BUILD_DEBS=(build-essential cmake pkg-config
            libgrpc-dev protobuf-c-compiler libprotobuf-c-dev libyaml-dev
            libhiredis-dev grpc-proto protobuf-compiler
            libmicrohttpd-dev libjansson-dev libssl-dev zlib1g-dev python3 nghttp2-client)
# Running the tests on top of that.
TEST_DEBS=(redis-server libcmocka-dev python3-venv clang libclang-rt-14-dev llvm)
# The runtime packages of the libraries the -dev packages above link against
# (keep the two lists in step; tests/deploy checks that the binary's shared
# libraries all come from these and their dependencies).
RUNTIME_DEBS=(libgrpc29 libprotobuf-c1 libyaml-0-2 libhiredis0.14 libmicrohttpd12 libjansson4 libatomic1
              libssl3 zlib1g)

mode=all
list_only=false
for arg in "$@"; do
  case "$arg" in
    --build-only) mode=build ;;
    --runtime)    mode=runtime ;;
    --list)       list_only=true ;;
    -h|--help)    sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install-deps.sh: unknown option '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

case "$mode" in
  all)     DEBS=("${BUILD_DEBS[@]}" "${TEST_DEBS[@]}") ;;
  build)   DEBS=("${BUILD_DEBS[@]}") ;;
  runtime) DEBS=("${RUNTIME_DEBS[@]}") ;;
esac

if $list_only; then
  printf '%s\n' "${DEBS[@]}"
  exit 0
fi

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

[ "$mode" = all ] || exit 0

# The end-to-end tests talk to recoveryd over real gRPC from Python.
# The requirements file is the source of truth: re-run pip when it is newer
# than the venv's stamp.
if [ ! -x .venv/bin/python ] || [ tests/e2e/requirements.txt -nt .venv/.requirements-stamp ]; then
  [ -x .venv/bin/python ] || python3 -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check -r tests/e2e/requirements.txt
  touch .venv/.requirements-stamp
fi

# grpcurl drives the reflection test, as an operator would use it.
GOBIN_DIR="$(go env GOPATH 2>/dev/null)/bin"
if command -v go >/dev/null && [ ! -x "$GOBIN_DIR/grpcurl" ]; then
  go install github.com/fullstorydev/grpcurl/cmd/grpcurl@v1.9.4
fi
