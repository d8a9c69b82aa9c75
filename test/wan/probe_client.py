#!/usr/bin/env python3
"""probe_client.py — an independent side-probe client (the wire format from include/sobas/probe.h, written
again in Python) that tries sobasd's defences from a receiver host and prints what came back, as JSON."""
import json
import os
import random
import socket
import struct
import sys
import time

PROBE, ECHO, TRAIN_REQ, TRAIN = 1, 2, 3, 4
# How long a datagram that must go unanswered is given: sobasd answers within a round trip (40 ms on the
# emulated WAN) and the host stalls it for up to ~40 ms, so a reply later than this would be no reply.
UNANSWERED_S = 0.4


def wire_addr(ip):
    """(family, 16 bytes): IPv4 (also ::ffff:a.b.c.d) in the first 4 bytes, else IPv6."""
    if ip.startswith("::ffff:") and "." in ip:
        ip = ip[7:]
    if ":" in ip:
        return 6, socket.inet_pton(socket.AF_INET6, ip)
    return 4, socket.inet_aton(ip) + bytes(12)


def encode(typ, flow, nonce, seq, ts=0, rsp=0, trains=0, train_len=0, size=0, version=1):
    """One datagram: the 64-byte header of the documented layout, zero padding to its length."""
    rcv_ip, rcv_port, snd_ip, snd_port = flow
    (family, rcv), (_, snd) = wire_addr(rcv_ip), wire_addr(snd_ip)
    length = 100 if typ != TRAIN else size
    middle = struct.pack(">Q", ts) if typ in (PROBE, ECHO) else struct.pack(">BBHHH", trains, 0, train_len, size, 0)
    head = struct.pack(">2sBBBBHHH16s16sII", b"SB", version, typ, family, 0, length, rcv_port, snd_port,
                       rcv, snd, nonce, seq)
    return (head + middle + struct.pack(">I", rsp)).ljust(length, b"\0")


def collect(sock, seconds, want=None, grace=0.2):
    """Every datagram that arrives within `seconds`: (type, length, rsp_seq). With `want`, the wait ends
    `grace` seconds after that many have come: long enough for one more to show, which a test then
    counts as an extra, without waiting out a deadline sized for a slow host."""
    got, end = [], time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        sock.settimeout(left)
        try:
            data = sock.recv(4096)
        except socket.timeout:
            break
        typ = data[3] if len(data) > 3 else 0
        rsp = struct.unpack(">I", data[60:64])[0] if len(data) >= 64 else 0
        got.append((typ, len(data), rsp))
        if want is not None and len(got) == want:
            end = min(end, time.monotonic() + grace)
    return got


def host_port(text):
    """'10.0.0.1:80' or '[fd77::1]:80'."""
    host, port = text.rsplit(":", 1)
    return host.strip("[]"), int(port)


def main():
    server = host_port(sys.argv[1])
    tcp_host, tcp_port = host_port(sys.argv[2])
    # A live connection to the data sender: the one flow sobasd may answer about.
    tcp = socket.create_connection((tcp_host, tcp_port))
    my_ip, my_port = tcp.getsockname()[:2]
    live = (my_ip, my_port, tcp_host, tcp_port)
    udp = socket.socket(tcp.family, socket.SOCK_DGRAM)
    udp.bind((my_ip, 0))
    r = {}

    def probes(flow, n, nonce=7):
        for i in range(n):
            udp.sendto(encode(PROBE, flow, nonce, i, ts=time.monotonic_ns()), server)

    probes(live, 5)
    echoes = collect(udp, 1.0, want=5)
    r["control_echoes"] = sum(1 for t, n, _ in echoes if t == ECHO and n == 100)
    r["control_rsp_seqs"] = [rsp for _, _, rsp in echoes]
    udp.sendto(encode(TRAIN_REQ, live, 7, 1, trains=5, train_len=32, size=1400), server)
    pkts = collect(udp, 1.5, want=5 * 32)
    r["train_packets"] = sum(1 for t, n, _ in pkts if t == TRAIN)
    r["train_max_len"] = max([n for _, n, _ in pkts], default=0)
    udp.sendto(encode(TRAIN_REQ, live, 7, 2, trains=5, train_len=32, size=1400), server)
    r["train_again_packets"] = len(collect(udp, UNANSWERED_S))

    dead = (my_ip, my_port ^ 0x4000 or 1, tcp_host, tcp_port)  # no such connection
    udp.sendto(encode(TRAIN_REQ, dead, 9, 1, trains=5, train_len=32, size=1400), server)
    r["dead_tuple_train_replies"] = len(collect(udp, UNANSWERED_S))
    other = "fd77::99" if ":" in my_ip else "10.80.2.99"
    spoofed = (other, my_port, tcp_host, tcp_port)  # claims another host's connection
    udp.sendto(encode(TRAIN_REQ, spoofed, 9, 1, trains=5, train_len=32, size=1400), server)
    probes(spoofed, 5)
    r["spoofed_source_replies"] = len(collect(udp, UNANSWERED_S))
    udp.sendto(encode(ECHO, live, 7, 3, ts=1, rsp=5), server)  # an echo aimed at sobasd: never answered
    udp.sendto(encode(TRAIN, live, 7, 3, trains=0, train_len=0, size=1000), server)
    r["reflected_replies"] = len(collect(udp, UNANSWERED_S))

    # A flood of probes about connections that do not exist, from many made-up ports.
    for i in range(3000):
        udp.sendto(encode(PROBE, (my_ip, random.randint(1, 65535), tcp_host, random.randint(1, 65535)), 11, i), server)
    r["unverified_flood_replies"] = len(collect(udp, 1.0))

    # Random bytes, and valid datagrams with one byte flipped.
    rng = random.Random(5)
    valid = encode(PROBE, live, 7, 99, ts=1)
    for i in range(5000):
        if i % 2:
            data = bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 1500)))
        else:
            b = bytearray(valid)
            b[rng.randrange(100)] ^= 1 << rng.randrange(8)
            data = bytes(b)
        udp.sendto(data, server)
    fuzz_replies = collect(udp, 1.0)
    r["fuzz_replies_not_echo_of_live"] = sum(1 for t, n, _ in fuzz_replies if t != ECHO or n != 100)
    time.sleep(0.5)
    probes(live, 5, nonce=8)
    r["after_fuzz_echoes"] = sum(1 for t, _, _ in collect(udp, 1.0, want=5) if t == ECHO)
    tcp.close()
    print(json.dumps(r))


if __name__ == "__main__":
    main()
