#!/usr/bin/env bash
# Installs what recoveryd needs, as root on Debian bookworm. Safe to run
# again: it skips what is already there.
#
#   scripts/install-deps.sh --run         what building and running recoveryd needs (make run)
#   scripts/install-deps.sh --test        everything every test needs (make test): the above,
#                                         the test packages, the Python venv (.venv), Go and the
#                                         Go tools (build-tools/), the client stubs' toolchains
#   scripts/install-deps.sh --build-only  only what compiling recoveryd needs (image build stage)
#   scripts/install-deps.sh --runtime     only the shared libraries recoveryd runs with
#                                         (image runtime stage)
#   add --list to print the selected Debian packages, one a line, and install nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
WHO=install-deps

# Compiling recoveryd: headers, code generators, the health proto.
BUILD_DEBS=(build-essential cmake pkg-config
            libgrpc-dev protobuf-c-compiler libprotobuf-c-dev libyaml-dev
            libhiredis-dev grpc-proto protobuf-compiler
            libmicrohttpd-dev libjansson-dev libssl-dev zlib1g-dev)
# The profile-guided Release build's training run (scripts/build-release.sh:
# the image's build stage and the benchmark).
RELEASE_DEBS=(python3 nghttp2-client)
# Every test on top of those: cmocka, the sanitizers' and libFuzzer's clang,
# Redis, the e2e venv, the deployment tests' network namespaces (iproute2)
# and process checks (procps), TLS fixtures (openssl), and curl/unzip for
# the Go toolchain; the image test builds and runs deploy/Dockerfile with
# podman and buildah (daemonless; runc works where crun refuses a cgroup v1
# host) on a Debian base it bootstraps with debootstrap.
TEST_DEBS=(libcmocka-dev clang libclang-rt-14-dev llvm redis-server
           python3-venv iproute2 procps openssl curl unzip ca-certificates git
           podman buildah runc debootstrap)
# The runtime packages of the libraries the -dev packages above link against
# (keep the two lists in step; tests/deploy checks that the binary's shared
# libraries all come from these and their dependencies).
RUNTIME_DEBS=(libgrpc29 libprotobuf-c1 libyaml-0-2 libhiredis0.14 libmicrohttpd12 libjansson4 libatomic1
              libssl3 zlib1g)

mode=
list_only=false
for arg in "$@"; do
  case "$arg" in
    --run)        mode=run ;;
    --test)       mode=test ;;
    --build-only) mode=build ;;
    --runtime)    mode=runtime ;;
    --list)       list_only=true ;;
    -h|--help)    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "$WHO: unknown option '$arg' (try --help)" >&2; exit 2 ;;
  esac
done
[ -n "$mode" ] || { echo "$WHO: say what for: --run, --test, --build-only or --runtime (try --help)" >&2; exit 2; }

case "$mode" in
  run)     DEBS=("${BUILD_DEBS[@]}") ;;
  build)   DEBS=("${BUILD_DEBS[@]}" "${RELEASE_DEBS[@]}") ;;
  test)    DEBS=("${BUILD_DEBS[@]}" "${RELEASE_DEBS[@]}" "${TEST_DEBS[@]}") ;;
  runtime)   DEBS=("${RUNTIME_DEBS[@]}") ;;
esac

if $list_only; then
  printf '%s\n' "${DEBS[@]}"
  exit 0
fi

rd_apt_install "$WHO" "${DEBS[@]}"
[ "$mode" = test ] || exit 0

# The end-to-end, fault and deployment tests talk to recoveryd over real
# gRPC from Python, and the check of the rules file's category weights fits
# them again with scikit-learn. The requirements file is the source of
# truth: re-run pip when it is newer than the venv's stamp.
if [ ! -x .venv/bin/python ] || [ tests/e2e/requirements.txt -nt .venv/.requirements-stamp ]; then
  [ -x .venv/bin/python ] || python3 -m venv .venv || rd_fail "$WHO" "python3 -m venv .venv failed (Debian package python3-venv)"
  echo "$WHO: installing tests/e2e/requirements.txt into .venv from PyPI"
  .venv/bin/pip install -q --disable-pip-version-check -r tests/e2e/requirements.txt ||
    rd_fail "$WHO" "pip could not install tests/e2e/requirements.txt from PyPI"
  touch .venv/.requirements-stamp
fi

# Go, pinned, and the Go programs the tests drive as an operator would:
# grpcurl (reflection), kustomize (the Kubernetes manifests) and
# grpc-health-probe (the image test's Kubernetes-style probe).
rd_go_env "$WHO"
rd_go_install "$WHO" "github.com/fullstorydev/grpcurl/cmd/grpcurl@$GRPCURL_VERSION" grpcurl
rd_go_install "$WHO" "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION" kustomize
# promlint: the Prometheus client library's linter over our /metrics
# (tests/tools/promlint, its versions pinned in go.mod/go.sum).
if [ ! -x "$RD_TOOLS/bin/promlint" ] || [ tests/tools/promlint/go.sum -nt "$RD_TOOLS/bin/promlint" ]; then
  echo "$WHO: building tests/tools/promlint through the Go module proxy"
  mkdir -p "$RD_TOOLS/bin"
  (cd tests/tools/promlint && go build -o "$RD_TOOLS/bin/promlint" .) ||
    rd_fail "$WHO" "building tests/tools/promlint failed (Go module proxy $(rd_go_proxy))"
fi
GOTOOLCHAIN=$GRPC_HEALTH_PROBE_GO \
  rd_go_install "$WHO" "github.com/grpc-ecosystem/grpc-health-probe@$GRPC_HEALTH_PROBE_VERSION" grpc-health-probe

# The client stubs' toolchains (Go plugins, Node, Java, the stubs' venv).
scripts/install-stub-deps.sh
echo "$WHO: everything the tests need is installed"
