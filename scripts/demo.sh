#!/usr/bin/env bash
# demo.sh — the main job: installs, builds, then downloads a file across a rate-limited path between two
# namespaces with and without sobas, and prints what the shim measured.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD

MIB=${SOBAS_DEMO_MIB:-64}
RATE=${SOBAS_DEMO_RATE:-100mbit}

scripts/install-deps.sh
scripts/build.sh

. test/lib/netns.bash
NETNS_NAME=sobas-demo-$$
WORK=$(mktemp -d)
cleanup() { netns_down "$NETNS_NAME"; rm -rf "$WORK"; }
trap cleanup EXIT INT TERM
netns_up "$NETNS_NAME"
# The tight link: a token bucket on the server's egress. (This kernel has no netem: the emulator of
# long-RTT paths with DropTail buffers comes with the WAN testbed.)
in_srv tc qdisc add dev "${NETNS_NAME:0:8}-s" root tbf rate "$RATE" burst 32kb latency 100ms
for ns in srv cli; do ip netns exec "$NETNS_NAME-$ns" sysctl -qw net.ipv4.tcp_congestion_control=bbr; done

head -c $((MIB * 1024 * 1024)) /dev/urandom > "$WORK/file"
in_srv python3 -m http.server 8080 --bind $NETNS_SRV_IP -d "$WORK" >/dev/null 2>&1 &
wait_port 8080

download() { # label, prefix command...
  local label=$1; shift
  local t0 t1
  t0=$(date +%s.%N)
  in_cli "$@" wget -q -O "$WORK/got-$label" "http://$NETNS_SRV_IP:8080/file"
  t1=$(date +%s.%N)
  cmp -s "$WORK/file" "$WORK/got-$label" || { echo "demo: $label download differs!" >&2; exit 1; }
  awk -v b=$((MIB * 1024 * 1024)) -v a="$t0" -v z="$t1" -v l="$label" \
    'BEGIN { printf "%-16s %6.2f s  %7.1f Mb/s  (sha256 identical)\n", l, z - a, b * 8 / (z - a) / 1e6 }'
}

echo "== $MIB MiB over a $RATE path (TBF), TCP BBR, wget"
download "without sobas"
download "with sobas" "$REPO/build/bin/sobas" --log "$WORK/sobas.log"

echo
echo "== what the shim measured (SOBAS_LOG, one line per 2·RTT window)"
awk '/ev=window/ && n++ < 5 { print substr($0, 1, 200) }' "$WORK/sobas.log"
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
