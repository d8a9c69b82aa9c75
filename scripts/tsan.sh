#!/usr/bin/env bash
# tsan.sh — runs the shim built with ThreadSanitizer (or the plain one under helgrind) inside threaded hosts and reports every race that names it.
# Usage: scripts/tsan.sh [--helgrind] [--build DIR]
#   Hosts: our 32-thread connection churn, iperf3 -P 8 both ways, a JVM's HttpClient with 8 parallel
#   downloads (when java is installed), across two namespaces with sobasd answering, so the probe's
#   helper thread runs too. Exit 1 when a report has a frame in libsobas.so, 0 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."

tool=tsan
build=
while [ $# -gt 0 ]; do
  case $1 in
    --helgrind) tool=helgrind; shift ;;
    --build) build=$2; shift 2 ;;
    -h|--help) sed -n 2,6p "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "tsan.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done

if [ "$tool" = tsan ]; then
  build=${build:-build-tsan}
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DSOBAS_SANITIZE=thread >/dev/null
else
  build=${build:-build}
fi
cmake --build "$build" -j "$(nproc)" --target sobas sobasd stress_threads >/dev/null

out=$(mktemp -d /tmp/sobas-$tool.XXXXXX)
lib=$PWD/$build/shim/libsobas.so
# The emulated WAN (100 Mb/s, 20 ms): the probe, and so the shim's helper thread, runs only for flows
# that cross a real round trip. The emulator comes from the plain build: instrumented, it would lag.
[ -d build ] || { echo "tsan.sh: no build/ for the path emulator; run scripts/build.sh first" >&2; exit 1; }
cmake --build build --target wanemu >/dev/null
tb=t$((RANDOM % 10000))
scripts/testbed.sh up --name "$tb" --cc cubic >/dev/null
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; scripts/testbed.sh down --name "$tb" >/dev/null' EXIT
in_snd() { ip netns exec "$tb-snd" "$@"; }
build/test/wan/wanemu --a "$tb-snd:wan0" --b "$tb-rcv:wan1" --rate 100M --delay 10ms --limit 500k \
  --ready "$out/ready" >/dev/null 2>&1 3>&- &
pids+=($!)
for _ in $(seq 250); do [ -e "$out/ready" ] && break; sleep 0.02; done

# Preloaded hosts measure flows from the first 64 KiB (loopback ones too) and log them.
export SOBAS_TRACK_LOOPBACK=1 SOBAS_BULK_BYTES=64K SOBAS_LOG=$out/sobas.log SOBAS_RING=$out/ring
if [ "$tool" = tsan ]; then
  # The runtime first in the preload list; reports go to files, and a race never stops the host.
  export TSAN_OPTIONS="log_path=$out/report halt_on_error=0 exitcode=0 report_signal_unsafe=0"
  preload="$(gcc -print-file-name=libtsan.so):$lib"
  host() { local what=$1; shift; echo "== $what" >&2; ip netns exec "$tb-rcv" env LD_PRELOAD="$preload" "$@"; }
else
  host() {
    local what=$1; shift; echo "== $what" >&2
    # valgrind hands LD_PRELOAD on to the program it runs, beside its own preloads
    ip netns exec "$tb-rcv" env LD_PRELOAD="$lib" valgrind --tool=helgrind --log-file="$out/report.%p" "$@"
  }
fi

www=$out/www
mkdir -p "$www"
head -c $((32 * 1024 * 1024)) /dev/zero > "$www/f"
in_snd "$build/bin/sobasd" --user root >/dev/null 2>&1 3>&- &
pids+=($!)
in_snd iperf3 -s -p 5201 >/dev/null 2>&1 3>&- &
pids+=($!)
in_snd python3 -m http.server 8080 --bind 10.80.1.1 -d "$www" >/dev/null 2>&1 3>&- &
pids+=($!)
for port in 5201 8080; do
  for _ in $(seq 100); do in_snd ss -Hltn "sport = :$port" | grep -q LISTEN && break; sleep 0.05; done
done

host "stress_threads: 32 threads open, use and close 640 connections (loopback)" "$build/test/programs/stress_threads"
host "iperf3 -P 8, receiving" iperf3 -c 10.80.1.1 -P 8 -R -t 5 >/dev/null
host "iperf3 -P 8, sending" iperf3 -c 10.80.1.1 -P 8 -t 5 >/dev/null
if command -v java >/dev/null && [ "$tool" = tsan ]; then  # a JVM under helgrind would take minutes
  # A JVM: many threads of its own, and HttpClient's selector and executor threads moving the sockets.
  host "java HttpClient, 8 parallel downloads" java test/programs/ParallelGet.java "http://10.80.1.1:8080/f" 8 >/dev/null
fi

# One report per block: TSan's between ==== lines, helgrind's from its headline to its ---- line. It is
# ours when a frame is in the shim: libsobas.so, or one of shim/'s sources (helgrind names the file).
shim_src=$(cd shim && ls *.c | paste -sd'|' | sed 's/\./\\./g')
total=0 ours=0
for r in "$out"/report.*; do
  [ -f "$r" ] || continue
  # (through the environment: awk -v would take the regex's backslashes for escapes)
  counts=$(SRC_RE="libsobas\.so|[(/ ](${shim_src}):[0-9]" awk -v tool="$tool" '
    function flush() { if (n) { total++; if (shim) { ours++; printf "%s", blk > "/dev/stderr" } } n = 0; shim = 0; blk = "" }
    tool == "tsan" && /^==================$/ { flush(); next }
    tool == "tsan" && /^WARNING: ThreadSanitizer/ { n = 1 }
    tool == "helgrind" && /^==[0-9]+== -+$/ { flush(); next }
    tool == "helgrind" && /^==[0-9]+== (Possible data race|Thread #[0-9]+:|Thread #[0-9]+ unlocked|Thread #[0-9]+.s call to)/ { n = 1 }
    n { blk = blk $0 "\n"; if ($0 ~ ENVIRON["SRC_RE"]) shim = 1 }
    END { flush(); print total + 0, ours + 0 }' "$r" 2>>"$out/ours.txt")
  total=$((total + ${counts% *}))
  ours=$((ours + ${counts#* }))
done
[ "$ours" -eq 0 ] || { cat "$out/ours.txt"; echo; }
probed=$(grep -c 'ev=probe .*what=status status=active' "$out/sobas.log" || true)
echo "$tool: $(grep -c 'ev=open' "$out/sobas.log") flows measured, $probed probed by the helper thread;" \
  "$total reports, $ours naming libsobas.so"
[ "$ours" -eq 0 ] || { echo "tsan.sh: every report kept in $out" >&2; exit 1; }
# The emulated WAN is there so that the helper thread runs: a run where it never did checked less.
[ "$probed" -gt 0 ] || { echo "tsan.sh: no flow was probed: the probe's helper thread never ran" >&2; exit 1; }
rm -rf "$out" # nothing of ours to look at (the hosts' own reports, e.g. the JVM's, are not ours to fix)
