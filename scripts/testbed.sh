#!/usr/bin/env bash
# testbed.sh — brings the emulated-WAN testbed up or down: sender, receiver and cross-traffic namespaces around a TUN path.
#
#   testbed.sh up     [--name P] [--buf-max BYTES] [--cc ALGO]
#   testbed.sh down   [--name P]
#   testbed.sh status [--name P]
#
#        P-xs (10.80.11.2)                                        P-xr (10.80.12.2)
#             | veth                                                   | veth
#        P-snd (10.80.1.1) -- wan0 ==[ wanemu: tight link ]== wan1 -- P-rcv (10.80.2.1)
#
# P-snd and P-rcv are the end hosts and also route their cross-traffic neighbours, so the main
# flow crosses no veth and every flow shares the one emulated tight link. The TUN devices are
# persistent and carry no traffic until test/wan/wanemu attaches to them:
#   wanemu --a P-snd:wan0 --b P-rcv:wan1 --rate 100M --delay 20ms --limit 500k
# Every TCP sysctl that matters to an experiment is set explicitly in each namespace; the host's
# default congestion control (BBR here) never leaks in. 'up' is idempotent (it tears down first).
set -euo pipefail

name=wan buf_max=33554432 cc=cubic
cmd=${1:-}
[ $# -gt 0 ] && shift
while [ $# -gt 0 ]; do
  case $1 in
    --name) name=$2; shift 2 ;;
    --buf-max) buf_max=$2; shift 2 ;;
    --cc) cc=$2; shift 2 ;;
    *) echo "testbed: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[[ $name =~ ^[a-z0-9]{1,8}$ ]] || { echo "testbed: --name must be 1-8 lowercase letters/digits" >&2; exit 2; }
[[ $buf_max =~ ^[0-9]+$ ]] && [ "$buf_max" -ge 65536 ] || { echo "testbed: --buf-max must be bytes >= 65536" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "testbed: must run as root" >&2; exit 1; }

state=/run/sobas-testbed/$name
hosts=(snd rcv xs xr)

# The host only lets a namespace default to algorithms in its allowed list; the testbed adds what it
# needs for its lifetime and the last testbed down puts the list back.
allow_cc() {
  local allowed want
  allowed=$(sysctl -n net.ipv4.tcp_allowed_congestion_control)
  [ -e /run/sobas-testbed/allowed_cc.orig ] || echo "$allowed" > /run/sobas-testbed/allowed_cc.orig
  for want in cubic bbr; do
    [[ " $allowed " == *" $want "* ]] || allowed="$allowed $want"
  done
  sysctl -qw net.ipv4.tcp_allowed_congestion_control="$allowed"
}

restore_cc() {
  local orig=/run/sobas-testbed/allowed_cc.orig
  [ -e "$orig" ] || return 0
  # Other testbeds still up keep the extended list.
  [ -z "$(find /run/sobas-testbed -mindepth 1 -maxdepth 1 -type d 2>/dev/null)" ] || return 0
  sysctl -qw net.ipv4.tcp_allowed_congestion_control="$(cat "$orig")"
  rm -f "$orig"
}

host_sysctls() {
  local ns=$1
  ip netns exec "$ns" sysctl -qw \
    net.ipv4.tcp_congestion_control="$cc" \
    net.ipv4.tcp_rmem="4096 131072 $buf_max" \
    net.ipv4.tcp_wmem="4096 16384 $buf_max" \
    net.ipv4.tcp_no_metrics_save=1 \
    net.ipv4.ip_forward=1 \
    net.ipv6.conf.all.disable_ipv6=1 \
    net.ipv6.conf.default.disable_ipv6=1
}

down() {
  local h ns pid
  for h in "${hosts[@]}"; do
    ns=$name-$h
    ip netns list 2>/dev/null | grep -qw "^$ns" || continue
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
    # A sobasd killed so, or one that dropped to --user (it cannot remove root's file), leaves its
    # steered-flows table, named by the namespace (sobas/steered.h).
    rm -f "/dev/shm/sobasd.steered.$(stat -L -c %i "/run/netns/$ns" 2>/dev/null)"
    ip netns delete "$ns" 2>/dev/null || true
  done
  # wanemu lives in the host namespace (it only holds the TUN fds): stop the one this testbed started.
  if [ -e "$state/wanemu.pid" ]; then kill "$(cat "$state/wanemu.pid")" 2>/dev/null || true; fi
  rm -rf "$state"
  restore_cc
}

up() {
  down
  mkdir -p "$state"
  allow_cc
  local h
  for h in "${hosts[@]}"; do
    ip netns add "$name-$h"
    ip -n "$name-$h" link set lo up
    host_sysctls "$name-$h"
  done
  # The path: one persistent TUN device per end host, large txqueuelen so the kernel never drops
  # before wanemu reads (those drops would be invisible to the emulated queue).
  local side dev addr
  for side in snd:wan0:10.80.1.1 rcv:wan1:10.80.2.1; do
    IFS=: read -r h dev addr <<< "$side"
    ip -n "$name-$h" tuntap add dev "$dev" mode tun
    ip -n "$name-$h" link set "$dev" mtu 1500 txqueuelen 10000 up
    ip -n "$name-$h" addr add "$addr/32" dev "$dev"
    ip -n "$name-$h" route add 10.80.0.0/16 dev "$dev"
  done
  # Cross-traffic hosts hang off the end hosts by veth.
  local pair end x net
  for pair in snd:xs:11 rcv:xr:12; do
    IFS=: read -r end x net <<< "$pair"
    ip link add "$name-$x" type veth peer name "$name-${x}p"
    ip link set "$name-$x" netns "$name-$end"
    ip link set "$name-${x}p" netns "$name-$x"
    ip -n "$name-$x" link set "$name-${x}p" name eth0
    ip -n "$name-$end" addr add "10.80.$net.1/24" dev "$name-$x"
    ip -n "$name-$end" link set "$name-$x" up
    ip -n "$name-$x" addr add "10.80.$net.2/24" dev eth0
    ip -n "$name-$x" link set eth0 up
    ip -n "$name-$x" route add default via "10.80.$net.1"
  done
  echo "testbed $name: up (cc $cc, tcp buffers max $buf_max)"
}

status() {
  local h
  for h in "${hosts[@]}"; do
    if ip netns list | grep -qw "^$name-$h"; then
      echo "$name-$h: $(ip netns exec "$name-$h" sysctl -n net.ipv4.tcp_congestion_control)," \
        "$(ip -n "$name-$h" -br addr | awk '$1 != "lo" {printf "%s %s %s; ", $1, $2, $3}')"
    else
      echo "$name-$h: absent"
    fi
  done
}

case $cmd in
  up) trap 'down' ERR; up ;;
  down) down; echo "testbed $name: down" ;;
  status) status ;;
  *) echo "usage: testbed.sh up|down|status [--name P] [--buf-max BYTES] [--cc ALGO]" >&2; exit 2 ;;
esac
