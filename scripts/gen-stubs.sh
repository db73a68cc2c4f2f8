#!/usr/bin/env bash
# Regenerates every committed client stub under stubs/ from proto/.
#
#   scripts/gen-stubs.sh            write into stubs/ (the committed copies)
#   scripts/gen-stubs.sh --out DIR  write the same tree into DIR instead
#                                   (tests/stubs/test_stubs_fresh.sh diffs it)
#
# The generators are pinned (scripts/install-stub-deps.sh installs them):
#   python  grpcio-tools 1.66.2 (brings its own protoc)
#   go      Debian protoc 3.21 + protoc-gen-go v1.36.11 + protoc-gen-go-grpc v1.6.1
#   node    proto-loader-gen-types (@grpc/proto-loader, locked in
#           stubs/node/package-lock.json), declarations emitted by tsc
#   c       Debian protoc-c 1.4
# Java is generated at build time by protobuf-maven-plugin from a copy of the
# proto inside the module (so it ships in the jars); that copy is written here.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/stubs"
if [ "${1:-}" = "--out" ]; then
  out="$(mkdir -p "$2" && cd "$2" && pwd)"
fi
tools="${RD_STUB_TOOLS:-$root/build-stubs-tools}"
py="$tools/venv/bin/python"
proto_rel=recovery/v1/recovery.proto
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

need() { command -v "$1" >/dev/null || [ -x "$1" ] || { echo "gen-stubs: $1 missing; run scripts/install-stub-deps.sh" >&2; exit 1; }; }
need protoc; need protoc-c; need "$py"; need "$tools/bin/protoc-gen-go"; need "$tools/bin/protoc-gen-go-grpc"
[ -x "$root/stubs/node/node_modules/.bin/proto-loader-gen-types" ] ||
  { echo "gen-stubs: stubs/node/node_modules missing; run scripts/install-stub-deps.sh" >&2; exit 1; }

gen_python() {
  local dest="$out/python/src/recoveryd_client/v1"
  mkdir -p "$work/py" "$dest"
  "$py" -m grpc_tools.protoc -I "$root/proto" --python_out="$work/py" --pyi_out="$work/py" \
    --grpc_python_out="$work/py" "$proto_rel"
  # The package ships the modules inside recoveryd_client.v1, so the service
  # module imports its messages relatively instead of from a top-level
  # `recovery` package.
  sed -i 's/^from recovery\.v1 import recovery_pb2 as/from . import recovery_pb2 as/' \
    "$work/py/recovery/v1/recovery_pb2_grpc.py"
  cp "$work/py/recovery/v1/recovery_pb2.py" "$work/py/recovery/v1/recovery_pb2.pyi" \
     "$work/py/recovery/v1/recovery_pb2_grpc.py" "$dest/"
}

gen_go() {
  local mod=github.com/recoveryd/recoveryd/stubs/go
  mkdir -p "$out/go"
  PATH="$tools/bin:$PATH" protoc -I "$root/proto" \
    --go_out="$out/go" --go_opt=module="$mod" \
    --go-grpc_out="$out/go" --go-grpc_opt=module="$mod" "$proto_rel"
}

gen_node() {
  local node_dir="$root/stubs/node" dest="$out/node"
  # Inside stubs/node so tsc resolves @grpc/grpc-js from its node_modules.
  local ts="$node_dir/.gen-ts"
  rm -rf "$ts"; mkdir -p "$ts" "$dest/proto/recovery/v1"
  cp "$root/proto/$proto_rel" "$dest/proto/$proto_rel"
  # Options must match the loader options in stubs/node/src/client.js.
  "$node_dir/node_modules/.bin/proto-loader-gen-types" --grpcLib=@grpc/grpc-js \
    --longs=Number --enums=String --defaults --oneofs --keepCase \
    --includeDirs="$root/proto" --outDir="$ts" "$proto_rel" >/dev/null
  rm -rf "$dest/types/generated"
  (cd "$ts" && "$node_dir/node_modules/.bin/tsc" --declaration --emitDeclarationOnly \
      --skipLibCheck --target es2020 --module commonjs --moduleResolution node \
      --outDir "$dest/types/generated" $(find . -name '*.ts' | sort))
  rm -rf "$ts"
}

gen_java() {
  mkdir -p "$out/java/src/main/proto/recovery/v1"
  cp "$root/proto/$proto_rel" "$out/java/src/main/proto/$proto_rel"
}

gen_c() {
  mkdir -p "$out/c/generated"
  protoc-c -I "$root/proto" --c_out="$out/c/generated" "$proto_rel"
}

gen_python
gen_go
gen_node
gen_c
gen_java
echo "gen-stubs: wrote $out"
