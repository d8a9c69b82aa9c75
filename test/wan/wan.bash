# wan.bash — helpers the WAN bats files share: the servers they start in a testbed's namespaces, and whether a run's emulated path was valid (sourced).

# Preloaded programs write their decision ring into the run's temporary directory, which goes with it.
export SOBAS_RING=$BATS_RUN_TMPDIR/sobas.ring

# wan_serve DIR: a plain HTTP server for DIR on 10.80.1.1:8080 in the sender namespace and the
# cross-traffic sink in P-xr; returns once the server listens.
wan_serve() {
  local dir=$1
  ip netns exec "$TB-snd" python3 -m http.server 8080 --bind 10.80.1.1 -d "$dir" >/dev/null 2>&1 3>&- &
  disown
  ip netns exec "$TB-xr" "$WAN/wanflood" --sink 7002 >/dev/null 3>&- &
  disown
  for _ in $(seq 100); do ip netns exec "$TB-snd" ss -Hltn 'sport = :8080' | grep -q LISTEN && return 0; sleep 0.05; done
  echo "the HTTP server did not start" >&2
  return 1
}

# host_drops SERIES RATE_BPS: when (CLOCK_MONOTONIC ms, one per line) the host made the emulator drop
# packets, from its --series file, on a path with no random loss: a 100 ms step that dropped while
# the link served under 90% of its rate. A DropTail buffer overflows only after serving at its rate
# for as long as it holds; the link frozen in clusters of short stalls overflows it at any load
# (docs/testbed.md). Steps in a row are one episode. The run's first episode is never counted: a
# slow start fills the buffer from empty within one step, whatever the step's mean.
host_drops() {
  python3 - "$1" "$2" <<'PY'
import sys
rows = [[float(v) for v in l.split()] for l in open(sys.argv[1]) if l.strip()]
rate, last, first = float(sys.argv[2]), None, None
for a, b in zip(rows, rows[1:]):
    if b[6] <= a[6]:
        continue
    if first is None or b[0] - first <= 0.15:
        first = b[0]  # the first episode's steps
    elif (b[1] - a[1]) * 8 / (b[0] - a[0]) < 0.9 * rate:
        if last is None or b[0] - last > 0.15:
            print(round(b[0] * 1000))
        last = b[0]
PY
}

# emu_valid STATS: whether the emulated path was the one asked for, from wanemu's --stats file; prints why not.
# The host sometimes does not run the emulator for milliseconds at a time (steal time); wanemu then
# freezes the link over each stall (docs/testbed.md), and a run whose link was frozen for longer
# than 3% of its time measures the host, not the flow (measured, a stall being any release overdue by
# 1 ms: 0.3-2.2% on a noisy day with 50-360 stalls; the busiest hours reach 5%). STALL_LIMIT raises
# that share for a test whose bars a frozen link cannot move.
emu_valid() {
  python3 - "$1" "${STALL_LIMIT:-0.03}" <<'PY'
import json, sys
e, limit = json.load(open(sys.argv[1])), float(sys.argv[2])
why = [f"{d}: host stalls ({e['stalls']}) froze the link {e[d]['stall_lag_ms']:.0f} ms of {e['wall_s']:.1f} s"
       for d in ("fwd", "rev") if e[d]["stall_lag_ms"] > limit * e["wall_s"] * 1000][:1]
why += [f"{d}: mean release lateness {e[d]['late_mean_us']:.0f} us" for d in ("fwd", "rev") if e[d]["late_mean_us"] >= 100]
print("; ".join(why))
sys.exit(1 if why else 0)
PY
}

# CLOCK_MONOTONIC in seconds: the clock of the shim's log (its open line's t0_ms).
mono() { python3 -c 'import time; print(time.monotonic())'; }
