#!/usr/bin/env bats
# sobasd.bats — sobasd's verification over IPv6 and over IPv4 to a dual-stack server, across two namespaces (no emulated WAN needed).

bats_require_minimum_version 1.5.0  # `run !`

load helpers

setup_file() {
  require_root_and_build
  [ -x "$BUILD/bin/sobasd" ] || { echo "no sobasd: build first" >&2; return 1; }
  export NETNS_NAME=sobasd-e2e-$$
  netns_up "$NETNS_NAME"
  # A dual-stack listener: IPv4 clients arrive on an IPv6 socket as ::ffff:a.b.c.d.
  in_srv python3 -m http.server 8080 --bind :: -d "$BATS_FILE_TMPDIR" >/dev/null 2>&1 3>&- &
  in_srv "$BUILD/bin/sobasd" 2>"$BATS_FILE_TMPDIR/sobasd.err" 3>&- &
  for _ in $(seq 100); do
    in_srv ss -Hlnu 'sport = :9521' | grep -q 9521 && in_srv ss -Hltn 'sport = :8080' | grep -q 8080 && return 0
    sleep 0.05
  done
  echo "servers did not start" >&2
  return 1
}

teardown_file() {
  netns_down "$NETNS_NAME"
}

# verdict JSON: the Python client's results, all refusals zero and the live flow answered.
check() {
  python3 - "$1" <<'PY'
import json, sys
r = json.loads(sys.argv[1].splitlines()[-1])
assert r["control_echoes"] == 5 and r["train_packets"] == 160, r
assert r["after_fuzz_echoes"] == 5, r
for k in ("train_again_packets", "dead_tuple_train_replies", "spoofed_source_replies", "reflected_replies",
          "unverified_flood_replies", "fuzz_replies_not_echo_of_live"):
    assert r[k] == 0, (k, r)
PY
}

@test "sobasd verifies and answers an IPv6 peer, and only it" {
  run in_cli python3 "$REPO/test/wan/probe_client.py" "[$NETNS_SRV_IP6]:9521" "[$NETNS_SRV_IP6]:8080"
  echo "$output"
  [ "$status" -eq 0 ]
  check "$output"
}

@test "sobasd verifies an IPv4 peer of a dual-stack (IPv6 socket) server" {
  run in_cli python3 "$REPO/test/wan/probe_client.py" "$NETNS_SRV_IP:9521" "$NETNS_SRV_IP:8080"
  echo "$output"
  [ "$status" -eq 0 ]
  check "$output"
}

# A preloaded sender tells its host's sobasd that it steers a flow (LEAD, over the abstract unix socket
# @sobasd.lead); sobasd's echoes for that flow then carry SOBAS_PROBE_F_SENDER_LEADS and the receiver's
# sobas stands down. So a LEAD counts only from the TCP socket's owner (or root). The sender's first LEAD
# comes before the receiver's first probe: it waits for that probe, whose lookup checks its owner, and
# the flow's first train request then gets no trains (its second does: a receiver under a policy of its
# own asks again). Here over loopback in the server's namespace: the server and its connections are
# root's.
@test "sobasd takes a LEAD only from the flow's owner or root, before or after the first probe, flags that flow's echoes and withholds its first trains" {
  run in_srv python3 - "$REPO/test/wan" <<'PY'
import socket, subprocess, sys, time
sys.path.insert(0, sys.argv[1])
from probe_client import encode, collect, PROBE, ECHO, TRAIN_REQ, TRAIN
LEAD = 5
server = ("127.0.0.1", 9521)
udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
udp.bind(("127.0.0.1", 0))
udp.settimeout(1.0)
def flow():
    c = socket.create_connection(("127.0.0.1", 8080))
    return c, ("127.0.0.1", c.getsockname()[1], "127.0.0.1", 8080)
def echo_flags(f, seq):
    udp.sendto(encode(PROBE, f, 7, seq, ts=time.monotonic_ns()), server)
    data = udp.recv(256)
    assert data[3] == ECHO and len(data) == 100, data[:8]
    return data[5]
def lead(f, user):
    # A process of its own, so the kernel's credentials on the datagram are that user's.
    code = ("import socket, sys; s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); "
            "s.sendto(bytes.fromhex(sys.argv[1]), b'\\0sobasd.lead')")
    who = [] if user == "root" else ["setpriv", "--reuid", user, "--regid", "nogroup", "--clear-groups"]
    subprocess.run(who + ["python3", "-c", code, encode(LEAD, f, 0, 0).hex()], check=True)
    time.sleep(0.1)
def train_packets(f, req):
    udp.sendto(encode(TRAIN_REQ, f, 7, req, trains=2, train_len=4, size=200), server)
    return sum(1 for typ, _, _ in collect(udp, 0.5) if typ == TRAIN)
(c1, f1), (c2, f2), (c3, f3), (c4, f4) = flow(), flow(), flow(), flow()
seen = {"first probe": echo_flags(f1, 1)}
lead(f1, "nobody")
seen["after nobody's LEAD"] = echo_flags(f1, 2)
lead(f1, "root")
seen["after root's LEAD"] = echo_flags(f1, 3)
lead(f2, "root")
lead(f3, "nobody")
seen["root's LEAD before the first probe"] = echo_flags(f2, 1)
seen["nobody's LEAD before the first probe"] = echo_flags(f3, 1)
seen["a flow never led"] = echo_flags(f4, 1)
seen["led flow's first trains"] = train_packets(f2, 11)
seen["led flow's second trains"] = train_packets(f2, 12)
seen["unled flow's first trains"] = train_packets(f3, 13)
print(seen)
assert seen == {"first probe": 0, "after nobody's LEAD": 0, "after root's LEAD": 1,
                "root's LEAD before the first probe": 1, "nobody's LEAD before the first probe": 0,
                "a flow never led": 0, "led flow's first trains": 0, "led flow's second trains": 8,
                "unled flow's first trains": 8}, seen
PY
  echo "$output"
  [ "$status" -eq 0 ]
}

# Any local user can send LEADs: they must not spend the lookups that verify remote receivers' probes. A
# LEAD is checked against the owner the flow's verifying lookup found, and costs none. In a namespace of
# the test's own, a sobasd with one lookup a second: the probe takes that second's lookup, and root's LEAD
# right after it still flags the flow's echoes (one that drew on the same budget was refused).
@test "sobasd: a LEAD spends no lookup of the budget that verifies probes" {
  run unshare -n python3 - "$REPO/test/wan" "$BUILD/bin/sobasd" <<'PY'
import socket, subprocess, sys, time
sys.path.insert(0, sys.argv[1])
from probe_client import encode, PROBE, ECHO
subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
listener = socket.create_server(("127.0.0.1", 8099))
sobasd = subprocess.Popen([sys.argv[2], "--user", "root", "--listen", "127.0.0.1", "--port", "9541",
                           "--verify-rate", "1"], stderr=subprocess.DEVNULL)
try:
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    udp.settimeout(1.0)
    c = socket.create_connection(("127.0.0.1", 8099))
    f = ("127.0.0.1", c.getsockname()[1], "127.0.0.1", 8099)
    def echo_flags(seq):
        udp.sendto(encode(PROBE, f, 7, seq, ts=time.monotonic_ns()), ("127.0.0.1", 9541))
        while True:  # a late echo of an earlier try is not this one
            data = udp.recv(256)
            if data[3] == ECHO and int.from_bytes(data[48:52], "big") == seq:
                return data[5]
    for _ in range(100):  # until sobasd answers: its first echo spends the verify budget's token
        try:
            first = echo_flags(1)
            break
        except (socket.timeout, ConnectionRefusedError):
            time.sleep(0.05)
    lead = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    lead.sendto(encode(5, f, 0, 0), b"\0sobasd.lead")
    time.sleep(0.1)
    after = echo_flags(2)
    print(f"echo flags: {first} before root's LEAD, {after} after")
    assert (first, after) == (0, 1)
finally:
    sobasd.terminate()
    sobasd.wait()
PY
  echo "$output"
  [ "$status" -eq 0 ]
}

# A hang-up is no reason to stop: SIGHUP writes the counters, as SIGUSR1 does, and sobasd goes on;
# SIGTERM ends it with status 0 and the counters written once more.
@test "sobasd: SIGHUP writes its counters and it keeps answering; SIGTERM ends it cleanly" {
  local stats=$BATS_TEST_TMPDIR/stats.json
  ip netns exec "$NETNS_NAME-srv" "$BUILD/bin/sobasd" --port 9531 --user root --stats "$stats" 2>/dev/null 3>&- &  # its pid, not a subshell's
  local pid=$!
  for _ in $(seq 100); do in_srv ss -Hlnu 'sport = :9531' | grep -q 9531 && break; sleep 0.05; done
  kill -HUP "$pid"
  for _ in $(seq 50); do [ -s "$stats" ] && break; sleep 0.05; done
  [ -s "$stats" ]
  python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$stats"
  kill -0 "$pid"
  in_srv ss -Hlnu 'sport = :9531' | grep -q 9531
  rm -f "$stats"
  kill -TERM "$pid"
  wait "$pid"
  [ -s "$stats" ]
}

# Under systemd, stderr is a journal stream named by JOURNAL_STREAM (device:inode): each line then
# carries its syslog priority for journald; on a terminal or a file of its own, none.
@test "sobasd: log lines carry syslog priorities when stderr is the journal stream, and only then" {
  local err=$BATS_TEST_TMPDIR/err
  : > "$err"
  JOURNAL_STREAM=$(stat -c %d:%i "$err") timeout -s INT 1 ip netns exec "$NETNS_NAME-srv" \
    "$BUILD/bin/sobasd" --port 9532 --user root 2>>"$err" 3>&- || true
  JOURNAL_STREAM=$(stat -c %d:%i "$err") "$BUILD/bin/sobasd" --port 0 2>>"$err" || true
  JOURNAL_STREAM=1:1 "$BUILD/bin/sobasd" --port 0 2>>"$err" || true  # another stream: not ours
  cat "$err"
  grep -qx '<6>sobasd: answering on UDP port 9532 (2 sockets)' "$err"
  grep -q '^<6>sobasd: counters {"rx":0,' "$err"
  grep -qx "<3>sobasd: --port needs a number from 1 to 65535, got '0'" "$err"
  grep -qx "sobasd: --port needs a number from 1 to 65535, got '0'" "$err"
}

# A sender maps sobasd's steered-flows table, and a mapped file that shrinks kills its reader with
# SIGBUS: the shim reads only a table owned by root or by its own user, which no other user can shrink.
# The same valid table, naming the flow, planted in a namespace of the test's own: owned by nobody, the
# preloaded server ignores it; owned by root, it leaves the flow at once (why=peer-probe).
@test "a preloaded sender trusts a steered-flows table only from root or its own user" {
  truncate -s 40M "$BATS_TEST_TMPDIR/file"
  local owner
  for owner in nobody root; do
    unshare -n bash -s "$owner" "$BATS_TEST_TMPDIR" "$PRELOAD" <<'SH'
set -eu
owner=$1 dir=$2 preload=$3
ip link set lo up
table=/dev/shm/sobasd.steered.$(stat -L -c %i /proc/self/ns/net)
trap 'rm -f "$table"' EXIT
# Every slot names the flow curl will open (its port fixed), seen an hour ahead: fresh whatever the hash.
python3 - "$table" <<'PY'
import socket, struct, sys, time
seen = time.clock_gettime_ns(time.CLOCK_MONOTONIC) + 3600 * 10**9
addr = socket.inet_aton("127.0.0.1").ljust(16, b"\0")
slot = struct.pack("<IB3xHH16s16s4xq", 0, 4, 8097, 40977, addr, addr, seen)
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IHHII", 0x53425354, 1, len(slot), 4096, 0) + slot * 4096)
PY
chmod 0644 "$table"
chown "$owner" "$table"
LD_PRELOAD=$preload SOBAS_TRACK_LOOPBACK=1 SOBAS_LOG=$dir/$owner.log python3 -m http.server 8097 --bind 127.0.0.1 -d "$dir" >/dev/null 2>&1 3>&- &
srv=$!
for _ in $(seq 100); do ss -Hltn 'sport = :8097' | grep -q LISTEN && break; sleep 0.05; done
# 40 MB at 20 MB/s: two seconds of sender windows.
curl -sS --local-port 40977 --limit-rate 20M -o /dev/null http://127.0.0.1:8097/file
kill "$srv"
wait "$srv" 2>/dev/null || true
SH
  done
  grep -E ' ev=(yield|window) .*role=sender' "$BATS_TEST_TMPDIR/root.log" | head -3 | cut -c1-200
  # Measured as a sender (its windows are where the table is read), never leaving on nobody's table.
  echo "nobody's table: $(grep -c ' ev=window .*role=sender' "$BATS_TEST_TMPDIR/nobody.log") sender windows"
  grep -q ' ev=window .*role=sender' "$BATS_TEST_TMPDIR/nobody.log"
  run ! grep -q 'why=peer-probe' "$BATS_TEST_TMPDIR/nobody.log"
  grep -q ' ev=yield .*why=peer-probe' "$BATS_TEST_TMPDIR/root.log"
}
