# helpers.bash — shared setup for the end-to-end bats suites: build paths, the shim, log checks.

REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
BUILD=${SOBAS_BUILD_DIR:-$REPO/build}
SOBAS_LIB=$BUILD/shim/libsobas.so
SOBAS_CMD=$BUILD/bin/sobas
PROGS=$BUILD/test/programs
# An ASan build must have its runtime first in the preload list.
if [ -n "${SOBAS_ASAN_RUNTIME:-}" ]; then PRELOAD="$SOBAS_ASAN_RUNTIME:$SOBAS_LIB"; else PRELOAD=$SOBAS_LIB; fi

. "$REPO/test/lib/netns.bash"

# Preloaded programs write their decision ring here, not in the user's /dev/shm ring: the run's
# temporary directory goes with the run.
export SOBAS_RING=$BATS_RUN_TMPDIR/sobas.ring

# curl, wget and aria2c hang under the bare ASan runtime, without the shim (curl and wget in setlocale): their tests
# run in the plain suite only.
skip_under_asan() {
  [ -z "${SOBAS_ASAN_RUNTIME:-}" ] || skip "$1 hangs under the ASan runtime alone (no shim involved)"
}

# The sobas command; under ASan its runtime must already lead LD_PRELOAD, which sobas appends to.
sobas_cmd() {
  if [ -n "${SOBAS_ASAN_RUNTIME:-}" ]; then LD_PRELOAD="$SOBAS_ASAN_RUNTIME${LD_PRELOAD:+:$LD_PRELOAD}" "$SOBAS_CMD" "$@"
  else "$SOBAS_CMD" "$@"; fi
}

# serve_loopback DIR: python's HTTP server for DIR on 127.0.0.1 at a random port; sets HTTP_PORT and
# HTTP_PID (the caller's teardown kills it) and returns once it listens. Ports come from below the
# kernel's ephemeral range (32768-60999 here), where another test's client cannot already hold them;
# a server that dies at bind (a port another test's server listens on) or is not listening after
# 10 s is started again on another port.
serve_loopback() {
  local try
  for try in 1 2 3 4 5; do
    HTTP_PORT=$((10000 + RANDOM % 20000))
    python3 -m http.server $HTTP_PORT --bind 127.0.0.1 -d "$1" >/dev/null 2>&1 3>&- &
    HTTP_PID=$!
    for _ in $(seq 1 200); do
      ss -Hltnp "sport = :$HTTP_PORT" | grep -q "pid=$HTTP_PID," && return 0
      kill -0 $HTTP_PID 2>/dev/null || break
      sleep 0.05
    done
    kill $HTTP_PID 2>/dev/null
  done
  return 1
}

# An HTTP GET whose body is read and dropped, by Python's client (neutral to sanitizers, unlike
# curl/wget): usage python3 -c "$HTTP_FETCH_PY" URL
HTTP_FETCH_PY='import sys, urllib.request; urllib.request.urlopen(sys.argv[1]).read()'

require_root_and_build() {
  [ "$(id -u)" = 0 ] || { echo "end-to-end tests need root (network namespaces)" >&2; return 1; }
  [ -f "$SOBAS_LIB" ] || { echo "no $SOBAS_LIB: build first" >&2; return 1; }
}

# Runs a command line in the client namespace, plain or preloaded, capturing stdout and exit code.
# Usage: run_cli plain|shim LOGFILE CMDLINE  → sets $out and $rc
run_cli() {
  local mode=$1 log=$2 cmd=$3
  if [ "$mode" = shim ]; then
    out=$(in_cli env LD_PRELOAD="$PRELOAD" SOBAS_LOG="$log" bash -c "$cmd" 2>"$log.stderr")
  else
    out=$(in_cli bash -c "$cmd" 2>/dev/null)
  fi
  rc=$?
}

# Runs CMDLINE in the client namespace with and without the shim; both must exit alike and print
# the same stdout. Leaves the shim run's log in $BATS_TEST_TMPDIR/sobas.log.
same_with_and_without_shim() {
  local cmd=$1 log=$BATS_TEST_TMPDIR/sobas.log
  run_cli plain /dev/null "$cmd"; local out_plain=$out rc_plain=$rc
  run_cli shim "$log" "$cmd"
  if [ "$rc" != "$rc_plain" ] || [ "$out" != "$out_plain" ]; then
    echo "plain: rc=$rc_plain out=[$out_plain]" >&2
    echo "shim:  rc=$rc out=[$out]" >&2
    cat "$log.stderr" >&2
    return 1
  fi
}

# How many close records in LOG contain MATCH (e.g. "peer=10.77.0.1:80") and carry FIELD within 1%
# above EXPECTED bytes.
count_whole_flows() {
  local log=$1 match=$2 field=$3 expected=$4
  awk -v m="$match" -v f="$field=" -v e="$expected" '
    /ev=close/ && index($0, m) {
      for (i = 1; i <= NF; i++) if (index($i, f) == 1) { v = substr($i, length(f) + 1) + 0; if (v >= e && v <= e * 1.01) n++ }
    }
    END { print n + 0 }' "$log"
}

# Asserts that LOG has a flow to PEER whose FIELD is within 1% above EXPECTED bytes.
assert_flow_bytes() {
  local log=$1 peer=$2 field=$3 expected=$4
  if [ "$(count_whole_flows "$log" "peer=$peer" "$field" "$expected")" -lt 1 ]; then
    echo "no flow to $peer with $field within 1% above $expected" >&2
    grep "peer=$peer" "$log" | grep -v ev=window >&2 || cat "$log" >&2
    return 1
  fi
}

# Runs a transfer CMDLINE that writes DEST from SRC, with and without the shim: same exit code and
# output, DEST identical to SRC both times, and the shim's log shows a flow to PEER whose FIELD
# carried the whole file.
assert_transfer() {
  local cmd=$1 dest=$2 src=$3 peer=$4 field=$5
  same_with_and_without_shim "rm -f $dest; $cmd && sha256sum < $dest"
  [ "$out" = "$(sha256sum < "$src")" ]
  assert_flow_bytes "$BATS_TEST_TMPDIR/sobas.log" "$peer" "$field" "$(stat -c %s "$src")"
}

# A file of N MiB of random bytes in the server namespace's view (the filesystem is shared).
make_file() {
  local path=$1 mib=$2
  [ -f "$path" ] || head -c $((mib * 1024 * 1024)) /dev/urandom > "$path"
}
