#!/usr/bin/env bats
# probe.bats — the UDP side probe end to end on the emulated WAN: sobasd in the sender namespace, the shim in the receiver.

load wan

setup_file() {
  REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
  BUILD=${SOBAS_BUILD_DIR:-$REPO/build}
  export REPO BUILD WAN=$BUILD/test/wan LIB=$BUILD/shim/libsobas.so SOBASD=$BUILD/bin/sobasd PROGS=$BUILD/test/programs
  [ "$(id -u)" = 0 ] || { echo "the testbed needs root" >&2; return 1; }
  [ -x "$WAN/wanemu" ] && [ -x "$SOBASD" ] && [ -f "$LIB" ] || { echo "build first" >&2; return 1; }
  export TB=p$RANDOM
  "$REPO/scripts/testbed.sh" up --name "$TB" --cc cubic >/dev/null
  truncate -s 100M "$BATS_FILE_TMPDIR/file"
  truncate -s 40M "$BATS_FILE_TMPDIR/small"
  truncate -s 2G "$BATS_FILE_TMPDIR/huge"
  wan_serve "$BATS_FILE_TMPDIR"
  # Started as root: it must bind, then answer as nobody, who can write its counters only where anyone may.
  STATS=$(mktemp -d /tmp/sobasd-stats.XXXXXX)
  chmod 0777 "$STATS"
  export STATS
  ip netns exec "$TB-snd" "$SOBASD" --stats "$STATS/sobasd.json" 2>"$BATS_FILE_TMPDIR/sobasd.err" 3>&- &
  echo $! > "$BATS_FILE_TMPDIR/sobasd.pid"
  disown
}

teardown_file() {
  "$REPO/scripts/testbed.sh" down --name "$TB" >/dev/null
  rm -rf "$STATS"
}

# path RATE LIMIT_BYTES [LOSS]: the emulated WAN (40 ms RTT) between the namespaces, until stop_path.
path() {
  rm -f "$BATS_TEST_TMPDIR/ready"
  "$WAN/wanemu" --a "$TB-snd:wan0" --b "$TB-rcv:wan1" --rate "$1" --delay 20ms --fwd-limit "$2" \
    --rev-limit 1000000 --fwd-loss "${3:-0}" --stats "$BATS_TEST_TMPDIR/emu.json" \
    --stall-log "$BATS_TEST_TMPDIR/stalls" --series "$BATS_TEST_TMPDIR/series" --watch 10.80.2.1 --ready "$BATS_TEST_TMPDIR/ready" 3>&- &
  EMU=$!
  for _ in $(seq 250); do [ -e "$BATS_TEST_TMPDIR/ready" ] && return 0; sleep 0.02; done
  echo "wanemu did not attach" >&2
  return 1
}
stop_path() { kill "$EMU"; wait "$EMU" || true; EMU=; }

# A test that fails mid-path leaves no emulator holding the devices for the next one, and no host
# setting it changed (RESTORE: the commands that put them back).
teardown() {
  [ -z "${EMU:-}" ] || stop_path
  [ -z "${RESTORE:-}" ] || eval "$RESTORE"
}

# fetch NAME FILE [curl options...]: a download by curl under the shim, logged to NAME.log (afresh), from
# the plain server (PORT: another one); prints curl's exit status. The data goes to /dev/null: written to a file, 30 s of it become dirty
# pages whose writeback then stalls this 2-core machine (and the link emulator) for tens of ms.
fetch() {
  local name=$1 file=$2
  shift 2
  local rc=0
  rm -f "$BATS_TEST_TMPDIR/$name.log"
  ip netns exec "$TB-rcv" env LD_PRELOAD="$LIB" SOBAS_LOG="$BATS_TEST_TMPDIR/$name.log" \
    curl -sS -o /dev/null "$@" "http://10.80.1.1:${PORT:-8080}/$file" || rc=$?
  echo "$rc"
}

# preloaded_server PORT LOG: a preloaded python HTTP server on the sender's side, serving the test files
# and logging to LOG; sets srv to its pid once it listens.
preloaded_server() {
  ip netns exec "$TB-snd" env LD_PRELOAD="$LIB" SOBAS_LOG="$2" \
    python3 -m http.server "$1" --bind 10.80.1.1 -d "$BATS_FILE_TMPDIR" >/dev/null 2>&1 3>&- &
  srv=$!
  for _ in $(seq 100); do ip netns exec "$TB-snd" ss -Hltn "sport = :$1" | grep -q LISTEN && break; sleep 0.05; done
}

# field NAME EVENT KEY: KEY's values on NAME.log's lines of event EVENT, one per line.
field() { grep " ev=$2 " "$BATS_TEST_TMPDIR/$1.log" | grep -o " $3=[^ ]*" | cut -d= -f2; }

@test "sobasd refuses bad options with a clear message" {
  run "$SOBASD" --port 0
  [ "$status" -eq 2 ]
  [[ "$output" == *"--port needs a number from 1 to 65535, got '0'"* ]]
  run "$SOBASD" --train-len 65
  [ "$status" -eq 2 ]
  run "$SOBASD" --bogus
  [ "$status" -eq 2 ]
  [[ "$output" == *"unknown option '--bogus'"* ]]
  run "$SOBASD" --listen 10.0.0.256
  [ "$status" -eq 1 ]
  [[ "$output" == *"cannot listen on 10.0.0.256"* ]]
}

@test "sobasd runs as nobody and answers only verified peers: no reflection, no amplification, survives fuzzing" {
  path 100M 500000
  run ip netns exec "$TB-rcv" python3 "$BATS_TEST_DIRNAME/probe_client.py" 10.80.1.1:9521 10.80.1.1:8080
  stop_path
  echo "$output"
  [ "$status" -eq 0 ]
  pid=$(cat "$BATS_FILE_TMPDIR/sobasd.pid")
  grep -q "^Uid:[[:space:]]*65534[[:space:]]" "/proc/$pid/status"
  python3 - "$output" <<'PY'
import json, sys
r = json.loads(sys.argv[1].splitlines()[-1])
assert r["control_echoes"] == 5 and r["control_rsp_seqs"] == [0, 1, 2, 3, 4], "a live connection's probes are echoed"
assert r["train_packets"] == 5 * 32 and r["train_max_len"] == 1400, "5 trains of 32 for a live connection"
assert r["train_again_packets"] == 0, "a second train request within the interval is refused"
for k in ("dead_tuple_train_replies", "spoofed_source_replies", "reflected_replies", "unverified_flood_replies",
          "fuzz_replies_not_echo_of_live"):
    assert r[k] == 0, k
assert r["after_fuzz_echoes"] == 5, "sobasd still answers after the fuzzing"
PY
  kill -0 "$pid"
  kill -USR1 "$pid"
  sleep 0.3
  cat "$STATS/sobasd.json"
  python3 - "$STATS/sobasd.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
for k in ("malformed", "bad_version", "unexpected_type", "not_its_flow", "unverified", "train_limited"):
    assert c[k] > 0, f"{k} was counted"
PY
  # The refusal lines are written every 10 s of sobasd's clock, so the next may be up to 10 s away.
  local _
  for _ in $(seq 110); do
    grep -Eq "refused .* \((unverified|verify-budget)\) in the last 10 s" "$BATS_FILE_TMPDIR/sobasd.err" && return 0
    sleep 0.1
  done
  cat "$BATS_FILE_TMPDIR/sobasd.err"
  false
}

@test "probe RTT within 1 ms of the emulated 40 ms; C' within 15% of C at 50, 100 and 300 Mb/s" {
  # A train at 300 Mb/s lasts 1.2 ms: the host holding the emulator or the receiver for a few hundred
  # µs inside half the trains moves their median (a CI run read 232 of 300 Mb/s, the next runs here
  # 299.9 on the same code). So C' has 3 attempts per rate; an estimator that is wrong misses all.
  for rate in 50 100 300; do
    ok=
    for attempt in 1 2 3; do
      path "${rate}M" $((rate * 1000000 / 8 * 40 / 1000))
      rc=$(fetch "c$rate" small)
      stop_path
      [ "$rc" -eq 0 ]
      cap=$(field "c$rate" probe cap_bps)
      # The close record has the probe's totals while it runs; a probe stopped for good (a step aside,
      # docs/probe.md) logged them when it stopped. A CI run read 0 here: C' 34.9 of 50 Mb/s, the held
      # echoes' median 45.6 ms, 258 host stalls over 1 ms.
      rtt_min=$(field "c$rate" close probe_rtt_min_us)
      [ "${rtt_min:-0}" -gt 0 ] || rtt_min=$(field "c$rate" probe rtt_min_us | grep -v '^0$' | tail -1)
      held=$(grep ' ev=window ' "$BATS_TEST_TMPDIR/c$rate.log" | grep ' state=decided ' | grep -o ' prtt_us=[1-9][0-9]*' |
        cut -d= -f2 | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
      echo "C = $rate Mb/s, attempt $attempt: C' = $cap b/s ($(field "c$rate" probe cap_trains) trains), probe RTT min $rtt_min us," \
        "median while held ${held:-none} us; $(wc -l < "$BATS_TEST_TMPDIR/stalls") host stalls over 1 ms"
      awk -v t="$rtt_min" 'BEGIN { exit !(t >= 39000 && t <= 41000) }'
      grep -q ' why=start ' "$BATS_TEST_TMPDIR/c$rate.log" # the engine started from 1.2·C'·T
      if awk -v c="$cap" -v r="$rate" 'BEGIN { exit !(c >= 0.85 * r * 1e6 && c <= 1.15 * r * 1e6) }'; then
        ok=1
        break
      fi
    done
    [ -n "$ok" ]
  done
}

@test "probe: 1% random forward loss is found congested within 2 s; the probe itself sees the loss" {
  path 100M 500000 0.01
  rc=$(fetch lossy huge --max-time 5)
  stop_path
  [ "$rc" -eq 0 ] || [ "$rc" -eq 28 ] # 28: the 5 s limit
  grep -E ' ev=(probe|decision|close) ' "$BATS_TEST_TMPDIR/lossy.log" | cut -c1-220
  t=$(grep ' ev=decision ' "$BATS_TEST_TMPDIR/lossy.log" | grep ' to=congested ' | head -1 | grep -o ' t_ms=[0-9]*' | cut -d= -f2)
  echo "congested at ${t:-never} ms"
  [ -n "$t" ] && [ "$t" -le 2000 ]
  [ "$(field lossy close probe_lost)" -gt 0 ]
  [ "$(field lossy close probe)" = active ]
}

# Beside a competitor's queue the flow steps aside (why=competing) and stops probing: aside it steers
# nothing, and probing on cost it its share (the benchmark's `competing`: under plain CUBIC in 5 of 6
# repeats; docs/probe.md). The probe's totals are logged when it stops; the close record says off. A
# path loss keeps the probe (the test above). The competitor is a plain curl already filling the
# 1-BDP buffer; a step aside takes 1.2-2.8 s in the benchmark's runs, so 12 s leave room for a host's stalls.
@test "probe: stepped aside for a competitor's queue, the flow stops probing and logs the probe's totals" {
  path 100M 500000
  local try
  for try in 1 2; do
    ip netns exec "$TB-rcv" curl -sS -o /dev/null --max-time 20 "http://10.80.1.1:8080/huge" 3>&- &
    local comp=$!
    sleep 3
    rc=$(fetch compete huge --max-time 12)
    kill "$comp" 2>/dev/null || true
    wait "$comp" || true
    [ "$rc" -eq 0 ] || [ "$rc" -eq 28 ]
    # A flow may step aside for losses with no queue first, and then keeps probing: none did in the
    # benchmark's `competing` runs, but a host that stalls the link makes such losses (wan.bash,
    # host_drops). That run shows nothing here, and a second one is taken.
    grep ' ev=decision ' "$BATS_TEST_TMPDIR/compete.log" | grep -m1 ' to=congested ' | grep -q ' why=competing ' && break
    echo "try $try: no step aside for the competitor"
  done
  stop_path
  python3 - "$BATS_TEST_TMPDIR/compete.log" <<'PY'
import sys
log = [dict(kv.split("=", 1) for kv in l.split()[1:] if "=" in kv) for l in open(sys.argv[1])]
for x in log:
    if x.get("ev") in ("decision", "probe", "close"):
        print(" ".join(f"{k}={x[k]}" for k in ("ev", "t_ms", "what", "status", "to", "why", "sent", "probe") if k in x))
aside = next((x for x in log if x.get("ev") == "decision" and x["to"] == "congested"), None)
assert aside is not None, "never stepped aside beside the competitor"
assert aside["why"] == "competing", f"stepped aside for {aside['why']}, not the competitor's queue"
# Stopped in the window that stepped aside: its line comes next (t_ms is when each line was written).
end = log[log.index(aside) + 1]
assert end.get("ev") == "probe" and end.get("status") == "off" and end["why"] == "aside", "the probe did not stop at the step aside"
assert int(end["sent"]) > 0 and int(end["echoes"]) > 0, "the probe's totals were not logged"
later = [x for x in log if x.get("ev") == "window" and int(x["t_ms"]) > int(aside["t_ms"])]
assert later and all(x["probe"] == "off" for x in later), "probing after the step aside"
close = next(x for x in log if x.get("ev") == "close")
assert close["probe"] == "off", f"the close record says probe={close['probe']}"
PY
}

# A newcomer 0.3 s in, 12 s long: its queue comes while the flow decides, before it has held alone (a
# clean hold takes 300 ms and more of clean windows), so it steps aside with no rate of its own to come
# back to (alone_bps=0). Once the newcomer leaves, the flow's CUBIC alone keeps the 1-BDP buffer from
# ever emptying, so the queue's going never comes: C' is what brings it back (resume_cap_frac).
# Measured: back 0.27 s after the departure and held 0.92 s after it; without the rule, still aside at
# the end, about 17 s after the departure. A run whose last step aside before the departure had held
# first tests the other rule (resume_frac): the newcomer late, or (stop 85's CI) a flow back beside the
# newcomer in its loss trough, held clean at 69 Mb/s and aside again 0.9 s before the departure. Such
# a run's return is still judged, and another is taken: its exit status 2 says so.
judge_newcomer() {
  python3 - "$BATS_TEST_TMPDIR" <<'PY'
import sys
d = sys.argv[1]
arrive, leave = (float(open(f"{d}/{x}").read()) for x in ("arrive", "leave"))
log = [dict(kv.split("=", 1) for kv in l.split()[1:] if "=" in kv) for l in open(f"{d}/newcomer.log")]
t0 = next(int(x["t0_ms"]) for x in log if x.get("ev") == "open") / 1000
cap = next((int(x["cap_bps"]) for x in log if x.get("ev") == "probe" and x.get("what") == "capacity"), 0)
dec = [(t0 + int(x["t_ms"]) / 1000, x) for x in log if x.get("ev") == "decision"]
print(f"  C' {cap / 1e6:.1f} Mb/s; the newcomer came {arrive - t0:.2f} s in and stayed {leave - arrive:.1f} s")
for t, x in dec:
    print(f"  {t - leave:+7.2f} s from the departure: {x['from']} -> {x['to']} why={x['why']} "
          f"rate_bps={x['rate_bps']} alone_bps={x['alone_bps']}")
assert cap > 0, "no C': the trains found no answer"
# Aside at the departure (the newcomer's slow start may first cost a probe echo: a step aside for the
# path's loss, why=congested, that comes back and finds the newcomer's queue; a CI pre-check did so).
aside = [x for t, x in dec if arrive <= t < leave and x["to"] == "congested" and x["from"] != "congested"]
assert aside, "never stepped aside for the newcomer"
back = next((t - leave for t, x in dec if t >= leave and x["to"] != "congested"), None)
assert back is not None and back <= 6, f"back {back} s after the departure"
# Back, it decides again: held. Not necessarily to the end of the 30 s: a CI pre-check's flow, back 2.4 s
# after the departure and decided 4 s later, stepped aside twice more on the emulator's stalls (rate
# 79 and 78 Mb/s with a queue, nothing else on the path), resuming 4 s after the first.
assert any(t >= leave and x["to"] == "decided" for t, x in dec), "never decided again after the departure"
if aside[-1]["alone_bps"] != "0":
    print("  held before its last step aside: the return was the rate held's, not C's")
    sys.exit(2)
PY
}

@test "probe: a flow that steps aside before it ever held alone comes back at C' once the newcomer leaves" {
  local try judged
  for try in 1 2 3; do
    path 100M 500000
    ( sleep 0.3; mono > "$BATS_TEST_TMPDIR/arrive"
      ip netns exec "$TB-rcv" curl -sS -o /dev/null --max-time 12 "http://10.80.1.1:8080/huge" || true
      mono > "$BATS_TEST_TMPDIR/leave" ) >/dev/null 2>&1 3>&- &
    local comp=$!
    rc=$(fetch newcomer huge --max-time 30)
    wait "$comp" || true
    stop_path
    [ "$rc" -eq 0 ] || [ "$rc" -eq 28 ]
    judged=0
    judge_newcomer || judged=$?
    [ "$judged" -ne 2 ] || { echo "try $try: the flow held before it stepped aside"; continue; }
    [ "$judged" -eq 0 ]
    return
  done
  echo "in 3 tries the flow held before its last step aside: C's rule was never what brought it back"
  false
}

# Judges one 60 s run: "pass"; "fail: why"; "excused: ..." when the flow stepped aside in the run's
# last 8 s or came back (resumed) and was not aside at the end (a loss rate the path had); "host: ..." (not judged, as an
# invalid run) when the step aside followed what the host did to the link: a stall of the emulator of
# 5 ms or more (docs/testbed.md), which overflows a 10 ms buffer no real link would; a link that served
# under 90 of its 100 Mb/s with a queue at both ends of two 100 ms steps in the second before (the
# emulator behind in many short pieces: two runs on one noisy evening stepped aside with the flow at
# 32 Mb/s and the probe's echoes 12 ms over the base, the buffer full while ~52 Mb/s was offered); an
# RTT over the base with no queue on the link (the delay in the hosts); or drops the host made
# (host_drops) before it and on through the rest of the run. A failure prints the
# link's 100 ms steps before the step aside.
judge_clean() {
  host_drops "$BATS_TEST_TMPDIR/series" 100000000 > "$BATS_TEST_TMPDIR/host_drops"
  python3 - "$BATS_TEST_TMPDIR" <<'PY'
import sys
d = sys.argv[1]
log = [dict(kv.split("=", 1) for kv in l.split()[1:] if "=" in kv) for l in open(f"{d}/shallow.log")]
t0 = int(next(x for x in log if x.get("ev") == "open")["t0_ms"])
close = next(x for x in log if x.get("ev") == "close")
stalls = [(float(a), float(b)) for a, b in (l.split() for l in open(f"{d}/stalls"))]
print(f"goodput {int(close['bytes_received']) * 8 / 61e6:.1f} Mb/s over 61 s; probe lost {close['probe_lost']} of "
      f"{close['probe_sent']}; emulator stalls >= 5 ms: {[round(u / 1000, 1) for _, u in stalls if u >= 5000]}",
      file=sys.stderr)
cong = [t0 + int(x["t_ms"]) for x in log if x.get("to") == "congested"]
decisions = [x for x in log if x.get("ev") == "decision"]
# A flow that steps aside for a competitor's queue stops its probe for good by design (docs/probe.md; the
# competitor test asserts it), even once it is back, and the step aside is judged below. With this check
# first, a run that stepped aside 60.7 s in, 0.26 s before the end, failed here though the judgement
# below excuses it as too late to see a return; and a CI pre-check of 062156a failed one that stepped
# aside 18.7 s in (emulator stalls of 5.7-11.6 ms in the run), resumed 2.1 s later and held to the end.
aside_at_end = bool(decisions) and decisions[-1].get("to") == "congested"
stopped_aside = any(x.get("ev") == "probe" and x.get("why") == "aside" for x in log)
if close["probe"] != "active" and not stopped_aside:
    print("fail: the probe was not active")
    sys.exit()
if not cong:
    print("pass" if any(x.get("to") == "decided" for x in log) else "fail: never decided, never stepped aside")
    sys.exit()
near = [(t, u) for t, u in stalls if u >= 5000 and cong[0] - 2000 <= t <= cong[0]]
# The link's series (t_s, fwd bytes out, the flow's bytes out, backlog): its 100 ms steps over the
# second before the step aside, and those that had a queue yet served under 90 Mb/s.
series = [[float(v) for v in l.split()] for l in open(f"{d}/series")]
steps = [(b[0] * 1000 - cong[0], (b[1] - a[1]) * 8 / (b[0] - a[0]) / 1e6, (b[2] - a[2]) * 8 / (b[0] - a[0]) / 1e6,
          min(a[3], b[3])) for a, b in zip(series, series[1:]) if -1000 <= b[0] * 1000 - cong[0] <= 0]
slow = [x for x in steps if x[3] > 20000 and x[1] < 90]  # a queue at both ends of the step
# The RTT the decision read was 10% over the base while the link, under 90 Mb/s, held under 20 KB (1.6 ms) in every step
# of the second before: the delay was in the hosts, not on the path (a CI pre-check: competing 759 ms
# in at 32.9 Mb/s and 48.2 ms on the 40 ms path, the link at 17-63 Mb/s with at most 3 KB queued).
d0 = next(x for x in log if x.get("to") == "congested")
off_path = (steps and all(x[1] < 90 and x[3] < 20000 for x in steps) and
            int(d0["rtt_us"]) >= 1.1 * int(d0["base_rtt_us"]))
# Drops the host made (host_drops, wan.bash; measured in one run: 9 episodes over 31.5 s with the link
# at 45-78 Mb/s, up to 12 stalls of 1-1.4 ms within 40 ms). A path that goes on losing so is lossy, and aside
# is the paper's answer there.
host_drops = [float(l) for l in open(f"{d}/host_drops")]
before = [t for t in host_drops if cong[0] - 2000 <= t <= cong[0]]
after = [t for t in host_drops if t > cong[0]]
# A loss rate the path really had (two cross-traffic bursts into the 10 ms buffer within 4 s: seen in
# about 1 of 10 runs, no stall needed) steps aside as the paper says; what must never happen on a clean
# path is to stay aside: the flow returns once its rate is back and holds again.
# Back is the resume, not the next hold: after a loss CUBIC regrows for seconds before flat-rate can
# decide (a CI run resumed 2.0 s after the step aside at 49.9 s and was still searching at 61 s).
back = [t0 + int(x["t_ms"]) for x in log if x.get("why") == "resume" and t0 + int(x["t_ms"]) > cong[0]]
returned = back and not aside_at_end
# A return needs the 2 s backoff and three windows back at the rate: a step aside in the run's last
# 8 s cannot show one.
late = cong[0] - t0 > 61000 - 8000
if near:
    print(f"host: congested {cong[0] - t0} ms in, after an emulator stall of {near[0][1] / 1000:.1f} ms")
elif len(slow) >= 2:
    print(f"host: congested {cong[0] - t0} ms in, the link served under 90 Mb/s with a queue in "
          f"{len(slow)} of the 100 ms steps before")
elif off_path:
    print(f"host: congested {cong[0] - t0} ms in, at an RTT of {int(d0['rtt_us']) / 1000:.1f} ms with no queue "
          f"on the link in the second before")
elif before and len(after) * 10000 >= 61000 - (cong[0] - t0):
    print(f"host: congested {cong[0] - t0} ms in, after drops the host made (the link under 90 Mb/s), and "
          f"{len(after)} more such episodes in the {(61000 - (cong[0] - t0)) / 1000:.0f} s left: a lossy path")
elif late:
    print(f"excused: congested {cong[0] - t0} ms in, too near the end to see the return")
elif returned:
    print(f"excused: congested {cong[0] - t0} ms in, returned {back[0] - cong[0]} ms later, not aside at the end")
else:
    print(f"fail: congested {cong[0] - t0} ms in, no emulator stall before it, aside at the end")
    for x in steps:
        print(f"  {x[0]:+6.0f} ms: link {x[1]:5.1f} Mb/s, the flow {x[2]:5.1f} Mb/s, queue {x[3]:6.0f} B", file=sys.stderr)
PY
}

@test "probe: no false congestion over 60 s on a clean path with a 0.25-BDP buffer and UDP cross traffic" {
  # A run that steps aside on a link the host froze for over 3% of it (docs/testbed.md) is reported
  # and repeated, never judged: in a CI run at such an hour a flow held at 42 Mb/s with no queue in
  # the emulator read a 46.5 ms RTT on the 40 ms path (every wanbench run of that hour was invalid,
  # its link frozen 3.5-5.5%).
  local attempt why verdict
  for attempt in 1 2 3; do
    path 100M 125000
    ip netns exec "$TB-xs" "$WAN/wanflood" --to 10.80.12.2:7002 --rate 20M --mix internet --poisson 2>/dev/null 3>&- &
    flood=$!
    sleep 1
    rc=$(fetch shallow huge --max-time 61)
    kill "$flood"
    wait "$flood" 2>/dev/null || true
    stop_path
    [ "$rc" -eq 28 ]
    grep -E ' ev=(probe|decision) ' "$BATS_TEST_TMPDIR/shallow.log" | cut -c1-200
    verdict=$(judge_clean)
    if [ "$verdict" != pass ] && ! why=$(emu_valid "$BATS_TEST_TMPDIR/emu.json"); then
      echo "attempt $attempt invalid ($why), not judged: $verdict"
      continue
    fi
    echo "attempt $attempt: $verdict"
    # A step aside the flow came back from (a loss rate the path had) or after holding to the run's
    # last seconds is no false congestion (a CI run: held from 7 s, aside at 60.6 s).
    case $verdict in
      pass | excused*) return 0 ;;
      fail*) return 1 ;;
    esac
  done
  skip "no judged run in 3 attempts: the host is too busy to emulate the path"
}

# One download from a sobasd on port 9522 that is killed 3 s in and back 1 s later, as a supervisor
# (systemd's Restart=) would have it; logs to kill.log, prints curl's status and the data's SHA-256
# (hashed on the fly: no file to write back), leaves the restarted sobasd's pid in restarted.pid.
download_through_kill() {
  ip netns exec "$TB-snd" "$SOBASD" --port 9522 2>/dev/null 3>&- &
  own=$!
  ( sleep 3; kill -9 "$own"; sleep 1
    ip netns exec "$TB-snd" "$SOBASD" --port 9522 2>/dev/null 3>&- &
    echo $! > "$BATS_TEST_TMPDIR/restarted.pid" ) 3>&- &
  killer=$!
  ip netns exec "$TB-rcv" env LD_PRELOAD="$LIB" SOBAS_LOG="$BATS_TEST_TMPDIR/kill.log" \
    SOBAS_PROBE_PORT=9522 bash -c 'set -o pipefail; s=$(curl -sS "http://10.80.1.1:8080/file" | sha256sum); echo "$? ${s%% *}"'
  wait "$killer" || true
}

# A flow that stepped aside as `competing` before the kill had stopped probing (docs/probe.md), so it
# cannot show the fall-back: that download is void and the test takes a second (a CI run under load
# stepped aside 0.66 s into slow start on this clean path).
@test "probe: kill sobasd mid-transfer and restart it; the flow falls back to kernel signals, the download completes intact, the next flow is probed" {
  path 100M 500000
  local try
  for try in 1 2; do
    rm -f "$BATS_TEST_TMPDIR/kill.log"
    read -r rc sum < <(download_through_kill)
    grep -q ' ev=probe .* status=off why=aside' "$BATS_TEST_TMPDIR/kill.log" || break
    echo "try $try void: the probe had stopped aside"
    local pid
    pid=$(cat "$BATS_TEST_TMPDIR/restarted.pid")
    kill "$pid"
    while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done # its port free for the next try's sobasd
  done
  # The restarted sobasd answers the next flow's probe (the first stays on kernel signals: a helper
  # that found its peer silent does not ask again).
  [ "$(SOBAS_PROBE_PORT=9522 fetch again small)" = 0 ]
  kill "$(cat "$BATS_TEST_TMPDIR/restarted.pid")"
  stop_path
  grep -E ' ev=(probe|decision|close) ' "$BATS_TEST_TMPDIR/kill.log" | cut -c1-220
  [ "$rc" -eq 0 ]
  [ "$sum" = "$(sha256sum < "$BATS_FILE_TMPDIR/file" | cut -d' ' -f1)" ]
  [ "$(field kill close probe)" = none ]
  [ "$(field kill close probe_why)" = silent ]
  # Windows after the fall-back carry on under kernel signals, held where the engine put them. Not
  # necessarily to the last: CI pre-check 118's flow, held 4.5 s past the fall-back (one lift), stepped
  # aside 1.2 s before the end on the emulator's stalls (49 ms RTT at 83 of 96.5 Mb/s, nothing else on
  # the path).
  grep ' ev=window ' "$BATS_TEST_TMPDIR/kill.log" | tail -3 | grep -q ' probe=none .*'
  grep ' ev=window ' "$BATS_TEST_TMPDIR/kill.log" | grep ' probe=none ' | grep -q ' state=decided '
  grep -q ' ev=probe .* status=active' "$BATS_TEST_TMPDIR/again.log"
}

# Both ends preloaded, sobasd on the sender's host: the sender tells sobasd it steers (LEAD, over
# sobasd's unix socket) a quarter of the way to bulk, before the receiver's first probe arrives; that
# probe's lookup takes the LEAD, and sobasd's echoes stand the receiver down at its first window, with the
# trains it asked for withheld: it never holds the flow, stops probing, and the sender decides. The
# receiver's probe also marks the flow in sobasd's steered-flows table, where the sender finds it and
# repeats the LEAD. Without sobasd the receiver steers and the sender
# lets go once the peer's window holds it (sobas.bats).
# Then sobasd is killed and restarted while the sender lives. The sender maps the table, and a file
# that shrank under it would kill it with SIGBUS: a restart must make a new file (another inode), never
# truncate the old one (a sender reading in the instant it is short dies; that race is not what fails
# here, the inode is), and the sender must find the new one, and the new sobasd's unix socket.
@test "both ends preloaded, sobasd on the sender's host: the sender steers and the receiver stands down (peer-sender), also after sobasd restarts" {
  local srv_log=$BATS_TEST_TMPDIR/srv.log srv
  preloaded_server 8085 "$srv_log"
  local table
  table=/dev/shm/sobasd.steered.$(stat -L -c %i "/run/netns/$TB-snd")
  local before
  before=$(stat -c %i "$table")
  path 100M 500000
  rc1=$(PORT=8085 fetch both file)
  # A restart as a supervisor would do it: killed, so the old file stays, and started again.
  kill -9 "$(cat "$BATS_FILE_TMPDIR/sobasd.pid")"
  ip netns exec "$TB-snd" "$SOBASD" --stats "$STATS/sobasd.json" 2>>"$BATS_FILE_TMPDIR/sobasd.err" 3>&- &
  echo $! > "$BATS_FILE_TMPDIR/sobasd.pid"
  disown
  for _ in $(seq 100); do [ -e "$table" ] && [ "$(stat -c %i "$table")" != "$before" ] && break; sleep 0.05; done
  # A sender looks for a new table at most once a second (shim/peer_steers.c), and the first download's
  # last windows looked: the second starts after that second, or its first windows could still read the
  # old table and the sender leave the flow to the receiver's window (which is no failure of the rule).
  sleep 1.1
  rc2=$(PORT=8085 fetch after small)
  stop_path
  alive=0
  kill -0 "$srv" && alive=1
  kill "$srv" || true
  wait "$srv" 2>/dev/null || true
  echo "downloads: $rc1 $rc2; table inode $before, then $(stat -c %i "$table"); server alive: $alive"
  [ "$rc1" = 0 ] && [ "$rc2" = 0 ]
  [ "$alive" = 1 ]
  # A new file, made before sobasd dropped to nobody: one only root may shrink, readable by every sender.
  [ "$(stat -c %i "$table")" != "$before" ]
  [ "$(stat -c '%U %a' "$table")" = "root 644" ]
  python3 - "$srv_log" "$BATS_TEST_TMPDIR/both.log" "$BATS_TEST_TMPDIR/after.log" <<'PY'
import sys
parse = lambda path: [dict(kv.split("=", 1) for kv in l.split()[1:] if "=" in kv) for l in open(path)]
server = parse(sys.argv[1])
flows = list(dict.fromkeys(x["flow"] for x in server if x.get("ev") == "window" and x.get("role") == "sender"))
assert len(flows) == 2, f"the server measured {len(flows)} sending flows, not 2"
for i, (flow, rcv_log) in enumerate(zip(flows, sys.argv[2:])):
    snd, rcv = [x for x in server if x.get("flow") == flow], parse(rcv_log)
    for who, log in (("sender", snd), ("receiver", rcv)):
        for x in log:
            if x.get("ev") in ("decision", "yield", "lead"):
                print(f"  {who} {x['t_ms']} ms {x['ev']} {x.get('from', x.get('state'))} -> {x.get('to', '')} {x['why']}")
    leads = [x for x in snd if x.get("ev") == "lead"]
    assert len(leads) == 1 and leads[0]["why"] == "peer-probe", "the sender did not take the lead on sobasd's table"
    assert not [x for x in snd if x.get("ev") == "yield"], "the sender left the flow"
    downs = [x for x in rcv if x.get("ev") == "yield"]
    assert len(downs) == 1 and downs[0]["why"] == "peer-sender", "the receiver did not stand down on sobasd's echo"
    first = int([x for x in snd if x.get("ev") == "window"][0]["t_ms"])
    print(f"flow {flow}: first sender window at {first} ms, lead at {leads[0]['t_ms']} ms, receiver down at {downs[0]['t_ms']} ms")
    # The receiver's probe answers within ~2 RTT of its first window, so the sender's second window at the
    # latest; the receiver reads the next echo at its own next window.
    assert int(leads[0]["t_ms"]) - first <= 1000, "the sender found sobasd's word late"
    down_at = int(downs[0]["t_ms"])
    assert not [x for x in rcv if x.get("ev") == "decision" and int(x["t_ms"]) > down_at], "the receiver steered after standing down"
    # The sender's first LEAD reached sobasd before the receiver's first probe: the receiver's first echo
    # stood it down, with no trains (sobasd withheld them) and no window of its own before. A window
    # later leaves a stalled host's margin.
    early = [int(x["t_ms"]) for x in rcv if x.get("ev") == "window" and int(x["t_ms"]) < down_at]
    assert len(early) <= 1, f"the receiver stood down at its window {len(early) + 1}"
    assert not [x for x in rcv if x.get("ev") == "probe" and x.get("what") == "capacity"], "the receiver got trains"
    assert not [x for x in rcv if x.get("ev") == "decision"], "the receiver held the flow before standing down"
    if i == 0:  # 100 MB: long enough for the sender's own decision
        assert any(x.get("ev") == "decision" and x["to"] == "decided" for x in snd), "the sender never held the flow"
PY
}

# A receiver under a policy the user chose (bdp here) keeps it when the sender leads, and the sender lets
# go to it, so that only one end steers; without that, both would steer for the whole transfer (the
# receiver probes throughout, so sobasd's table keeps naming the flow). On the clean path bdp's window
# (C'·T) holds the sender a second after its LEAD: it lets go by the peer-window rule. Beside 40 Mb/s of
# UDP the sender decides on the 60 the path has left, under a window of C'·T = 500 KB that seldom holds
# it: it lets go when sobasd's table still names the flow a second after a receiver that stood down would
# have left it (peer-probe). Before that rule it paced under the receiver's window to the end, as a CI
# run's sender did on the clean path after leaving slow start on a rate drop.
@test "both ends preloaded, the receiver under bdp: it keeps its policy, and the sender lets go after the second it gives it, held by its window or not (peer-window, peer-probe)" {
  local srv_log=$BATS_TEST_TMPDIR/srv.log srv
  preloaded_server 8086 "$srv_log"
  path 100M 500000
  rc=0
  ip netns exec "$TB-rcv" env LD_PRELOAD="$LIB" SOBAS_POLICY=bdp SOBAS_LOG="$BATS_TEST_TMPDIR/bdp.log" \
    curl -sS -o /dev/null "http://10.80.1.1:8086/file" || rc=$?
  ip netns exec "$TB-xs" "$WAN/wanflood" --to 10.80.12.2:7002 --rate 40M --size 1500 2>/dev/null 3>&- &
  flood=$!
  sleep 0.5
  ip netns exec "$TB-rcv" env LD_PRELOAD="$LIB" SOBAS_POLICY=bdp SOBAS_LOG="$BATS_TEST_TMPDIR/cross.log" \
    curl -sS -o /dev/null "http://10.80.1.1:8086/small" || rc=$?
  kill "$flood"
  wait "$flood" 2>/dev/null || true
  stop_path
  kill "$srv" || true
  wait "$srv" 2>/dev/null || true
  [ "$rc" = 0 ]
  python3 - "$srv_log" "$BATS_TEST_TMPDIR/bdp.log" "$BATS_TEST_TMPDIR/cross.log" <<'PY'
import sys
parse = lambda path: [dict(kv.split("=", 1) for kv in l.split()[1:] if "=" in kv) for l in open(path)]
server = parse(sys.argv[1])
flows = list(dict.fromkeys(x["flow"] for x in server if x.get("ev") == "window" and x.get("role") == "sender"))
assert len(flows) == 2, f"the server measured {len(flows)} sending flows, not 2"
# Beside the UDP the window C'·T usually does not hold the sender (peer-probe), but it may: CI pre-check
# 119's sender left slow start on a rate drop, searched with a queue in the 1-BDP buffer, and its window
# held it at 2.2 s (peer-window), 1.96 s after its LEAD. Either rule is the sender letting go in time.
for flow, rcv_log, path, whys in zip(flows, sys.argv[2:], ("clean", "40M UDP"), (("peer-window", "peer-probe"),) * 2):
    snd, rcv = [x for x in server if x.get("flow") == flow], parse(rcv_log)
    print(f"{path}:")
    for who, log in (("sender", snd), ("receiver", rcv)):
        for x in log:
            if x.get("ev") in ("decision", "yield", "lead"):
                print(f"  {who} {x['t_ms']} ms {x['ev']} {x.get('from', x.get('state'))} -> {x.get('to', '')} {x['why']}")
    # The receiver's probe: whether it got trains (C') and when. CI pre-check 118's bdp receiver on the
    # clean path logged no decision at all, the sender having led from 260 ms.
    for x in rcv:
        if x.get("ev") == "probe":
            print("  receiver " + " ".join(f"{k}={x[k]}" for k in ("t_ms", "what", "status", "why", "cap_bps", "sent", "echoes") if k in x))
    leads = [x for x in snd if x.get("ev") == "lead"]
    yields = [x for x in snd if x.get("ev") == "yield"]
    assert len(leads) == 1, "the sender did not lead"
    assert len(yields) == 1 and yields[0]["why"] in whys, f"the sender did not let go to the bdp receiver ({path})"
    waited = int(yields[0]["t_ms"]) - int(leads[0]["t_ms"])
    print(f"  lead at {leads[0]['t_ms']} ms, let go {waited} ms later ({yields[0]['why']})")
    assert waited >= 1000, "the sender let go within the second it gives a receiver to stand down"
    # The table forgets a receiver a second after its last probe; a host stall's margin over that.
    assert waited <= 3000, "the sender went on steering beside the receiver"
    assert not [x for x in rcv if x.get("ev") == "yield"], "the bdp receiver stood down"
    assert any(x.get("ev") == "decision" and x["why"] == "bdp" for x in rcv), "the receiver did not hold C'*T"
PY
}

@test "probe: no sobasd on the peer; the flow records 'probe: none' within 500 ms and SOBAS still decides" {
  path 100M 500000
  rc=$(ip netns exec "$TB-rcv" env LD_PRELOAD="$LIB" SOBAS_LOG="$BATS_TEST_TMPDIR/none.log" SOBAS_PROBE_PORT=9599 \
    curl -sS -o /dev/null "http://10.80.1.1:8080/small" && echo 0)
  stop_path
  [ "$rc" = 0 ]
  grep -E ' ev=(probe|decision|close) ' "$BATS_TEST_TMPDIR/none.log" | cut -c1-220
  grep -q ' ev=probe .* status=none why=no-echo ' "$BATS_TEST_TMPDIR/none.log"
  grep -q ' to=decided ' "$BATS_TEST_TMPDIR/none.log"
  [ "$(field none close probe_sent)" -le 60 ] # gave up after ~50 probes (500 ms), not at the end
}

@test "probe: the helper's sockets are invisible to the host (close, dup2, closefrom) and it stops before a TSYNC seccomp filter" {
  path 100M 500000
  run ip netns exec "$TB-rcv" env LD_PRELOAD="$LIB" SOBAS_LOG="$BATS_TEST_TMPDIR/fds.log" \
    "$PROGS/probe_fds" 10.80.1.1 8080 /file
  stop_path
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"ok sealed and alive, bytes=104857807"* ]] # the 100 MiB file and its HTTP header
  grep -q ' ev=probe .* what=capacity ' "$BATS_TEST_TMPDIR/fds.log"
}

@test "probe: a forked child that goes on reading the flow runs its own probe helper" {
  path 100M 500000
  run ip netns exec "$TB-rcv" env LD_PRELOAD="$LIB" SOBAS_LOG="$BATS_TEST_TMPDIR/fork.log" \
    "$PROGS/probe_fork" 10.80.1.1 8080 /small
  stop_path
  echo "$output"
  [ "$status" -eq 0 ]
  parent=$(echo "$output" | awk '/^parent/ { print $2 }')
  child=$(echo "$output" | awk '/^child/ { print $2 }')
  grep -E ' ev=(probe|close) ' "$BATS_TEST_TMPDIR/fork.log" | cut -c1-200
  # Both processes probed: the parent before the fork, the child afresh after it, with its own echoes.
  grep -q "pid=$parent .* ev=probe .* status=active" "$BATS_TEST_TMPDIR/fork.log"
  grep -q "pid=$child .* ev=probe .* status=active" "$BATS_TEST_TMPDIR/fork.log"
  echoes=$(grep "pid=$child .* ev=close " "$BATS_TEST_TMPDIR/fork.log" | grep -o ' probe_echoes=[0-9]*' | cut -d= -f2)
  [ "${echoes:-0}" -gt 10 ]
}

# `sobas path` from the receiver's namespace: a TCP connection to the HTTP server that sobasd can
# verify, the probe's RTT and packet trains, and the advice they make; the same host's UDP port with
# no sobasd gives the handshake's RTT and says C' is unknown; a host that does not resolve exits 2.
@test "sobas path measures the emulated path with sobasd (RTT, C', BDP, buffer advice), without it from an HTTP download, and says what it cannot" {
  path 100M 500000
  ip netns exec "$TB-rcv" "$BUILD/bin/sobas" path --json 10.80.1.1:8080 > "$BATS_TEST_TMPDIR/path.json"
  ip netns exec "$TB-rcv" "$BUILD/bin/sobas" path 10.80.1.1:8080 > "$BATS_TEST_TMPDIR/path.txt"
  ip netns exec "$TB-rcv" "$BUILD/bin/sobas" path --json --probe-port 9529 10.80.1.1:8080 > "$BATS_TEST_TMPDIR/none.json"
  # no sobasd, but an HTTP server on the port: a 3 s download stands in for C'
  ip netns exec "$TB-rcv" "$BUILD/bin/sobas" path --json --probe-port 9529 --http /huge 10.80.1.1:8080 \
    > "$BATS_TEST_TMPDIR/http.json"
  stop_path
  cat "$BATS_TEST_TMPDIR/path.txt"
  python3 - "$BATS_TEST_TMPDIR" <<'PY'
import json, sys
d = sys.argv[1]
p, n = json.load(open(f"{d}/path.json")), json.load(open(f"{d}/none.json"))
print(p, n, sep="\n")
# issue 15's bars: the RTT within 1 ms of the emulated 40 ms, C' within 15% of C, the BDP within 15% of C·RTT
assert p["sobasd"] and 39000 <= p["rtt_us"] <= 41000, "the probe's RTT is not the path's 40 ms"
assert 0.85e8 <= p["capacity_bps"] <= 1.15e8, "C' not within 15% of 100 Mb/s"
assert 0.85 <= p["bdp_bytes"] / (1e8 / 8 * p["rtt_us"] / 1e6) <= 1.15 and p["buffer_bytes"] >= 2 * p["bdp_bytes"]
assert p["sobas_max_s_bytes"] == p["bdp_bytes"] and p["gridftp_streams"] > 0
assert not n["sobasd"] and n["capacity_bps"] == 0 and n["bdp_bytes"] == 0 and 39000 <= n["rtt_us"] <= 45000
h = json.load(open(f"{d}/http.json"))
print(h)
assert h["capacity_from"] == "http" and h["http_bytes"] >= 1 << 20
assert 0.5e8 <= h["capacity_bps"] <= 1.05e8, "one flow's rate past slow start: at most C, most of it"
assert h["bdp_bytes"] > 0 and h["sobas_max_s_bytes"] == h["bdp_bytes"]
PY
  grep -q "capacity C'  [0-9.]* Mb/s" "$BATS_TEST_TMPDIR/path.txt"
  run "$BUILD/bin/sobas" path no-such-host.invalid
  [ "$status" -eq 2 ] && [[ "$output" == *"cannot resolve"* ]]
  run ip netns exec "$TB-rcv" "$BUILD/bin/sobas" path 10.80.1.1:1
  [ "$status" -eq 1 ] && [[ "$output" == *"does not answer"* ]]
}

# bdp_goodput NAME FILE: Mb/s of one download under the bdp policy (S = C'·T from sobasd's trains),
# from a run the emulator kept its timing through (3 attempts, else the test skips: nothing measured).
bdp_goodput() {
  local attempt why bps
  for attempt in 1 2 3; do
    path 100M 500000
    bps=$(ip netns exec "$TB-rcv" env LD_PRELOAD="$LIB" SOBAS_POLICY=bdp SOBAS_LOG="$BATS_TEST_TMPDIR/$1.log" \
      curl -sS -o /dev/null -w '%{speed_download}' "http://10.80.1.1:8080/$2")
    stop_path
    why=$(emu_valid "$BATS_TEST_TMPDIR/emu.json") && { echo "$bps" | awk '{ printf "%.1f", $1 * 8 / 1e6 }'; return 0; }
    echo "$1: attempt $attempt invalid: $why" >&2
  done
  skip "$1: no valid run in 3 attempts: the host is too busy to emulate the path"
}

# Tierney's advice, applied: this host's buffers capped at 256 KiB (rmem_max, the host's, and the
# receiver's tcp_rmem), half the path's 500 KB BDP, hold a flow under the bdp policy below 80% of A;
# the lines `sobas path` prints for the path, applied, let it hold C'·T. The benchmark-grade bar is 95%
# of A; CI asks 90% of the header-adjusted 96.5 Mb/s (the transfer's own slow start included).
@test "sobas path's sysctl lines, applied, let a bdp flow reach the path's rate that capped buffers held it under" {
  RESTORE="sysctl -qw net.core.rmem_max=$(sysctl -n net.core.rmem_max);
    ip netns exec $TB-rcv sysctl -qw net.ipv4.tcp_rmem='$(ip netns exec "$TB-rcv" sysctl -n net.ipv4.tcp_rmem)'"
  sysctl -qw net.core.rmem_max=262144
  ip netns exec "$TB-rcv" sysctl -qw net.ipv4.tcp_rmem="4096 131072 262144"
  local before after
  before=$(bdp_goodput before small)
  path 100M 500000
  ip netns exec "$TB-rcv" "$BUILD/bin/sobas" path --json 10.80.1.1:8080 > "$BATS_TEST_TMPDIR/advice.json"
  stop_path
  cat "$BATS_TEST_TMPDIR/advice.json"
  local line
  while read -r line; do
    echo "applying: sysctl -w $line"
    ip netns exec "$TB-rcv" sysctl -qw "$line"
  done < <(python3 -c 'import json, sys; print("\n".join(json.load(open(sys.argv[1]))["sysctl"]))' "$BATS_TEST_TMPDIR/advice.json")
  after=$(bdp_goodput after file)
  echo "bdp flow: $before Mb/s with the buffers capped, $after Mb/s with the advised sysctls (A = 96.5)"
  grep -o ' ev=decision .* why=bdp s=[0-9]*' "$BATS_TEST_TMPDIR/after.log" | head -1
  python3 - "$BATS_TEST_TMPDIR/advice.json" "$before" "$after" <<'PY'
import json, sys
advice, before, after = json.load(open(sys.argv[1])), float(sys.argv[2]), float(sys.argv[3])
names = [l.split("=")[0] for l in advice["sysctl"]]
assert "net.core.rmem_max" in names and "net.ipv4.tcp_rmem" in names, f"advice misses a capped limit: {names}"
assert not advice["receive_ok"], "the capped buffers were called enough"
assert before < 0.8 * 96.5, f"capped at 256 KiB the flow made {before} Mb/s: the cap did not bind"
assert after >= 0.9 * 96.5, f"with the advised limits the flow made {after} Mb/s"
PY
  eval "$RESTORE"
  RESTORE=
}

# A program that may open only 32 files gets all of them: the helper's sockets would take two.
@test "a program at RLIMIT_NOFILE 32 gets every file it could without the shim; the probe stays out (why=fd-limit)" {
  path 100M 500000
  local plain shim
  plain=$(ip netns exec "$TB-rcv" "$PROGS/fd_limit" 10.80.1.1 8080 /small)
  shim=$(ip netns exec "$TB-rcv" env LD_PRELOAD="$LIB" SOBAS_LOG="$BATS_TEST_TMPDIR/fd.log" \
    "$PROGS/fd_limit" 10.80.1.1 8080 /small)
  stop_path
  echo "plain: $plain; preloaded: $shim"
  grep -E ' ev=(probe|close) ' "$BATS_TEST_TMPDIR/fd.log" | cut -c1-200
  [ "$plain" = "$shim" ]
  [ "$(field fd close probe_why)" = fd-limit ]
}

# A firewall that drops the probe's port: datagrams reach the sender's host and vanish, with no ICMP
# back. A UDP sink on that port in the sender's namespace is exactly that, seen from the receiver (these
# machines have neither nft nor iptables nor tc's drop action).
@test "the probe's port firewalled (dropped silently): no echo, the download whole, SOBAS on kernel signals" {
  ip netns exec "$TB-snd" "$WAN/wanflood" --sink 9530 >/dev/null 3>&- &
  local sink=$!
  path 100M 500000
  rc=$(SOBAS_PROBE_PORT=9530 fetch fw small)
  stop_path
  kill "$sink"
  grep -E ' ev=(probe|decision|close) ' "$BATS_TEST_TMPDIR/fw.log" | cut -c1-200
  [ "$rc" -eq 0 ]
  [ "$(field fw close probe)" = none ] && [ "$(field fw close probe_why)" = no-echo ]
  [ "$(field fw close bytes_received)" -ge $((40 * 1024 * 1024)) ]
  grep -q ' ev=decision .*to=decided ' "$BATS_TEST_TMPDIR/fw.log"
}
