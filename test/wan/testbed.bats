#!/usr/bin/env bats
# testbed.bats — the emulated WAN is faithful: RTT, rate and DropTail losses of a 100 Mb/s / 40 ms path, and clean teardown.

load wan

setup_file() {
  REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
  export REPO WAN=${SOBAS_BUILD_DIR:-$REPO/build}/test/wan
  [ "$(id -u)" = 0 ] || { echo "the testbed needs root" >&2; return 1; }
  [ -x "$WAN/wanemu" ] || { echo "no $WAN/wanemu: build first" >&2; return 1; }
  export TB=t$RANDOM
  export ORIG_CC=$(sysctl -n net.ipv4.tcp_allowed_congestion_control)
  "$REPO/scripts/testbed.sh" up --name "$TB" >/dev/null
  # Servers die with the namespaces at teardown; disowned, so bats does not report their end.
  ip netns exec "$TB-snd" "$WAN/wanping" --echo 7001 3>&- &
  disown
  ip netns exec "$TB-rcv" iperf3 -s -p 5201 3>&- >/dev/null 2>&1 &
  disown
  # A second server for the test after the 0.25-BDP one: stopping the emulator as a lossy test's
  # client exits can leave the server busy with it (iperf_error).
  ip netns exec "$TB-rcv" iperf3 -s -p 5202 3>&- >/dev/null 2>&1 &
  disown
}

teardown_file() {
  "$REPO/scripts/testbed.sh" down --name "$TB" >/dev/null
}

# Starts the emulator on the 100 Mb/s, 40 ms path with a DropTail buffer of LIMIT bytes (and wanemu
# options after it).
start_emu() {
  rm -f "$BATS_TEST_TMPDIR/ready"
  "$WAN/wanemu" --a "$TB-snd:wan0" --b "$TB-rcv:wan1" --rate 100M --delay 20ms --limit "$@" \
    --stats "$BATS_TEST_TMPDIR/emu.json" --series "$BATS_TEST_TMPDIR/series" --ready "$BATS_TEST_TMPDIR/ready" 3>&- &
  EMU=$!
  for _ in $(seq 100); do [ -e "$BATS_TEST_TMPDIR/ready" ] && return 0; sleep 0.02; done
  return 1
}

stop_emu() {
  kill "$EMU"
  wait "$EMU" || true
}

# iperf_error JSON: prints iperf3's error and succeeds when the run had one. The server serves one test
# at a time, and one whose end the stopped emulator cut off keeps it busy (measured: "the server is busy
# running a test" in 4 attempts 1 s apart right after the 0.25-BDP test).
iperf_error() {
  python3 -c "import json,sys; e=json.load(open(sys.argv[1])).get('error'); print(f'iperf3: {e}'); sys.exit(0 if e else 1)" "$1"
}

# cubic_through PORT LIMIT [WANEMU OPTIONS]: an 8 s CUBIC transfer (its first 2 s left out, iperf3 -O 2)
# to the iperf3 server on PORT through the emulator started with start_emu LIMIT..., into iperf.json
# and emu.json. A run is valid only when the emulator kept its timing
# (emu_valid: no link frozen by host stalls for over 3% of the run, whose lost time comes straight off
# the goodput), the kernel dropped nothing before it, and the host made it drop nothing (host_drops: a
# CI run with neither of the others read 0.910, CUBIC cut by such losses); an invalid run (a busy
# machine) is reported and retried, never judged, and after 4 the test is skipped.
cubic_through() {
  local attempt why made d0 d1 port=$1
  shift
  for attempt in 1 2 3 4; do
    start_emu "$@"
    d0=$(tun_drops)
    ip netns exec "$TB-snd" iperf3 -c 10.80.2.1 -p "$port" -C cubic -O 2 -t 8 -J > "$BATS_TEST_TMPDIR/iperf.json"
    d1=$(tun_drops)
    stop_emu
    made=$(host_drops "$BATS_TEST_TMPDIR/series" 100000000 | wc -l)
    if why=$(iperf_error "$BATS_TEST_TMPDIR/iperf.json"); then sleep 1
    elif ! why=$(emu_valid "$BATS_TEST_TMPDIR/emu.json"); then :
    elif [ "$d1" -ne "$d0" ]; then why="$((d1 - d0)) TUN drops"
    elif [ "$made" -gt 0 ]; then why="$made drop episodes the host made"
    else return 0
    fi
    echo "attempt $attempt invalid: $why"
  done
  skip "no valid run in 4 attempts: the host is too busy to emulate the path"
}

emu_field() { # DIRECTION FIELD
  python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]][sys.argv[3]])" \
    "$BATS_TEST_TMPDIR/emu.json" "$1" "$2"
}

tun_drops() {
  ip -n "$TB-snd" -s -j link show dev wan0 | python3 -c "import json,sys; print(json.load(sys.stdin)[0]['stats64']['tx']['dropped'])"
}

# The emulator's delay shows in every reply, the host's lateness (steal time, a busy CI run) only in
# some: the 10th percentile judges the delay, within 1 ms, and the median only the jitter, within 5
# ms. A CI pre-check at 9d07d76 read a median of 41.7 ms against a first bar of 1 ms on the median,
# while the host was too busy for the next test to get one valid run in 4. A run whose link the host
# froze (emu_valid) is retried, as the goodput test's are.
@test "idle UDP ping RTT is within 1 ms of the emulated 40 ms" {
  local attempt why
  for attempt in 1 2 3 4; do
    start_emu 500000
    ip netns exec "$TB-rcv" "$WAN/wanping" --to 10.80.1.1:7001 --duration 2s --out "$BATS_TEST_TMPDIR/ping"
    stop_emu
    why=$(emu_valid "$BATS_TEST_TMPDIR/emu.json") && break
    echo "attempt $attempt invalid: $why"
    [ "$attempt" -lt 4 ] || skip "no valid run in 4 attempts: the host is too busy to emulate the path"
  done
  run python3 -c "
import statistics, sys
rtts = [float(l.split()[2]) / 1000 for l in open(sys.argv[1])]
ok = sorted(r for r in rtts if r >= 0)
p10, med = ok[len(ok) // 10], statistics.median(ok)
print(f'{len(ok)}/{len(rtts)} replies, 10th percentile {p10:.3f} ms, median {med:.3f} ms')
sys.exit(0 if len(ok) == len(rtts) >= 150 and abs(p10 - 40) < 1 and abs(med - 40) < 5 else 1)" "$BATS_TEST_TMPDIR/ping"
  echo "$output"
  [ "$status" -eq 0 ]
}

@test "a CUBIC transfer's goodput is within 5% of the header-adjusted rate, with no TUN drops" {
  # The first 2 s are left out (cubic_through): a slow start that overshoots a 1-BDP buffer loses
  # tens to hundreds of packets, and how long CUBIC takes to recover from that is CUBIC's, not the
  # emulator's (a CI run that was valid by every check read 0.913 over 8 s with them in; 10 runs with
  # them out read 0.996-0.999).
  cubic_through 5201 500000
  run python3 -c "
import json, sys
end, emu = json.load(open(sys.argv[1]))['end'], json.load(open(sys.argv[2]))
got = end['sum_received']['bits_per_second']
want = 100e6 * 1448 / 1500
retrans, drops = end['sum_sent']['retransmits'], emu['fwd']['drop_queue']
frozen, wall = emu['fwd']['stall_lag_ms'], emu['wall_s']
print(f'goodput {got / 1e6:.2f} Mb/s, header-adjusted C {want / 1e6:.2f} Mb/s, ratio {got / want:.3f};',
      f'{retrans} retransmits after slow start, {drops} queue drops in all, link frozen {frozen:.0f} ms of {wall:.1f} s')
sys.exit(0 if abs(got / want - 1) <= 0.05 else 1)" "$BATS_TEST_TMPDIR/iperf.json" "$BATS_TEST_TMPDIR/emu.json"
  echo "$output"
  [ "$status" -eq 0 ]
}

@test "a 0.25-BDP buffer makes CUBIC lose packets in slow start; queue drops equal its retransmits" {
  start_emu 125000
  ip netns exec "$TB-snd" iperf3 -c 10.80.2.1 -p 5201 -C cubic -t 3 -J > "$BATS_TEST_TMPDIR/iperf.json"
  stop_emu
  drops=$(emu_field fwd drop_queue)
  retrans=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['end']['sum_sent']['retransmits'])" \
    "$BATS_TEST_TMPDIR/iperf.json")
  echo "queue drops $drops, sender retransmits $retrans, reverse drops $(emu_field rev drop_queue)"
  [ "$drops" -gt 10 ]
  [ "$(emu_field rev drop_queue)" -eq 0 ]
  [ "$drops" -eq "$retrans" ]
}

# Cross traffic made up inside the link (wanemu --fwd-cross, what the 1 Gb/s benchmark path uses)
# takes the link's time as real UDP would: CUBIC gets what it leaves. It crosses no TUN device, so it
# shows only in the emulator's counters.
@test "cross traffic the emulator makes up takes its rate of the link; CUBIC gets the rest" {
  cubic_through 5202 500000 --fwd-cross 40M
  run python3 -c "
import json, sys
end, emu = json.load(open(sys.argv[1]))['end'], json.load(open(sys.argv[2]))
got = end['sum_received']['bits_per_second']
cross = emu['fwd']['virt_out'] * 1500 * 8 / emu['wall_s']
room = (100e6 - 40e6) * 1448 / 1500
print(f'goodput {got / 1e6:.2f} Mb/s beside {cross / 1e6:.2f} Mb/s made up ({emu[\"fwd\"][\"virt_out\"]} packets),',
      f'header-adjusted room {room / 1e6:.2f}, ratio {got / room:.3f}; late {emu[\"fwd\"][\"late_mean_us\"]:.1f} us')
sys.exit(0 if 0.85 * 40e6 <= cross <= 40.5e6 and 0.95 <= got / room <= 1.10 else 1)" "$BATS_TEST_TMPDIR/iperf.json" "$BATS_TEST_TMPDIR/emu.json"
  echo "$output"
  [ "$status" -eq 0 ]
}

@test "the emulator rejects bad arguments with a clear message" {
  run "$WAN/wanemu" --a "$TB-snd:wan0" --b "$TB-rcv:wan1" --rate 100Mbytes
  [ "$status" -eq 2 ]
  [[ $output == *"bad value '100Mbytes' for --rate"* ]]
  run "$WAN/wanemu" --a "$TB-snd:wan0" --b "$TB-rcv:wan1" --fwd-cross 0
  [ "$status" -eq 2 ]
  [[ $output == *"bad value '0' for --fwd-cross"* ]]
  run "$WAN/wanemu" --a nocolon --b "$TB-rcv:wan1"
  [ "$status" -eq 2 ]
  [[ $output == *"want NAMESPACE:DEVICE"* ]]
  run "$WAN/wanemu" --a "nosuchns:wan0" --b "$TB-rcv:wan1"
  [ "$status" -eq 1 ]
  [[ $output == *"/run/netns/nosuchns"* ]]
}

@test "teardown leaves no namespace, process or host setting behind" {
  start_emu 500000
  "$REPO/scripts/testbed.sh" down --name "$TB" >/dev/null
  # wanemu loses its devices with the namespaces; it must not linger.
  wait "$EMU" || true
  [ -z "$(ip netns list | grep "^$TB-" || true)" ]
  [ -z "$(pgrep -f "wanemu --a $TB-" || true)" ]
  [ ! -e "/run/sobas-testbed/$TB" ]
  # The host's allowed congestion controls are back as they were, unless another testbed is up.
  if [ -z "$(ls /run/sobas-testbed 2>/dev/null | grep -v allowed_cc)" ]; then
    [ "$(sysctl -n net.ipv4.tcp_allowed_congestion_control)" = "$ORIG_CC" ]
  fi
  # Running 'down' twice is harmless.
  "$REPO/scripts/testbed.sh" down --name "$TB" >/dev/null
}
