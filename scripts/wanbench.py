#!/usr/bin/env python3
"""wanbench.py — runs the SOBAS paper's experiments on the emulated WAN, every contender side by side.

Usage (as root, testbed programs built; scripts/bench-wan.sh does all of it):
    wanbench.py [--quick] [--only NAME[,NAME]] [--repeats N] [--out DIR] [--build DIR]

Per scenario: wanemu emulates the tight link (rate C, DropTail buffer B, one-way delay, optional
loss), cross traffic runs through it from the cross-traffic namespaces, and each contender moves
the same number of bytes with a real program (iperf3, an HTTP download with curl, or nginx serving
several concurrent curl downloads), repeated.
Every run validates itself (TUN TX drops, emulator lateness and capacity, cross-traffic rate) and
is reported invalid, with the reason, rather than used. Results: DIR/results.json, DIR/results.md,
and DIR/<scenario>.png (throughput and RTT vs time per contender; for sobas the window it left).
"""

import argparse
import bisect
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

import sendertrace
import wanbars

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NS = "wb"  # testbed name: namespaces wb-snd, wb-rcv, wb-xs, wb-xr
SND, RCV, XS, XR = (f"{NS}-{h}" for h in ("snd", "rcv", "xs", "xr"))
SND_IP, RCV_IP, XS_IP, XR_IP = "10.80.1.1", "10.80.2.1", "10.80.11.2", "10.80.12.2"
BUF_MAX = 32 << 20  # tcp_rmem/tcp_wmem maximum in every namespace: the "max buffer" S
MSS_FRACTION = 1448 / 1500  # TCP payload per 1500-byte IP packet with timestamps: goodput = C · this
TRANSFER_TIMEOUT_S = 600  # one transfer; a slower run is reported as not finished
LATE_LIMIT_US = 100  # mean release lateness above this and the emulated path is not the one asked for
STALL_LAG_LIMIT = 0.03  # the link frozen by host stalls for more of the run than this: the host was measured
COMPETITOR_PHASE_S = 5.0  # a competitor already there: the flow starts up to this much later, per repeat (settle_s)
IPERF_BLOCK = 128 * 1024
PING_PORT, FLOOD_PORT, HTTP_PORT, IPERF_PORT, XIPERF_PORT, SOBASD_PORT = 7001, 7002, 8080, 5201, 5202, 9521
UDT_PORT = 9000
NO_SOBASD_PORT = 9529  # nothing listens there: the "sobas no sobasd" contender's probe gets no echo
# nginx as it is deployed for static files: worker processes, epoll, sendfile. The workers run as
# root only because the benchmark's folder is root's (mkdtemp, mode 0700).
NGINX_CONF = """# wanbench's static file server
user root;
worker_processes 4;
daemon off;
pid {tmp}/nginx.pid;
events {{ worker_connections 256; use epoll; }}
http {{
  access_log off;
  sendfile on;
  tcp_nopush on;
  client_body_temp_path {tmp}/nginx-body;
  proxy_temp_path {tmp}/nginx-proxy;
  fastcgi_temp_path {tmp}/nginx-fastcgi;
  uwsgi_temp_path {tmp}/nginx-uwsgi;
  scgi_temp_path {tmp}/nginx-scgi;
  server {{ listen {ip}:{port}; root {tmp}; }}
}}
"""


# ---------------------------------------------------------------------------------------------
# What is measured


@dataclass
class Cross:
    kind: str  # "udp": unresponsive; "tcp-buffer": buffer-limited TCP; "tcp": congestion-limited TCP
    rate: str = ""  # udp: IP bit rate
    mix: bool = True  # udp: Internet-like packet sizes, Poisson arrivals
    window: str = ""  # tcp-buffer: iperf3 -w per stream
    streams: int = 1
    cc: str = "cubic"  # tcp: the competitor's congestion control
    start: float = 0.0  # tcp: seconds into the transfer it arrives (0: already there when it starts)
    duration: float = 0.0  # tcp, with start: how long it stays; udp: seconds it sends for (0: throughout)
    # udp, constant, throughout: made up inside the emulator's link (wanemu --fwd-cross), no generator.
    # At 1 Gb/s on 2 cores, 430 Mb/s of real UDP (wanflood, its sink, 36k packets/s more through the
    # TUN devices) left the emulator late in 25 of 31 runs (mean release lateness 137-1814 µs).
    inside: bool = False

    def __post_init__(self):
        # What wanemu makes up is constant 1500-byte packets for the whole run: nothing else is asked of it.
        if self.inside and (self.kind != "udp" or self.mix or self.duration):
            raise ValueError("cross traffic made up inside the emulator is constant UDP throughout (mix=False, no duration)")


@dataclass
class Scenario:
    name: str
    title: str
    rate: str  # C
    rate_bps: float
    rtt_ms: float
    buffer_bdp: float  # DropTail limit in units of C·RTT
    tool: str  # "iperf3", "http" (python's http.server to curl) or "nginx" (to `flows` concurrent curls)
    seconds: float  # transfer length at A, full mode (sets the common transfer size, all flows together)
    cross: Cross | None = None
    loss: float = 0.0
    contenders: list = field(default_factory=lambda: list(CONTENDERS))
    fair_share: bool = False  # A for a congested path: the fair share next to the competing flows
    paper: str = ""
    flows: int = 1  # nginx: concurrent downloads, each of 1/flows of the transfer size

    @property
    def bdp_bytes(self):
        return self.rate_bps * self.rtt_ms / 1000 / 8


# Contender -> how the run is set up. cc: sender congestion control; bufs: "auto" (Linux
# autotuning from the namespace defaults), "max" (buffers start at the maximum, the paper's
# non-SOBAS), or a fixed iperf3 -w size; preload: which end runs under libsobas.so (receiver, sender,
# both, or None); no_peer: the receiver's side probe asks a port where no sobasd answers (a peer without
# sobasd: kernel signals after 500 ms).
CONTENDERS = {
    "sobas": dict(cc="cubic", bufs="auto", preload="receiver"),
    "sobas no sobasd": dict(cc="cubic", bufs="auto", preload="receiver", no_peer=True),
    "sobas sender": dict(cc="cubic", bufs="auto", preload="sender"),
    "sobas both": dict(cc="cubic", bufs="auto", preload="both"),
    "max buffer": dict(cc="cubic", bufs="max", preload=None),
    "linux default": dict(cc="cubic", bufs="auto", preload=None),
    "bbr": dict(cc="bbr", bufs="auto", preload=None),
}
# The seeds' policies on the receiver (SOBAS_POLICY; bdp's C' from the sender's sobasd), run when
# --contenders names them.
# udt: the file over UDT (SABUL's successor, seed 004; test/udt/udt_xfer) instead of HTTP over TCP, on
# the HTTP scenarios; its retransmissions are the packets its receiver found lost.
SEEDS = {"bdp": dict(cc="cubic", bufs="auto", preload="receiver", policy="bdp"),
         "drs": dict(cc="cubic", bufs="auto", preload="receiver", policy="drs"),
         "udt": dict(cc="cubic", bufs="auto", preload=None, transport="udt")}
# linux default a second time, run when --contenders names it: the paired comparison's own resolution.
# On `congested` (8 repeats at fd0d929) plain CUBIC against itself read 0.97x, per repeat 0.80-1.08, 3 of 8
# under 0.90: the bar's "no run under 0.90x" is finer than this testbed resolves beside a CUBIC flow.
# linux default watched: plain CUBIC and autotuning with the shim on the receiver under SOBAS_POLICY=off,
# which measures and logs but changes no socket: the shim's presence on the host, told from its steering,
# and plain CUBIC's windows in a log.
CONTROLS = {"linux default again": dict(cc="cubic", bufs="auto", preload=None),
            "linux default watched": dict(cc="cubic", bufs="auto", preload="receiver", no_peer=True, policy="off")}
SWEEP = {f"S={s}": dict(cc="cubic", bufs=s, preload=None) for s in ("128K", "400K", "550K")}
SWEEP["S=max"] = dict(cc="cubic", bufs="max", preload=None)


def spec_of(con):
    return CONTENDERS.get(con) or SEEDS.get(con) or CONTROLS.get(con) or SWEEP[con]


def scenarios(quick):
    g = 1e9
    full = [
        Scenario("sweep", "§III buffer sweep: 97 Mb/s, 40 ms, 17 Mb/s UDP cross traffic", "97M", 97e6, 40, 1.0,
                 "iperf3", 8, Cross("udp", rate="17M"), contenders=list(SWEEP),
                 paper="128 KB: 25.5, 400 KB: 79.6, 550 KB: 89.6 Mb/s, max: lower with losses"),
        Scenario("gig", "fast path, no cross traffic: 1 Gb/s, 20 ms, 1 BDP", "1G", g, 20, 1.0, "iperf3", 6,
                 paper="SOBAS 918, max buffer 649 Mb/s (A = 950)"),
        Scenario("gig-udp", "fast path, unresponsive cross traffic (A ≈ 55% C)", "1G", g, 20, 1.0, "iperf3", 6,
                 Cross("udp", rate="430M", mix=False, inside=True), paper="SOBAS 521, max buffer 409 Mb/s (A = 550)"),
        Scenario("gig-tcp", "fast path, buffer-limited TCP cross traffic", "1G", g, 20, 1.0, "iperf3", 6,
                 Cross("tcp-buffer", window="280K", streams=4), paper="SOBAS 574, max buffer 452 Mb/s (A ≈ 450)"),
        Scenario("typical", "typical path: 100 Mb/s, 40 ms, 1 BDP, 20 Mb/s UDP cross", "100M", 1e8, 40, 1.0,
                 "http", 8, Cross("udp", rate="20M"), paper="GaTech→NYU: SOBAS 87, max buffer 48 Mb/s (A = 90)"),
        Scenario("shallow", "typical path, shallow buffer (0.25 BDP)", "100M", 1e8, 40, 0.25, "http", 8,
                 Cross("udp", rate="20M")),
        Scenario("bloated", "typical path, bloated buffer (2 BDP)", "100M", 1e8, 40, 2.0, "http", 8,
                 Cross("udp", rate="20M")),
        Scenario("long", "long path: 50 Mb/s, 150 ms, A ≈ 40 Mb/s", "50M", 50e6, 150, 1.0, "http", 10,
                 Cross("udp", rate="10M"), paper="GaTech→Lulea: SOBAS 33, max buffer 20 Mb/s (A = 40)"),
        # Unresponsive traffic that stops: a flow held at its share with no queue sees no sign of the room
        # it leaves; only a lift finds it, and lifts that found nothing back off (up to 32 s).
        Scenario("udp-leave", "50 Mb/s of UDP stops 10 s in: 100 Mb/s, 40 ms, 1 BDP", "100M", 1e8, 40, 1.0,
                 "http", 40, Cross("udp", rate="50M", duration=10)),
        Scenario("congested", "congested path: 100 Mb/s, 40 ms, 0.01% loss + a competing CUBIC flow", "100M",
                 1e8, 40, 1.0, "http", 8, Cross("tcp"), loss=0.0001, fair_share=True,
                 paper="congested: S = max must win (3.1 vs 2.4 Mb/s)"),
        Scenario("competing", "one CUBIC flow keeping a 1-BDP buffer full: 100 Mb/s, 40 ms, no loss", "100M",
                 1e8, 40, 1.0, "http", 16, Cross("tcp"), fair_share=True),
        Scenario("arrive-leave", "a CUBIC competitor arrives 10 s in and leaves 15 s later: 100 Mb/s, 40 ms",
                 "100M", 1e8, 40, 1.0, "http", 48, Cross("tcp", start=10, duration=15)),
        # A fair share is not what CUBIC gets beside BBR (4-9 of 48 Mb/s, measured): 5 s at the fair share
        # keeps a run near a minute.
        Scenario("bbr-competitor", "one BBR flow on a 1-BDP buffer: 100 Mb/s, 40 ms, no loss", "100M", 1e8, 40,
                 1.0, "http", 5, Cross("tcp", cc="bbr"), fair_share=True),
        # 8 downloads of 200 MB at A: a preloaded nginx steers each of its flows on its own.
        Scenario("servers", "nginx (sendfile, 4 workers) serving 8 concurrent downloads: typical path",
                 "100M", 1e8, 40, 1.0, "nginx", 166, Cross("udp", rate="20M"), flows=8,
                 contenders=["sobas sender", "sobas both", "linux default"]),
    ]
    if not quick:
        return full
    # CI smoke: the two cheapest paths that still show a queue, short transfers, one repeat.
    by = {s.name: s for s in full}
    return [by["typical"], by["shallow"]]


# ---------------------------------------------------------------------------------------------
# Processes: everything started is tracked so a Ctrl-C or a failure leaves nothing behind


class Procs:
    def __init__(self):
        self.live = []

    def start(self, ns, argv, env=None, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL):
        cmd = ["ip", "netns", "exec", ns] + argv if ns else argv
        p = subprocess.Popen(cmd, env=env, stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL,
                             start_new_session=True)
        self.live.append(p)
        return p

    def stop(self, p, sig=signal.SIGTERM, timeout=5):
        if p.poll() is None:
            try:
                os.killpg(p.pid, sig)
            except ProcessLookupError:
                pass
            try:
                p.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        if p in self.live:
            self.live.remove(p)

    def stop_all(self):
        for p in list(self.live):
            self.stop(p, timeout=2)


def sh(ns, argv, check=True, timeout=None, env=None):
    cmd = ["ip", "netns", "exec", ns] + argv if ns else argv
    return subprocess.run(cmd, check=check, capture_output=True, text=True, timeout=timeout, env=env).stdout


def sysctl(ns, key, value):
    sh(ns, ["sysctl", "-qw", f"{key}={value}"])


def tun_tx_dropped(ns, dev):
    return json.loads(sh(None, ["ip", "-n", ns, "-s", "-j", "link", "show", "dev", dev]))[0]["stats64"]["tx"][
        "dropped"]


def net_counters(ns, path, group, names):
    """NAMES' values in the GROUP ("Tcp", "TcpExt") of NS's PATH (/proc/net/snmp or netstat: a row of
    names, then a row of values)."""
    rows = [l.split() for l in sh(ns, ["cat", path]).splitlines() if l.startswith(group + ":")]
    return {n: int(rows[1][rows[0].index(n)]) for n in names}


def retrans_segs(ns):
    return net_counters(ns, "/proc/net/snmp", "Tcp", ["RetransSegs"])["RetransSegs"]


# The receiving host's TCP dropping data for want of buffer (tcp_prune_queue, tcp_try_rmem_schedule): a
# receive buffer that holds less than the data in flight, the out-of-order part of a loss recovery first.
# The link's drops cannot show these; out-of-order data pruned after it was SACKed the sender finds
# only by a timeout (SACK reneging).
RCV_PRUNE = ("PruneCalled", "OfoPruned", "RcvPruned", "TCPOFODrop", "TCPRcvQDrop")


def prune_counters(ns):
    return net_counters(ns, "/proc/net/netstat", "TcpExt", RCV_PRUNE)


def wait_port(ns, port, proto="t"):
    for _ in range(200):
        if f":{port} " in sh(ns, ["ss", f"-Hln{proto}", f"sport = :{port}"]):
            return
        time.sleep(0.025)
    raise RuntimeError(f"port {port} never listened in {ns}")


# ---------------------------------------------------------------------------------------------
# One run


@dataclass
class Run:
    scenario: str
    contender: str
    repeat: int
    valid: bool = True
    reasons: list = field(default_factory=list)
    goodput_bps: float = 0.0
    bytes: int = 0
    seconds: float = 0.0
    retrans: int = 0
    queue_drops: int = 0
    rtt_p50_ms: float = float("nan")
    rtt_p95_ms: float = float("nan")
    decision_ms: float | None = None
    # A competitor that arrives and leaves: seconds from its arrival to the flow stepping aside, from
    # its departure to the flow held again, the p50 RTT+ over the transfer's last 10 s, and the flow's
    # wire rate while the competitor was there (the share it kept: where a run's goodput is won or lost).
    aside_s: float | None = None
    back_s: float | None = None
    # ... and from its departure to the path's queue gone (gone_s): held again is a decision, and the
    # window offered before it is never withdrawn.
    gone_s: float | None = None
    rtt_last10_p50_ms: float | None = None
    beside_mbps: float | None = None
    # UDP cross traffic that stops: seconds from its end to the flow's rate (0.5 s means) at 90% of the
    # path's rate without it (None: never in the run).
    up_s: float | None = None
    # The two bars a summary cannot tell: the watched host's packets the link dropped after the first
    # decision (drops, not retransmits: the emulator counts them exactly), and the time from the engine
    # leaving slow start to that decision. Single-flow scenarios only.
    drops_after_decision: int | None = None
    decided_after_ss_ms: float | None = None
    # The sender's own story (sendertrace): the ssthresh its slow start ended with (packets), when (ms
    # after the transfer began), by what ("hystart", "loss", "none": never left it, "unseen": the sender
    # closed first), and its loss episodes (entries into recovery or RTO). None where tracefs is missing.
    ss_exit_pkts: int | None = None
    ss_exit_ms: float | None = None
    ss_exit_by: str | None = None
    loss_episodes: int | None = None
    timeouts: int | None = None
    # The receiving host's RCV_PRUNE counters over the transfer, those not 0 (None: a run recorded
    # before wanbench read them, 2026-12-07).
    rcv_prune: dict | None = None
    emu: dict = field(default_factory=dict)
    series: dict = field(default_factory=dict)  # t, mbps, rtt_t, rtt_ms, win_t, win_bytes

    def invalid(self, why):
        self.valid = False
        self.reasons.append(why)


def gone_s(t, rtt_ms, leave, base_ms):
    """Seconds from LEAVE (the series' clock) to the first ping (T, RTT_MS) within 5% of BASE_MS that begins
    0.5 s of pings whose median is too; None when none does."""
    for i in range(bisect.bisect_left(t, leave), len(t)):
        if rtt_ms[i] > 1.05 * base_ms:
            continue
        span = sorted(rtt_ms[i:bisect.bisect_left(t, t[i] + 0.5)])
        if len(span) >= 10 and span[len(span) // 2] <= 1.05 * base_ms:
            return round(t[i] - leave, 2)
    return None


def up_s(t, mbps, leave, target):
    """Seconds from LEAVE (the series' clock) to the first 0.5 s of the rate series (T, MBPS: 100 ms samples)
    whose mean reaches TARGET Mb/s; None when none does."""
    for i, ti in enumerate(t):
        if ti < leave:
            continue
        span = [m for tj, m in zip(t[i:], mbps[i:]) if tj < ti + 0.5]
        if len(span) >= 4 and statistics.mean(span) >= target:
            return round(ti - leave, 2)
    return None


# Cross traffic settles before the flow starts; a competitor due later arrives on its own clock. A TCP
# competitor already there settles 1 s and then a while drawn per repeat, the same for every contender of
# a repeat (paired, as the seeds are): with no random loss, a fixed 1 s met the competitor at one phase in
# every repeat. On `competing` at 831143a the flow's rate over its first 10 s (the emulator's series, 1 s
# steps) agreed within 2 Mb/s across 4 runs of sobas with sobasd and 3 without: the repeats sampled one
# start, not the path's spread over the competitor's sawtooth (its overflows every ~5 s).
def settle_s(sc, rep):
    c = sc.cross
    if not c or c.start:
        return 0.2
    if c.kind != "tcp":
        return 1.0
    return 1.0 + random.Random(5 + rep).uniform(0.0, COMPETITOR_PHASE_S)


class Bench:
    def __init__(self, args):
        self.args = args
        self.build = os.path.abspath(args.build)
        self.wan = os.path.join(self.build, "test", "wan")
        self.shim = os.path.join(self.build, "shim", "libsobas.so")
        self.procs = Procs()
        # Read once, at the start: the tree may move on while a long run goes (--build must be built from it).
        self.commit = source_commit()
        self.tmp = tempfile.mkdtemp(prefix="wanbench.")
        for exe in ("wanemu", "wanping", "wanflood"):
            if not os.access(os.path.join(self.wan, exe), os.X_OK):
                sys.exit(f"wanbench: {self.wan}/{exe} missing: build first (scripts/build.sh)")
        if not os.path.exists(self.shim):
            sys.exit(f"wanbench: {self.shim} missing: build first")

    def exe(self, name):
        return os.path.join(self.wan, name)

    # -- the path --------------------------------------------------------------------------

    # The random loss and the cross traffic's Poisson gaps come from seeds. One fixed seed made every
    # repeat of a contender that makes no random choice of its own the same run: on congested, linux
    # default read 51.3-51.8 Mb/s in 5 repeats, one sample of the loss pattern five times. So each repeat
    # has its own seeds, and every contender of that repeat the same ones: a paired comparison.
    def start_emulator(self, sc, tag, rep=0):
        limit = max(3000, int(sc.bdp_bytes * sc.buffer_bdp))
        stats, series, ready = (os.path.join(self.tmp, f"{tag}.{x}") for x in ("emu.json", "series", "ready"))
        argv = [self.exe("wanemu"), "--a", f"{SND}:wan0", "--b", f"{RCV}:wan1", "--rate", sc.rate,
                "--delay", f"{sc.rtt_ms / 2}ms", "--fwd-limit", str(limit),
                # The reverse path (ACKs) has the same rate and delay and a generous buffer: the
                # experiments are about the forward tight link.
                "--rev-limit", str(max(limit, 1000000)), "--fwd-loss", str(sc.loss), "--seed", str(1 + rep),
                "--stats", stats, "--series", series, "--interval", "100", "--watch", RCV_IP, "--ready", ready]
        if sc.cross and sc.cross.inside:
            argv += ["--fwd-cross", sc.cross.rate]
        p = self.procs.start(None, argv, stderr=None)
        for _ in range(200):
            if os.path.exists(ready):
                return p, stats, series
            if p.poll() is not None:
                raise RuntimeError("wanemu exited at start")
            time.sleep(0.01)
        raise RuntimeError("wanemu never attached")

    def start_cross(self, sc, tag, rep=0):
        c = sc.cross
        if c is None or c.inside:
            return []
        if c.kind == "udp":
            sink = self.procs.start(XR, [self.exe("wanflood"), "--sink", str(FLOOD_PORT)])
            wait_port(XR, FLOOD_PORT, "u")
            argv = [self.exe("wanflood"), "--to", f"{XR_IP}:{FLOOD_PORT}", "--rate", c.rate, "--seed", str(3 + rep)]
            argv += ["--mix", "internet", "--poisson"] if c.mix else ["--size", "1500"]
            if c.duration:
                argv += ["--duration", f"{c.duration:g}s"]
            self.t_cross = time.monotonic()
            log = open(os.path.join(self.tmp, f"{tag}.flood"), "w")
            gen = self.procs.start(XS, argv, stderr=log)
            return [sink, gen]
        srv = self.procs.start(XR, ["iperf3", "-s", "-p", str(XIPERF_PORT)])
        wait_port(XR, XIPERF_PORT)
        argv = ["iperf3", "-c", XR_IP, "-p", str(XIPERF_PORT), "-t", str(c.duration or 0), "-C", c.cc,
                "-P", str(c.streams)]
        if c.kind == "tcp-buffer":
            argv += ["-w", c.window]
        if c.start:  # arrives during the transfer, which starts right after this returns
            argv = ["sh", "-c", f'sleep {c.start}; exec "$@"', "competitor"] + argv
        return [srv, self.procs.start(XS, argv)]

    def stop_cross(self, procs, sc, tag, run):
        # UDP: generator first, so the sink has counted everything when it stops. TCP: receiver first:
        # closing with unread data resets the competitor's connections, where a client stopped first
        # leaves orphaned sockets sending their send buffers (MBs) into the next run; measured: 83-108
        # packets dropped by the TUN in the gap between one run's emulator and the next's.
        for p in (reversed(procs) if sc.cross and sc.cross.kind == "udp" else procs):
            self.procs.stop(p)
        if sc.cross and sc.cross.kind == "udp" and not sc.cross.inside:
            with open(os.path.join(self.tmp, f"{tag}.flood")) as f:
                rep = json.loads(f.read().strip().splitlines()[-1])
            from_units = parse_rate(sc.cross.rate)
            if rep["rate_bps"] < 0.95 * from_units:
                run.invalid(f"cross traffic generator fell behind ({rep['rate_bps'] / 1e6:.1f} of "
                            f"{from_units / 1e6:.1f} Mb/s)")

    # -- calibration: base RTT and available bandwidth A, measured, not assumed -----------

    def calibrate(self, sc):
        tag = f"{sc.name}.cal"
        emu, stats, series = self.start_emulator(sc, tag)
        try:
            ping = os.path.join(self.tmp, f"{tag}.ping")
            sh(RCV, [self.exe("wanping"), "--to", f"{SND_IP}:{PING_PORT}", "--duration", "1s", "--out", ping])
            base = statistics.median(r for _, r in read_ping(ping) if r >= 0)
            cross = [] if sc.cross and sc.cross.start else self.start_cross(sc, tag)
            time.sleep(3.0)
            t0 = time.monotonic()
            time.sleep(2.0)
            t1 = time.monotonic()
            check = Run(sc.name, "calibration", 0)
            self.stop_cross(cross, sc, tag, check)
        finally:
            self.procs.stop(emu)
        rows = read_series(series)
        window = [r for r in rows if t0 <= r[0] <= t1]
        cross_bps = (window[-1][1] - window[0][1]) * 8 / (window[-1][0] - window[0][0]) if len(window) > 1 else 0
        c_adj = sc.rate_bps * MSS_FRACTION
        if sc.fair_share:
            a = c_adj / (1 + (sc.cross.streams if sc.cross else 0))
        else:
            a = max(0.0, (sc.rate_bps - cross_bps) * MSS_FRACTION)
        return dict(base_rtt_ms=base / 1000, cross_bps=cross_bps, A_bps=a, C_goodput_bps=c_adj,
                    cal_valid=check.valid, cal_reasons=check.reasons)

    # -- a transfer ------------------------------------------------------------------------

    def set_buffers(self, how):
        """Namespace buffer defaults for a contender: 'max' starts every socket at the maximum."""
        start = BUF_MAX if how == "max" else None
        sysctl(RCV, "net.ipv4.tcp_rmem", f"4096 {start or 131072} {BUF_MAX}")
        sysctl(SND, "net.ipv4.tcp_wmem", f"4096 {start or 16384} {BUF_MAX}")

    def transfer(self, sc, con, size, tag, log):
        """Runs the program; returns (bytes sent, bytes received, seconds) as the applications saw them,
        and its retransmissions when the sender host's TCP counters do not hold them (UDT), else None."""
        spec = spec_of(con)
        env_rcv, env_snd = dict(os.environ), dict(os.environ)
        preloaded = dict(LD_PRELOAD=self.shim, SOBAS_LOG=log, SOBAS_RING=os.path.join(self.tmp, "sobas.ring"))
        if spec["preload"] in ("receiver", "both"):
            env_rcv.update(preloaded)
            if spec.get("no_peer"):
                env_rcv.update(SOBAS_PROBE_PORT=str(NO_SOBASD_PORT))
            if spec.get("policy"):
                env_rcv.update(SOBAS_POLICY=spec["policy"])
        if spec["preload"] in ("sender", "both"):
            env_snd.update(preloaded)
        fixed = spec["bufs"] not in ("auto", "max")
        self.t_transfer = time.monotonic()
        if sc.tool == "iperf3":
            srv = self.procs.start(RCV, ["iperf3", "-s", "-1", "-p", str(IPERF_PORT)], env=env_rcv)
            wait_port(RCV, IPERF_PORT)
            argv = ["iperf3", "-c", RCV_IP, "-p", str(IPERF_PORT), "-n", str(size), "-C", spec["cc"], "-J"]
            if fixed:
                argv += ["-w", spec["bufs"]]
            try:
                out = sh(SND, argv, timeout=TRANSFER_TIMEOUT_S, env=env_snd)
            finally:
                self.procs.stop(srv)
            # iperf3 -n stops its receiver's clock when the sender has *written* the last byte, so
            # what is still in flight or buffered is not counted: the goodput is the receiver's
            # bytes over the receiver's own measured time, and completeness is the sender's count.
            end = json.loads(out)["end"]
            return int(end["sum_sent"]["bytes"]), int(end["sum_received"]["bytes"]), \
                float(end["sum_received"]["seconds"]), None
        if spec.get("transport") == "udt":
            return self.transfer_udt(size)
        # HTTP: a file served from the sender, fetched by curl at the receiver.
        if fixed:
            raise ValueError("fixed buffers need iperf3")
        if sc.tool == "nginx":
            return self.serve_nginx(sc, size, env_snd, env_rcv)
        srv = self.procs.start(SND, [sys.executable, "-m", "http.server", str(HTTP_PORT), "--bind", SND_IP,
                                     "--directory", self.tmp], env=env_snd)
        try:
            wait_port(SND, HTTP_PORT)
            out = sh(RCV, ["curl", "-sS", "--fail", "-o", "/dev/null", "-w", "%{size_download} %{time_total}",
                           f"http://{SND_IP}:{HTTP_PORT}/payload.{size}"], timeout=TRANSFER_TIMEOUT_S, env=env_rcv)
        finally:
            self.procs.stop(srv)
        got, secs = out.split()
        return int(got), int(got), float(secs), None

    def udt_exe(self):
        return os.path.join(self.build, "test", "udt", "udt_xfer")

    def transfer_udt(self, size):
        """The payload over UDT: udt_xfer serves it from the sender and fetches it at the receiver; its
        retransmissions are the packets the receiver found lost."""
        exe = self.udt_exe()
        srv = self.procs.start(SND, [exe, "serve", "--listen", SND_IP, "--port", str(UDT_PORT), self.tmp])
        try:
            wait_port(SND, UDT_PORT, "u")
            out = sh(RCV, [exe, "get", SND_IP, str(UDT_PORT), f"payload.{size}", "/dev/null"], timeout=TRANSFER_TIMEOUT_S)
        finally:
            self.procs.stop(srv)
        got, secs, lost = out.split()
        return int(got), int(got), float(secs), int(lost)

    def serve_nginx(self, sc, size, env_snd, env_rcv):
        """nginx serving sc.flows concurrent curl downloads of one file each: every byte, over the time
        from the first request to the last download's end (the slowest flow counts)."""
        each = size // sc.flows
        conf = os.path.join(self.tmp, "nginx.conf")
        with open(conf, "w") as f:
            f.write(NGINX_CONF.format(tmp=self.tmp, ip=SND_IP, port=HTTP_PORT))
        srv = self.procs.start(SND, ["nginx", "-e", "stderr", "-c", conf, "-p", self.tmp], env=env_snd,
                               stderr=None)
        curls = []
        try:
            wait_port(SND, HTTP_PORT)
            argv = ["curl", "-sS", "--fail", "-o", "/dev/null", "-w", "%{size_download}",
                    f"http://{SND_IP}:{HTTP_PORT}/payload.{each}"]
            t0 = time.monotonic()
            curls = [self.procs.start(RCV, argv, env=env_rcv, stdout=subprocess.PIPE) for _ in range(sc.flows)]
            got = 0
            for c in curls:
                out, _ = c.communicate(timeout=TRANSFER_TIMEOUT_S)
                self.procs.live.remove(c)
                if c.returncode != 0:
                    raise RuntimeError(f"curl from nginx exited {c.returncode}")
                got += int(out)
            secs = time.monotonic() - t0
        finally:
            for c in curls:
                if c in self.procs.live:
                    self.procs.stop(c)
            self.procs.stop(srv)
        return got, got, secs, None

    def run_one(self, sc, cal, con, rep, size):
        tag = f"{sc.name}.{con.replace(' ', '_').replace('=', '')}.{rep}"
        run = Run(sc.name, con, rep)
        spec = spec_of(con)
        sysctl(SND, "net.ipv4.tcp_congestion_control", spec["cc"])
        self.set_buffers(spec["bufs"])
        log = os.path.join(self.tmp, f"{tag}.sobas.log")
        emu, stats, series = self.start_emulator(sc, tag, rep)
        # Counted from here: before wanemu holds the devices, the carrier-less TUN drops what the last
        # run's closing connections still send, and that is no loss of this run's.
        drops0 = {d: tun_tx_dropped(ns, d) for ns, d in ((SND, "wan0"), (RCV, "wan1"))}
        ping_out = os.path.join(self.tmp, f"{tag}.ping")
        try:
            cross = self.start_cross(sc, tag, rep)
            time.sleep(settle_s(sc, rep))
            ping = self.procs.start(RCV, [self.exe("wanping"), "--to", f"{SND_IP}:{PING_PORT}", "--out", ping_out])
            rx0, prune0 = retrans_segs(SND), prune_counters(RCV)
            if self.trace:
                self.trace.start()
            t0 = time.monotonic()
            try:
                sent, run.bytes, run.seconds, retrans = self.transfer(sc, con, size, tag, log)
            except subprocess.TimeoutExpired:
                # A result, not a crash: the remaining runs go on, and this one is listed with its reason.
                run.invalid(f"did not finish in {TRANSFER_TIMEOUT_S} s "
                            f"(under {size * 8 / TRANSFER_TIMEOUT_S / 1e6:.1f} Mb/s)")
                sent, retrans = size, None
            t1 = time.monotonic()
            if self.trace:
                self.sender_story(run, self.trace.stop(t1), t0)
            run.retrans = retrans_segs(SND) - rx0 if retrans is None else retrans
            run.rcv_prune = {k: v - prune0[k] for k, v in prune_counters(RCV).items() if v != prune0[k]}
            self.procs.stop(ping)
            self.stop_cross(cross, sc, tag, run)
            # Read while wanemu still holds the devices: once it lets go, late packets of a closing
            # connection are dropped by the carrier-less TUN and would be blamed on the run.
            drops = {d: tun_tx_dropped(ns, d) - drops0[d] for ns, d in ((SND, "wan0"), (RCV, "wan1"))}
        finally:
            self.procs.stop(emu)
            self.set_buffers("auto")
        with open(stats) as f:
            run.emu = json.load(f)
        self.validate(run, drops)
        if sent < size:  # iperf3 -n may send one 128 KiB block more than asked
            run.invalid(f"transfer moved {sent} of {size} bytes")
        run.goodput_bps = run.bytes * 8 / run.seconds if run.seconds > 0 else 0
        run.queue_drops = run.emu["fwd"]["drop_queue"]
        pings = [(t, r / 1000) for t, r in read_ping(ping_out) if t0 <= t <= t1]
        inflation = sorted(r - cal["base_rtt_ms"] for t, r in pings if r >= 0)
        if inflation:
            run.rtt_p50_ms, run.rtt_p95_ms = percentile(inflation, 50), percentile(inflation, 95)
        run.series = self.series(series, pings, log if spec["preload"] else None, t0, t1)
        run.decision_ms = first_decision_ms(log) if spec["preload"] else None
        moves = decisions_mono(log) if spec["preload"] else []
        if spec["preload"] and sc.flows == 1:
            run.drops_after_decision, run.decided_after_ss_ms = settling(read_series(series), moves, t0, t1)
        c = sc.cross
        if c and c.kind == "udp" and c.duration:
            leave = self.t_cross + c.duration
            run.series["competitor"] = [round(self.t_cross - t0, 2), round(leave - t0, 2)]
            run.up_s = up_s(run.series["t"], run.series["mbps"], leave - t0, 0.9 * cal["C_goodput_bps"] / 1e6)
        if c and c.start:
            arrive = self.t_transfer + c.start  # the competitor's clock started with the transfer's (±0.2 s)
            leave = arrive + c.duration
            run.series["competitor"] = [round(arrive - t0, 2), round(leave - t0, 2)]
            last = [r - cal["base_rtt_ms"] for t, r in pings if r >= 0 and t >= t1 - 10]
            run.rtt_last10_p50_ms = round(percentile(sorted(last), 50), 2) if last else None
            beside = [m for t, m in zip(run.series["t"], run.series["mbps"]) if arrive - t0 <= t < leave - t0]
            run.beside_mbps = round(statistics.mean(beside), 1) if beside else None
            run.gone_s = gone_s(run.series["rtt_t"], run.series["rtt_ms"], leave - t0, cal["base_rtt_ms"])
            if spec["preload"]:
                run.aside_s = next((round(t - arrive, 2) for t, _, to in moves if t >= arrive and to == "congested"), None)
                run.back_s = next((round(t - leave, 2) for t, _, to in moves if t >= leave and to == "decided"), None)
        return run

    @staticmethod
    def sender_story(run, story, t0):
        """RUN takes the sender trace's summary, its slow start's end in ms after the transfer began (T0,
        the trace's clock is CLOCK_MONOTONIC too)."""
        run.ss_exit_pkts, run.ss_exit_by, run.loss_episodes = (story["ss_exit_pkts"], story["ss_exit_by"],
                                                               story["loss_episodes"])
        run.timeouts = story["timeouts"]
        if story["ss_exit_t"] is not None:
            run.ss_exit_ms = round((story["ss_exit_t"] - t0) * 1e3, 1)

    def validate(self, run, drops):
        for d, n in drops.items():
            if n:
                run.invalid(f"{d}: {n} TUN TX drops (the kernel dropped before wanemu read)")
        for side in ("fwd", "rev"):
            s = run.emu[side]
            if s["late_mean_us"] >= LATE_LIMIT_US:
                run.invalid(f"{side}: mean release lateness {s['late_mean_us']:.0f} µs >= {LATE_LIMIT_US}")
            if s["stall_lag_ms"] > STALL_LAG_LIMIT * run.emu["wall_s"] * 1e3:
                run.invalid(f"{side}: host stalls ({run.emu['stalls']}) froze the link "
                            f"{s['stall_lag_ms']:.0f} ms of {run.emu['wall_s']:.1f} s (docs/testbed.md)")
            if s["drop_full"] or s["oversize"] or s["write_errors"]:
                run.invalid(f"{side}: emulator faults (slots full {s['drop_full']}, oversize {s['oversize']}, "
                            f"write errors {s['write_errors']})")

    def series(self, path, pings, log, t0, t1):
        rows = [r for r in read_series(path) if t0 - 0.2 <= r[0] <= t1 + 0.2]
        t, mbps = [], []
        for a, b in zip(rows, rows[1:]):
            if b[0] > a[0]:
                t.append(round(b[0] - t0, 3))
                mbps.append(round((b[2] - a[2]) * 8 / (b[0] - a[0]) / 1e6, 2))
        out = dict(t=t, mbps=mbps, rtt_t=[round(x - t0, 3) for x, r in pings if r >= 0],
                   rtt_ms=[round(r, 3) for x, r in pings if r >= 0])
        if log:
            out["windows"] = read_windows(log)
        return out

    def contenders(self, sc):
        """The scenario's contenders, or those of them --contenders names (a focused experiment)."""
        if not self.args.contenders:
            return sc.contenders
        named = self.args.contenders.split(",")
        seeds = [c for c in SEEDS if c in named and sc.name != "sweep" and
                 (SEEDS[c].get("transport") != "udt" or sc.tool == "http")]
        return [c for c in sc.contenders if c in named] + seeds + [c for c in CONTROLS if c in named]

    # -- the whole benchmark ---------------------------------------------------------------

    def run(self):
        quick = self.args.quick
        reps = self.args.repeats or (1 if quick else 3)
        chosen = scenarios(quick)
        if self.args.only:
            names = self.args.only.split(",")
            known = {s.name: s for s in scenarios(False)}
            bad = [n for n in names if n not in known]
            if bad:
                sys.exit(f"wanbench: unknown scenario(s) {', '.join(bad)}; known: {', '.join(known)}")
            chosen = [known[n] for n in names]
        if "udt" in (self.args.contenders or "").split(",") and not os.access(self.udt_exe(), os.X_OK):
            sys.exit("wanbench: the udt contender needs test/udt/udt_xfer: apt install libudt-dev, then build")
        if any(sc.tool == "nginx" for sc in chosen) and not shutil.which("nginx"):
            sys.exit("wanbench: nginx missing: scripts/install-deps.sh installs it")
        subprocess.run([os.path.join(ROOT, "scripts", "testbed.sh"), "up", "--name", NS, "--buf-max",
                        str(BUF_MAX)], check=True)
        results = dict(started=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), quick=quick, repeats=reps,
                       kernel=os.uname().release, scenarios=[])
        self.trace = sendertrace.SenderTrace.open(IPERF_PORT, HTTP_PORT, SND_IP)
        try:
            ping_echo = self.procs.start(SND, [self.exe("wanping"), "--echo", str(PING_PORT)])
            wait_port(SND, PING_PORT, "u")
            # The sender host runs sobasd, as a deployment would: the receiver's side probe gets
            # its RTT, forward loss and C' from it (the other contenders never send it anything).
            self.procs.start(SND, [os.path.join(self.build, "bin", "sobasd")])
            wait_port(SND, SOBASD_PORT, "u")
            for sc in chosen:
                seconds = 3 if quick else sc.seconds
                print(f"== {sc.name}: {sc.title}", flush=True)
                cal = self.calibrate(sc)
                # A whole number of iperf3's 128 KiB blocks (iperf3 -n sends whole blocks) per flow.
                block = IPERF_BLOCK * sc.flows
                size = max(1, int(cal["A_bps"] / 8 * seconds) // block) * block
                if sc.tool in ("http", "nginx"):
                    with open(os.path.join(self.tmp, f"payload.{size // sc.flows}"), "wb") as f:
                        f.truncate(size // sc.flows)  # sparse: served from the page cache, no disk in the path
                print(f"   base RTT {cal['base_rtt_ms']:.2f} ms, cross {cal['cross_bps'] / 1e6:.1f} Mb/s, "
                      f"A {cal['A_bps'] / 1e6:.1f} Mb/s, transfer {size / 1e6:.0f} MB", flush=True)
                runs = []
                # Interleaved (contender within repeat), so slow drifts hit every contender alike.
                for rep in range(reps):
                    for con in self.contenders(sc):
                        r = self.run_one(sc, cal, con, rep, size)
                        runs.append(r)
                        print(f"   {con:>14} #{rep}: {r.goodput_bps / 1e6:7.1f} Mb/s  rtt+ p50 "
                              f"{r.rtt_p50_ms:6.2f} p95 {r.rtt_p95_ms:6.2f} ms  retrans {r.retrans:5d}  "
                              f"{sender_cell(r)}  {prune_cell(r)}"
                              f"{'valid' if r.valid else 'INVALID: ' + '; '.join(r.reasons)}", flush=True)
                results["scenarios"].append(summarise(sc, cal, size, runs, self.commit))
        finally:
            self.procs.stop_all()
            if self.trace:
                self.trace.close()
            subprocess.run([os.path.join(ROOT, "scripts", "testbed.sh"), "down", "--name", NS],
                           stdout=subprocess.DEVNULL)
            if self.args.keep:
                print(f"wanbench: every run's files kept in {self.tmp}")
            else:
                shutil.rmtree(self.tmp, ignore_errors=True)
        return results


# ---------------------------------------------------------------------------------------------
# Reading what the programs wrote


def parse_rate(s):
    m = re.fullmatch(r"([0-9.]+)([kMG]?)", s)
    return float(m.group(1)) * {"": 1, "k": 1e3, "M": 1e6, "G": 1e9}[m.group(2)]


def read_ping(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [(float(a), float(c)) for a, _, c in (l.split() for l in f if l.strip())]


def read_series(path):
    with open(path) as f:
        return [tuple(float(x) for x in l.split()) for l in f if l.strip()]


def read_windows(log):
    """The receiving flow's window series from its SOBAS_LOG: the advertised window the kernel
    reported (tcpi_rcv_wnd) and the S the engine held (0 while not held), per 2·RTT window."""
    t, wnd, held = [], [], []
    if not os.path.exists(log):
        return dict(t=t, rcv_wnd=wnd, s=held)
    with open(log) as f:
        lines = [dict(kv.split("=", 1) for kv in l.split()[1:] if "=" in kv) for l in f]
    flows = {}
    for d in lines:  # each process numbers its flows from 1 (nginx: one log, several workers)
        if d.get("ev") == "window" and d.get("role") == "receiver":
            flows.setdefault((d["pid"], d["flow"]), []).append(d)
    if flows:
        bulk = max(flows.values(), key=len)  # the data connection, not iperf3's control connection
        for d in bulk:
            t.append(int(d["t_ms"]) / 1000)
            wnd.append(int(d["rcv_wnd"]))
            held.append(int(d.get("s", 0)))
    return dict(t=t, rcv_wnd=wnd, s=held)


def first_decision_ms(log):
    """When the engine first settled the flow: S = R·T held, or stepped aside on a congested path."""
    if not os.path.exists(log):
        return None
    with open(log) as f:
        for l in f:
            if " ev=decision " in l and (" to=decided " in l or " to=congested " in l):
                m = re.search(r" t_ms=(\d+)", l)
                return float(m.group(1)) if m else None
    return None


def decisions_mono(log):
    """The bulk flow's decisions as (CLOCK_MONOTONIC seconds, old state, new state): its open line gives
    t0_ms."""
    if not os.path.exists(log):
        return []
    t0, out = {}, []
    with open(log) as f:
        for l in f:
            d = dict(kv.split("=", 1) for kv in l.split()[1:] if "=" in kv)
            key = (d.get("pid"), d.get("flow"))
            if d.get("ev") == "open":
                t0[key] = int(d["t0_ms"])
            elif d.get("ev") == "decision" and key in t0:
                out.append(((t0[key] + int(d["t_ms"])) / 1000, d["from"], d["to"]))
    return out


SLOW_START = ("slow-start", "ss-growing")


def settling(rows, moves, t0, t1):
    """How the flow settled: the watched host's drops after its first decision (S held, or stepped aside),
    and the ms from the end of slow start to that decision (0 when the decision ended slow start). Slow
    start ends at the engine's first move out of it, or at the first series sample in which the link
    dropped a packet towards the watched host, whichever is sooner: any loss ends the sender's slow start,
    and a sender's engine may call itself in slow start long after (on `shallow` it decided 3 s in, the
    kernel's CUBIC regrowing from a loss at 0.5 s all that time). Drops count from the first series sample
    at or after the decision, so none of slow start's overshoot that the link dropped before it is blamed
    on the decision. (None, None): it never decided."""
    decided = next((t for t, _, to in moves if to in ("decided", "congested")), None)
    if decided is None:
        return None, None
    left = next((t for t, frm, to in moves if frm in SLOW_START and to not in SLOW_START), decided)
    # A drop shows in the sample that ends after it: it happened after the sample before began.
    lost = next((p[0] for p, r in zip(rows, rows[1:]) if r[7] > p[7] and p[0] >= t0), None)
    if lost is not None and lost < left:
        left = lost
    after = [r for r in rows if decided <= r[0] <= t1 + 0.2]
    drops = int(after[-1][7] - after[0][7]) if after else 0
    return drops, round((decided - left) * 1000, 1)


def percentile(xs, p):
    k = (len(xs) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def source_commit():
    """The commit the benchmarked tree is at, '+' when it has changes not committed (None outside git)."""
    try:
        head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return head + ("+" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return None


def contender_row(con, rs, a_bps):
    """One contender's row of the table from its runs RS (Run objects, or records read back)."""
    ok = [r for r in rs if r.valid]
    g = [r.goodput_bps for r in ok]
    mean = statistics.mean(g) if g else None
    return dict(
        contender=con, runs=len(rs), valid_runs=len(ok),
        goodput_mbps=round(mean / 1e6, 2) if g else None,
        goodput_sd_mbps=round(statistics.stdev(g) / 1e6, 2) if len(g) > 1 else 0.0,
        pct_of_A=round(100 * mean / a_bps, 1) if g and a_bps else None,
        rtt_p50_ms=round(statistics.mean(r.rtt_p50_ms for r in ok), 2) if ok else None,
        rtt_p95_ms=round(statistics.mean(r.rtt_p95_ms for r in ok), 2) if ok else None,
        retrans=round(statistics.mean(r.retrans for r in ok), 1) if ok else None,
        queue_drops=round(statistics.mean(r.queue_drops for r in ok), 1) if ok else None,
        decision_ms=round(statistics.mean(d), 1) if (d := [r.decision_ms for r in ok
                                                            if r.decision_ms is not None]) else None,
        aside_s=[r.aside_s for r in ok], back_s=[r.back_s for r in ok], gone_s=[r.gone_s for r in ok],
        rtt_last10_p50_ms=[r.rtt_last10_p50_ms for r in ok], beside_mbps=[r.beside_mbps for r in ok],
        up_s=[r.up_s for r in ok],
        drops_after_decision=[r.drops_after_decision for r in ok],
        decided_after_ss_ms=[r.decided_after_ss_ms for r in ok],
        sender=[sender_cell(r) for r in ok],
        invalid=[f"#{r.repeat}: {'; '.join(r.reasons)}" for r in rs if not r.valid],
        paired_seeds=True, phased=True)


def sender_cell(r):
    """A run's sender trace in a few words (sendertrace.describe); "" without a trace."""
    return sendertrace.describe(r.ss_exit_by, r.ss_exit_pkts, r.ss_exit_ms, r.loss_episodes, r.timeouts)


def prune_cell(r):
    """A run's receiver-side drops for want of buffer, when there were any ("" when none)."""
    return "receiver pruned " + " ".join(f"{k} {v}" for k, v in r.rcv_prune.items()) + "  " if r.rcv_prune else ""


def summarise(sc, cal, size, runs, commit):
    contenders = []
    for con in sc.contenders + [c for c in [*SEEDS, *CONTROLS] if c not in sc.contenders]:
        rs = [r for r in runs if r.contender == con]
        if rs:  # else left out by --contenders
            contenders.append(contender_row(con, rs, cal["A_bps"]))
    return dict(name=sc.name, title=sc.title, paper=sc.paper, run_at=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                commit=commit,
                C=sc.rate, rtt_ms=sc.rtt_ms,
                buffer_bdp=sc.buffer_bdp, buffer_bytes=int(sc.bdp_bytes * sc.buffer_bdp), loss=sc.loss,
                tool=sc.tool, cross=sc.cross.__dict__ if sc.cross else None, transfer_bytes=size,
                calibration=cal, contenders=contenders,
                runs=[run_record(r) for r in runs])


def run_record(r):
    """A run for results.json. Time series are kept for the first repeat only (what the plots show):
    the rest would triple the file for nothing a reader uses. NaN (no ping sample) becomes null."""
    d = dict(r.__dict__)
    if r.repeat > 0:
        d["series"] = {}
    for k in ("rtt_p50_ms", "rtt_p95_ms"):
        if d[k] != d[k]:
            d[k] = None
    return d


# ---------------------------------------------------------------------------------------------
# Reports


def one_seed_line(s):
    """Rows run before each repeat had its own seeds, where a seed shapes the path (random loss, Poisson
    cross traffic): their repeats met one loss pattern, so their ± is not the path's spread."""
    cross = s["cross"] or {}
    if not (s["loss"] or (cross.get("kind") == "udp" and cross.get("mix"))):
        return None
    old = [c["contender"] for c in s["contenders"] if not c.get("paired_seeds")]
    return f"One seed for every repeat (run before the seeds were per repeat): {', '.join(old)}." if old else None


def phase_line(s):
    """Beside a TCP competitor already there, when the flow started, and the rows run before the phase
    was drawn per repeat (settle_s): their repeats met the competitor at one phase."""
    cross = s["cross"] or {}
    if cross.get("kind") != "tcp" or cross.get("start"):
        return None
    old = [c["contender"] for c in s["contenders"] if not c.get("phased")]
    line = (f"The flow starts 1 to {1 + COMPETITOR_PHASE_S:g} s after the competitor, drawn per repeat (the same "
            "for every contender of a repeat).")
    return line + (f" Run with the flow 1 s after it in every repeat (before the phase was drawn): "
                   f"{', '.join(old)}." if old else "")


def markdown(results):
    out = [f"# WAN benchmark — {results['started']}", "",
           f"Kernel {results['kernel']}; repeats per contender as its *valid* column counts (this run: "
           f"{results['repeats']}), interleaved, each repeat with its own loss and cross-traffic seeds; "
           f"{'quick (CI smoke)' if results['quick'] else 'full'} mode. Goodput is application bytes over "
           "application time (mean ± sd of valid runs); *RTT+* is the independent UDP ping's RTT during "
           "the transfer minus the idle base RTT; retransmits are the sender host's; drops are the "
           "emulated tight link's DropTail drops.", "",
           "The seeds' systems (Tierney's `bdp`, DRS's `drs`, UDT) run on five of these paths with "
           "`bash scripts/bench-wan.sh --seeds`, their rows in those tables; each seed's claim against them: "
           "[seeds.md](seeds.md). GridFTP's parallel streams have their own run, `scripts/streams.py`: "
           "[../streams/results.md](../streams/results.md).", "",
           wanbars.markdown(wanbars.check(results))]
    for s in results["scenarios"]:
        cal = s["calibration"]
        out += [f"## {s['name']}: {s['title']}", "",
                *([run_line(s), ""] if s.get("run_at") else []),
                *([one_seed, ""] if (one_seed := one_seed_line(s)) else []),
                *([phase, ""] if (phase := phase_line(s)) else []),
                f"C = {s['C']}b/s, base RTT {cal['base_rtt_ms']:.2f} ms (set {s['rtt_ms']:g}), buffer "
                f"{s['buffer_bdp']:g} BDP = {s['buffer_bytes'] / 1000:.0f} KB, loss {s['loss']:g}, "
                f"{s['tool']}, {s['transfer_bytes'] / 1e6:.0f} MB per transfer; cross traffic "
                f"{describe_cross(s['cross'])} measured {cal['cross_bps'] / 1e6:.1f} Mb/s; "
                f"A = {cal['A_bps'] / 1e6:.1f} Mb/s{' (fair share)' if 'fair' in s['title'] else ''}.", ""]
        if s.get("note"):
            out += [f"Note: {s['note']}.", ""]
        if s["paper"]:
            out += [f"Paper: {s['paper']}.", ""]
        out += ["| contender | goodput Mb/s | % of A | RTT+ p50 ms | RTT+ p95 ms | retrans | drops | "
                "decision | valid |", "|---|---|---|---|---|---|---|---|---|"]
        for c in s["contenders"]:
            dec = f"{c['decision_ms']:.0f} ms" if c["decision_ms"] is not None else \
                ("none" if c["contender"].startswith("sobas") else "—")
            goodput = "—" if c["goodput_mbps"] is None else f"{c['goodput_mbps']:.1f} ± {c['goodput_sd_mbps']:.1f}"
            out.append(f"| {c['contender']} | {goodput} | "
                       f"{fmt(c['pct_of_A'])} | {fmt(c['rtt_p50_ms'])} | {fmt(c['rtt_p95_ms'])} | "
                       f"{fmt(c['retrans'])} | {fmt(c['queue_drops'])} | {dec} | "
                       f"{c['valid_runs']}/{c['runs']} |")
        cross = s["cross"] or {}
        if cross.get("start"):
            out += ["", f"The competitor arrives {cross['start']:g} s into the transfer and leaves {cross['duration']:g} s "
                    "later. Per valid run: seconds from its arrival to stepping aside, from its departure to "
                    "held again (the engine's decision) and to the queue gone (the first ping within 5% of the "
                    "base that begins 0.5 s of pings whose median is too), the p50 RTT+ of the transfer's last 10 s "
                    "(ms), and the flow's wire rate while the competitor was there (Mb/s).", "",
                    "| contender | aside after (s) | held again after (s) | queue gone after (s) | RTT+ p50, last 10 s "
                    "| rate beside it |",
                    "|---|---|---|---|---|---|"]
            for c in s["contenders"]:
                out.append(f"| {c['contender']} | {', '.join(fmt(x) for x in c.get('aside_s', []))} | "
                           f"{', '.join(fmt(x) for x in c.get('back_s', []))} | "
                           f"{', '.join(fmt(x) for x in c.get('gone_s', []))} | "
                           f"{', '.join(fmt(x) for x in c.get('rtt_last10_p50_ms', []))} | "
                           f"{', '.join(fmt(x) for x in c.get('beside_mbps', []))} |")
        if cross.get("kind") == "udp" and cross.get("duration"):
            out += ["", f"The UDP cross traffic stops {cross['duration']:g} s after it starts (about 1 s before the "
                    "transfer starts). Per valid run: seconds from then to the flow's rate, in 0.5 s means, at 90% of "
                    "the path's rate without it.", "", "| contender | up after (s) |", "|---|---|"]
            out += [f"| {c['contender']} | {', '.join(fmt(x) for x in c.get('up_s', []))} |" for c in s["contenders"]]
        traced = [c for c in s["contenders"] if any(c.get("sender") or [])]
        if traced:
            out += ["", "The sender, per valid run (kernel tracepoints): how its slow start ended and its loss "
                    "episodes. A slow start ended far under the path's window, or two episodes back to back "
                    "(ssthresh at 0.49 of the peak), slows a short transfer for the rest of its run; plain "
                    "CUBIC draws both too.", "", "| contender | per run |", "|---|---|"]
            out += [f"| {c['contender']} | {'; '.join(x or '—' for x in c['sender'])} |" for c in traced]
        bad = [f"- {c['contender']} {i}" for c in s["contenders"] for i in c["invalid"]]
        if bad:
            out += ["", "Invalid runs (excluded):"] + bad
        out += ["", f"![{s['name']}]({s['name']}.png)", ""]
    return "\n".join(out) + "\n"


def run_line(s):
    """When the scenario ran, and at which commit; per group of rows when --merge kept rows of an
    earlier run beside a re-run of some contenders."""
    def at(run_at, commit):
        return f"{run_at}" + (f", sobas at {commit}" if commit else "")
    groups = {}
    for c in s["contenders"]:
        if "run_at" in c:
            groups.setdefault((c["run_at"], c.get("commit")), []).append(c["contender"])
    if len(groups) < 2:
        return f"Run {at(s['run_at'], s.get('commit'))}."
    return "Rows run at different times: " + "; ".join(
        f"{', '.join(names)}: {at(*key)}" for key, names in sorted(groups.items())) + "."


def describe_cross(c):
    if not c:
        return "none,"
    if c["kind"] == "udp":
        until = f" for the first {c['duration']:g} s" if c.get("duration") else ""
        made = ", made up inside the emulator" if c.get("inside") else ""
        return f"UDP {c['rate']}b/s ({'Internet size mix, Poisson' if c['mix'] else '1500 B, constant'}{made}){until},"
    if c["kind"] == "tcp-buffer":
        return f"{c['streams']} TCP stream(s) limited to -w {c['window']},"
    return f"{c['streams']} congestion-limited {c.get('cc', 'cubic').upper()} stream(s),"


def fmt(v):
    return "—" if v is None else f"{v:.1f}" if isinstance(v, float) else str(v)


def plots(results, outdir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    for s in results["scenarios"]:
        first = {}
        for r in s["runs"]:
            first.setdefault(r["contender"], r)
        has_win = any(r["series"].get("windows", {}).get("t") for r in first.values())
        fig, axes = plt.subplots(3 if has_win else 2, 1, figsize=(10, 9 if has_win else 6.5), sharex=True)
        for con, r in first.items():
            se = r["series"]
            axes[0].plot(se["t"], se["mbps"], label=con, lw=1)
            axes[1].plot(se["rtt_t"], se["rtt_ms"], label=con, lw=0.8)
            w = se.get("windows", {})
            if has_win and w.get("t"):
                # Fig. 13 style: the S the engine held, beside the window the kernel advertised.
                axes[2].step(w["t"], [x / 1000 for x in w["rcv_wnd"]], where="post", label=f"{con}: rcv_wnd", lw=1)
                held = [(tt, x / 1000) for tt, x in zip(w["t"], w["s"]) if x]
                if held:
                    axes[2].step(*zip(*held), where="post", label=f"{con}: S held", lw=1.5)
                axes[2].set_ylabel("window (KB)")
                axes[2].set_yscale("log")
        cal = s["calibration"]
        comp = next((r["series"]["competitor"] for r in first.values() if r["series"].get("competitor")), None)
        if comp:
            for a in axes:
                a.axvspan(*comp, color="orange", alpha=0.12, label="competitor" if a is axes[0] else None)
        axes[0].axhline(cal["A_bps"] / 1e6 / MSS_FRACTION, color="grey", ls="--", lw=0.8, label="A (IP rate)")
        axes[0].set_ylabel("flow IP rate at link exit (Mb/s)")
        axes[1].axhline(cal["base_rtt_ms"], color="grey", ls="--", lw=0.8, label="base RTT")
        axes[1].set_ylabel("UDP ping RTT (ms)")
        axes[-1].set_xlabel("time since transfer start (s), first repeat of each contender")
        for a in axes:
            a.grid(alpha=0.3)
            a.legend(fontsize=8, loc="best")
        fig.suptitle(f"{s['name']}: {s['title']}", fontsize=10)
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, f"{s['name']}.png"), dpi=90)
        plt.close(fig)


def write_reports(results, out, with_plots):
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write(markdown(results))
    if with_plots:
        plots(results, out)
    print(f"wanbench: results in {out}/results.md")


def keep_contenders(new, old):
    """A scenario re-run with some of its contenders (--contenders) keeps the rows of the others from
    OLD, each with the run and commit it came from: one table then holds every contender, and says
    which rows were measured when."""
    ran = {c["contender"] for c in new["contenders"]}
    rows = [dict(c, run_at=c.get("run_at", old["run_at"]), commit=c.get("commit", old.get("commit")))
            for c in old["contenders"] if c["contender"] not in ran]
    if not rows:
        return
    for c in new["contenders"]:  # a pooled row (pool_contenders) already names its runs
        c.setdefault("run_at", new["run_at"])
        c.setdefault("commit", new.get("commit"))
    order = [c["contender"] for c in old["contenders"]]
    new["contenders"] = sorted(rows + new["contenders"],
                               key=lambda c: order.index(c["contender"]) if c["contender"] in order else len(order))
    new["runs"] = [r for r in old["runs"] if r["contender"] not in ran] + new["runs"]


class Record(dict):
    """A run read back from results.json, its fields as attributes (None for one an older run lacks)."""
    __getattr__ = dict.get


def pool_contenders(new, old):
    """--pool: a contender this run repeated also keeps its runs from OLD, after this run's (renumbered,
    without the series only a first repeat keeps), and its row is taken over all of them, A from this
    run's calibration. Runs of one contender at two commits pool only where the code they ran is the same:
    the caller says so by asking, and the row names both runs and commits."""
    for c in new["contenders"]:
        earlier = next((o for o in old["contenders"] if o["contender"] == c["contender"]), None)
        if not earlier:
            continue
        mine = [r for r in new["runs"] if r["contender"] == c["contender"]]
        theirs = [dict(r, repeat=len(mine) + i, series={})
                  for i, r in enumerate(r for r in old["runs"] if r["contender"] == c["contender"])]
        new["runs"] += theirs
        row = contender_row(c["contender"], [Record(r) for r in mine + theirs], new["calibration"]["A_bps"])
        t_new, c_new = new["run_at"], new.get("commit")
        t_old, c_old = earlier.get("run_at", old["run_at"]), earlier.get("commit", old.get("commit"))
        c.clear()
        c.update(row, run_at=f"{t_old} and {t_new}", commit=f"{c_old} and {c_new}" if c_old != c_new else c_new)


def merge_results(results, old, pool):
    """--merge: RESULTS keeps OLD's scenarios it did not repeat, and in those it did the contenders it
    left out (keep_contenders; with POOL, the earlier runs of those it repeated too: pool_contenders)."""
    # A scenario rerun with no valid run at all measured the host, not sobas: the old one stays.
    void = {s["name"] for s in results["scenarios"] if not any(c["valid_runs"] for c in s["contenders"])}
    for name in sorted(void & {s["name"] for s in old["scenarios"]}):
        print(f"wanbench: {name}: no valid run, the earlier results stay", file=sys.stderr)
    results["scenarios"] = [s for s in results["scenarios"] if s["name"] not in void or
                            s["name"] not in {o["name"] for o in old["scenarios"]}]
    ran = {s["name"] for s in results["scenarios"]}
    order = [s.name for s in scenarios(False)]
    for s in old["scenarios"]:  # scenarios from before run_at existed carry their run's start
        s.setdefault("run_at", old["started"])
    kept = [s for s in old["scenarios"] if s["name"] not in ran]
    for s in results["scenarios"]:
        earlier = next((o for o in old["scenarios"] if o["name"] == s["name"]), None)
        if earlier and pool:
            pool_contenders(s, earlier)
        if earlier:
            keep_contenders(s, earlier)
    results["scenarios"] = sorted(kept + results["scenarios"],
                                  key=lambda s: order.index(s["name"]) if s["name"] in order else len(order))


def interrupted(*_):
    raise KeyboardInterrupt


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="CI smoke: two 100 Mb/s scenarios, short, one repeat")
    ap.add_argument("--only", help="comma-separated scenario names")
    ap.add_argument("--contenders", help="comma-separated contenders to run (default: every one the scenario has)")
    ap.add_argument("--repeats", type=int, help="repeats per contender (default 3, quick 1)")
    ap.add_argument("--out", default=os.path.join(ROOT, "results", "wan"), help="output folder")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="build folder")
    ap.add_argument("--no-plots", action="store_true", help="skip the PNG plots (no matplotlib needed)")
    ap.add_argument("--keep", action="store_true",
                    help="keep every run's files (sobas logs, pings, emulator series) in the temporary folder")
    ap.add_argument("--pool", action="store_true",
                    help="with --merge: a contender this run repeats keeps its earlier runs too, its row taken "
                         "over all of them (for runs of the same code)")
    ap.add_argument("--merge", action="store_true",
                    help="keep the scenarios of OUT/results.json that this run does not repeat, or repeats "
                         "with no valid run, and in a repeated one the contenders this run leaves out")
    ap.add_argument("--report", action="store_true",
                    help="no runs: re-render results.md and the plots from OUT/results.json")
    args = ap.parse_args()
    if args.report:
        with open(os.path.join(args.out, "results.json")) as f:
            results = json.load(f)
        write_reports(results, args.out, not args.no_plots)
        return
    if os.geteuid() != 0:
        sys.exit("wanbench: must run as root (namespaces)")
    known = set(CONTENDERS) | set(SEEDS) | set(CONTROLS) | set(SWEEP)
    bad = [c for c in (args.contenders or "").split(",") if c and c not in known]
    if bad:
        sys.exit(f"wanbench: unknown contender(s) {', '.join(bad)}; known: {', '.join(sorted(known))}")
    if args.repeats is not None and args.repeats < 1:
        sys.exit("wanbench: --repeats must be >= 1")
    if args.pool and not args.merge:
        sys.exit("wanbench: --pool needs --merge")
    # Ctrl-C and SIGTERM unwind through the finally blocks: no namespace or process left behind.
    signal.signal(signal.SIGTERM, interrupted)
    results = Bench(args).run()
    invalid = sum(1 for s in results["scenarios"] for r in s["runs"] if not r["valid"])
    total = sum(len(s["runs"]) for s in results["scenarios"])
    os.makedirs(args.out, exist_ok=True)
    merge_from = os.path.join(args.out, "results.json")
    if args.merge and os.path.exists(merge_from):
        with open(merge_from) as f:
            merge_results(results, json.load(f), args.pool)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    write_reports(results, args.out, not args.no_plots)
    print(f"wanbench: {total - invalid} valid, {invalid} invalid runs")


if __name__ == "__main__":
    main()
