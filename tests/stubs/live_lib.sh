# What the stub tests that start their own recoveryd servers share: a
# temporary directory ($tmp, the working directory) removed with every
# process listed in pids on exit, fail, and free_port.
# Sourced after `set -euo pipefail`; sets root to the checkout.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
tmp="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "$(basename "$0" .sh): FAIL: $*" >&2; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
cd "$tmp"
