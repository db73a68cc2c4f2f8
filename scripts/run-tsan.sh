#!/usr/bin/env bash
# ThreadSanitizer run (docs/RELIABILITY.md): builds recoveryd and the store
# and server unit tests with -fsanitize=thread (gcc) into build-tsan/, runs
# the unit tests that exercise threads, then the end-to-end concurrency and
# shutdown tests and the fault suite's process faults (SIGTERM, SIGKILL of a
# replica, reloads under load) against the TSan recoveryd. Any data race
# report fails the run; the reports are listed at the end.
#
#   scripts/run-tsan.sh [BUILD_DIR]        (default build-tsan)
#
# libgrpc, absl and libprotobuf-c come from Debian and are not instrumented:
# TSan cannot see the synchronization inside them, so reports whose frames
# are all inside those libraries are suppressed by tests/faults/tsan.supp
# (which names library frames only; nothing of ours is suppressed).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build-tsan}"
jobs="${JOBS:-$(nproc)}"
reports="$build/tsan-reports"
cd "$root"

UNIT_TESTS=(test_store_memory test_store_redis test_store_redis_scripts test_store_redis_in_place
            test_store_redis_replicas test_store_redis_outages test_store_redis_cache
            test_store_redis_batches test_store_redis_cluster test_ops_watch
            test_metrics_counters test_metrics_exposition test_metrics_http)
# End-to-end tests whose server runs many threads at once. Deselected: the
# ones that time a 300 ms breaker window or count calls per second, which a
# TSan build (5-15x slower) cannot meet; they prove nothing about races.
E2E_TESTS=(test_concurrency.py test_shutdown.py test_ops_shutdown.py)
E2E_DESELECT="not racing_failures_open and not half_open_grants_exactly_one and not test_sigterm_lets_in_flight_calls_finish"
# The fault suite's process faults: SIGTERM under load, SIGKILL of a replica
# (Redis store, degraded-mode threads), reloads under load.
FAULT_TESTS=(test_process_faults.py)

start=$(date +%s)
CC=gcc cmake -S . -B "$build" -DRD_TSAN=ON -DRD_E2E=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$jobs" --target recoveryd "${UNIT_TESTS[@]}"

rm -rf "$reports"
mkdir -p "$reports"
# halt_on_error=0: see every race of a run; exitcode=66 still fails the
# process. log_path: recoveryd's reports land in files, not in its JSON log.
# history_size=7 (the most): the far side of a hand-over through libgrpc
# (e.g. received metadata filled by one of its threads, freed by a worker)
# can be older than a smaller history keeps; without that stack the
# library-only suppressions cannot match and the report stands (the
# called_from_lib lines of tsan.supp cover the allocation side of it).
export TSAN_OPTIONS="suppressions=$root/tests/faults/tsan.supp second_deadlock_stack=1 history_size=7 exitcode=66 log_path=$reports/tsan"

failed=0
for t in "${UNIT_TESTS[@]}"; do
  echo "== unit $t"
  if ! (cd "$build" && ./"$t"); then
    echo "FAILED: $t"
    failed=$((failed + 1))
  fi
done

echo "== e2e ${E2E_TESTS[*]} against the TSan recoveryd"
if ! (cd tests/e2e && "$root/.venv/bin/python" -m pytest -q -p no:cacheprovider \
        --recoveryd="$build/recoveryd" -k "$E2E_DESELECT" "${E2E_TESTS[@]}"); then
  echo "FAILED: end-to-end tests under TSan"
  failed=$((failed + 1))
fi
echo "== faults ${FAULT_TESTS[*]} against the TSan recoveryd"
if ! (cd tests/faults && "$root/.venv/bin/python" -m pytest -q -p no:cacheprovider \
        --recoveryd="$build/recoveryd" "${FAULT_TESTS[@]}"); then
  echo "FAILED: fault tests under TSan"
  failed=$((failed + 1))
fi

n_reports=$(find "$reports" -type f | wc -l)
if ((n_reports > 0)); then
  echo "ThreadSanitizer reports ($n_reports files in $reports):"
  grep -h -A12 "WARNING: ThreadSanitizer" "$reports"/* | head -200
  failed=$((failed + 1))
fi
echo "tsan: ${#UNIT_TESTS[@]} unit programs, ${#E2E_TESTS[@]} e2e and ${#FAULT_TESTS[@]} fault files in $(( $(date +%s) - start ))s; $n_reports report files"
if ((failed)); then
  echo "tsan: FAILED ($failed problems)"
  exit 1
fi
echo "tsan: clean"
