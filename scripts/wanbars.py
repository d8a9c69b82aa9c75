#!/usr/bin/env python3
"""wanbars.py — checks the WAN benchmark's results against the bars sobas is held to (issues 13 and 14).

Usage: wanbars.py [results/wan/results.json]   prints one line per scenario and contender (a * marks
each bar missed), and exits 1 if any bar is missed, else 2 if one could not be checked (no valid run of
a contender or its reference).
wanbench.py puts the same table at the top of results.md.

The bars, as the issues state them:
- beside a competing TCP flow (congested, competing, arrive-leave, bbr-competitor; gig-tcp's four
  window-limited TCP streams count as one), and on udp-leave, whose UDP cross traffic stops 10 s in:
  goodput >= 0.98x linux default's (mean over repeats); for
  sobas with and without sobasd also no valid run under 0.90x plain TCP's on the same path: linux
  default's run of the same repeat, whose seeds and competitor phase every contender of the repeat
  shares (over linux default's mean for rows recorded before repeats were paired), and in arrive-leave
  stepped aside within 2 s of the arrival, held again within 3 s of the departure (decided, and the
  queue gone: the first ping within 5% of the base that begins 0.5 s of pings whose median is too),
  and the p50 RTT of the last 10 s within 5% of the base;
- alone on the path (gig, gig-udp, typical, shallow, bloated, long): goodput >= 95% of A, or >= 0.98x
  the better of max buffer and linux default where neither reaches 95%; p50 RTT+ <= 5% of the base RTT;
  and in every valid run no packet lost after the decision (the link's drops of the flow's host, from
  the first 100 ms sample at or after it: what slow start had already sent may still overflow then, and
  that is lost after the decision too) and the decision within 1 s or 10 base RTTs of slow start's end,
  whichever is longer (its end: the engine leaving it, or the link's first drop of a packet to the flow's
  host if that came sooner; 0 when the decision itself ended slow start);
- sobas both: never worse than the better of sobas and sobas sender by more than 2%;
- servers (nginx, 8 downloads): the sum of goodputs >= 0.98x plain nginx's (linux default).
Beside each bar on noisy rows it prints what the repeats' spread alone makes of it: the statistic over
every relabelling of the pooled runs, or 20000 drawn when there are more (a permutation null), its
median and 5th percentile.
Results recorded before wanbench.py measured drops after the decision and the time from slow start
(2026-11-27) have neither: those two bars read "not recorded" there and count as met.
"""

import itertools
import json
import math
import os
import random
import statistics
import sys

import sendertrace

# udp-leave: A changes mid-transfer (its cross traffic stops), so plain TCP's goodput is the bar there too.
COMPETING = ("congested", "competing", "arrive-leave", "bbr-competitor", "gig-tcp", "udp-leave")
ALONE = ("gig", "gig-udp", "typical", "shallow", "bloated", "long")
ISSUE13 = ("sobas", "sobas no sobasd")  # the per-run floor and arrive-leave's timings are theirs
GOODPUT_OF_A, GOODPUT_VS, RUN_FLOOR, RTT_FRAC = 0.95, 0.98, 0.90, 0.05
ASIDE_S, BACK_S = 2.0, 3.0
SETTLE_MS, SETTLE_RTTS = 1000.0, 10


def row(s, name):
    return next((c for c in s["contenders"] if c["contender"] == name and c["valid_runs"]), None)


def verdicts_alone(s, c):
    """Goodput against A (or the better plain TCP where neither reaches 95% of A), and the queue."""
    out = []
    base = s["calibration"]["base_rtt_ms"]
    refs = [r for r in (row(s, "max buffer"), row(s, "linux default")) if r]
    if c["pct_of_A"] >= 100 * GOODPUT_OF_A:
        out.append((True, f"goodput {c['pct_of_A']:.1f}% of A (bar 95%)"))
    elif refs and all(r["pct_of_A"] < 100 * GOODPUT_OF_A for r in refs):
        best = max(refs, key=lambda r: r["goodput_mbps"])
        ratio = c["goodput_mbps"] / best["goodput_mbps"]
        out.append((ratio >= GOODPUT_VS, f"goodput {ratio:.3f}x {best['contender']} (bar 0.98x; "
                                         f"neither reaches 95% of A)"))
    else:
        out.append((False, f"goodput {c['pct_of_A']:.1f}% of A (bar 95%)"))
    out.append((c["rtt_p50_ms"] <= RTT_FRAC * base,
                f"RTT+ p50 {c['rtt_p50_ms']:.1f} ms (bar {RTT_FRAC * base:.1f})"))
    return out + verdicts_settling(c, base)


def verdicts_settling(c, base):
    """Per run: no drop after the decision (a run that never decided has none to count, and misses the
    other bar), and the decision soon after slow start."""
    drops, after = c.get("drops_after_decision"), c.get("decided_after_ss_ms")
    if drops is None or after is None:
        return [(True, "drops after the decision and time from slow start not recorded")]
    bar = max(SETTLE_MS, SETTLE_RTTS * base)
    return [(all(not x for x in drops), f"drops after the decision {', '.join(fmti(x) for x in drops)} (bar 0)"),
            (all(x is not None and x <= bar for x in after),
             f"decided {', '.join(fmt(x if x is None else x / 1000) for x in after)} s after slow start "
             f"(bar {bar / 1000:.1f})")]


def repeat_pairs(s, name):
    """Each valid run of NAME with linux default's of the same repeat (their mean where a pooled row holds
    more than one), as (Mb/s, Mb/s). A repeat draws the path's seeds and the competitor's phase once for
    every contender (wanbench.settle_s), and on a lossy path that sets every contender's rate: on
    `congested` at 4afe2e7 the six CUBIC contenders made 17.0-23.8 Mb/s in its third repeat (linux
    default 18.5, 0.50x its mean), 53.6-62.4 in its first. None where either row was run before repeats
    were paired."""
    rows = [row(s, n) for n in (name, "linux default")]
    if not all(r and r.get("paired_seeds") and r.get("phased") for r in rows):
        return None
    ref = {}
    for r in s["runs"]:
        if r["contender"] == "linux default" and r["valid"]:
            ref.setdefault(r["repeat"], []).append(r["goodput_bps"] / 1e6)
    return [(r["goodput_bps"] / 1e6, statistics.mean(ref[r["repeat"]])) for r in s["runs"]
            if r["contender"] == name and r["valid"] and r["repeat"] in ref] or None


def verdicts_competing(s, c, ref, pairs):
    out = []
    ratio = c["goodput_mbps"] / ref["goodput_mbps"]
    out.append((ratio >= GOODPUT_VS, f"goodput {ratio:.3f}x linux default (bar 0.98x)"))
    if c["contender"] not in ISSUE13:
        return out
    if pairs:
        low = min(m / r for m, r in pairs)
        out.append((low >= RUN_FLOOR, f"lowest run {low:.2f}x its repeat's linux default (bar 0.90x)"))
    else:
        runs = [m / ref["goodput_mbps"] for m in goodputs(s, c["contender"])]
        out.append((min(runs) >= RUN_FLOOR, f"lowest run {min(runs):.2f}x (bar 0.90x)"))
    if (s["cross"] or {}).get("start"):
        base = s["calibration"]["base_rtt_ms"]
        aside, back, last = c.get("aside_s", []), c.get("back_s", []), c.get("rtt_last10_p50_ms", [])
        out.append((all(x is not None and x <= ASIDE_S for x in aside),
                    f"aside after {', '.join(fmt(x) for x in aside)} s (bar 2)"))
        out.append((all(x is not None and x <= BACK_S for x in back),
                    f"held again after {', '.join(fmt(x) for x in back)} s (bar 3)"))
        if "gone_s" in c:  # rows recorded before it was measured have only the decision
            gone = c["gone_s"]
            out.append((all(x is not None and x <= BACK_S for x in gone),
                        f"queue gone after {', '.join(fmt(x) for x in gone)} s (bar 3)"))
        out.append((all(x is not None and x <= RTT_FRAC * base for x in last),
                    f"last 10 s RTT+ p50 {', '.join(fmt(x) for x in last)} ms (bar {RTT_FRAC * base:.1f})"))
    return out


def verdicts_both(s, c):
    refs = [r for r in (row(s, "sobas"), row(s, "sobas sender")) if r]
    if not refs:
        return []
    best = max(refs, key=lambda r: r["goodput_mbps"])
    ratio = c["goodput_mbps"] / best["goodput_mbps"]
    return [(ratio >= GOODPUT_VS, f"goodput {ratio:.3f}x {best['contender']} (bar 0.98x)")]


def goodputs(s, name):
    return [r["goodput_bps"] / 1e6 for r in s["runs"] if r["contender"] == name and r["valid"]]


def null_quantiles(values):
    """The 5th percentile and median of a statistic over the ways of relabelling the pooled runs (deals):
    a permutation null, what the bar reads when the contenders are one and the same."""
    values = sorted(values)
    return values[int(0.05 * (len(values) - 1))], statistics.median(values)


EXACT_DEALS = 20000  # up to this many ways of dealing the runs, every one; beyond, this many drawn at random


def deals(sizes):
    """Ways of dealing range(sum(sizes)) into groups of SIZES: every one while they are few (3 repeats of
    three contenders: 1680), else EXACT_DEALS shuffles from a fixed seed (8 of three: 9.5e9)."""
    n = sum(sizes)
    count = math.factorial(n)
    for k in sizes:
        count //= math.factorial(k)
    if count > EXACT_DEALS:
        rng = random.Random(0)
        for _ in range(EXACT_DEALS):
            order = list(range(n))
            rng.shuffle(order)
            yield split(order, sizes)
        return
    yield from exact_deals(list(range(n)), sizes)


def exact_deals(items, sizes):
    if len(sizes) == 1:
        yield [items]
        return
    for first in itertools.combinations(items, sizes[0]):
        rest = [i for i in items if i not in first]
        for more in exact_deals(rest, sizes[1:]):
            yield [list(first)] + more


def split(order, sizes):
    out, at = [], 0
    for k in sizes:
        out.append(order[at:at + k])
        at += k
    return out


def floor_null(mine, ref):
    """The lowest run over the reference's mean, when MINE and REF are relabelled as alike: the repeats'
    noise on the per-run floor (the contenders' repeats share their seeds, but not their timing)."""
    pool = mine + ref
    return null_quantiles([min(pool[i] for i in a) / statistics.mean(pool[i] for i in b)
                           for a, b in deals([len(mine), len(ref)])])


def paired_floor_null(pairs):
    """The lowest run over its repeat's linux default when, within each repeat, the two are relabelled as
    alike: each pair kept or swapped, every one of the 2^n ways up to EXACT_DEALS, else that many drawn."""
    n = len(pairs)
    if 2 ** n <= EXACT_DEALS:
        flips = itertools.product((False, True), repeat=n)
    else:
        rng = random.Random(0)
        flips = ([rng.random() < 0.5 for _ in range(n)] for _ in range(EXACT_DEALS))
    return null_quantiles([min(r / m if f else m / r for (m, r), f in zip(pairs, flip)) for flip in flips])


def both_null(both, refs):
    """Both's mean over the better of two others' means, when all three are relabelled as alike: the
    better of two noisy means sits above either, so even an identical contender reads under 1."""
    groups = [both] + refs
    pool = [x for g in groups for x in g]
    out = []
    for first, second, third in deals([len(g) for g in groups]):
        m = [statistics.mean(pool[i] for i in g) for g in (first, second, third)]
        out.append(m[0] / max(m[1], m[2]))
    return null_quantiles(out)


def fmt(x):
    return "—" if x is None else f"{x:.1f}"


def fmti(x):
    return "—" if x is None else str(x)


def check(results):
    """One entry per (scenario, sobas contender): its verdicts, each (met, text); None when unmeasured."""
    out = []
    for s in results["scenarios"]:
        if s["name"] not in COMPETING + ALONE + ("servers",):
            continue
        ref = row(s, "linux default")
        for c in s["contenders"]:
            name = c["contender"]
            if not name.startswith("sobas"):
                continue
            if not c["valid_runs"] or (s["name"] in COMPETING + ("servers",) and not ref):
                out.append(dict(scenario=s["name"], contender=name, verdicts=None))
                continue
            v = []
            pairs = repeat_pairs(s, name) if s["name"] in COMPETING else None
            if s["name"] in ALONE and name != "sobas both":
                v += verdicts_alone(s, c)
            elif name != "sobas both":
                v += verdicts_competing(s, c, ref, pairs)
            if name == "sobas both":
                v += verdicts_both(s, c)
            info = f"retrans {fmt(c['retrans'])}, decided {fmt(c['decision_ms'])} ms"
            if name == "sobas both":
                groups = [goodputs(s, n) for n in (name, "sobas", "sobas sender")]
                if all(len(g) > 1 for g in groups):
                    lo, med = both_null(groups[0], groups[1:])
                    info += f"; relabelled at random: median {med:.3f}x, 5% {lo:.3f}x"
            lowest = min((r for r in s["runs"] if r["contender"] == name and r["valid"]),
                         key=lambda r: r["goodput_bps"], default=None)
            if lowest and (story := sendertrace.describe(lowest.get("ss_exit_by"), lowest.get("ss_exit_pkts"),
                                                         lowest.get("ss_exit_ms"), lowest.get("loss_episodes"),
                                                         lowest.get("timeouts"))):
                # Beside every row, for a bar missed by one run: whether its sender drew what plain CUBIC draws too.
                info += f"; the lowest run's sender: {story}"
            plain = row(s, "max buffer")
            if s["name"] in COMPETING and name != "sobas both" and plain:
                # Plain CUBIC with another buffer setting, on the same bar: how far the repeats alone
                # move the ratio (CUBIC beside CUBIC shares by chance).
                info += f"; max buffer {plain['goodput_mbps'] / ref['goodput_mbps']:.3f}x linux default"
                if pairs and (plain_pairs := repeat_pairs(s, "max buffer")):
                    # ... and on the per-run floor's bar: plain CUBIC against plain CUBIC, run by run.
                    info += f" (its lowest run {min(m / r for m, r in plain_pairs):.2f}x its repeat's)"
            if s["name"] in COMPETING and name in ISSUE13:
                # The per-run floor's own noise: linux default's runs against their mean (on congested a
                # repeat's loss seed moves every contender together).
                own = [r["goodput_bps"] / 1e6 / ref["goodput_mbps"] for r in s["runs"]
                       if r["contender"] == "linux default" and r["valid"]]
                info += f"; linux default's runs {min(own):.2f}-{max(own):.2f}x its mean"
                mine, plain_runs = goodputs(s, name), goodputs(s, "linux default")
                if pairs:
                    info += f"; the lowest run {min(mine) / ref['goodput_mbps']:.2f}x linux default's mean"
                    if len(pairs) > 1:
                        lo, med = paired_floor_null(pairs)
                        info += f"; the lowest run, swapped at random within repeats: median {med:.2f}x, 5% {lo:.2f}x"
                elif len(mine) > 1 and len(plain_runs) > 1:
                    lo, med = floor_null(mine, plain_runs)
                    info += f"; the lowest run, relabelled at random: median {med:.2f}x, 5% {lo:.2f}x"
            if pairs and name != "sobas both":
                # Repeat by repeat, against plain TCP on the same path: what the mean hides.
                info += "; per repeat " + ", ".join(f"{m / r:.2f}" for m, r in pairs) + "x"
            out.append(dict(scenario=s["name"], contender=name, verdicts=v, info=info))
    return out


def markdown(entries):
    missed = sum(1 for e in entries if e["verdicts"] and not all(m for m, _ in e["verdicts"]))
    lines = ["## Bars", "",
             f"Checked by `scripts/wanbars.py` against issues 13 and 14 (its header lists them): {missed} of "
             f"{len(entries)} rows miss a bar. In *also*, retransmits are the whole transfer's, slow start "
             "included, and the decision time is from the start. Beside a competing "
             "flow, the lowest run is measured against linux default's run of the same repeat (where both "
             "rows were run so): a repeat draws the path's seeds and the competitor's phase once for all its "
             "contenders. *Also* gives "
             "each run's ratio *per repeat*, the lowest over linux default's mean, max buffer's ratio on the "
             "mean's bar (plain CUBIC, no sobas) and its lowest run on the floor's, and linux default's runs "
             "against their own mean: the spread "
             "the repeats alone leave. *Swapped at random within repeats* and *relabelled at random* are "
             "that spread as a bar would read it: the same statistic (the lowest run over its repeat's "
             "linux default, each pair kept or swapped; both's mean over the better of sobas's and sobas "
             "sender's, the pooled runs dealt back to the contenders in every way) as if the contenders "
             "were one and the same: its median and 5th percentile. A row that misses its bar but reads "
             "above that 5th percentile is within what these repeats resolve.", "",
             "| scenario | contender | verdict | measured | also |", "|---|---|---|---|---|"]
    for e in entries:
        if e["verdicts"] is None:
            lines.append(f"| {e['scenario']} | {e['contender']} | unmeasured | no valid run of it or of its "
                         "reference | |")
            continue
        ok = all(m for m, _ in e["verdicts"])
        shown = "; ".join(("" if m else "**missed:** ") + t for m, t in e["verdicts"])
        lines.append(f"| {e['scenario']} | {e['contender']} | {'met' if ok else 'missed'} | {shown} | {e['info']} |")
    return "\n".join(lines) + "\n"


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "results", "wan",
                                                               "results.json")
    with open(path) as f:
        entries = check(json.load(f))
    for e in entries:
        if e["verdicts"] is None:
            print(f"{e['scenario']:15} {e['contender']:16} unmeasured")
            continue
        ok = all(m for m, _ in e["verdicts"])
        print(f"{e['scenario']:15} {e['contender']:16} {'met   ' if ok else 'missed'} "
              + "; ".join(("" if m else "*") + t for m, t in e["verdicts"]) + f"  [{e['info']}]")
    if any(e["verdicts"] and not all(m for m, _ in e["verdicts"]) for e in entries):
        sys.exit(1)
    sys.exit(2 if any(e["verdicts"] is None for e in entries) else 0)


if __name__ == "__main__":
    main()
