#!/usr/bin/env python3
"""streams.py — GridFTP's parallel-streams regression (seed 003) checked on the emulated WAN.

With every socket buffer capped at Bo (the host's rmem_max/wmem_max and the namespaces' tcp_rmem and
tcp_wmem maxima, restored after), iperf3 runs P = 1, 2, 3, ... CUBIC streams over a 1 Gb/s path at
each RTT; the measured optimum is the fewest streams that reach 95% of the best goodput at that RTT
(the paper's "increased until throughput is saturated"). Beside it: the formula Po = 155·RTT/Bo^0.86
(RTT in ms, Bo in KB; fitted at 1 Gb/s, 5-50 ms) with Bo the buffer cap, as `sobas path` prints it, and
with Bo the window Linux offers in that buffer (about half: what the advisor used before this was
measured); and one stream under sobas, which the same cap holds: a window cannot exceed its buffer.

usage: streams.py [--bo KB] [--rtts 5,10,20] [--streams 1,2,3,4,6,8,12,16] [--seconds 4]
                  [--out results/streams] [--build build] [--no-plots]
"""
import argparse
import json
import os
import signal
import sys
import time
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wanbench as wb  # noqa: E402  (the testbed, emulator and process helpers)

RATE, RATE_BPS = "1G", 1e9
SATURATED = 0.95  # fraction of the best goodput that counts as saturated


def formula_po(rtt_ms, bo_kb):
    return 155.0 * rtt_ms / bo_kb ** 0.86


def formula_po_window(rtt_ms, bo_kb):
    """The formula for the window Linux offers in a buffer of Bo (about half of it)."""
    return formula_po(rtt_ms, bo_kb / 2)


def host_sysctl(key, value=None):
    path = "/proc/sys/" + key.replace(".", "/")
    with open(path) as f:
        old = f.read().strip()
    if value is not None:
        with open(path, "w") as f:
            f.write(str(value))
    return old


class Streams(wb.Bench):
    def point(self, rtt_ms, streams, preload, tag):
        """One iperf3 run of `streams` flows for the set time; returns a Run with goodput and validity."""
        sc = types.SimpleNamespace(rate=RATE, rtt_ms=rtt_ms, buffer_bdp=1.0, loss=0.0,
                                   bdp_bytes=RATE_BPS * rtt_ms / 1000 / 8)
        run = wb.Run(f"rtt{rtt_ms}", "sobas" if preload else f"P={streams}", 0)
        env = dict(os.environ)
        if preload:
            env.update(LD_PRELOAD=self.shim, SOBAS_LOG=os.path.join(self.tmp, f"{tag}.sobas.log"),
                       SOBAS_RING=os.path.join(self.tmp, "sobas.ring"))
        drops0 = {d: wb.tun_tx_dropped(ns, d) for ns, d in ((wb.SND, "wan0"), (wb.RCV, "wan1"))}
        emu, stats, _ = self.start_emulator(sc, tag)
        try:
            srv = self.procs.start(wb.RCV, ["iperf3", "-s", "-1", "-p", str(wb.IPERF_PORT)], env=env)
            wb.wait_port(wb.RCV, wb.IPERF_PORT)
            out = wb.sh(wb.SND, ["iperf3", "-c", wb.RCV_IP, "-p", str(wb.IPERF_PORT), "-P", str(streams),
                                 "-t", str(self.args.seconds), "-C", "cubic", "-J"], timeout=120)
            self.procs.stop(srv)
            drops = {d: wb.tun_tx_dropped(ns, d) - drops0[d] for ns, d in ((wb.SND, "wan0"), (wb.RCV, "wan1"))}
        finally:
            self.procs.stop(emu)
        with open(stats) as f:
            run.emu = json.load(f)
        self.validate(run, drops)
        run.goodput_bps = json.loads(out)["end"]["sum_received"]["bits_per_second"]
        return run

    def run(self):
        bo = self.args.bo * 1024
        olds = {k: host_sysctl(k) for k in ("net.core.rmem_max", "net.core.wmem_max")}
        subprocess_run([os.path.join(wb.ROOT, "scripts", "testbed.sh"), "up", "--name", wb.NS, "--buf-max", str(bo)])
        rows = []
        try:
            for k in olds:
                host_sysctl(k, bo)
            for rtt in [float(x) for x in self.args.rtts.split(",")]:
                row = dict(rtt_ms=rtt, formula_po=round(formula_po(rtt, self.args.bo), 1),
                           window_po=round(formula_po_window(rtt, self.args.bo), 1), goodput={})
                for p in [int(x) for x in self.args.streams.split(",")]:
                    for attempt in range(3):  # a run the host stalled measures the host: again
                        r = self.point(rtt, p, False, f"rtt{rtt:g}.P{p}.{attempt}")
                        if r.valid:
                            break
                    row["goodput"][p] = dict(mbps=round(r.goodput_bps / 1e6, 1), valid=r.valid, why=r.reasons)
                    print(f"   RTT {rtt:g} ms, P={p:2d}: {r.goodput_bps / 1e6:6.1f} Mb/s"
                          f"{'' if r.valid else '  INVALID: ' + '; '.join(r.reasons)}", flush=True)
                r = self.point(rtt, 1, True, f"rtt{rtt:g}.sobas")
                row["sobas"] = dict(mbps=round(r.goodput_bps / 1e6, 1), valid=r.valid, why=r.reasons)
                print(f"   RTT {rtt:g} ms, one sobas stream: {r.goodput_bps / 1e6:6.1f} Mb/s", flush=True)
                valid = {p: g["mbps"] for p, g in row["goodput"].items() if g["valid"]}
                best = max(valid.values()) if valid else 0
                # Saturated: within 5% of the best, and a valid run with more streams shows no more to gain.
                row["measured_po"] = min((p for p, m in valid.items() if m >= SATURATED * best and
                                          any(q > p for q in valid)), default=None)
                row["best_mbps"] = best
                rows.append(row)
        finally:
            for k, v in olds.items():
                host_sysctl(k, v)
            self.procs.stop_all()
            subprocess_run([os.path.join(wb.ROOT, "scripts", "testbed.sh"), "down", "--name", wb.NS])
        return dict(started=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), commit=self.commit,
                    kernel=os.uname().release, bo_kb=self.args.bo, seconds=self.args.seconds, rows=rows)


def subprocess_run(argv):
    import subprocess
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)


def markdown(res):
    ps = sorted({int(p) for r in res["rows"] for p in r["goodput"]})
    out = [f"# Parallel streams with capped buffers: measured optimum against GridFTP's formula",
           "",
           f"Run {res['started']}, sobas at {res['commit']}, kernel {res['kernel']}. 1 Gb/s emulated path, "
           f"a 1-BDP DropTail buffer, CUBIC; every socket buffer capped at Bo = {res['bo_kb']} KB (host "
           f"`rmem_max`/`wmem_max`, namespace `tcp_rmem`/`tcp_wmem` maxima); iperf3 -P P for "
           f"{res['seconds']} s per point, repeated (up to 3 times) until the emulator's checks pass. Measured Po: "
           f"the fewest streams within {SATURATED:.0%} of the best goodput at that RTT, with a valid run of more "
           f"streams beside it (—: saturation not seen among the valid runs). Formula: Po = 155·RTT/Bo^0.86 (fitted at "
           f"1 Gb/s, 5-50 ms) with Bo the buffer cap (what `sobas path` prints), and with Bo the window Linux "
           f"offers in it (half). sobas: one stream, receiver preloaded; the cap holds it too.",
           "",
           "| RTT ms | " + " | ".join(f"P={p}" for p in ps) +
           " | measured Po | formula Po (buffer) | formula Po (window) | one sobas stream |",
           "|---" * (len(ps) + 5) + "|"]
    for r in res["rows"]:
        cells = []
        for p in ps:
            g = r["goodput"].get(str(p)) or r["goodput"].get(p)
            cells.append("—" if g is None else f"{g['mbps']:.0f}" + ("" if g["valid"] else "*"))
        s = r["sobas"]
        out.append(f"| {r['rtt_ms']:g} | " + " | ".join(cells) +
                   f" | {r['measured_po'] or '—'} | {r['formula_po']} | {r['window_po']} | "
                   f"{s['mbps']:.0f}{'' if s['valid'] else '*'} |")
    out += ["", "Goodput in Mb/s (iperf3's receiver); * marks a run the emulator's checks invalidated (host stalls).",
            "", "![streams](streams.png)", ""]
    return "\n".join(out)


def plot(res, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for r in res["rows"]:
        ps = sorted(int(p) for p in r["goodput"])
        line, = ax.plot(ps, [r["goodput"][str(p)]["mbps"] if str(p) in r["goodput"] else r["goodput"][p]["mbps"]
                             for p in ps], marker="o", label=f"RTT {r['rtt_ms']:g} ms")
        ax.axvline(r["formula_po"], color=line.get_color(), linestyle=":", linewidth=1)
        if r["measured_po"]:
            ax.axvline(r["measured_po"], color=line.get_color(), linestyle="--", linewidth=1)
        ax.plot([1], [r["sobas"]["mbps"]], marker="*", markersize=12, color=line.get_color())
    ax.set_xlabel("parallel streams P")
    ax.set_ylabel("goodput, Mb/s")
    ax.set_title(f"Bo = {res['bo_kb']} KB: measured Po (dashed), 155·RTT/Bo^0.86 (dotted), one sobas stream (*)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, "streams.png"), dpi=100)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bo", type=int, default=512, help="per-socket buffer cap, KB (default 512)")
    ap.add_argument("--rtts", default="5,10,20", help="RTTs in ms (default 5,10,20)")
    ap.add_argument("--streams", default="1,2,3,4,6,8,12,16", help="stream counts")
    ap.add_argument("--seconds", type=int, default=4, help="iperf3 time per point")
    ap.add_argument("--out", default=os.path.join(wb.ROOT, "results", "streams"))
    ap.add_argument("--build", default=os.path.join(wb.ROOT, "build"))
    ap.add_argument("--no-plots", action="store_true")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("streams: must run as root (namespaces, host sysctls)")
    if args.bo < 64:
        sys.exit("streams: --bo must be at least 64 (KB)")
    args.keep = False
    # SIGTERM unwinds through run()'s finally: the host's buffer limits are put back.
    signal.signal(signal.SIGTERM, wb.interrupted)
    res = Streams(args).run()
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(markdown(res))
    if not args.no_plots:
        plot(res, args.out)
    print(f"streams: results in {args.out}/results.md")


if __name__ == "__main__":
    main()
