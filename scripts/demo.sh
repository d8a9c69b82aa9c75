#!/usr/bin/env bash
# demo.sh — the main job: installs, builds, then downloads a file across an emulated WAN path (100 Mb/s,
# 40 ms, DropTail, UDP cross traffic) with and without sobas, and prints the difference and what the shim measured.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD

MB=${SOBAS_DEMO_MB:-64}
RATE=${SOBAS_DEMO_RATE:-100M}
RTT_MS=${SOBAS_DEMO_RTT_MS:-40}
CROSS=${SOBAS_DEMO_CROSS:-20M}

scripts/install-deps.sh
scripts/build.sh

WAN=$REPO/build/test/wan
TB=demo
WORK=$(mktemp -d)
EMU=
# wanemu first (it writes its report), then the namespaces with everything in them.
cleanup() {
  [ -z "$EMU" ] || { kill "$EMU" 2>/dev/null; wait "$EMU" 2>/dev/null; }
  scripts/testbed.sh down --name $TB >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
scripts/testbed.sh up --name $TB --cc cubic
in_ns() { local ns=$1; shift; ip netns exec "$TB-$ns" "$@"; }

# The tight link: rate, one BDP of DropTail buffer, the delay split over both directions.
limit=$(awk -v r="${RATE%M}" -v t="$RTT_MS" 'BEGIN { printf "%d", r * 1e6 * t / 1000 / 8 }')
"$WAN/wanemu" --a $TB-snd:wan0 --b $TB-rcv:wan1 --rate "$RATE" --delay "$((RTT_MS / 2))ms" \
  --fwd-limit "$limit" --rev-limit 1000000 --stats "$WORK/emu.json" --ready "$WORK/ready" &
EMU=$!
while [ ! -e "$WORK/ready" ]; do sleep 0.05; done
# Unresponsive cross traffic through the same link, and the independent UDP ping's echo.
# (Started directly, not through a shell function, so each $! is the program itself; disowned:
# they die with their namespaces at teardown, and bash need not report it.)
ip netns exec $TB-xr "$WAN/wanflood" --sink 7002 >/dev/null &
disown
ip netns exec $TB-xs "$WAN/wanflood" --to 10.80.12.2:7002 --rate "$CROSS" --mix internet --poisson 2>/dev/null &
disown
ip netns exec $TB-snd "$WAN/wanping" --echo 7001 &
disown

head -c $((MB * 1000000)) /dev/urandom > "$WORK/file"
ip netns exec $TB-snd python3 -m http.server 8080 --bind 10.80.1.1 -d "$WORK" >/dev/null 2>&1 &
disown
# sobasd answers the receiver's side probe (RTT, forward loss, the capacity estimate C').
ip netns exec $TB-snd "$REPO/build/bin/sobasd" 2>/dev/null &
disown
for _ in $(seq 100); do in_ns snd ss -Hltn 'sport = :8080' | grep -q LISTEN && break; sleep 0.05; done
sleep 1 # cross traffic settles

retrans() { in_ns snd awk '/^Tcp:/ { if (h) { print $13 } else h = 1 }' /proc/net/snmp; }
# The tight link's DropTail drops so far: wanemu writes its report on SIGUSR1.
drops() {
  rm -f "$WORK/emu.json"
  kill -USR1 "$EMU"
  while [ ! -e "$WORK/emu.json" ]; do sleep 0.02; done
  python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['fwd']['drop_queue'])" "$WORK/emu.json"
}
download() { # label, prefix command...
  local label=$1; shift
  local r0 t0 t1 r1 d0 d1
  ip netns exec $TB-rcv "$WAN/wanping" --to 10.80.1.1:7001 --out "$WORK/ping-$label" &
  local ping=$!
  r0=$(retrans); d0=$(drops); t0=$(date +%s.%N)
  in_ns rcv "$@" wget -q -O "$WORK/got-$label" "http://10.80.1.1:8080/file"
  t1=$(date +%s.%N); r1=$(retrans); d1=$(drops)
  kill $ping; wait $ping || true
  cmp -s "$WORK/file" "$WORK/got-$label" || { echo "demo: $label download differs!" >&2; exit 1; }
  rm -f "$WORK/got-$label"
  sort -k3 -n "$WORK/ping-$label" | awk -v b=$((MB * 1000000)) -v a="$t0" -v z="$t1" -v l="$label" \
    -v rt=$((r1 - r0)) -v dr=$((d1 - d0)) -v base="$RTT_MS" '
    $3 >= 0 { v[++n] = $3 / 1000 }
    END { printf "%-14s %6.2f s  %6.1f Mb/s   RTT p50 %6.1f ms  p95 %6.1f ms (base %d)   retransmits %d   link drops %d   identical\n",
          l, z - a, b * 8 / (z - a) / 1e6, v[int(n * 0.5) + 1], v[int(n * 0.95) + 1], base, rt, dr }'
}

echo
echo "== $MB MB download (wget), $RATE/${RTT_MS} ms path, 1-BDP DropTail buffer, $CROSS UDP cross traffic, CUBIC sender"
download "without sobas"
download "with sobas" env SOBAS_RING="$WORK/ring" "$REPO/build/bin/sobas" --log "$WORK/sobas.log"
echo
echo "== sobas-top --once (the monitor; the flow has just closed, so it shows its last state)"
"$REPO/build/bin/sobas-top" --ring "$WORK/ring" --once | cut -c1-200

echo
echo "== what the shim measured and decided (SOBAS_LOG: a line per 2·RTT window, and its decisions)"
awk '/ev=window/ && n++ < 5 { print substr($0, 1, 200) }' "$WORK/sobas.log"
grep -E " ev=(probe|decision) " "$WORK/sobas.log" | cut -c1-220
echo "   ..."
field() { grep -o " $1=[^ ]*" | cut -d= -f2; }   # values of one key, one per line
windows=$(grep -c 'ev=window' "$WORK/sobas.log")
median_bps=$(grep 'ev=window' "$WORK/sobas.log" | field rx_bps | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
mean_rtt_us=$(grep 'ev=window' "$WORK/sobas.log" | field rcv_rtt_us | awk '{ s += $1 } END { print s / NR }')
close=$(grep 'ev=close' "$WORK/sobas.log")
awk -v n="$windows" -v r="$median_bps" -v t="$mean_rtt_us" \
  'BEGIN { printf "windows: %d   median rate: %.1f Mb/s   mean receiver RTT: %.2f ms\n", n, r / 1e6, t / 1000 }'
echo "flow $(echo "$close" | field peer) -> $(echo "$close" | field local):" \
  "bytes_received=$(echo "$close" | field bytes_received) app_rx=$(echo "$close" | field app_rx)" \
  "retrans=$(echo "$close" | field retrans)"
echo
echo "(The probe lines are the UDP side probe: C' from sobasd's packet trains caps slow start at"
echo " 1.2·C'·T. The decision lines are SOBAS at work: once the receive rate is flat, the window is held at"
echo " S = R·T with T the base RTT, so the queue the first download kept never builds. The full comparison"
echo " of contenders is scripts/bench-wan.sh; its latest results are in results/wan/results.md.)"
