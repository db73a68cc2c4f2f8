#!/usr/bin/env bash
# Fails when the committed stubs under stubs/ are stale against proto/:
# regenerates everything into a temporary directory with the pinned
# generators (scripts/gen-stubs.sh --out) and diffs the generated files.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

"$root/scripts/gen-stubs.sh" --out "$tmp" >/dev/null

generated=(
  python/src/recoveryd_client/v1/recovery_pb2.py
  python/src/recoveryd_client/v1/recovery_pb2.pyi
  python/src/recoveryd_client/v1/recovery_pb2_grpc.py
  go/recoveryv1
  node/proto
  node/types/generated
  c/generated
  java/src/main/proto
)
stale=0
for path in "${generated[@]}"; do
  if ! diff -r "$tmp/$path" "$root/stubs/$path" >"$tmp/diff.txt" 2>&1; then
    echo "STALE stubs/$path (run scripts/gen-stubs.sh):"
    cut -c1-200 "$tmp/diff.txt" | head -20
    stale=$((stale + 1))
  fi
done
total=${#generated[@]}
echo "stubs fresh: $((total - stale)) passed, $stale failed"
[ "$stale" -eq 0 ]
