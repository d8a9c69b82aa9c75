#!/usr/bin/env bash
# bench-ring.sh — builds and measures the decision ring: ns per record written, records/s read, against the targets (100 ns, 1 M/s).
# usage: scripts/bench-ring.sh [RECORDS]   (default 5 000 000 per run)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh >/dev/null
build/test/bench/ring_bench "${1:-5000000}"
