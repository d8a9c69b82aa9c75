#!/usr/bin/env bash
# fuzz.sh — builds the libFuzzer targets in test/fuzz/ with clang (ASan+UBSan) and runs each for a bounded time.
# usage: scripts/fuzz.sh [--time SECONDS] [TARGET...]   (default 60 s each, every target)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=60
if [ "${1:-}" = --time ]; then
  secs=${2:?--time needs seconds}
  shift 2
fi
[[ "$secs" =~ ^[0-9]+$ ]] || { echo "fuzz: --time needs a whole number of seconds" >&2; exit 2; }
cc=$(command -v clang-14 || command -v clang || true)
[ -n "$cc" ] || { echo "fuzz: no clang (scripts/install-deps.sh installs clang-14)" >&2; exit 1; }
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=($(cd test/fuzz && ls *_fuzz.c | sed 's/\.c$//'))
out=build/fuzz
mkdir -p "$out"

# The code each target exercises (the pure C pieces only).
sources_of() {
  case $1 in
    probe_decode_fuzz) echo shim/probe_wire.c ;;
    ring_read_fuzz) echo shim/ring.c ;;
    *) echo "fuzz: unknown target $1" >&2; return 1 ;;
  esac
}

# Seeds: one valid datagram of every type, from the independent Python encoder the e2e tests use;
# for the ring, a valid 4-record ring with two records written.
seed() {
  local t=$1 dir=$2
  if [ "$t" = ring_read_fuzz ]; then
    python3 - "$dir" <<'PY'
import struct, sys
cap = 4
head = struct.pack("<QHHIIIqII", 0x31474e5253424f53, 1, 0, 4096, 256, cap, 0, 0, 0).ljust(64, b"\0")
head += struct.pack("<Q", 2).ljust(64, b"\0") + bytes(4096 - 128)
recs = b"".join(struct.pack("<QQ", 2 * n + 2, 0).ljust(256, b"\0") for n in range(2)) + bytes(256 * (cap - 2))
open(f"{sys.argv[1]}/ring4", "wb").write(head + recs)
PY
    return
  fi
  python3 - "$dir" <<'PY'
import sys
sys.path.insert(0, "test/wan")
from probe_client import encode, PROBE, ECHO, TRAIN_REQ, TRAIN
flow = ("10.80.2.1", 50000, "10.80.1.1", 8080)
seeds = {"probe": encode(PROBE, flow, 7, 1, ts=5), "echo": encode(ECHO, flow, 7, 1, ts=5, rsp=3),
         "train_req": encode(TRAIN_REQ, flow, 7, 1, trains=5, train_len=32, size=1400),
         "train": encode(TRAIN, flow, 7, 1, trains=2, train_len=3, size=200)}
for name, data in seeds.items():
    if name == "train":  # TRAIN's count sits where TRAIN_REQ has pkt_size
        data = bytearray(data); data[56:58] = (32).to_bytes(2, "big"); data = bytes(data)
    open(f"{sys.argv[1]}/{name}", "wb").write(data)
PY
}

for t in "${targets[@]}"; do
  src=$(sources_of "$t")
  "$cc" -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -D_GNU_SOURCE -Iinclude \
    "test/fuzz/$t.c" $src -o "$out/$t"
  mkdir -p "$out/$t.corpus"
  seed "$t" "$out/$t.corpus"
done

# The targets run side by side, one per core: each is a single process, and the time given is each one's.
declare -A pids
for t in "${targets[@]}"; do
  echo "fuzz: $t for ${secs}s"
  max_len=2048
  [ "$t" = ring_read_fuzz ] && max_len=8192
  "$out/$t" -max_total_time="$secs" -max_len="$max_len" -print_final_stats=1 "$out/$t.corpus" 2>"$out/$t.log" &
  pids[$t]=$!
done
failed=0
for t in "${targets[@]}"; do
  if wait "${pids[$t]}"; then
    echo "fuzz: $t $(grep -E "stat::number_of_executed_units|stat::new_units_added" "$out/$t.log" | tr '\n' ' ')"
  else
    tail -40 "$out/$t.log" >&2
    echo "fuzz: $t FAILED (crash input in $(pwd))" >&2
    failed=1
  fi
done
exit $failed
