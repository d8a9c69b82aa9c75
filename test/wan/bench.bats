#!/usr/bin/env bats
# bench.bats — CI smoke of the WAN benchmark: one scenario, every contender once, reports and plot written.

setup_file() {
  REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
  export REPO OUT=$BATS_FILE_TMPDIR/results
  [ "$(id -u)" = 0 ] || { echo "the benchmark needs root" >&2; return 1; }
  # The pinned plotting venv (scripts/setup-venv.sh); without it the smoke still checks the numbers.
  if [ -x "$REPO/build/venv/bin/python" ]; then PY=$REPO/build/venv/bin/python PLOTS=
  else PY=python3 PLOTS=--no-plots; fi
  export PY PLOTS
  "$PY" "$REPO/scripts/wanbench.py" --quick --only typical --repeats 1 $PLOTS \
    --build "${SOBAS_BUILD_DIR:-$REPO/build}" --out "$OUT" > "$BATS_FILE_TMPDIR/bench.out" 2>&1 ||
    { cat "$BATS_FILE_TMPDIR/bench.out" >&2; return 1; }
}

@test "every contender ran the same transfer; each run is valid or says why not" {
  cat "$BATS_FILE_TMPDIR/bench.out"
  run "$PY" - "$OUT/results.json" "$BATS_FILE_TMPDIR/bench.out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
(s,) = r["scenarios"]
names = [c["contender"] for c in s["contenders"]]
assert names == ["sobas", "sobas no sobasd", "sobas sender", "sobas both", "max buffer", "linux default", "bbr"], names
A = s["calibration"]["A_bps"]
assert abs(A / 1e6 - 77.2) < 3, A  # (100 - 20 Mb/s UDP) at 1448/1500 goodput per byte
for run in s["runs"]:
    assert run["valid"] or run["reasons"], run
    if run["valid"]:
        # A real transfer at roughly the path's available rate, under a real RTT.
        assert 0.6 * A < run["goodput_bps"] < 1.1 * A, (run["contender"], run["goodput_bps"])
        assert run["series"]["t"] and run["series"]["rtt_ms"], run["contender"]
        assert min(run["series"]["rtt_ms"]) > 39.5, run["contender"]
sobas = next(run for run in s["runs"] if run["contender"] == "sobas")
assert sobas["series"]["windows"]["t"], "the preloaded receiver's windows are plotted"
if "no sender trace" not in open(sys.argv[2]).read():
    for run in s["runs"]:
        # Every contender sends over TCP: the tracepoints saw its sender, whatever they saw it do.
        assert run["ss_exit_by"] in ("hystart", "loss", "none", "unseen") and run["loss_episodes"] >= 0, \
            run["contender"]
        if run["ss_exit_by"] in ("hystart", "loss"):
            assert run["ss_exit_pkts"] >= 2 and run["ss_exit_ms"] > 0, run["contender"]
sender = next(run for run in s["runs"] if run["contender"] == "sobas sender")
assert sender["decision_ms"] is not None or not sender["valid"], "the preloaded sender never decided"
for run in s["runs"]:
    if run["decision_ms"] is not None:
        # How it settled, from the log and the link: counted drops, and slow start left before deciding.
        assert run["drops_after_decision"] >= 0, run["contender"]
        assert 0 <= run["decided_after_ss_ms"] <= run["decision_ms"], run["contender"]
if sum(run["valid"] for run in s["runs"]) < 4:
    # Most runs of a 100 Mb/s path are valid on this host; fewer only when the host froze the link
    # (a CI run once had all seven invalid, 3.5-5.5% frozen): then the host was measured, not the
    # benchmark. Any other reason (TUN drops, a short transfer, emulator faults) is a failure.
    host = ("host stalls", "release lateness", "cross traffic generator fell behind")
    other = [(run["contender"], why) for run in s["runs"] for why in run["reasons"] if not any(h in why for h in host)]
    assert not other, other
    print("skip: under 4 of 7 runs valid, every invalid one for host stalls")
    sys.exit()
print("ok")
PY
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[-1]}" = ok ] || skip "${lines[-1]#skip: }: the host is too busy to emulate the path"
}

@test "the Markdown table lists all seven contenders" {
  for c in sobas "sobas no sobasd" "sobas sender" "sobas both" "max buffer" "linux default" bbr; do
    grep -q "^| $c |" "$OUT/results.md"
  done
}

@test "the plot is a PNG (when the plotting venv is installed)" {
  [ -z "$PLOTS" ] || skip "no build/venv: run scripts/setup-venv.sh"
  [ "$(head -c 8 "$OUT/typical.png" | od -An -tx1 | tr -d ' ')" = 89504e470d0a1a0a ]
}

@test "the bars table has a row per preloaded contender" {
  # unmeasured: a noisy host can leave a contender with no valid run (the smoke's first test says so)
  sed -n '/^## Bars/,/^## typical/p' "$OUT/results.md" | grep -q "^| typical | sobas | \(met\|missed\|unmeasured\) |"
  sed -n '/^## Bars/,/^## typical/p' "$OUT/results.md" | grep -q "^| typical | sobas both | \(met\|missed\|unmeasured\) |"
}

# Runs of one contender from two invocations at the same code pool into one row (--merge --pool): a
# noisy scenario's bar is held on more repeats than one sitting gives. Without --pool the new runs
# replace the row. Checked on the smoke's own results, its "sobas both" run repeated 2 Mb/s faster.
@test "wanbench --merge --pool: a repeated contender's row is taken over its earlier and new runs, the other rows kept" {
  run "$PY" - "$REPO/scripts" "$OUT/results.json" <<'PY'
import copy, json, sys
sys.path.insert(0, sys.argv[1])
import wanbench
old = json.load(open(sys.argv[2]))
(s,) = old["scenarios"]
s["runs"] = [r for r in s["runs"] if r["repeat"] == 0]  # the smoke's one run each
for r in s["runs"]:
    r["valid"] = True  # the smoke may have met a busy host; pooling is arithmetic here
s["contenders"] = [wanbench.contender_row(c["contender"], [wanbench.Record(r) for r in s["runs"]
                                                           if r["contender"] == c["contender"]],
                                          s["calibration"]["A_bps"]) for c in s["contenders"]]
g_old = next(r for r in s["runs"] if r["contender"] == "sobas both")["goodput_bps"]
def rerun():
    n = copy.deepcopy(s)
    n["run_at"], n["commit"] = "2026-01-02 03:04 UTC", "abc1234"
    n["runs"] = [dict(r, goodput_bps=g_old + 2e6) for r in n["runs"] if r["contender"] == "sobas both"]
    n["contenders"] = [wanbench.contender_row("sobas both", [wanbench.Record(r) for r in n["runs"]],
                                              n["calibration"]["A_bps"])]
    return {"scenarios": [n]}
for pool in (True, False):
    new = rerun()
    wanbench.merge_results(new, copy.deepcopy(old), pool)
    (m,) = new["scenarios"]
    row = next(c for c in m["contenders"] if c["contender"] == "sobas both")
    runs = [r for r in m["runs"] if r["contender"] == "sobas both"]
    others = {c["contender"]: c["goodput_mbps"] for c in m["contenders"] if c["contender"] != "sobas both"}
    assert others == {c["contender"]: c["goodput_mbps"] for c in s["contenders"] if c["contender"] != "sobas both"}
    if pool:
        assert row["runs"] == 2 and [r["repeat"] for r in runs] == [0, 1], (row["runs"], [r["repeat"] for r in runs])
        assert row["goodput_mbps"] == round((g_old + 1e6) / 1e6, 2), row["goodput_mbps"]
        assert row["commit"] == f"{s['commit']} and abc1234", row["commit"]
        assert row["run_at"] == f"{s['run_at']} and 2026-01-02 03:04 UTC", row["run_at"]
        assert runs[1]["series"] == {}, "only a first repeat keeps its series"
    else:
        assert row["runs"] == 1 and row["goodput_mbps"] == round((g_old + 2e6) / 1e6, 2), (row["runs"], row["goodput_mbps"])
print("ok")
PY
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[-1]}" = ok ]
}

@test "wanbars.py holds each bar: met, missed by the mean, by one run (against its repeat where repeats are paired), by a queue, by a late or lossy decision; and the spread alone" {
  run "$PY" - "$REPO/scripts" <<'PY'
import copy, sys
sys.path.insert(0, sys.argv[1])
import wanbars

def con(name, mbps, pct, rtt, **kw):
    return dict(contender=name, valid_runs=3, goodput_mbps=mbps, pct_of_A=pct, rtt_p50_ms=rtt,
                retrans=0.0, decision_ms=400.0, **kw)

def runs(name, *mbps):
    return [dict(contender=name, valid=True, goodput_bps=m * 1e6) for m in mbps]

alone = dict(name="typical", calibration=dict(base_rtt_ms=40.0, A_bps=77e6), cross=None,
             contenders=[con("sobas", 74.0, 96.1, 1.2, drops_after_decision=[0, 0],
                             decided_after_ss_ms=[0.0, 950.0]),
                         con("max buffer", 75.0, 97.4, 30.0),
                         con("linux default", 75.0, 97.4, 25.0)], runs=[])
competing = dict(name="arrive-leave", calibration=dict(base_rtt_ms=40.0, A_bps=96e6),
                 cross=dict(kind="tcp", start=10, duration=15),
                 contenders=[con("sobas", 85.0, 88.5, 1.0, aside_s=[0.7, 1.1], back_s=[1.0, 2.5],
                                 rtt_last10_p50_ms=[0.5, 0.6]),
                             con("linux default", 86.0, 89.6, 20.0)],
                 runs=runs("sobas", 84.0, 86.0) + runs("linux default", 86.0, 86.0))

def verdict(*scenarios):
    return [all(m for m, _ in e["verdicts"]) for e in wanbars.check(dict(scenarios=list(scenarios)))]

assert verdict(alone, competing) == [True, True], wanbars.check(dict(scenarios=[alone, competing]))
queue = copy.deepcopy(alone); queue["contenders"][0]["rtt_p50_ms"] = 2.5       # over 5% of 40 ms
assert verdict(queue) == [False]
slow = copy.deepcopy(competing); slow["contenders"][0]["goodput_mbps"] = 83.0  # 0.965x
assert verdict(slow) == [False]
one = copy.deepcopy(competing); one["runs"][0]["goodput_bps"] = 75e6             # a run at 0.87x
assert verdict(one) == [False]
# Repeats drawn alike for every contender (paired_seeds, phased): a run against linux default's of its own
# repeat. A repeat that is slow for both reads 0.97x, not 0.86x of linux default's mean.
paired = copy.deepcopy(competing)
for c in paired["contenders"]:
    c.update(paired_seeds=True, phased=True)
paired["runs"] = [dict(r, repeat=i % 2) for i, r in enumerate(runs("sobas", 89.0, 70.0) + runs("linux default", 90.0, 72.0))]
assert verdict(paired) == [True], wanbars.check(dict(scenarios=[paired]))
unpaired = copy.deepcopy(paired); del unpaired["contenders"][1]["phased"]        # linux default's row is older
assert verdict(unpaired) == [False]
alone_slow = copy.deepcopy(paired); alone_slow["runs"][1]["goodput_bps"] = 62e6   # 0.86x its repeat's
assert verdict(alone_slow) == [False]
# Plain CUBIC's own floor, read the same way: max buffer's lowest run against its repeat's linux default.
control = copy.deepcopy(paired)
control["contenders"].append(con("max buffer", 80.0, 83.3, 20.0, paired_seeds=True, phased=True))
control["runs"] += [dict(r, repeat=i) for i, r in enumerate(runs("max buffer", 72.0, 72.0))]
info = {e["contender"]: e["info"] for e in wanbars.check(dict(scenarios=[control]))}
assert "(its lowest run 0.80x its repeat's)" in info["sobas"], info
assert wanbars.paired_floor_null([(10.0, 10.0), (10.0, 10.0)]) == (1.0, 1.0)
lo, med = wanbars.paired_floor_null([(9.0, 10.0), (10.0, 9.0)])                   # swaps: 0.9 in 3 of 4
assert lo == med == 0.9, (lo, med)
late = copy.deepcopy(competing); late["contenders"][0]["aside_s"] = [0.7, 2.4]  # aside after 2.4 s
assert verdict(late) == [False]
lost = copy.deepcopy(alone); lost["contenders"][0]["drops_after_decision"] = [0, 3]   # one run lost 3
assert verdict(lost) == [False]
slow_ss = copy.deepcopy(alone); slow_ss["contenders"][0]["decided_after_ss_ms"] = [0.0, 1100.0]
assert verdict(slow_ss) == [False]                                                # 1.1 s > 1 s (10 RTTs: 0.4)
long_rtt = copy.deepcopy(slow_ss); long_rtt["calibration"]["base_rtt_ms"] = 150.0
long_rtt["contenders"][0]["rtt_p50_ms"] = 3.0
assert verdict(long_rtt) == [True]                                                # 1.1 s < 10 RTTs of 150 ms
never = copy.deepcopy(alone); never["contenders"][0]["decided_after_ss_ms"] = [0.0, None]
never["contenders"][0]["drops_after_decision"] = [0, None]
assert verdict(never) == [False]                                                  # one run never decided
old_run = copy.deepcopy(alone); del old_run["contenders"][0]["drops_after_decision"]
assert verdict(old_run) == [True]                                                 # recorded before the bars were
# What the repeats' spread alone makes of a bar: alike runs read 1; spread pulls the lowest run's median under it.
assert wanbars.floor_null([10.0, 10.0], [10.0, 10.0]) == (1.0, 1.0)
lo, med = wanbars.floor_null([8.0, 10.0, 12.0], [8.0, 10.0, 12.0])
assert lo < med == 0.8, (lo, med)
lo, med = wanbars.both_null([8.0, 12.0], [[8.0, 12.0], [8.0, 12.0]])
assert lo < med <= 1.0, (lo, med)
# 8 repeats of three contenders deal 9.5e9 ways: drawn, not counted out; the draws still spread (a draw
# that kept the runs where they were would read 1 in every deal).
assert wanbars.both_null([10.0] * 8, [[10.0] * 8, [10.0] * 8]) == (1.0, 1.0)
lo, med = wanbars.both_null([8.0, 12.0] * 4, [[8.0, 12.0] * 4, [8.0, 12.0] * 4])
assert lo < med < 1.0, (lo, med)
spread = copy.deepcopy(competing)
spread["contenders"] += [con("sobas sender", 85.0, 88.5, 1.0), con("sobas both", 80.0, 83.3, 1.0)]
spread["runs"] += runs("sobas sender", 80.0, 90.0) + runs("sobas both", 78.0, 82.0)
info = {e["contender"]: e["info"] for e in wanbars.check(dict(scenarios=[spread]))}
assert "relabelled at random" in info["sobas"] and "relabelled at random" in info["sobas both"], info
# A bar missed by one run names how that run's sender went (the trace), where it was traced.
traced = copy.deepcopy(one)
traced["runs"][0].update(ss_exit_by="hystart", ss_exit_pkts=88, ss_exit_ms=190.0, loss_episodes=2)
info = {e["contender"]: e["info"] for e in wanbars.check(dict(scenarios=[traced]))}
assert "the lowest run's sender: slow start ended at 88 pkts by hystart 190 ms in, 2 loss episodes" \
    in info["sobas"], info
assert "lowest run's sender" not in {e["contender"]: e["info"] for e in wanbars.check(dict(scenarios=[one]))}[
    "sobas"]
print("ok")
PY
  echo "$output"
  [ "$status" -eq 0 ] && [ "${lines[-1]}" = ok ]
}

@test "wanbench.settling: slow start ends at the engine's exit or the link's first drop, whichever is sooner" {
  run "$PY" - "$REPO/scripts" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import wanbench

# Series rows: t, total, watched bytes, queue, rev bytes, rev backlog, drops total, drops watched.
def rows(drop_at):
    return [(10 + i / 10, 0, 0, 0, 0, 0, 0, 5 if i / 10 >= drop_at else 0) for i in range(60)]

# A sender's engine that calls itself in slow start until it decides 3 s in, its slow start lost at 0.5 s.
sender = [(13.0, "slow-start", "decided")]
assert wanbench.settling(rows(0.5), sender, 10.0, 15.9) == (0, 2600.0)  # from the sample before the drop
# The engine left slow start first (rate-drop at 0.3 s): that is the end.
receiver = [(10.3, "slow-start", "cong-avoid"), (13.0, "cong-avoid", "decided")]
assert wanbench.settling(rows(0.5), receiver, 10.0, 15.9) == (0, 2700.0)
# The decision ended slow start, and the link dropped 5 packets after it: lost after the decision.
assert wanbench.settling(rows(3.5), sender, 10.0, 15.9) == (5, 0.0)
# Drops before the transfer began are not its slow start's.
assert wanbench.settling(rows(0.3), sender, 10.5, 15.9) == (0, 0.0)
assert wanbench.settling(rows(0.5), [], 10.0, 15.9) == (None, None)
print("ok")
PY
  echo "$output"
  [ "$status" -eq 0 ] && [ "${lines[-1]}" = ok ]
}

@test "wanbench.settle_s: beside a TCP competitor already there the flow starts 1-6 s after it, drawn per repeat, the same for every contender" {
  run "$PY" - "$REPO/scripts" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import wanbench

by = {s.name: s for s in wanbench.scenarios(False)}
waits = [wanbench.settle_s(by["competing"], rep) for rep in range(8)]
assert all(1.0 <= w <= 1.0 + wanbench.COMPETITOR_PHASE_S for w in waits), waits
assert len(set(waits)) == len(waits), waits  # each repeat its own phase
assert max(waits) - min(waits) > 1.0, waits  # spread over the competitor's sawtooth, not one phase
assert waits == [wanbench.settle_s(by["competing"], rep) for rep in range(8)]  # paired: every contender alike
assert wanbench.settle_s(by["congested"], 0) == waits[0]
assert wanbench.settle_s(by["typical"], 3) == 1.0  # unresponsive cross traffic: no sawtooth to meet
assert wanbench.settle_s(by["gig-tcp"], 3) == 1.0  # window-limited streams: no sawtooth either
assert wanbench.settle_s(by["arrive-leave"], 3) == 0.2  # the competitor arrives on its own clock
assert wanbench.settle_s(by["gig"], 3) == 0.2  # no cross traffic
print("ok")
PY
  echo "$output"
  [ "$status" -eq 0 ] && [ "${lines[-1]}" = ok ]
}

@test "wanbench.up_s: seconds from the cross traffic's end to the first 0.5 s whose mean rate reaches the target" {
  run "$PY" - "$REPO/scripts" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import wanbench

t = [round(0.1 * i, 1) for i in range(1, 101)]  # 10 s of 100 ms samples
flat = [47.0] * 100
assert wanbench.up_s(t, flat, 3.0, 86.0) is None  # held at its share: never up
ramp = [47.0 if x < 5.0 else 95.0 for x in t]
assert wanbench.up_s(t, ramp, 3.0, 86.0) == 2.0, wanbench.up_s(t, ramp, 3.0, 86.0)
spike = [95.0 if x == 3.5 else m for x, m in zip(t, ramp)]  # one 100 ms sample is no 0.5 s mean
assert wanbench.up_s(t, spike, 3.0, 86.0) == 2.0
early = [95.0] * 100  # up before the end counts from the end
assert wanbench.up_s(t, early, 3.0, 86.0) == 0.0
assert wanbench.up_s(t, ramp, 9.8, 86.0) is None  # fewer than 4 samples left
by = {s.name: s for s in wanbench.scenarios(False)}
assert by["udp-leave"].cross.kind == "udp" and by["udp-leave"].cross.duration == 10
print("ok")
PY
  echo "$output"
  [ "$status" -eq 0 ] && [ "${lines[-1]}" = ok ]
}

@test "sendertrace.summary: the transfer's sender, how its slow start ended, its loss episodes back to back, their timeouts" {
  run "$PY" - "$REPO/scripts" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import sendertrace
SND, RCV, INF = "10.0.0.1", "10.0.0.2", 2147483647
def probe(t, port, ssthresh, src=SND, dst=RCV, dport=5201):
    return (f"  wanemu-1 [000] b..1. {t:.6f}: tcp_probe: family=AF_INET src={src}:{port} "
            f"dest={dst}:{dport} mark=0x0 data_len=0 snd_nxt=0x10 snd_una=0x8 snd_cwnd=10 "
            f"ssthresh={ssthresh} snd_wnd=65160 srtt=20058 rcv_wnd=64512 sock_cookie=1 skbaddr=0 skaddr=0")
def state(t, port, s, src=SND):
    return (f"  wanemu-1 [000] b..1. {t:.6f}: tcp_cong_state_set: family=AF_INET sport={port} dport=5201 "
            f"saddr={src} daddr={RCV} saddrv6=::ffff:{src} daddrv6=::ffff:{RCV} cong_state={s}")
control = [probe(0.9, 40000, INF)]  # iperf3's control connection: fewest samples, not the transfer
# The receiving end's own samples (it sends nothing: its ssthresh never moves) are not the sender's.
receiver = [probe(1.0 + i / 1000, 5201, INF, src=RCV, dst=SND, dport=40002) for i in range(50)]
data = [probe(1.0 + i / 100, 40002, INF) for i in range(8)] + [
    probe(1.09, 40002, 1280), state(1.3, 40002, 1), state(1.3, 40002, 3), state(1.36, 40002, 0),
    state(1.36, 40002, 3), state(1.39, 40002, 0), probe(1.4, 40002, 627)]
got = sendertrace.summary(control + receiver + data, SND, until=1.5)
assert got == dict(ss_exit_pkts=1280, ss_exit_t=1.09, ss_exit_by="hystart", loss_episodes=2, timeouts=0), got
# Slow start ended by a loss: the episode comes before the first sample with a finite ssthresh.
lossy = [probe(1.0 + i / 100, 40004, INF) for i in range(5)] + [
    state(1.06, 40004, 3), state(1.1, 40004, 0), probe(1.12, 40004, 112)]
got = sendertrace.summary(lossy, SND, until=2.0)
assert got["ss_exit_by"] == "loss" and got["ss_exit_pkts"] == 112 and got["loss_episodes"] == 1, got
# A recovery that ends in a retransmission timeout (Loss, 4) is one episode with one timeout.
timed_out = lossy[:-1] + [state(1.2, 40004, 3), state(1.5, 40004, 4), state(1.7, 40004, 0), probe(1.8, 40004, 40)]
got = sendertrace.summary(timed_out, SND, until=2.0)
assert got["loss_episodes"] == 2 and got["timeouts"] == 1, got
assert sendertrace.describe("loss", 112, 60.0, 2, 1) == "slow start ended at 112 pkts by loss 60 ms in, 2 loss episodes (1 timeout)"
assert sendertrace.describe("loss", 112, 60.0, 1, None).endswith("1 loss episode")
# Held by a receiver's window, a sender can stay in slow start to the end ...
held = [probe(1.0 + i / 10, 40006, INF) for i in range(20)]
assert sendertrace.summary(held, SND, until=3.0) == dict(ss_exit_pkts=None, ss_exit_t=None, ss_exit_by="none",
                                                         loss_episodes=0, timeouts=0)
# ... but samples that stop early are a sender that closed with its data still going (FIN_WAIT1).
closed = [probe(1.0, 8080, INF, dport=51000), state(1.5, 8080, 3), state(1.6, 8080, 0)]
got = sendertrace.summary(closed, SND, until=4.0)
assert got["ss_exit_by"] == "unseen" and got["loss_episodes"] == 1, got
# An AF_INET6 socket's v4-mapped address is the same host.
mapped = [probe(1.0, 8080, INF, src="[::ffff:10.0.0.1]", dport=51000), probe(1.1, 8080, 180, dport=51000)]
assert sendertrace.summary(mapped, SND, until=1.2)["ss_exit_pkts"] == 180
assert sendertrace.summary(receiver, SND, until=2.0)["loss_episodes"] is None
print("ok")
PY
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[-1]}" = ok ]
}

@test "wanbench.gone_s: seconds from the competitor's departure to the first ping within 5% of the base that begins 0.5 s whose median is too" {
  run "$PY" - "$REPO/scripts" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import wanbench

t = [round(0.01 * i, 2) for i in range(1, 1001)]  # 10 s of pings, 10 ms apart
queued = [58.0] * 1000
assert wanbench.gone_s(t, queued, 3.0, 40.0) is None  # the queue never goes
drain = [58.0 if x < 5.0 else 40.5 for x in t]
assert wanbench.gone_s(t, drain, 3.0, 40.0) == 2.0, wanbench.gone_s(t, drain, 3.0, 40.0)
lull = [40.0 if 3.5 <= x < 3.7 else r for x, r in zip(t, drain)]  # 200 ms of lull is no 0.5 s median
assert wanbench.gone_s(t, lull, 3.0, 40.0) == 2.0
lifted = [43.5 if 5.1 <= x < 5.3 else r for x, r in zip(t, drain)]  # a lift's 200 ms of queue in the 0.5 s
assert wanbench.gone_s(t, lifted, 3.0, 40.0) == 2.0
assert wanbench.gone_s(t, drain, 9.95, 40.0) is None  # fewer than 10 pings left
print("ok")
PY
  echo "$output"
  [ "$status" -eq 0 ] && [ "${lines[-1]}" = ok ]
}
