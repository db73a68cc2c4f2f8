#!/usr/bin/env bash
# Runs every libFuzzer target of a build for a bounded time over its seed
# corpus and fails when any of them finds a crash, a leak, a hang or a
# sanitizer report.
#
#   tests/fuzz/run_bounded.sh BUILD_DIR [SECONDS]
#
# BUILD_DIR holds the fuzz_* binaries (build-fuzz/tests/fuzz). SECONDS per
# target defaults to 20; RD_FUZZ_JOBS targets run at once (default: the
# number of cores). Seeds come from tests/fuzz/corpus/<target>/ (target =
# the binary's name without fuzz_) and are never modified: new inputs go to
# a scratch corpus. Findings are kept in $RD_FUZZ_OUT (default
# BUILD_DIR/findings): crash-*, leak-*, timeout-* and each target's log.
# Reproduce one with: BUILD_DIR/fuzz_<target> FINDINGS_FILE
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:?usage: run_bounded.sh BUILD_DIR [SECONDS]}"
seconds="${2:-20}"
jobs="${RD_FUZZ_JOBS:-$(nproc)}"
out="${RD_FUZZ_OUT:-$build/findings}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

mapfile -t targets < <(find -L "$build" -maxdepth 1 -type f -name 'fuzz_*' -perm -u+x -printf '%f\n' | sort)
if ((${#targets[@]} == 0)); then
  echo "run_bounded.sh: no fuzz_* binaries in $build (build with CC=clang -DRD_FUZZ=ON)" >&2
  exit 2
fi
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

run_one() {
  local target=$1 name=${1#fuzz_}
  local seeds="$here/corpus/$name" work="$scratch/$name"
  mkdir -p "$work"
  [[ -d "$seeds" ]] || seeds=""
  # -timeout: one input taking 10 s is a hang; -rss_limit_mb: runaway memory.
  "$build/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$out/$name-" "$work" $seeds \
      > "$out/$name.log" 2>&1
  local rc=$?
  local runs cov
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$out/$name.log" | grep -o '[0-9]*$')
  cov=$(grep -o 'cov: [0-9]*' "$out/$name.log" | tail -1 | grep -o '[0-9]*')
  if ((rc == 0)); then
    printf '%-28s ok      %9s runs  cov %s\n' "$target" "${runs:-?}" "${cov:-?}"
  else
    printf '%-28s FAILED  exit %d, see %s\n' "$target" "$rc" "$out/$name.log"
    grep -m1 -E 'ERROR: |SUMMARY: |fuzz [a-z/.A-Z]*:' "$out/$name.log" | sed 's/^/    /'
  fi
  return $rc
}

echo "fuzzing ${#targets[@]} targets, ${seconds}s each, $jobs at a time"
failed=0 running=0
for t in "${targets[@]}"; do
  run_one "$t" &
  running=$((running + 1))
  if ((running >= jobs)); then
    wait -n || failed=$((failed + 1))
    running=$((running - 1))
  fi
done
while ((running > 0)); do
  wait -n || failed=$((failed + 1))
  running=$((running - 1))
done
echo "fuzz: $((${#targets[@]} - failed)) passed, $failed failed"
((failed == 0))
