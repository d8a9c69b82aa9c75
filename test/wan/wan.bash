# wan.bash — helpers the WAN bats files share: the servers they start in a testbed's namespaces (sourced).

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
