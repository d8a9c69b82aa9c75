#!/usr/bin/env bash
# test.sh — installs dependencies, builds, and runs every test: unit and end-to-end, plain and under ASan+UBSan, and the shim under TSan.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each part's header says when it began, so that a run's log shows where its minutes went.
part() { echo "== $1 (at $((SECONDS / 60)) min $((SECONDS % 60)) s)"; }

scripts/install-deps.sh
scripts/build.sh --asan
scripts/setup-venv.sh

part "unit tests"
ctest --test-dir build --output-on-failure
part "unit tests (ASan+UBSan)"
ctest --test-dir build-asan --output-on-failure

tap=$(mktemp)
trap 'rm -f "$tap"' EXIT

status=0
part "fuzzing (libFuzzer, 20 s per target; longer: scripts/fuzz.sh --time S)"
scripts/fuzz.sh --time 20 || status=1

part "end-to-end"
bats test/e2e | tee -a "$tap" || status=1

# The sanitized shim runs inside uninstrumented programs: the ASan runtime must come first in the
# preload list. Leak checking is off: it would report the host programs' own leaks, not ours.
part "end-to-end (ASan+UBSan shim)"
SOBAS_BUILD_DIR=$PWD/build-asan \
SOBAS_ASAN_RUNTIME=$(gcc -print-file-name=libasan.so) \
ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  bats test/e2e | tee -a "$tap" || status=1

# The emulated WAN is checked once, on the plain build: its tests are about timing, which a
# sanitizer would distort, and then the benchmark's quick mode runs as a smoke test.
part "WAN testbed"
bats test/wan | tee -a "$tap" || status=1

# The shim under ThreadSanitizer inside threaded hosts (the probe's helper thread beside theirs); the
# same hosts under helgrind: scripts/tsan.sh --helgrind.
part "ThreadSanitizer"
scripts/tsan.sh || status=1

# One closing line over all the bats runs (the unit tests' ctest lines are above).
skipped=$(grep -c '^ok .* # skip' "$tap" || true)
passed=$(( $(grep -c '^ok ' "$tap" || true) - skipped ))
failed=$(grep -c '^not ok ' "$tap" || true)
part "done"
echo "end-to-end: $passed passed, $failed failed, $skipped skipped"
exit $status
