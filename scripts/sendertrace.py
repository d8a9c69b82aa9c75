"""sendertrace.py — how each run's sending TCP left slow start and how many loss episodes it had, from the kernel's tcp tracepoints."""
# Why: a run's goodput on a fast path is decided early and by the sender, where the receiver's shim
# cannot look. Measured on gig-tcp (docs/engine.md): a sender whose slow start ends at a tenth of the
# path's window (HyStart reading a host hiccup as a queue) or whose first loss turns into two recovery
# episodes in a row (ssthresh at 0.49 of the peak) runs at ~0.87x for the rest of a 4 s transfer, and
# plain CUBIC draws both too. These two numbers per run tell that lottery from what sobas did.
import os
import re
import subprocess

TRACEFS = "/sys/kernel/tracing"
INSTANCE = "wanbench"  # its own ring buffer: nothing else's tracing is touched, rmdir undoes it all
INFINITE_SSTHRESH = 0x7FFFFFFF
CA_RECOVERY, CA_LOSS = 3, 4
# tcp_probe fires on every ACK the sender takes (~80 000 a second at 1 Gb/s); only those whose snd_una
# has bits 10-14 clear are kept, about one per 32 KB acknowledged: a few hundred per slow-start round at
# 1 Gb/s, still one or more per round from ~50 packets up. Polling `ss` instead either loads the host
# (every ~10 ms: 12 of 16 gig-tcp runs invalid for the emulator's lateness) or misses the round slow
# start ends in (every 50 ms: 2.5 round trips at 20 ms), and neither sees the recoveries' order.
SAMPLE_MASK = 0x7C00
BUFFER_KB = 32768  # per CPU: ~160 000 samples each, 40 s at 1 Gb/s on one CPU

SEEN_S = 1.0  # a sample every ~32 KB acknowledged comes well within this down to ~1 Mb/s
# %pISpc prints a v4-mapped address of an AF_INET6 socket as [::ffff:a.b.c.d]:port
PROBE = re.compile(r"\s(?P<t>\d+\.\d+): tcp_probe: .*?src=\[?(?:::ffff:)?(?P<ip>[\d.]+)\]?:(?P<port>\d+) "
                   r".*?ssthresh=(?P<ssthresh>\d+)")
STATE = re.compile(r"\s(?P<t>\d+\.\d+): tcp_cong_state_set: .*?sport=(?P<port>\d+) .*?saddr=(?P<ip>[\d.]+) "
                   r".*cong_state=(?P<state>\d+)")


class SenderTrace:
    """Traces the sending sockets of SENDER_IP: clients of TO_PORT (iperf3 -c sends) and servers on
    FROM_PORT (an HTTP server sends). The receiving ends stay out in the kernel: a receiver's snd_una
    never moves, so the sampling would keep all or none of its ~80 000 events a second."""

    def __init__(self, to_port, from_port, sender_ip):
        self.match = f"dport == {to_port} || sport == {from_port}"
        self.sender_ip = sender_ip
        self.dir = os.path.join(TRACEFS, "instances", INSTANCE)

    @classmethod
    def open(cls, to_port, from_port, sender_ip):
        """A tracer, or None with the reason printed once: the benchmark runs without these columns."""
        t = cls(to_port, from_port, sender_ip)
        try:
            if not os.path.isdir(os.path.join(TRACEFS, "instances")):
                subprocess.run(["mount", "-t", "tracefs", "nodev", TRACEFS], capture_output=True)
            if os.path.isdir(t.dir):
                os.rmdir(t.dir)  # a crashed earlier run's
            os.mkdir(t.dir)
            t.write("buffer_size_kb", str(BUFFER_KB))
            t.write("options/overwrite", "0")  # full, it drops the newest: slow start is what counts
            t.write("trace_clock", "mono")
            t.write("events/tcp/tcp_probe/filter", f"({t.match}) && !(snd_una & {SAMPLE_MASK})")
            t.write("events/tcp/tcp_cong_state_set/filter", t.match)
            return t
        except OSError as e:
            print(f"wanbench: no sender trace ({e}); the slow-start and loss-episode columns stay empty")
            t.close()
            return None

    def write(self, name, value):
        with open(os.path.join(self.dir, name), "w") as f:
            f.write(value)

    def start(self):
        self.write("trace", "")
        for ev in ("tcp_probe", "tcp_cong_state_set"):
            self.write(f"events/tcp/{ev}/enable", "1")

    def stop(self, until):
        """What the run's sender did up to UNTIL (summary()), and tracing off until the next start()."""
        for ev in ("tcp_probe", "tcp_cong_state_set"):
            self.write(f"events/tcp/{ev}/enable", "0")
        with open(os.path.join(self.dir, "trace")) as f:
            return summary(f, self.sender_ip, until)

    def close(self):
        try:
            os.rmdir(self.dir)  # tracefs removes an instance whole, or not at all while it is busy
        except OSError:
            pass


def summary(lines, sender_ip, until):
    """From trace LINES: the connection of SENDER_IP's with the most samples (the transfer, not iperf3's
    control connection), how its slow start ended (the first sample after it, ss_exit_t on
    CLOCK_MONOTONIC, so up to one sample late) and its loss episodes. tcp_probe sees established sockets
    only: a server that wrote the whole file into its send buffer and closed is in FIN_WAIT1 while its
    data goes, and a slow start whose end is not seen before UNTIL - SEEN_S is "unseen", not "none"."""
    samples, states = {}, {}
    for line in lines:
        if (m := PROBE.search(line)) and m["ip"] == sender_ip:
            samples.setdefault(m["port"], []).append((float(m["t"]), int(m["ssthresh"])))
        elif (m := STATE.search(line)) and m["ip"] == sender_ip:
            states.setdefault(m["port"], []).append((float(m["t"]), int(m["state"])))
    if not samples and not states:
        return dict(ss_exit_pkts=None, ss_exit_t=None, ss_exit_by=None, loss_episodes=None, timeouts=None)
    key = max({*samples, *states}, key=lambda k: (len(samples.get(k, [])), len(states.get(k, []))))
    s, st = samples.get(key, []), states.get(key, [])
    episodes, timeouts, prev = [], 0, 0
    for t, state in st:
        if state in (CA_RECOVERY, CA_LOSS) and prev not in (CA_RECOVERY, CA_LOSS):
            episodes.append(t)
        # A retransmission timeout (Loss state), within an episode or opening one: the recovery found no
        # ACK to go on, as when a lost retransmission has nothing sent after it to reveal it.
        timeouts += state == CA_LOSS and prev != CA_LOSS
        prev = state
    ended = next((x for x in s if x[1] != INFINITE_SSTHRESH), None)
    if ended is None:
        # Sampled to the end and never out: a receiver's window held it, or the transfer was short.
        seen = bool(s) and s[-1][0] >= until - SEEN_S
        return dict(ss_exit_pkts=None, ss_exit_t=None, ss_exit_by="none" if seen else "unseen",
                    loss_episodes=len(episodes), timeouts=timeouts)
    # A loss sets ssthresh to 0.7 of the cwnd it met; HyStart (delay or ACK train) to the cwnd itself.
    by_loss = bool(episodes) and episodes[0] <= ended[0]
    return dict(ss_exit_pkts=ended[1], ss_exit_t=ended[0], ss_exit_by="loss" if by_loss else "hystart",
                loss_episodes=len(episodes), timeouts=timeouts)


def describe(by, pkts, ms, episodes, timeouts=None):
    """How a run's slow start ended (ssthresh in packets, by HyStart or a loss, ms after the transfer
    began), its loss episodes and how many retransmission timeouts they met (None: traced before they
    were counted), in a few words; "" for a run with no trace."""
    if episodes is None:
        return ""
    end = {"none": "never left slow start", "unseen": "slow start's end unseen (the sender had closed)"}.get(by) \
        or f"slow start ended at {pkts} pkts by {by} {ms:.0f} ms in"
    rto = f" ({timeouts} timeout{'' if timeouts == 1 else 's'})" if timeouts else ""
    return f"{end}, {episodes} loss episode{'' if episodes == 1 else 's'}{rto}"
