#!/usr/bin/env bats
# faults.bats — what the shim meets on real hosts: the ring's place read-only, full, a symlink or garbage; each time the download is whole, the program's output, exit code and stderr unchanged, and the log says why the ring is off.

load helpers

setup() {
  require_root_and_build
  skip_under_asan curl
  DATA=$BATS_TEST_TMPDIR/data
  mkdir -p "$DATA"
  head -c $((4 * 1024 * 1024)) /dev/urandom > "$DATA/f"
  serve_loopback "$DATA"
  LOG=$BATS_TEST_TMPDIR/sobas.log
}

teardown() {
  kill "$HTTP_PID" 2>/dev/null || true
}

# unchanged_under FAULT_SETUP: runs FAULT_SETUP (shell text) in a private mount namespace, then a
# download there, plain and preloaded (loopback measured, logged). Output, exit code and stderr must
# be the same; the preloaded flow must be recorded whole.
unchanged_under() {
  local setup=$1 get="curl -sS http://127.0.0.1:$HTTP_PORT/f | sha256sum"
  local plain shim
  plain=$(unshare -m sh -c "$setup; $get; echo rc=\$?" 2>&1)
  shim=$(unshare -m sh -c "$setup; LD_PRELOAD='$PRELOAD' SOBAS_TRACK_LOOPBACK=1 SOBAS_LOG='$LOG' $get; echo rc=\$?" 2>&1)
  echo "plain: $plain"
  echo "shim:  $shim"
  [ "$plain" = "$shim" ]
  [ "$shim" = "$(sha256sum < "$DATA/f")"$'\n'"rc=0" ]
  assert_flow_bytes "$LOG" "127.0.0.1:$HTTP_PORT" bytes_received $((4 * 1024 * 1024))
}

# ring_error: the log's one line on why this process records no ring.
ring_error() {
  grep ' ev=ring ' "$LOG" | head -1
  [ "$(grep -c ' ev=ring ' "$LOG")" -eq 1 ]
}

@test "the ring's folder is read-only: the download is unchanged, the ring is given up once" {
  local d=$BATS_TEST_TMPDIR/ro
  mkdir -p "$d"
  SOBAS_RING=$d/sobas.ring unchanged_under "mount -t tmpfs -o ro,size=1m tmpfs $d"
  run ring_error
  echo "$output"
  [ "$status" -eq 0 ] && [[ "$output" == *"Read-only file system"* ]]
}

@test "/dev/shm is full: the download is unchanged, the ring is given up once" {
  unset SOBAS_RING # the default, /dev/shm/sobas-UID.ring
  unchanged_under "mount -t tmpfs -o size=64k tmpfs /dev/shm && head -c 1M /dev/zero > /dev/shm/fill 2>/dev/null; true"
  run ring_error
  echo "$output"
  [ "$status" -eq 0 ] && [[ "$output" == *"/dev/shm/sobas-0.ring"* ]]
}

@test "the ring is a symlink, or garbage of the right size: refused, the download unchanged" {
  local d=$BATS_TEST_TMPDIR/shm
  mkdir -p "$d"
  # a real ring, written once, gives the size a forged one must have
  SOBAS_RING=$d/real.ring SOBAS_TRACK_LOOPBACK=1 LD_PRELOAD=$PRELOAD curl -sS -o /dev/null "http://127.0.0.1:$HTTP_PORT/f"
  [ -f "$d/real.ring" ]
  ln -s "$d/real.ring" "$d/link.ring"
  SOBAS_RING=$d/link.ring unchanged_under true
  run ring_error
  echo "$output"
  [ "$status" -eq 0 ] && [[ "$output" == *"symbolic link"* ]]
  rm -f "$LOG"
  head -c "$(stat -c %s "$d/real.ring")" /dev/urandom > "$d/junk.ring"
  chmod 0600 "$d/junk.ring"
  local before
  before=$(sha256sum < "$d/junk.ring")
  SOBAS_RING=$d/junk.ring unchanged_under true
  run ring_error
  echo "$output"
  [ "$status" -eq 0 ] && [[ "$output" == *"not a sobas ring"* ]]
  [ "$(sha256sum < "$d/junk.ring")" = "$before" ] # never written into
}
