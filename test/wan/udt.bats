#!/usr/bin/env bats
# udt.bats — UDT (SABUL's successor, the seeds' rate-based contender) across the emulated WAN: every byte arrives, and what it costs the path.

load wan

setup_file() {
  REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
  BUILD=${SOBAS_BUILD_DIR:-$REPO/build}
  export REPO BUILD WAN=$BUILD/test/wan UDT=$BUILD/test/udt/udt_xfer
  [ "$(id -u)" = 0 ] || { echo "the testbed needs root" >&2; return 1; }
  [ -x "$WAN/wanemu" ] || { echo "build first" >&2; return 1; }
  [ -x "$UDT" ] || return 0 # each test skips, naming what is missing
  export TB=u$RANDOM
  "$REPO/scripts/testbed.sh" up --name "$TB" --cc cubic >/dev/null
  head -c $((24 * 1024 * 1024)) /dev/urandom > "$BATS_FILE_TMPDIR/file"
  ip netns exec "$TB-snd" "$UDT" serve --listen 10.80.1.1 --port 9000 "$BATS_FILE_TMPDIR" 2>/dev/null 3>&- &
  disown
}

teardown_file() {
  [ -z "${TB:-}" ] || "$REPO/scripts/testbed.sh" down --name "$TB" >/dev/null
}

@test "UDT moves a file byte-exact over 100 Mb/s, 40 ms, a 1-BDP DropTail buffer; its goodput and losses are reported" {
  [ -x "$UDT" ] || skip "no udt_xfer: libudt-dev was not found at configure time (scripts/install-deps.sh installs it)"
  "$WAN/wanemu" --a "$TB-snd:wan0" --b "$TB-rcv:wan1" --rate 100M --delay 20ms --fwd-limit 500000 \
    --stats "$BATS_TEST_TMPDIR/emu.json" --ready "$BATS_TEST_TMPDIR/ready" 3>&- &
  local emu=$!
  for _ in $(seq 250); do [ -e "$BATS_TEST_TMPDIR/ready" ] && break; sleep 0.02; done
  run ip netns exec "$TB-rcv" timeout 60 "$UDT" get 10.80.1.1 9000 file "$BATS_TEST_TMPDIR/got"
  kill "$emu"
  wait "$emu" || true
  echo "bytes seconds lost: $output"
  [ "$status" -eq 0 ]
  cmp "$BATS_FILE_TMPDIR/file" "$BATS_TEST_TMPDIR/got"
  local bytes secs
  read -r bytes secs _ <<< "$output"
  [ "$bytes" -eq $((24 * 1024 * 1024)) ]
  # moved at all: 10 Mb/s is a tenth of the link (the benchmark, not this test, says how well)
  awk -v b="$bytes" -v s="$secs" 'BEGIN { exit !(b * 8 / s > 10e6) }'
}
