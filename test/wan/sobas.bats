#!/usr/bin/env bats
# sobas.bats — SOBAS end to end on the emulated WAN: a real download, the receiver (or the server) preloaded, against plain CUBIC.

load wan
bats_require_minimum_version 1.5.0  # `run !`

setup_file() {
  REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
  BUILD=${SOBAS_BUILD_DIR:-$REPO/build}
  export REPO BUILD WAN=$BUILD/test/wan LIB=$BUILD/shim/libsobas.so
  [ "$(id -u)" = 0 ] || { echo "the testbed needs root" >&2; return 1; }
  [ -x "$WAN/wanemu" ] && [ -f "$LIB" ] || { echo "build first" >&2; return 1; }
  export TB=s$RANDOM FILE_MB=200  # the paper's transfer size
  "$REPO/scripts/testbed.sh" up --name "$TB" --cc cubic >/dev/null
  # Sparse files, served from the page cache: the paper's 200 MB; 100 MB where a slower flow or a later
  # decision makes it enough; 40 MB for the slow lossy path and where slow start alone tells.
  truncate -s "${FILE_MB}M" "$BATS_FILE_TMPDIR/file"
  truncate -s 100M "$BATS_FILE_TMPDIR/mid"
  truncate -s 40M "$BATS_FILE_TMPDIR/small"
  ip netns exec "$TB-snd" "$WAN/wanping" --echo 7001 3>&- &
  disown
  # No sobasd here: these are the engine's kernel-signal bars (the probe fails over to them within
  # 500 ms); the probe's own end-to-end checks are probe.bats.
  wan_serve "$BATS_FILE_TMPDIR"
  # The same files from a preloaded server (its sending flows steered), logging to SERVER_LOG.
  export SERVER_LOG=$BATS_FILE_TMPDIR/server.log
  head -c 100M /dev/urandom > "$BATS_FILE_TMPDIR/random"
  ip netns exec "$TB-snd" env LD_PRELOAD="$LIB" SOBAS_LOG="$SERVER_LOG" \
    python3 -m http.server 8081 --bind 10.80.1.1 -d "$BATS_FILE_TMPDIR" >/dev/null 2>&1 3>&- &
  disown
  for _ in $(seq 100); do ip netns exec "$TB-snd" ss -Hltn 'sport = :8081' | grep -q LISTEN && return 0; sleep 0.05; done
  echo "the preloaded HTTP server did not start" >&2
  return 1
}

teardown_file() {
  "$REPO/scripts/testbed.sh" down --name "$TB" >/dev/null
}

# stop_server: ends the server a test started (SRV). teardown calls it too, so the server ends with the
# test whether it passed, failed or skipped: a skip inside valid_download left the wake test's server
# on port 8083, and the nginx test after it could not bind there (CI pre-checks 114, 116 and 117: nginx
# "Address already in use", its 8 downloads served by the leftover, no ring).
stop_server() {
  [ -n "${SRV:-}" ] || return 0
  kill "$SRV" 2>/dev/null || true
  wait "$SRV" 2>/dev/null || true
  SRV=
}
teardown() { stop_server; }

retrans() { ip netns exec "$TB-snd" awk '/^Tcp:/ { if (h) { print $13 } else h = 1 }' /proc/net/snmp; }

# competitor NAME START DURATION CC: a bulk iperf3 flow from P-xs to P-xr through the tight link,
# START seconds from now for DURATION seconds; NAME.arrive and NAME.leave get its monotonic times.
# Echoes the pid to kill; competitor_stop ends whatever is left of it.
competitor() {
  local name=$1 start=$2 dur=$3 cc=$4 dir=$BATS_TEST_TMPDIR
  ip netns exec "$TB-xr" iperf3 -s -1 -p 5202 >/dev/null 2>&1 3>&- &
  for _ in $(seq 100); do ip netns exec "$TB-xr" ss -Hltn 'sport = :5202' | grep -q LISTEN && break; sleep 0.05; done
  ( sleep "$start"; mono > "$dir/$name.arrive"
    ip netns exec "$TB-xs" iperf3 -c 10.80.12.2 -p 5202 -t "$dur" -C "$cc" >/dev/null 2>&1
    mono > "$dir/$name.leave" ) >/dev/null 2>&1 3>&- &
  echo $!
}
competitor_stop() {
  kill "$1" 2>/dev/null || true
  local h pid
  for h in xs xr; do for pid in $(ip netns pids "$TB-$h"); do
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = iperf3 ] && kill "$pid" 2>/dev/null
  done; done
  wait "$1" 2>/dev/null || true
}

# download NAME plain|sobas|off LIMIT_BYTES LOSS CROSS_RATE [FILE]: one download across the
# 100 Mb/s, 40 ms path; leaves NAME.{log,ping,result} in the test's tmpdir, the result as
# "bytes seconds retrans_total retrans_at_decision". COMPETITOR="START DURATION CC" adds a competing
# TCP flow (START 0: already filling the buffer when the download starts); PORT=8081 asks the
# preloaded server instead of the plain one; OUT=FILE keeps what was downloaded; CROSS_FOR=D ends the
# cross traffic D (wanflood's --duration) after it starts, 1 s before the download; POLICY and BDP_BYTES
# set a preloaded receiver's SOBAS_POLICY and SOBAS_BDP_BYTES.
download() {
  local name=$1 mode=$2 limit=$3 loss=$4 cross=$5 file=${6:-file} dir=$BATS_TEST_TMPDIR
  rm -f "$dir/ready" "$dir/$name".*  # a repeated attempt starts afresh (the shim appends to its log)
  "$WAN/wanemu" --a "$TB-snd:wan0" --b "$TB-rcv:wan1" --rate 100M --delay 20ms --fwd-limit "$limit" \
    --rev-limit 1000000 --fwd-loss "$loss" --stats "$dir/$name.emu" --ready "$dir/ready" 3>&- &
  local emu=$! flood= i
  for i in $(seq 250); do [ -e "$dir/ready" ] && break; sleep 0.02; done
  [ -e "$dir/ready" ] || { echo "wanemu did not attach" >&2; kill "$emu" 2>/dev/null; return 1; }
  if [ "$cross" != 0 ]; then
    ip netns exec "$TB-xs" "$WAN/wanflood" --to 10.80.12.2:7002 --rate "$cross" --mix internet --poisson \
      ${CROSS_FOR:+--duration "$CROSS_FOR"} 2>/dev/null 3>&- &
    flood=$!
    sleep 1
  fi
  local comp=
  if [ -n "${COMPETITOR:-}" ]; then
    local cstart cdur ccc
    read -r cstart cdur ccc <<< "$COMPETITOR"
    comp=$(competitor "$name" "$cstart" "$cdur" "$ccc")
    [ "$cstart" = 0 ] && sleep 3 # it fills the buffer first
  fi
  ip netns exec "$TB-rcv" "$WAN/wanping" --to 10.80.1.1:7001 --out "$dir/$name.ping" 3>&- &
  local ping=$!
  # The sender's retransmit counter when the receiver's engine decides: "none after the decision".
  ( r=; while [ -z "$r" ]; do grep -q ' to=decided ' "$dir/$name.log" 2>/dev/null && r=$(retrans); sleep 0.02; done
    echo "$r" > "$dir/$name.at_decision" ) 3>&- &
  local watch=$!
  local r0 env=()
  r0=$(retrans)
  case $mode in
    sobas) env=(env LD_PRELOAD="$LIB" SOBAS_LOG="$dir/$name.log" ${POLICY:+SOBAS_POLICY=$POLICY}
                ${BDP_BYTES:+SOBAS_BDP_BYTES=$BDP_BYTES}) ;;
    off) env=(env LD_PRELOAD="$LIB" SOBAS_LOG="$dir/$name.log" SOBAS_POLICY=off) ;;
    *) env=(env) ;;
  esac
  local out
  out=$(fetch "http://10.80.1.1:${PORT:-8080}/$file" "${env[@]}")
  local r1
  r1=$(retrans)
  kill "$ping" $flood 2>/dev/null || true  # a flood given CROSS_FOR may have ended already
  wait "$ping" $flood 2>/dev/null || true
  [ -z "$comp" ] || competitor_stop "$comp"
  kill "$watch" 2>/dev/null || true # it has usually seen the decision and ended
  wait "$watch" 2>/dev/null || true
  kill "$emu"; wait "$emu" || true
  local at=-1
  [ -e "$dir/$name.at_decision" ] && at=$(( $(cat "$dir/$name.at_decision") - r0 ))
  echo "$out $((r1 - r0)) $at" > "$dir/$name.result"
}

# fetch URL ENV...: one curl download in the receiver namespace (under ENV, with CURL_OPTS), as "bytes
# seconds" into OUT (default: discarded). CLIENTS=N runs N of them at once, into OUT.1..OUT.N: every byte over the
# time until the last one ended.
fetch() {
  local url=$1 n=${CLIENTS:-1} dir=$BATS_TEST_TMPDIR
  shift
  if [ "$n" = 1 ]; then
    ip netns exec "$TB-rcv" "$@" curl -sS --fail ${CURL_OPTS:-} -o "${OUT:-/dev/null}" -w '%{size_download} %{time_total}' "$url"
    return
  fi
  local i t0 pids=() total=0 rc=0
  t0=$(mono)
  for i in $(seq "$n"); do
    ip netns exec "$TB-rcv" "$@" curl -sS --fail -o "${OUT:-/dev/null}${OUT:+.$i}" -w '%{size_download}' "$url" \
      > "$dir/fetch.$i" 3>&- &
    pids+=($!)
  done
  for i in "${pids[@]}"; do wait "$i" || rc=$?; done
  [ "$rc" = 0 ] || { echo "a concurrent download failed ($rc)" >&2; return 1; }
  for i in $(seq "$n"); do total=$((total + $(cat "$dir/fetch.$i"))); done
  echo "$total $(python3 -c "import time; print(time.monotonic() - $t0)")"
}

# valid_download NAME ARGS...: download until a run is valid (at most 4 attempts); an invalid run is
# reported and repeated, never judged; four invalid runs skip the test.
valid_download() {
  local attempt why
  for attempt in 1 2 3 4; do
    download "$@" || return 1
    why=$(emu_valid "$BATS_TEST_TMPDIR/$1.emu") && return 0
    echo "$1: attempt $attempt invalid: $why"
  done
  # Nothing about the flow was measured: the host, not sobas, failed (a red run here would be noise).
  skip "$1: no valid run in 4 attempts (the last: $why): the host is too busy to emulate the path"
}

# Judges one sobas run against the issue's bars; prints the measurements first.
# The whole-transfer bar is MIN_TOTAL of A (default 0.95). The held flow must make MIN_HELD of A (default
# 0.95) once the sender fills S: a decision on const-rate-drop follows a loss, and CUBIC then regrows its
# cwnd from ~0.7·W for several seconds (measured 57 -> 75 Mb/s over ~8 s while S allowed 77), which no
# receiver window can speed up; so that bar is the second half of the held time, and the S held over that
# half must allow MIN_S of A (default 0.95) at the base RTT. That is the S after any lift: stop 32's CI run
# decided flat-rate at 1702 ms on a plateau at 85% of A on a host that skipped 2 other WAN tests for
# stalls, and lifts had S at 103% by 3304 ms (98.2% of A held in the second half). The first decision's S
# must still allow half of A (a decision no lift could mend). RETRANS_AFTER=no: no loss once held (no window
# after the drain sees out-of-order arrivals). The benchmark's bars are stricter (p50 RTT within 5%, no
# retransmission after the decision); here the margins a noisy host does not cross: in 5 back-to-back
# runs of this suite one bloated run read +5.2%, and two decided late in slow start (839 and 845 ms,
# 4 MB offered) and lost 1039 and 1069 segments of that offer's overshoot while it drained, none once held.
judge() { # NAME A_MBPS [MIN_TOTAL MIN_HELD MIN_S RETRANS_AFTER]
  python3 - "$BATS_TEST_TMPDIR" "$1" "$2" "${3:-0.95}" "${4:-0.95}" "${5:-0.95}" "${6:-no}" <<'PY'
import itertools, json, statistics, sys
d, name, a_mbps = sys.argv[1], sys.argv[2], float(sys.argv[3])
min_total, min_held, min_s, retrans_after = float(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6]), sys.argv[7]
size, secs, rt_all, rt_at = open(f"{d}/{name}.result").read().split()
goodput = int(size) * 8 / float(secs) / 1e6
rtts = sorted(float(l.split()[2]) / 1000 for l in open(f"{d}/{name}.ping") if float(l.split()[2]) >= 0)
p50 = statistics.median(rtts)
log = [dict(kv.split("=", 1) for kv in l.split()[1:] if "=" in kv) for l in open(f"{d}/{name}.log")]
dec = [x for x in log if x.get("ev") == "decision" and x.get("to") == "decided"]
assert dec, "the flow never reached the decided state"
s, t_dec = int(dec[0]["s"]), int(dec[0]["t_ms"])
wins = [x for x in log if x.get("ev") == "window" and x.get("role") == "receiver" and int(x["t_ms"]) > t_dec]
rate = lambda ws: sum(int(x["rx_bytes"]) for x in ws) * 8 / (sum(int(x["dur_us"]) for x in ws) / 1e6) / 1e6
late = wins[len(wins) // 2:]
held_mbps, late_mbps = rate(wins), rate(late)
s_mbps = s * 8 / (int(dec[0]["base_rtt_us"]) / 1e6) / 1e6
# Only decided windows hold an S: aside or searching the window is released or under a ceiling the flow
# never reaches; a second half with none held fails the S bar below.
s_late = [int(x["s"]) * 8 / (int(x["base_rtt_us"]) / 1e6) / 1e6 for x in late
          if int(x["s"]) and x.get("state") == "decided"]
s_late_mbps = statistics.median(s_late) if s_late else 0
print(f"{name}: goodput {goodput:.1f} Mb/s ({100 * goodput / a_mbps:.1f}% of A {a_mbps}; "
      f"{held_mbps:.1f} Mb/s = {100 * held_mbps / a_mbps:.1f}% once decided, {100 * late_mbps / a_mbps:.1f}% "
      f"in its second half; S/T {100 * s_mbps / a_mbps:.1f}% decided, {100 * s_late_mbps / a_mbps:.1f}% held in that "
      f"half), RTT p50 {p50:.2f} ms "
      f"(+{100 * (p50 - 40) / 40:.1f}%), S {s} B decided at {t_dec} ms, retransmits {rt_all} total, "
      f"{int(rt_all) - int(rt_at)} after the decision")
# How much the host froze the link: a step aside on this path is the host's (below), and CI pre-check 193
# failed on two of them with no record of it.
e = json.load(open(f"{d}/{name}.emu"))
print(f"  the link frozen {e['fwd']['stall_lag_ms']:.0f} ms of {e['wall_s']:.1f} s ({e['stalls']} host stalls)")
# What the engine did and the windows that saw losses: a failure explains itself.
for x in log:
    if x.get("ev") == "decision" or (x.get("ev") == "window" and int(x.get("ooo", 0))):
        print("  " + " ".join(f"{k}={x[k]}" for k in ("ev", "t_ms", "from", "to", "why", "s", "rtt_us", "rcv_wnd", "ooo") if k in x))
# No competitor shares this path, so a step aside is the host's: the emulator falling behind for a few
# hundred ms makes a queue that stands while the rate sinks, which is what a newcomer looks like (run 2
# of 4 back to back at 3e45233: aside 18.1 s in at a 57.7 ms RTT, decided again 3.4 s later; 97.4% of A
# and +5.5% over the run). What must not happen is to stay aside: one step aside at most, decided again
# within 6 s (the benchmark's bar for coming back is 3 s), and not aside at the end. The windows from
# it to that decision's drain are not held ones; the goodput and RTT bars count them. A step aside less
# than 6 s before the transfer ended is judged by those bars alone: stop 57's CI run stepped aside 19.4 s
# in at a 44.7 ms RTT, came back 2.1 s later (resume), and the 200 MB had arrived before it decided
# again (97.1% of A, +5.1% RTT over the run).
moves = [x for x in log if x.get("ev") == "decision" and int(x["t_ms"]) >= t_dec]
# A step aside moves into state 6; a ceiling set while aside moves within it.
asides = [x for x in moves if x.get("to") == "congested" and x.get("from") != "congested"]
t_end = max(int(x["t_ms"]) for x in log if "t_ms" in x)
assert len(asides) <= 1, f"stepped aside {len(asides)} times (at t_ms {[x['t_ms'] for x in asides]})"
holds = [(dec[0], asides[0] if asides else None)]
if asides:
    t_aside = int(asides[0]["t_ms"])
    back = next((x for x in moves if int(x["t_ms"]) > t_aside and x.get("to") == "decided"), None)
    if back is None and t_end - t_aside < 6000:
        print(f"  stepped aside at {t_aside} ms, {t_end - t_aside} ms before the end: too late to be decided again")
    else:
        assert moves[-1].get("to") != "congested", f"aside at the end (since {moves[-1]['t_ms']} ms)"
        assert back and int(back["t_ms"]) - t_aside <= 6000, f"stepped aside at {t_aside} ms and not decided again within 6 s"
        print(f"  stepped aside at {t_aside} ms, decided again {int(back['t_ms']) - t_aside} ms later")
        holds.append((back, None))
# The offered window is never withdrawn: what was offered at a decision must be consumed first, and its
# edge was measured receding at 65-70% of the receive rate (docs/kernel-facts.md), so the window must be
# down to S by the window after the one whose in-order bytes since the decision reach twice the offer.
# A time bound ((offered - S) / (A/2) + 200 ms) failed a CI run whose right behaviour a loss recovery
# slowed: decided in slow start at 833 ms with 3.8 MB offered, it lost 673 segments of the overshoot,
# rcv_nxt waited on their retransmission (windows with 776, 644, 126 out-of-order arrivals, one at a
# 114 ms RTT), and the window was 649 KB against S 408 KB 822 ms later, past the 906 ms bound. Counted in
# bytes, neither a host stall nor a recovery moves the bound; a lever that does not hold still fails it.
# From then on it must stay within ±10% of the S of its window, or of the window before (a lift raises S
# by 10% for three windows and ends at the S that carries the rate it got).
kept = []
for start, stop in holds:
    t0, t1 = int(start["t_ms"]), int(stop["t_ms"]) if stop else float("inf")
    ws = [x for x in wins if t0 < int(x["t_ms"]) < t1]
    offered, s0 = int(start["rcv_wnd"]), int(start["s"])
    first = next((i for i, x in enumerate(ws) if int(x["rcv_wnd"]) <= 1.1 * s0), None)
    edge = next((i for i, c in enumerate(itertools.accumulate(int(x["rx_bytes"]) for x in ws)) if c >= 2 * offered), len(ws))
    if first is not None:
        print(f"  decided at {t0} ms: rcv_wnd down to S {int(ws[first]['t_ms']) - t0} ms later, in window {first}; "
              f"twice the offer taken in by window {edge}")
    assert first is not None and first <= edge + 1, \
        f"rcv_wnd not down to S by the window after the one that took in twice the {offered} B offered at {t0} ms"
    kept += [(ws[i], ws[max(i - 1, 0)]) for i in range(first, len(ws))]
out = [int(x["rcv_wnd"]) for x, before in kept
       if not 0.9 * min(int(x["s"]), int(before["s"])) <= int(x["rcv_wnd"]) <= 1.1 * max(int(x["s"]), int(before["s"]))]
print(f"  rcv_wnd after the drain: {min(int(x['rcv_wnd']) for x, _ in kept)}..{max(int(x['rcv_wnd']) for x, _ in kept)} over {len(kept)} windows")
assert not out, f"rcv_wnd left ±10% of S: {out[:5]}"
assert goodput >= min_total * a_mbps, f"goodput below {100 * min_total:.0f}% of A"
assert s_mbps >= 0.5 * a_mbps, "the decided S allows less than half of A"
assert s_late_mbps >= min_s * a_mbps, f"the S held in the second half allows less than {100 * min_s:.0f}% of A"
assert late_mbps >= min_held * a_mbps, f"the held flow below {100 * min_held:.0f}% of A"
assert p50 <= 40 * 1.10, "p50 RTT inflation above 10%"
lossy = [x["t_ms"] for x, _ in kept if int(x.get("ooo", 0))]
assert retrans_after != "no" or not lossy, f"losses once held (windows at t_ms {lossy[:5]})"
PY
}

# A on this path: (100 - 20 Mb/s of cross traffic) x 1448/1500 of payload per IP byte.
A=77.2

@test "0.25-BDP buffer, UDP cross traffic: decided, window held at S, no queue, in the best of 3 runs >= 50% of A" {
  # Without the probe's capacity estimate nothing caps slow start: its overshoot into a 10 ms buffer
  # loses ~100 segments, and congestion avoidance then decides on a plateau. On a calm host that was at
  # A (94.5-97.3% of A measured, 0 retransmits once held: the issue's bars, 93% whole, 95% held). On this
  # 2-core VM the plateau is as often CUBIC's slow regrowth beside the Poisson cross traffic, whose
  # jitter gives it the queue flat-rate looks for: on 2026-11-23, 6 runs of this engine and 6 of the one
  # before it decided at S/T 63-90% of A (goodput 52-87%), which is the open part of issue 13 and is
  # measured by the benchmark's `shallow` scenario. Here: the behaviour (decided, the window held at S,
  # no queue), and margins that only a broken engine crosses: S and the goodput at least half of A.
  # 100 MB: ~11 s, held for the last 7-8 (3 runs on it decided 2.7-3.7 s in, 0 retransmits after).
  local i
  for i in 1 2 3; do
    valid_download "shallow$i" sobas 125000 0 20M mid
    judge "shallow$i" $A 0.5 0.5 0.5 yes && return 0
  done
  return 1
}

# The held flow must make 95% of A; the whole transfer, which counts the search before the decision, 90%
# (the benchmark holds 95%): in 5 back-to-back runs of this suite at ada2575, one flow's slow start read a
# 20% rate drop 586 ms in with no retransmission at all (no loss), searched on as congestion
# avoidance while CUBIC regrew, decided on flat-rate at 2376 ms and held 98.8% of A from there: 94.5%
# whole.
@test "2-BDP buffer: plain CUBIC inflates the RTT by over 50%; sobas holds it within 10% (the benchmark: 5%) at >= 95% of A once held" {
  # Plain CUBIC's run only shows the queue it builds, which a link frozen a few percent of the time
  # does not shrink (a CI pre-check skipped this test for it: 4.0% frozen in its 4th attempt). Its
  # sawtooth moves the p50 by tens of ms from run to run (a CI pre-check at 44aaa8d read 79.6 ms
  # against a first bar of +100%, the next run by hand 103.5): +50% still shows a queue five times
  # sobas's bar. The 40 MB file: the queue stands from slow start's end, ~0.5 s in, and CUBIC's cut after
  # its overshoot leaves 0.7 of 3 BDP in flight, still a BDP of queue (2 runs on it read 97.4, 102.4 ms).
  STALL_LIMIT=0.06 valid_download bloated-plain plain 1000000 0 20M small
  valid_download bloated sobas 1000000 0 20M
  plain_p50=$(awk '$3 >= 0 { print $3 / 1000 }' "$BATS_TEST_TMPDIR/bloated-plain.ping" | sort -n |
    awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
  echo "plain CUBIC: RTT p50 $plain_p50 ms, $(cat "$BATS_TEST_TMPDIR/bloated-plain.result")"
  awk -v p="$plain_p50" 'BEGIN { exit !(p > 60) }'
  judge bloated $A 0.90
}

@test "SOBAS_POLICY=off measures and records but never changes the socket" {
  # Any run will do: a link the host froze at times changes neither assertion (4 attempts in a row
  # were once invalid, 3.1-3.7% of the time frozen). The 40 MB file: autotuning grows the window in
  # slow start, and the engine would decide there too, so a longer transfer shows nothing more.
  download off off 1000000 0 20M small
  run ! grep -q ' ev=decision ' "$BATS_TEST_TMPDIR/off.log"
  # Autotuning left alone: the advertised window grows far past any S this path would get.
  max=$(grep ' ev=window ' "$BATS_TEST_TMPDIR/off.log" | grep -o ' rcv_wnd=[0-9]*' | cut -d= -f2 | sort -n | tail -1)
  echo "largest rcv_wnd $max"
  [ "$max" -gt 1000000 ]
}

@test "congested path (random loss): sobas steps aside (S_max, a ceiling it never reaches), goodput >= 98% of plain in one of 2 pairs of runs" {
  # The same seeded loss sequence in both runs: the flows meet the same losses, and measured 6 pairs
  # agree within 0.4%, but a run's goodput can still sink 5% on its own on this host (plain once made
  # 23.8 against 25.1-25.2 Mb/s in 5 other runs): a second pair tells a host's deviation from an engine
  # that holds the flow back, which fails both.
  local i
  for i in 1 2; do
    valid_download "lossy-plain$i" plain 500000 0.0005 0 small
    valid_download "lossy$i" sobas 500000 0.0005 0 small
    python3 - "$BATS_TEST_TMPDIR" "$i" <<'PY' && return 0
import sys
d, i = sys.argv[1], sys.argv[2]
def goodput(n):
    size, secs, *_ = open(f"{d}/{n}.result").read().split()
    return int(size) * 8 / float(secs) / 1e6
log = [dict(kv.split("=", 1) for kv in l.split()[1:] if "=" in kv) for l in open(f"{d}/lossy{i}.log")]
decisions = [(x["t_ms"], x["from"], x["to"], x["why"]) for x in log if x.get("ev") == "decision"]
last = [x for x in log if x.get("ev") == "window" and x.get("role") == "receiver"][-1]
plain, sobas = goodput(f"lossy-plain{i}"), goodput(f"lossy{i}")
print(f"pair {i}: plain {plain:.1f} Mb/s, sobas {sobas:.1f} Mb/s ({100 * sobas / plain:.1f}%); decisions {decisions}; "
      f"last window state={last['state']} s={last['s']}")
assert any(to == "congested" for _, _, to, _ in decisions), "never stepped aside"
# Aside, the flow may search again when its rate comes back (it never does on a lossy path), but
# that search is uncapped: the window must end released, or under the ceiling a receiver keeps aside
# and searching (3x what it has in flight, never reached: at least twice it here).
flight = int(last["rx_bps"]) * int(last["rtt_us"]) / 8e6
assert last["s"] == "0" or (last["state"] in ("congested", "cong-avoid") and int(last["s"]) >= 2 * flight), \
    "held under S_max at the end"
assert sobas >= 0.98 * plain, "goodput below 98% of the plain download"
PY
  done
  return 1
}

# What a competing loss-based flow does to a held window: it keeps the shared buffer full, so S = R·T
# only cedes it more of the path. sobas must see the standing queue and step aside. The throughput
# bar (0.98x plain) is the benchmark's (scripts/bench-wan.sh --only competing); here the behaviour in
# every preloaded run, and a goodput margin in one of 2 pairs: a newcomer's share beside CUBIC turns on
# when its slow start first loses, which no engine decides while it searches uncapped (plain runs
# measured 24-31 Mb/s; a preloaded run lost at 10 Mb/s 0.9 s into slow start, uncapped, and made 13.5
# against its pair's 22.9), so a second pair tells that from an engine that holds the flow back.
@test "a CUBIC flow keeping a 1-BDP buffer full: sobas steps aside and is never held under its share (goodput: one of 2 pairs)" {
  # A link frozen a few percent of the time moves neither a 12 s hold limit nor a 0.6x margin; at 3% this
  # test was skipped in 3 of 4 CI runs on 2026-11-26 (plain runs of ~49 s beside the competitor froze
  # 3.6%): a share of 6%, as the nginx and paced-server tests have.
  export STALL_LIMIT=0.06
  local i
  for i in 1 2; do
    COMPETITOR="0 90 cubic" valid_download "compete-plain$i" plain 500000 0 0 mid
    COMPETITOR="0 90 cubic" valid_download "compete$i" sobas 500000 0 0 mid
    local verdict=0
    python3 - "$BATS_TEST_TMPDIR" "$i" <<'PY' || verdict=$?
import statistics, sys
d, i = sys.argv[1], sys.argv[2]
def goodput(n):
    size, secs, *_ = open(f"{d}/{n}.result").read().split()
    return int(size) * 8 / float(secs) / 1e6
log = [dict(kv.split("=", 1) for kv in l.split()[1:] if "=" in kv) for l in open(f"{d}/compete{i}.log")]
dec = [x for x in log if x.get("ev") == "decision"]
wins = [x for x in log if x.get("ev") == "window" and x.get("role") == "receiver"]
plain, sobas = goodput(f"compete-plain{i}"), goodput(f"compete{i}")
print(f"pair {i}: plain {plain:.1f} Mb/s, sobas {sobas:.1f} Mb/s ({100 * sobas / plain:.0f}%)")
for x in dec:
    print("  " + " ".join(f"{k}={x[k]}" for k in ("t_ms", "from", "to", "why", "s", "rate_bps", "rtt_us", "base_rtt_us")))
# Until it decides the flow searches uncapped (plain CUBIC); every hold its first search decides
# beside the competitor must end in a step aside within one of the competitor's sawtooth cycles. Without sobasd
# a competitor whose queue was already in the base RTT at the decision shows only once its CUBIC
# window climbs back over that base: its cycle K = cbrt(W_max * 0.3 / 0.4) is ~8 s here (W_max ~ 690
# packets of 1 BDP + 1-BDP buffer), so 12 s (measured 1.0-2.6 s in most runs, 9.2 s in one CI run of
# six, with goodput 102% of plain's); a step aside for losses before any hold leaves no hold to time.
# Aside, the flow may return (its rate 40% up on the windows before: beside CUBIC its share drifts, and
# a CI run returned 18 s after its step aside, decided at 35.6 Mb/s where it had made 13-20 aside, and
# was held for most of the 12 s left, at 123% of its plain pair's goodput). A hold after a return is
# judged by what it cedes, below: a fault where it keeps the flow under 0.8x its rate aside (the median
# of its windows aside) for long.
end = int(wins[-1]["t_ms"])
holds, start, returned = [], None, False
for x in dec:
    returned = returned or x["why"] == "resume"
    if x["to"] == "decided" and start is None and not returned:
        start = int(x["t_ms"])
    elif x["to"] == "congested" and start is not None:
        holds.append(int(x["t_ms"]) - start)
        start = None
if start is not None:
    holds.append(end - start)
aside = next((int(x["t_ms"]) for x in dec if x["to"] == "congested"), None)
if aside is None:
    sys.exit("never stepped aside")
after = [w for w in wins if int(w["t_ms"]) > aside]
rate_aside = statistics.median(int(w["rx_bps"]) for w in after if w["state"] == "congested")
capped = [w for w in after if w["state"] == "decided"]  # a search's ceiling caps nothing
ceded = [w for w in capped if int(w["rx_bps"]) < 0.8 * rate_aside]
print(f"holds before any return {holds} ms; first aside at {aside} ms, {rate_aside / 1e6:.1f} Mb/s aside; of the {len(after)} "
      f"windows after, {len(capped)} capped, {len(ceded)} of them under 0.8x that rate")
if max(holds, default=0) > 12000:
    sys.exit("held beside the competitor for over a sawtooth cycle (12 s)")
if len(ceded) > 0.3 * len(after):
    sys.exit("capped under its rate aside for long beside the competitor")
# A sanity margin only: exit 3 lets the second pair tell a host's deviation from the engine's.
if sobas < 0.6 * plain:
    print("far below plain CUBIC")
    sys.exit(3)
PY
    [ "$verdict" -eq 0 ] && return 0
    [ "$verdict" -eq 3 ] || return 1
  done
  return 1
}

# The competitor comes and goes while sobas holds the path: step aside while it is there, come back
# and hold (no queue) once it has left. Bars: the benchmark's (2 s aside, 3 s back, RTT within 5%)
# with margins a noisy host does not cross.
@test "a competitor arrives and leaves: sobas steps aside, then holds again with no queue" {
  truncate -s 320M "$BATS_FILE_TMPDIR/long"
  COMPETITOR="8 12 cubic" valid_download arrive sobas 500000 0 0 long
  python3 - "$BATS_TEST_TMPDIR" <<'PY'
import statistics, sys
d = sys.argv[1]
arrive, leave = (float(open(f"{d}/arrive.{x}").read()) for x in ("arrive", "leave"))
lines = [dict(kv.split("=", 1) for kv in l.split()[1:] if "=" in kv) for l in open(f"{d}/arrive.log")]
t0 = next(int(x["t0_ms"]) for x in lines if x.get("ev") == "open") / 1000
dec = [(t0 + int(x["t_ms"]) / 1000, x) for x in lines if x.get("ev") == "decision"]
for t, x in dec:
    print(f"  {t - arrive:+7.2f} s from the arrival: {x['from']} -> {x['to']} why={x['why']} s={x['s']} rate_bps={x['rate_bps']}")
print(f"  the competitor stayed {leave - arrive:.1f} s")
assert any(x["to"] == "decided" for t, x in dec if t < arrive), "not held before the competitor came"
aside = next((t - arrive for t, x in dec if t >= arrive and x["to"] == "congested"), None)
assert aside is not None and aside <= 5, f"stepped aside {aside} s after the arrival"
# Back within 6 s: searching again (resume) or held. Held again follows once the search decides, which
# a busy host can stretch (a CI run: resumed 1.5 s after the departure, decided 5.5 s later on
# flat-rate, against 0.9-1.0 s from departure to held in the benchmark, which holds the 3 s bar).
ret = next((t - leave for t, x in dec if t >= leave and x["to"] != "congested"), None)
assert ret is not None and ret <= 6, f"back {ret} s after the departure"
# Held again after the departure; not necessarily at the end: CI pre-check 116's flow, held again 0.5 s
# after its return, stepped aside 11 s after the departure on the emulator's stalls (65.7 Mb/s with a
# queue, nothing else on the path). A stay aside shows in the RTT bar below.
back = next((t - leave for t, x in dec if t >= leave and x["to"] == "decided"), None)
assert back is not None, "never held again after the departure"
# Stepping aside opens the window at once: the sender's slow-start cwnd goes out into the newcomer's
# queue, which keeps the flow its share (opened in 5% steps it kept 59-68 Mb/s of 100 beside the
# newcomer, at once 69-79). A whole run's retransmits here also carry the competition's losses.
step = next(x for t, x in dec if t >= arrive and x["to"] == "congested")
held_s = next(int(x["s"]) for t, x in reversed(dec) if t < arrive and x["to"] == "decided")
retrans = int(open(f"{d}/arrive.result").read().split()[2])
print(f"first step aside: S {held_s} -> {step['s']}; {retrans} retransmits")
assert int(step["s"]) >= 2 * held_s, "the window did not open at once"
# Held again, the queue drains: the ping's p50 from 1 s after the return to the end.
pings = [l.split() for l in open(f"{d}/arrive.ping")]
held_at = leave + back + 1
last = [float(p[2]) / 1000 for p in pings if float(p[0]) >= held_at and float(p[2]) >= 0]
p50 = statistics.median(last)
print(f"aside after {aside:.2f} s, held again {back:.2f} s after the departure; RTT p50 of the last "
      f"{len(last) / 100:.1f} s {p50:.1f} ms")
assert len(last) >= 200, "under 2 s of transfer after the return: the file is too small for this host"
assert p50 <= 40 * 1.10, "a queue stands after the return"
PY
}

# Only the server preloaded (an upload's or a server's case): the sending flow is paced at the rate it
# decides on. Bars with margins: decided as a sender, paced; the file byte-exact; the RTT held near the
# base where plain CUBIC doubles it; goodput near plain's (measured 0.99x, RTT+ 0.7 ms against 26.6 ms).
@test "a preloaded server paces its sending flow: no queue, near plain's goodput, every byte intact (one of 2 pairs)" {
  # The link freezes over a stall (packets held, spacing kept), which neither moves the RTT's median
  # nor, at a few percent, the goodput ratio's 0.85 margin: measured, 4 attempts in a row froze 3.1-3.2%
  # of the time during a full suite, against 0.1-0.4% alone. A stall can still end one run's slow start
  # early (a CI run: a loss 1.0 s in at 16 Mb/s, CUBIC's climb from there, 0.847x plain; alone again
  # 87.1 against 90.0 Mb/s): a second pair tells that from a pacer that holds the flow back, which
  # fails both.
  export STALL_LIMIT=0.06
  local i rc judged=0
  for i in 1 2; do
    valid_download "serve-plain$i" plain 1000000 0 0 random
    : > "$SERVER_LOG"
    OUT=$BATS_TEST_TMPDIR/got PORT=8081 valid_download "serve$i" plain 1000000 0 0 random
    cmp "$BATS_FILE_TMPDIR/random" "$BATS_TEST_TMPDIR/got"
    rc=0
    python3 - "$BATS_TEST_TMPDIR" "$SERVER_LOG" "$i" <<'PY' || rc=$?
import json, statistics, sys
d, server_log, i = sys.argv[1], sys.argv[2], sys.argv[3]
def goodput(n):
    size, secs, *_ = open(f"{d}/{n}.result").read().split()
    return int(size) * 8 / float(secs) / 1e6
def p50(n):
    return statistics.median(float(l.split()[2]) / 1000 for l in open(f"{d}/{n}.ping") if float(l.split()[2]) >= 0)
log = [dict(kv.split("=", 1) for kv in l.split()[1:] if "=" in kv) for l in open(server_log)]
last = max(int(x["flow"]) for x in log if x.get("ev") == "open")  # an invalid attempt's flow came before
dec = [x for x in log if x.get("ev") == "decision" and int(x["flow"]) == last]
for x in dec:
    print("  " + " ".join(f"{k}={x[k]}" for k in ("t_ms", "role", "from", "to", "why", "s", "rate_bps", "lever")))
plain, sobas = goodput(f"serve-plain{i}"), goodput(f"serve{i}")
print(f"pair {i}: plain {plain:.1f} Mb/s RTT p50 {p50(f'serve-plain{i}'):.1f} ms; preloaded server {sobas:.1f} Mb/s "
      f"RTT p50 {p50(f'serve{i}'):.1f} ms")
# The sender's windows up to its first step aside (if any), and how long the link was frozen: a
# failure shows what the engine saw and what the host did.
aside = next((int(x["t_ms"]) for x in dec if x["to"] == "congested"), None)
if aside is not None:
    e = json.load(open(f"{d}/serve{i}.emu"))
    print(f"  the link frozen {e['fwd']['stall_lag_ms']:.0f} ms of {e['wall_s']:.1f} s ({e['stalls']} host stalls)")
    for x in log:
        if x.get("ev") == "window" and int(x["flow"]) == last and aside - 1500 <= int(x["t_ms"]) <= aside:
            print("  " + " ".join(f"{k}={x[k]}" for k in ("t_ms", "tx_bps", "srtt_us", "retrans", "state", "s") if k in x))
    # Frozen over the default validity bar (3%), the link itself slowed under the pace in pieces, and
    # the queue that stood was the host's: CI pre-check 117 stepped aside in both pairs, the link frozen
    # 4.3% and 3.7% of the time by 266 and 226 host stalls, RTT p50 49.4 and 48.7 ms over the run from
    # the S_max that followed. Such a pair is not judged, as an invalid run is not.
    if e["fwd"]["stall_lag_ms"] > 0.03 * e["wall_s"] * 1000:
        print("  not judged: the host froze the link over 3% of the time and the flow stepped aside")
        sys.exit(4)
held = [x for x in dec if x["to"] == "decided"]
assert held and all(x["role"] == "sender" and x["lever"] == "pacing" for x in held), "not decided and paced as a sender"
assert p50(f"serve-plain{i}") >= 40 * 1.3, "plain CUBIC did not fill the 2-BDP buffer: the path is not the one asked for"
# A pacer has no ACK clock: while the host freezes the link (up to 6% of the time here) the path is
# slower than the pace for a while and a few ms queue before the next window's drain (measured p50
# 42.7-46.8 ms on such a host, 40.6-40.8 on a calm one); plain CUBIC keeps ~100 ms. The 5% bar is
# the benchmark's.
assert p50(f"serve{i}") <= 40 * 1.20, "a queue stands beside the paced sender"
assert sobas >= 0.85 * plain, "the paced sender far below plain"
PY
    [ "$rc" = 0 ] && return 0
    [ "$rc" = 4 ] || judged=1
  done
  [ "$judged" = 1 ] || skip "both pairs stepped aside on a link the host froze over 3% of the time"
  return 1
}

# A pacer reads its own RTT to the µs, so it sees its slow start fill a 1-BDP buffer a round before
# the next doubling overflows it, and decides there (engine.c, ss_queue_frac). Measured on this path in
# the benchmark (typical, 3 runs each): 0 retransmits, decided 0.4 s in; before the rule slow start
# overflowed in each of 3 traced runs, 44-62 retransmits, decided 1.4-1.8 s in congestion avoidance. Whether it
# does is up to HyStart: with the rule turned off this test passed once (HyStart left slow start in
# time, decided 0.75 s in on two equal rates), so the benchmark holds the bar; the test checks the
# behaviour, with a margin of 15 retransmits.
@test "a preloaded server ends slow start on its own queue: decided in slow start, no overflow" {
  : > "$SERVER_LOG"
  PORT=8081 valid_download ss-queue plain 500000 0 20M random
  python3 - "$BATS_TEST_TMPDIR" "$SERVER_LOG" <<'PY'
import sys
d, server_log = sys.argv[1], sys.argv[2]
log = [dict(kv.split("=", 1) for kv in l.split()[1:] if "=" in kv) for l in open(server_log)]
last = max(int(x["flow"]) for x in log if x.get("ev") == "open")  # an invalid attempt's flow came before
flow = [x for x in log if int(x.get("flow", 0)) == last and x.get("role") == "sender"]
dec = [x for x in flow if x.get("ev") == "decision"]
# Every decision, and the windows outside a hold or with a retransmit: a failure explains itself.
for x in dec:
    print("  " + " ".join(f"{k}={x[k]}" for k in ("t_ms", "from", "to", "why", "s", "rate_bps")))
for x in flow:
    if x.get("ev") == "window" and (x["state"] in ("slow-start", "cong-avoid") or int(x["retrans"]) > 0):
        print("  " + " ".join(f"{k}={x[k]}" for k in ("t_ms", "state", "tx_bps", "dlv_bps", "srtt_us", "cwnd", "retrans")))
retrans = int(open(f"{d}/ss-queue.result").read().split()[2])
# Slow start and the hold are judged, not what CUBIC does once the flow stepped aside (S_max): a run of
# the 5-run loop stepped aside after its lifts (losses while held, which a host stall can make), searched
# again from 9.8 s with a 35 ms queue, and 40 retransmits in the run failed it; the log was not kept.
aside = next((int(x["t_ms"]) for x in dec if x["to"] == "congested"), None)
ours = sum(int(x["retrans"]) for x in flow if x.get("ev") == "window" and (aside is None or int(x["t_ms"]) <= aside))
print(f"{retrans} retransmits in the run, {ours} in the sender's windows"
      + (f" up to its step aside at {aside} ms" if aside is not None else ""))
# A start cap (why=start: its in-flight rate when slow start first queued) leaves the flow in slow start,
# so the decision is the first that leaves it (a run of the WAN suite run back to back: capped at 420 ms,
# decided from slow start at 544 ms with 0 retransmits, failed on the cap). So does a cap that grows with
# the rate (ss-growing, why=buffer-limited: slow start too, engine.c in_slow_start): another such run grew
# it three times from 447 ms, decided from there at 763 ms with 0 retransmits, and failed on the growth.
SLOW_START = ("slow-start", "ss-growing")
first = next((x for x in dec if x["to"] not in SLOW_START), None)
assert first and first["from"] in SLOW_START and first["to"] == "decided", "not decided in slow start"
assert ours <= 15, "slow start overflowed the buffer"
PY
}

# On a 0.25-BDP buffer slow start overflows before a sender's own queue can show (10 ms of buffer, the
# cwnd doubling a round), and CUBIC then regrows from 0.7 of where it lost, slowly near that cwnd: the
# sender decided 2.5-5.2 s after the loss in the benchmark (`shallow`). A preloaded server starts CUBIC
# again once the path's RTT is back at its base (track.c, regrow_after_loss), and the search decides
# where that climb of 5% a round queues (engine.c): 0.54-0.95 s after the loss there, in 18 runs of 18.
# Checked with margins: regrown, then decided (not stepped aside) within 2 s, at S for at least 60% of
# A; every byte intact. A slow start that ends with no loss at the base RTT, or under a start cap (a pace
# already, engine.c: the in-flight rate), is not this case, nor a climb that loses before it decides.
@test "a preloaded server whose slow start overflowed a shallow buffer climbs again and decides within 2 s" {
  local i rc lost=0
  for i in 1 2 3; do
    : > "$SERVER_LOG"
    OUT=$BATS_TEST_TMPDIR/got PORT=8081 valid_download "climb$i" plain 125000 0 20M random
    cmp "$BATS_FILE_TMPDIR/random" "$BATS_TEST_TMPDIR/got"
    rc=0
    python3 - "$SERVER_LOG" "$A" <<'PY' || rc=$?
import sys
server_log, a_mbps = sys.argv[1], float(sys.argv[2])
log = [dict(kv.split("=", 1) for kv in l.split()[1:] if "=" in kv) for l in open(server_log)]
last = max(int(x["flow"]) for x in log if x.get("ev") == "open")  # an invalid attempt's flow came before
flow = [x for x in log if int(x.get("flow", 0)) == last]
for x in flow:
    if x.get("ev") in ("decision", "regrow") or (x.get("ev") == "window" and int(x["t_ms"]) < 1500):
        print("  " + " ".join(f"{k}={x[k]}" for k in ("t_ms", "ev", "state", "tx_bps", "srtt_us", "cwnd", "ssthresh",
                                                      "retrans", "from", "to", "why", "s", "rate_bps") if k in x))
regrow = next((x for x in flow if x.get("ev") == "regrow" and x.get("why") == "slow-start-loss"), None)
# The case: a window with retransmissions before any decision, then one without at the base RTT (the
# shim's margin, pace.c: 2.5% and at least 0.5 ms) while the search goes on unpaced (no start cap).
decided_at = next((int(x["t_ms"]) for x in flow if x.get("ev") == "decision" and
                   (x["to"] in ("decided", "congested") or x["why"] == "start")), 1 << 62)
wins = [x for x in flow if x.get("ev") == "window" and int(x["t_ms"]) <= decided_at]
lost = next((i for i, x in enumerate(wins) if int(x["retrans"]) > 0), None)
case = lost is not None and any(
    int(x["retrans"]) == 0 and int(x["srtt_us"]) <= int(x["base_rtt_us"]) + max(int(x["base_rtt_us"]) // 40, 500)
    for x in wins[lost + 1:])
if regrow is None and not case:
    print("  no slow-start loss followed by the base RTT before a decision: not the case this test is for")
    sys.exit(4)
assert regrow is not None, "slow start lost, the RTT came back to the base, and the sender was not started again"
assert "error" not in regrow, "the regrow was refused"
t = int(regrow["t_ms"])
first = next((x for x in flow if x.get("ev") == "decision" and int(x["t_ms"]) >= t and x["to"] in ("decided", "congested")), None)
# A climb that overflows the buffer before its queue shows is ended by that loss, and CUBIC regrows as
# after any loss (engine.c): the decision is congestion avoidance's, seconds later. Not this case: CI
# pre-check 201 climbed 60 -> 80 Mb/s at an srtt of 41.9 ms on the 40 ms path, then read 74 at 50.4 ms
# beside the Poisson UDP, lost 27 segments, and decided 2.05 s after the regrow.
end = int(first["t_ms"]) if first else 1 << 62
if any(x.get("ev") == "window" and t < int(x["t_ms"]) < end and int(x["retrans"]) > 0 for x in flow):
    print("  the climb lost before it decided: CUBIC regrows as after any loss, not the case this test is for")
    sys.exit(5)
assert first and first["to"] == "decided", "not decided after the regrow"
assert int(first["t_ms"]) - t <= 2000, "decided over 2 s after the regrow"
assert int(first["rate_bps"]) >= 0.6 * a_mbps * 1e6, "decided under 60% of A"
PY
    [ "$rc" = 0 ] && return 0
    [ "$rc" = 4 ] || [ "$rc" = 5 ] || return 1
    if [ "$rc" = 5 ]; then lost=$((lost + 1)); fi
  done
  # Every climb lost: the climb's rule no longer decides before the buffer overflows.
  [ "$lost" -lt 3 ]
  skip "no run's slow start ended in a loss followed by the base RTT and a climb with no loss"
}

# An application that paces its own flow (SO_MAX_PACING_RATE) chose its rate: sobas measures the
# flow and never paces it. The app's rate (200 Mb/s) is above the path's, so a sobas that ignored it
# would decide in slow start as for any server (checked: with the flag ignored, it does).
@test "a sender that sets its own pacing rate is measured, never paced" {
  local log=$BATS_TEST_TMPDIR/self-paced.log
  ip netns exec "$TB-snd" env LD_PRELOAD="$LIB" SOBAS_LOG="$log" python3 - "$BATS_FILE_TMPDIR/small" <<'PY' 3>&- &
import socket, sys
SO_MAX_PACING_RATE = 47  # asm-generic/socket.h
data = open(sys.argv[1], "rb").read()
srv = socket.create_server(("10.80.1.1", 8082))
while True:
    c, _ = srv.accept()
    c.recv(65536)  # one request, whatever it asks
    c.setsockopt(socket.SOL_SOCKET, SO_MAX_PACING_RATE, 25000000)  # 200 Mb/s
    c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n" % len(data))
    for i in range(0, len(data), 65536):  # a server's usual writes: the shim samples between calls
        c.sendall(data[i:i + 65536])
    c.close()
PY
  SRV=$!
  for _ in $(seq 100); do ip netns exec "$TB-snd" ss -Hltn 'sport = :8082' | grep -q LISTEN && break; sleep 0.05; done
  PORT=8082 valid_download self-paced plain 500000 0 0 small
  stop_server
  read -r size secs _ < "$BATS_TEST_TMPDIR/self-paced.result"
  echo "$size bytes in $secs s"
  [ "$size" -eq $((40 << 20)) ]
  grep -q ' ev=window .*role=sender' "$log"    # measured as a sender
  run ! grep ' ev=decision ' "$log"             # never steered
}

# A steered sender's writer is woken by TCP_NOTSENT_LOWAT while it searches in slow start (track.c,
# wake_often), and for the window after a lift, whose queue is watched within it (watch_lift): the
# socket gets the host's default back once the flow has decided and at each lift's end, and an
# application's own mark is never touched, whether set before sobas's or over it (as soon as the server
# reads sobas's mark on its socket, while slow start searches). The server reads the mark back after
# each download: the host's default, unless the download ended in a lift's window.
@test "a sender's wake mark lasts its slow start and lifts only, and an application's own mark is kept" {
  local log=$BATS_TEST_TMPDIR/wake.log marks=$BATS_TEST_TMPDIR/wake.marks
  ip netns exec "$TB-snd" env LD_PRELOAD="$LIB" SOBAS_LOG="$log" python3 - "$BATS_FILE_TMPDIR/small" "$marks" <<'PY' 3>&- &
import socket, sys
LOWAT = getattr(socket, "TCP_NOTSENT_LOWAT", 25)
data = open(sys.argv[1], "rb").read()
srv = socket.create_server(("10.80.1.1", 8083))
while True:
    c, _ = srv.accept()
    req = c.recv(65536)
    kind = "own" if b" /own " in req else "late" if b" /late " in req else "plain"
    if kind == "own":
        c.setsockopt(socket.IPPROTO_TCP, LOWAT, 16384)
    c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n" % len(data))
    for i in range(0, len(data), 65536):
        if kind == "late" and c.getsockopt(socket.IPPROTO_TCP, LOWAT) not in (0, 16384):
            c.setsockopt(socket.IPPROTO_TCP, LOWAT, 16384)  # over sobas's mark
            kind = "over"
        c.sendall(data[i:i + 65536])
    with open(sys.argv[2], "a") as f:
        print(kind, c.getsockopt(socket.IPPROTO_TCP, LOWAT), file=f)
    c.close()
PY
  SRV=$!
  for _ in $(seq 100); do ip netns exec "$TB-snd" ss -Hltn 'sport = :8083' | grep -q LISTEN && break; sleep 0.05; done
  PORT=8083 valid_download wake-plain plain 500000 0 0 plain
  PORT=8083 valid_download wake-own plain 500000 0 0 own
  PORT=8083 valid_download wake-late plain 500000 0 0 late
  stop_server
  cat "$marks"
  python3 - "$log" "$marks" <<'PY'
import sys
log = [dict(kv.split("=", 1) for kv in l.split()[1:] if "=" in kv) for l in open(sys.argv[1])]
marks = [l.split() for l in open(sys.argv[2])]
# Flows are numbered in the order the server accepted them, one line of marks each (invalid attempts too).
for n, (kind, mark) in enumerate(marks, 1):
    wins = [x for x in log if x.get("ev") == "window" and int(x["flow"]) == n and x["role"] == "sender"]
    wakes = [int(x["wake"]) for x in wins]
    # Whether each window ended in a lift: a lift's decision is logged before the window line it ended.
    lifting, in_lift = False, []
    for x in log:
        if x.get("flow") != str(n):
            continue
        if x.get("ev") == "decision":
            lifting = x["why"] == "lift"
        elif x.get("ev") == "window" and x["role"] == "sender":
            in_lift.append(lifting)
    print(f"flow {n} ({kind}): mark after the download {mark}; wake per window {wakes[:6]}...; "
          f"{sum(in_lift)} windows ended in a lift")
    if kind == "own":
        assert int(mark) == 16384, "the application's own mark was changed"
        assert not any(wakes), "sobas set a mark on a socket whose application had set one"
    elif kind == "late":
        raise AssertionError("sobas set no mark while the reply was written, for the application's to go over")
    elif kind == "over":
        assert int(mark) == 16384, "the application's mark, set over sobas's, was changed"
    else:
        # The last window or two may have closed after the server read the mark (at the close).
        assert int(mark) == 0 or any(in_lift[-2:]), "the mark outlived the search"
        assert any(w > 0 for w in wakes), "no mark while slow start searched"
        # ss-growing is slow start under a start cap grown with the rate (track.c wake_often marks it too).
        assert all(int(x["wake"]) == 0 for x, lifted in zip(wins, in_lift)
                   if x["state"] not in ("slow-start", "ss-growing") and not lifted), \
            "a mark after slow start, outside a lift"
PY
}

# Both ends preloaded, no sobasd on the sender's host (with one, the sender leads and the receiver
# stands down: probe.bats): exactly one steers, the receiver (its window holds the flow whatever the sender
# does). The sender sees the receiver's hold as its flow limited by the peer's window, lets go of its
# pacing and only measures from then on. UDP cross traffic that leaves 3 s into the download makes
# both ends decide low and then look for the room it left, the case where two steering ends would
# each find the other's cap. Checked with the rule off: both ends lifted in turn and stayed at the
# ~47 Mb/s they decided beside the cross traffic, 51.0 and 53.8 Mb/s for the download against 59.7-81.4
# with it (how soon the receiver alone finds the room is the receiver's lift, not this rule's).
@test "both ends preloaded, no sobasd: the receiver steers, the sender lets go (peer-window) and decides nothing after" {
  # The sender lets go once it has seen the receiver's hold for two windows (~1.2 s in). A receiver
  # that steps aside before then (`competing`, read beside the UDP: CI pre-check 208, 1.30 s in, 0.8 s
  # after its decision) holds nothing to let go to, and the attempt says nothing of the rule: one more.
  local i verdict
  for i in 1 2; do
    : > "$SERVER_LOG"
    CROSS_FOR=4s PORT=8081 valid_download "both$i" sobas 500000 0 50M random
    verdict=0
    python3 - "$BATS_TEST_TMPDIR/both$i" "$SERVER_LOG" <<'PY' || verdict=$?
import sys
run, server_log = sys.argv[1], sys.argv[2]
size, secs, *_ = open(f"{run}.result").read().split()
print(f"both preloaded: {int(size) * 8 / float(secs) / 1e6:.1f} Mb/s")
parse = lambda path: [dict(kv.split("=", 1) for kv in l.split()[1:] if "=" in kv) for l in open(path)]
snd, rcv = parse(server_log), parse(f"{run}.log")
last = max(int(x["flow"]) for x in snd if x.get("ev") == "open")  # an invalid attempt's flow came before
snd = [x for x in snd if int(x.get("flow", 0)) == last]
for who, log in (("sender", snd), ("receiver", rcv)):
    for x in log:
        if x.get("ev") in ("decision", "yield"):
            print(f"  {who} {x['t_ms']} ms {x['ev']} {x.get('from')} -> {x.get('to', '')} {x['why']}")
assert int(size) == 100 << 20, "bytes missing"
assert any(x.get("ev") == "decision" and x["to"] == "decided" for x in rcv), "the receiver never held the flow"
yields = [x for x in snd if x.get("ev") == "yield"]
aside = [int(x["t_ms"]) for x in rcv if x.get("ev") == "decision" and x["to"] == "congested"]
if not yields and aside:
    print(f"the receiver stepped aside at {aside[0]} ms, before the sender let go: nothing to judge")
    sys.exit(3)
assert len(yields) == 1 and yields[0]["why"] == "peer-window", "the sender did not let go of the flow"
after = [x for x in snd if x.get("ev") == "decision" and int(x["t_ms"]) > int(yields[0]["t_ms"])]
assert not after, f"the sender decided after letting go: {after}"
PY
    [ "$verdict" -eq 0 ] && return 0
    [ "$verdict" -eq 3 ] || return 1
  done
  return 1
}

# nginx as deployed for static files (4 worker processes, epoll, sendfile) under the shim, serving
# 8 downloads at once: each accepted flow is steered on its own as a sender, knowing the 7 others on
# its path (the ring's path board), the shim adds at most its helper thread to a worker, and sobas-top
# shows every flow with its decision.
@test "nginx (sendfile, 4 workers) preloaded: 8 concurrent downloads byte-exact, each steered as a sender, all in sobas-top" {
  command -v nginx >/dev/null || skip "nginx not installed (scripts/install-deps.sh installs it)"
  local dir=$BATS_TEST_TMPDIR log=$BATS_TEST_TMPDIR/srv.log ring=$BATS_TEST_TMPDIR/srv.ring
  head -c 16M "$BATS_FILE_TMPDIR/random" > "$BATS_FILE_TMPDIR/random16"
  cat > "$dir/srv.conf" <<CONF
user root;
worker_processes 4;
daemon off;
pid $dir/srv.pid;
events { worker_connections 64; use epoll; }
http {
  access_log off;
  sendfile on;
  client_body_temp_path $dir/body; proxy_temp_path $dir/proxy; fastcgi_temp_path $dir/fastcgi;
  uwsgi_temp_path $dir/uwsgi; scgi_temp_path $dir/scgi;
  server { listen 10.80.1.1:8083; root $BATS_FILE_TMPDIR; }
}
CONF
  # The listen check below cannot tell nginx from another listener on the port (teardown's case).
  if ip netns exec "$TB-snd" ss -Hltn 'sport = :8083' | grep -q LISTEN; then echo "port 8083 already taken" >&2; false; fi
  ip netns exec "$TB-snd" env LD_PRELOAD="$LIB" SOBAS_LOG="$log" SOBAS_RING="$ring" \
    nginx -e stderr -c "$dir/srv.conf" -p "$dir" 2>"$dir/srv.err" 3>&- &
  SRV=$!
  for _ in $(seq 100); do ip netns exec "$TB-snd" ss -Hltn 'sport = :8083' | grep -q LISTEN && break; sleep 0.05; done
  # Mid-transfer (the downloads take ~15 s; every flow decided within 6 s when measured, and a closed
  # flow leaves sobas-top's table 5 s after it ends): the workers' threads, and sobas-top's view, timed
  # from the ring's first record (the first flow's), which a busy host's retried downloads delay.
  ( for _ in $(seq 600); do [ -e "$ring" ] && break; sleep 0.1; done
    sleep 7; for p in $(pgrep -P "$SRV"); do awk '/^Threads:/ { print $2 }' "/proc/$p/status"; done > "$dir/threads"
    "$BUILD/bin/sobas-top" --once --json --ring "$ring" > "$dir/top.json" ) 3>&- &
  local sampler=$!
  STALL_LIMIT=0.06 OUT=$dir/got CLIENTS=8 PORT=8083 valid_download nginx plain 1000000 0 20M random16
  wait "$sampler"
  stop_server
  for i in $(seq 8); do cmp "$BATS_FILE_TMPDIR/random16" "$dir/got.$i"; done
  python3 - "$dir" "$log" <<'PY'
import json, sys
d, log = sys.argv[1], sys.argv[2]
size, secs, *_ = open(f"{d}/nginx.result").read().split()
print(f"8 x 16 MiB from nginx: {int(size) * 8 / float(secs) / 1e6:.1f} Mb/s together in {float(secs):.1f} s")
lines = [dict(kv.split("=", 1) for kv in l.split()[1:] if "=" in kv) for l in open(log)]
key = lambda x: (x["pid"], x["flow"])  # each worker numbers its flows from 1
mine = set([key(x) for x in lines if x.get("ev") == "open"][-8:])  # an invalid attempt's flows came before
flows = {}
for x in lines:
    if x.get("ev") in ("window", "decision") and x.get("role") == "sender" and key(x) in mine:
        flows.setdefault(key(x), []).append(x)
# The engine moved each flow on: slow start ended (measured: 6 to 8 of 8 decided on a flat rate; a
# flow beside 7 others and UDP cross traffic may search, uncapped, until it ends).
steered = {k for k, xs in flows.items() if any(x["ev"] == "decision" for x in xs)}
decided = {k for k, xs in flows.items() if any(x["ev"] == "decision" and x["to"] == "decided" for x in xs)}
print(f"{len(flows)} sending flows in {len({k[0] for k in flows})} workers, {len(steered)} steered, {len(decided)} decided")
for k in sorted(flows):
    print(f"  pid {k[0]} flow {k[1]}: " + ", ".join(f"{x['t_ms']} ms {x['to']} ({x['why']})" for x in flows[k] if x["ev"] == "decision"))
assert len(flows) == 8, "not 8 sending flows"
assert steered == set(flows), "a flow the engine never moved on"
# The ring's path board: each flow counted the 7 others on its path, whatever worker they are in.
seen = {k: max(int(x.get("siblings", 0)) for x in xs if x["ev"] == "window") for k, xs in flows.items()}
print(f"most siblings a window of each flow counted: {sorted(seen.values())}")
assert all(n == 7 for n in seen.values()), "a flow did not see its 7 siblings on the path board"
top = [r for r in map(json.loads, open(f"{d}/top.json")) if r["type"] == "flow"]
mine = [r for r in top if r["program"].startswith("nginx") and r["role"] == "sender" and r["why"] != "-"]
print(f"sobas-top: {len(top)} flows, {len(mine)} nginx senders with a decision")
assert len(mine) == 8, "sobas-top does not show the 8 flows with their decisions"
threads = [int(t) for t in open(f"{d}/threads").read().split()]
print(f"threads per worker mid-transfer: {threads}")
assert len(threads) == 4 and max(threads) <= 2, "more threads than nginx's own and the shim's helper"
PY
}

# LIMITED BY is read from the kernel, per window: a reader that takes 4 MB/s (curl --limit-rate) is the
# application holding a preloaded receiver back, and the peer's window holding the preloaded sender
# (which then leaves the flow to the receiver: peer-window); a server that writes 64 KiB every 50 ms is
# the application holding its sender back, which the engine never decides on. Each reading must hold
# for most windows of its flow.
@test "what limits a flow is read from the kernel: a slow reader, the peer's window, a slow writer" {
  local dir=$BATS_TEST_TMPDIR log=$BATS_TEST_TMPDIR/writer.log
  : > "$SERVER_LOG"
  CURL_OPTS="--limit-rate 4M" PORT=8081 valid_download reader sobas 1000000 0 0 small
  ip netns exec "$TB-snd" env LD_PRELOAD="$LIB" SOBAS_LOG="$log" python3 - <<'PY' 3>&- &
import socket, time
srv = socket.create_server(("10.80.1.1", 8084))
c, _ = srv.accept()
c.recv(65536)
c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n" % (80 * 65536))
for _ in range(80):  # 5 MiB at ~10 Mb/s on a 100 Mb/s path
    c.sendall(bytes(65536))
    time.sleep(0.05)
c.close()
PY
  SRV=$!
  for _ in $(seq 100); do ip netns exec "$TB-snd" ss -Hltn 'sport = :8084' | grep -q LISTEN && break; sleep 0.05; done
  PORT=8084 valid_download writer plain 1000000 0 0 any
  local rc=0
  wait "$SRV" || rc=$?
  SRV=
  [ "$rc" = 0 ]
  python3 - "$dir" "$SERVER_LOG" <<'PY'
import collections, sys
d, server_log = sys.argv[1], sys.argv[2]
parse = lambda path: [dict(kv.split("=", 1) for kv in l.split()[1:] if "=" in kv) for l in open(path)]
def last_flow(path, role):  # an invalid attempt's flow came before
    log = parse(path)
    last = max(int(x["flow"]) for x in log if x.get("ev") == "window" and x.get("role") == role)
    return [x for x in log if x.get("flow") == str(last)]
limits = lambda flow, role: collections.Counter(x["limit"] for x in flow if x.get("ev") == "window" and x["role"] == role)
srv = last_flow(server_log, "sender")
reader, sender, writer = limits(last_flow(f"{d}/reader.log", "receiver"), "receiver"), limits(srv, "sender"), \
    limits(last_flow(f"{d}/writer.log", "sender"), "sender")
for name, c in (("slow reader's receiver", reader), ("its sender", sender), ("slow writer's sender", writer)):
    print(f"{name}: {dict(c)}")
# What the yield rule saw: per window of the sender's flow, the share of it held by the peer's window and
# the peer's window at its end.
for x in srv:
    if x.get("ev") == "window" and x.get("role") == "sender":
        print(f"  sender window at {x['t_ms']} ms: {100 * int(x['rwnd_lim_us']) / max(int(x['dur_us']), 1):.0f}% "
              f"of {int(x['dur_us']) // 1000} ms peer-held, snd_wnd {int(x['snd_wnd']) // 1024} KiB, {x['limit']}")
    elif x.get("ev") == "yield":
        print(f"  yield at {x['t_ms']} ms")
# A quarter of the windows at least: before the receive buffer fills, and once its own engine holds the
# reader's plateau (it may: the rate is flat), other readings are right too (measured at 2 MB/s: 31 of 32,
# and 36 of 109 with 16 held by sobas, for the reader; 27 of 30, and 14 of 30 before the yield, for the
# sender; at 4 MB/s, which halves the test's time: 14 of 17 and 10 of 16, and 10 of 17 and 9 of 18).
share = lambda c, k: c[k] / sum(c.values())
assert share(reader, "application") >= 0.25, "the slow reader is not what holds its receiver back"
assert share(sender, "peer-window") >= 0.25, "the peer's window is not what holds the sender back"
assert share(writer, "application") >= 0.9, "the slow writer is not what holds its sender back"
assert any(x.get("ev") == "yield" for x in srv), "the sender held by the peer's window did not let go"
assert not any(x.get("ev") == "decision" for x in parse(f"{d}/writer.log")), "decided on the application's rate"
PY
}

# The seeds' policies beside SOBAS, on the receiver: fixed holds the S it is given, bdp the size the
# user knows (SOBAS_BDP_BYTES; C'·T from sobasd otherwise, which this path has not), drs twice the
# bytes received per round trip, growing as the flow grows. A held window of S carries S/T at most.
@test "the seeds' policies hold a receiver's window: fixed:BYTES, bdp, drs" {
  POLICY=fixed:256K valid_download fixed sobas 1000000 0 0 small
  POLICY=bdp BDP_BYTES=300K valid_download bdp sobas 1000000 0 0 small
  POLICY=drs valid_download drs sobas 1000000 0 0 small
  python3 - "$BATS_TEST_TMPDIR" <<'PY'
import sys
d = sys.argv[1]
def run(name):
    size, secs, *_ = open(f"{d}/{name}.result").read().split()
    log = [dict(kv.split("=", 1) for kv in l.split()[1:] if "=" in kv) for l in open(f"{d}/{name}.log")]
    dec = [x for x in log if x.get("ev") == "decision"]
    print(f"{name}: {int(size) * 8 / float(secs) / 1e6:.1f} Mb/s; " +
          ", ".join(f"{x['t_ms']} ms {x['why']} s={x['s']}" for x in dec))
    return int(size) * 8 / float(secs) / 1e6, dec, [x for x in log if x.get("ev") == "window"]
for name, s in (("fixed", 256 << 10), ("bdp", 300 << 10)):
    mbps, dec, wins = run(name)
    assert [(x["why"], int(x["s"])) for x in dec] == [(name, s)], f"{name}: not one decision at {s}"
    assert mbps <= 1.1 * s * 8 / 0.040 / 1e6, f"{name}: more than S/T: the window did not hold"
mbps, dec, wins = run("drs")
sizes = [int(x["s"]) for x in dec]
assert all(x["why"] == "drs" for x in dec) and len(sizes) >= 3 and sizes == sorted(sizes), "drs did not grow S"
assert sizes[-1] >= 2 * 500000, "drs below twice the path's BDP"
# More than bdp's 300 KB can carry (66 Mb/s at 40 ms): the window checks below say whether it ever held
# the flow. drs follows the sender a round trip behind, so a sender that grows slowly costs goodput with
# no window holding it: 79.6 Mb/s in 1 of 5 back-to-back runs of this suite, against a bar of 80 then,
# S growing ~20% a window (275, 332, 399 KB at 0.3-0.6 s) where it otherwise doubles (700 KB, 1.4 MB at
# 0.3-0.5 s, 89.9 Mb/s in 3 runs after it). Its files were not kept.
assert mbps >= 70, "drs held the flow back"
# Window by window after the first two: the S set at its end is twice what arrived per RTT in it (the
# RTT DRS measures: the probe's when active), and the window offered during it, set one window
# earlier, never limited the flow (measured: 1.75-1.78x while it grows, 1.93x and up after; the
# lag is DRS's own, the window a round trip behind the sender it sizes for). One window may come
# nearer: a host stall that delays a window's echoes or bunches its arrivals inflates its bytes per
# RTT after the fact (a run read 1.08x in one window of 13, 89.7 Mb/s over the transfer; its files
# were not kept). None may offer less than a round trip's bytes: that window held the flow back.
ratios = []
for x in wins[2:]:
    rtt = int(x["prtt_us"]) if x["probe"] == "active" and int(x["prtt_us"]) else int(x["rcv_rtt_us"])
    per_rtt = int(x["rx_bps"]) / 8 * rtt / 1e6
    if per_rtt > 0:
        assert int(x["s"]) >= 2 * per_rtt - 1024, f"S {x['s']} under twice {per_rtt:.0f} B per RTT at {x['t_ms']} ms"
        ratios.append(int(x["rcv_wnd"]) / per_rtt)
ratios.sort()
print(f"drs: window offered / bytes per RTT over {len(ratios)} windows: least {ratios[0]:.2f}, next {ratios[1]:.2f}, median {ratios[len(ratios) // 2]:.2f}")
assert len(ratios) >= 10 and ratios[0] >= 1.0 and ratios[1] >= 1.5, "the window offered came near limiting the flow"
PY
}
