# netns.bash — two test hosts in network namespaces joined by a veth pair (sourced by tests and scripts).
#
#   netns_up NAME      creates NAME-srv (10.77.0.1, fd77::1) and NAME-cli (10.77.0.2, fd77::2)
#   netns_down NAME    kills every process left in them and deletes them; safe to call twice
#   netns_sweep NAME   deletes what a run of NAME's prefix (NAME less its -PID) left when killed before
#                      its teardown, where that PID is gone; netns_up calls it
#   in_srv/in_cli CMD  runs CMD in that namespace
#
# Names are per run (callers pass e.g. sobas-$$) so parallel runs and leftovers never collide.

NETNS_SRV_IP=10.77.0.1
NETNS_CLI_IP=10.77.0.2
NETNS_SRV_IP6=fd77::1
NETNS_CLI_IP6=fd77::2

netns_up() {
  local name=$1
  netns_sweep "$name"
  netns_down "$name"
  ip netns add "$name-srv"
  ip netns add "$name-cli"
  ip link add "${name:0:8}-s" type veth peer name "${name:0:8}-c"
  ip link set "${name:0:8}-s" netns "$name-srv"
  ip link set "${name:0:8}-c" netns "$name-cli"
  local side dev ip ip6
  for side in srv cli; do
    if [ $side = srv ]; then dev="${name:0:8}-s" ip=$NETNS_SRV_IP ip6=$NETNS_SRV_IP6
    else dev="${name:0:8}-c" ip=$NETNS_CLI_IP ip6=$NETNS_CLI_IP6; fi
    ip -n "$name-$side" link set lo up
    ip -n "$name-$side" addr add "$ip/24" dev "$dev"
    ip -n "$name-$side" addr add "$ip6/64" dev "$dev" nodad
    ip -n "$name-$side" link set "$dev" up
  done
}

netns_down() {
  local name=$1 ns pid
  for ns in "$name-srv" "$name-cli"; do
    ip netns list 2>/dev/null | grep -qw "^$ns" || continue
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
    # What a sobasd there left: its steered-flows table, named by the namespace (sobas/steered.h).
    rm -f "/dev/shm/sobasd.steered.$(stat -L -c %i "/run/netns/$ns" 2>/dev/null)"
    ip netns delete "$ns" 2>/dev/null
  done
  return 0
}

# A run killed outright (SIGKILL, a CI time limit, a session's end) never reaches teardown_file: its
# namespaces outlive it. Found on 2026-12-05: sobasd-e2e-11654-srv and -cli, from a CI run killed
# during the end-to-end tests at 09:24, still there at 12:20.
netns_sweep() {
  local name=$1 ns run
  [[ $name =~ ^(.+)-[0-9]+$ ]] || return 0
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${BASH_REMATCH[1]}-[0-9]+-srv$"); do
    run=${ns%-srv}
    kill -0 "${run##*-}" 2>/dev/null || netns_down "$run"
  done
  return 0
}

in_srv() { ip netns exec "$NETNS_NAME-srv" "$@"; }
in_cli() { ip netns exec "$NETNS_NAME-cli" "$@"; }

# Waits until a TCP port listens in the server namespace (servers start asynchronously).
wait_port() {
  local port=$1 i
  for i in $(seq 1 100); do
    in_srv ss -Hltn "sport = :$port" | grep -q LISTEN && return 0
    sleep 0.05
  done
  echo "port $port never listened" >&2
  return 1
}
