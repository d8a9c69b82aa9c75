#!/usr/bin/env bash
# bench-overhead.sh — what the shim costs its host, measured side by side in one run, printed as ratios.
#   loopback iperf3 throughput (loopback skipped / tracked), connections per second, and callgrind
#   instructions the shim adds per send()/recv() on its fast path.
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${SOBAS_BENCH_REPS:-5}
SECS=${SOBAS_BENCH_SECS:-4}

scripts/install-deps.sh >/dev/null
scripts/build.sh >/dev/null
LIB=$PWD/build/shim/libsobas.so
BENCH=$PWD/build/test/bench

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }

# -- iperf3 over loopback: plain, shim skipping loopback (the default), shim tracking loopback.
port=$((30000 + RANDOM % 20000))
iperf3_bps() { # env assignments for the client
  iperf3 -s -p $port -1 -D >/dev/null 2>&1
  sleep 0.2
  env "$@" iperf3 -c 127.0.0.1 -p $port -t "$SECS" -J -C cubic | python3 -c \
    'import json, sys; print(int(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]))'
}
plain=() skip=() track=()
for _ in $(seq "$REPS"); do   # interleaved, so drift in the machine hits all three alike
  plain+=("$(iperf3_bps X=1)")
  skip+=("$(iperf3_bps LD_PRELOAD="$LIB")")
  track+=("$(iperf3_bps LD_PRELOAD="$LIB" SOBAS_TRACK_LOOPBACK=1)")
done
p=$(printf '%s\n' "${plain[@]}" | median); s=$(printf '%s\n' "${skip[@]}" | median); t=$(printf '%s\n' "${track[@]}" | median)

# -- connections per second (loopback skipped, then tracked)
cplain=() cskip=() ctrack=()
for _ in $(seq "$REPS"); do
  cplain+=("$("$BENCH/conn_rate" 20000)")
  cskip+=("$(LD_PRELOAD="$LIB" "$BENCH/conn_rate" 20000)")
  ctrack+=("$(LD_PRELOAD="$LIB" SOBAS_TRACK_LOOPBACK=1 "$BENCH/conn_rate" 20000)")
done
cp=$(printf '%s\n' "${cplain[@]}" | median); cs=$(printf '%s\n' "${cskip[@]}" | median); ct=$(printf '%s\n' "${ctrack[@]}" | median)

# -- callgrind: instructions per call. The difference between N and 2N iterations cancels start-up
#    (constructor, dlsym) and leaves the per-call cost of 2N calls (N send + N recv).
ir() { # iterations env-assignments... -- prints callgrind's "Collected" instruction count
  local n=$1; shift
  env "$@" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$BENCH/io_fastpath" "$n" 2>&1 |
    awk '/Collected/ { print $NF }'
}
d1=$(( $(ir 20000 LD_PRELOAD="$LIB" SOBAS_TRACK_LOOPBACK=1) - $(ir 20000 X=1) ))
d2=$(( $(ir 40000 LD_PRELOAD="$LIB" SOBAS_TRACK_LOOPBACK=1) - $(ir 40000 X=1) ))
per_call=$(awk -v a="$d1" -v b="$d2" 'BEGIN { printf "%.1f", (b - a) / (2 * 20000) }')

printf '%-52s %14s %14s %8s %8s\n' "measure (median of $REPS)" "without" "with" "ratio" "target"
printf '%-52s %14s %14s %8s %8s\n' "iperf3 loopback Mb/s, loopback skipped (default)" $((p / 1000000)) $((s / 1000000)) "$(ratio "$s" "$p")" ">=0.98"
printf '%-52s %14s %14s %8s %8s\n' "iperf3 loopback Mb/s, loopback tracked" $((p / 1000000)) $((t / 1000000)) "$(ratio "$t" "$p")" ">=0.98"
printf '%-52s %14s %14s %8s %8s\n' "connections/s, loopback skipped (default)" "$cp" "$cs" "$(ratio "$cs" "$cp")" ">=0.95"
printf '%-52s %14s %14s %8s %8s\n' "connections/s, loopback tracked" "$cp" "$ct" "$(ratio "$ct" "$cp")" ">=0.95"
printf '%-52s %14s %14s %8s %8s\n' "instructions added per send()/recv() (callgrind)" "" "$per_call" "" "<=50"
