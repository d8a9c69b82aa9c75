#!/usr/bin/env bats
# stress.bats — the shim under fd churn: threads, fork-per-connection, close_range, dup2, seccomp.

load helpers

setup() {
  require_root_and_build
  LOG=$BATS_TEST_TMPDIR/sobas.log
}

# Runs a test program preloaded, tracking loopback flows so that every path is exercised.
run_preloaded() {
  run env LD_PRELOAD="$PRELOAD" SOBAS_TRACK_LOOPBACK=1 SOBAS_LOG="$LOG" "$PROGS/$1" "${@:2}"
}

count() { grep -c -- "$1" "$LOG" || true; }

@test "32 threads opening and closing 640 connections" {
  run_preloaded stress_threads
  [ "$status" -eq 0 ]
  [ "$output" = "ok 640 connections" ]
  # every connection seen from both ends, opened and closed once
  [ "$(count 'ev=open')" -eq 1280 ]
  [ "$(count 'ev=close')" -eq 1280 ]
  [ "$(count 'ev=close.*app_tx=307200 ')" -eq 640 ]
}

@test "fork-per-connection server: children record their flows, the parent's closes leave no trace" {
  run_preloaded fork_server
  [ "$status" -eq 0 ]
  [ "$(count 'ev=close')" -eq 32 ]
  [ "$(count 'ev=close.*app_rx=2097152 ')" -eq 16 ]          # server side, one per child
  [ "$(grep 'ev=close.*app_rx=2097152 ' "$LOG" | awk '{print $2}' | sort -u | wc -l)" -eq 16 ]
}

@test "200 forked children download at once: every child gets its bytes, every flow is recorded once" {
  run_preloaded fork_clients
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = "ok 200 children" ]
  [ "$(count 'ev=open')" -eq 400 ]                     # both ends of each connection
  [ "$(count 'ev=close.*role=receiver.*app_rx=1048576 ')" -eq 200 ]
  [ "$(grep 'ev=close.*role=receiver' "$LOG" | awk '{print $2}' | sort -u | wc -l)" -eq 200 ] # one per child
}

@test "close_range and closefrom over every other fd mid-transfer" {
  run_preloaded close_range_mid
  [ "$status" -eq 0 ]
  # both ends kept their records across the sweeps: both halves counted on one flow each
  [ "$(count 'ev=close.*app_tx=8388608 ')" -eq 1 ]
  [ "$(count 'ev=close.*app_rx=8388608 ')" -eq 1 ]
}

@test "dup2 over a live socket" {
  run_preloaded dup2_over
  [ "$status" -eq 0 ]
  [ "$output" = "ok A=3145728 B=3145728" ]
  # client side: A's flow got 1 MiB + 2 MiB through two fds, B's 3 MiB before it was replaced
  [ "$(count 'ev=close.*app_tx=3145728 ')" -eq 2 ]
}

@test "a process that installs a seccomp filter (prctl, seccomp(2)) is not killed by the shim" {
  for how in prctl syscall; do
    run_preloaded seccomp_io $how
    [ "$status" -eq 0 ]
    [[ "$output" == "ok 8454144 bytes"* ]]
  done
}

@test "errno and return values of failing calls are unchanged" {
  run "$PROGS/errno_check"
  local plain=$output
  [ "$status" -eq 0 ]
  run_preloaded errno_check
  [ "$status" -eq 0 ]
  [ "$output" = "$plain" ]
}
