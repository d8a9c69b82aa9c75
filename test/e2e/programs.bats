#!/usr/bin/env bats
# programs.bats — real programs (wget, curl, rsync, scp/sshd, iperf3) across two namespaces, with and
# without the shim: same exit code, same output, same bytes, and a log that saw each flow.

load helpers
bats_require_minimum_version 1.5.0  # `run !`

SIZE=$((64 * 1024 * 1024))

setup_file() {
  require_root_and_build
  export NETNS_NAME=sobas-e2e-$$
  netns_up "$NETNS_NAME"
  export DATA=$BATS_FILE_TMPDIR/data
  mkdir -p "$DATA"
  make_file "$DATA/f64" 64

  in_srv python3 -m http.server 8080 --bind :: -d "$DATA" >/dev/null 2>&1 3>&- &

  mkdir -p "$BATS_FILE_TMPDIR/up"
  cat > "$BATS_FILE_TMPDIR/rsyncd.conf" <<CONF
use chroot = no
[data]
  path = $DATA
  read only = yes
[up]
  path = $BATS_FILE_TMPDIR/up
  read only = no
  uid = root
  gid = root
CONF
  in_srv rsync --daemon --no-detach --config="$BATS_FILE_TMPDIR/rsyncd.conf" --address=$NETNS_SRV_IP --port=873 \
    >/dev/null 2>&1 3>&- &

  local s=$BATS_FILE_TMPDIR/ssh
  mkdir -p "$s" /run/sshd
  ssh-keygen -q -t ed25519 -N '' -f "$s/host_key"
  ssh-keygen -q -t ed25519 -N '' -f "$s/client_key"
  cp "$s/client_key.pub" "$s/authorized_keys"
  cat > "$s/sshd_config" <<CONF
ListenAddress $NETNS_SRV_IP
HostKey $s/host_key
AuthorizedKeysFile $s/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
StrictModes no
UsePAM no
PidFile none
Subsystem sftp internal-sftp
CONF
  in_srv /usr/sbin/sshd -D -e -f "$s/sshd_config" -p 22 >"$s/sshd.out" 2>&1 3>&- &
  # The same sshd preloaded: its seccomp-sandboxed pre-auth child must survive the shim.
  in_srv env LD_PRELOAD="$PRELOAD" SOBAS_LOG="$BATS_FILE_TMPDIR/sshd.log" \
    /usr/sbin/sshd -D -e -f "$s/sshd_config" -p 2222 >"$s/sshd-shim.out" 2>&1 3>&- &
  export SSHOPTS="-i $s/client_key -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR"

  in_srv iperf3 -s -B $NETNS_SRV_IP -p 5201 >/dev/null 2>&1 3>&- &
  # lighttpd preloaded (one process, an event loop, sendfile): the server side of plain downloads.
  if command -v lighttpd >/dev/null; then
    cat > "$BATS_FILE_TMPDIR/lighttpd.conf" <<CONF
server.document-root = "$DATA"
server.bind = "$NETNS_SRV_IP"
server.port = 8090
server.pid-file = "$BATS_FILE_TMPDIR/lighttpd.pid"
server.errorlog = "$BATS_FILE_TMPDIR/lighttpd.err"
CONF
    in_srv env LD_PRELOAD="$PRELOAD" SOBAS_LOG="$BATS_FILE_TMPDIR/lighttpd.log" \
      lighttpd -D -f "$BATS_FILE_TMPDIR/lighttpd.conf" >/dev/null 2>&1 3>&- &
    wait_port 8090
  fi
  # git:// (git daemon) serving a repository whose one commit holds 8 MiB of random bytes
  local g=$BATS_FILE_TMPDIR/git
  mkdir -p "$g/work"
  make_file "$g/work/big" 8
  git -C "$g/work" init -q
  git -C "$g/work" add big
  git -C "$g/work" -c user.name=sobas -c user.email=sobas@localhost commit -q -m big
  git clone -q --bare "$g/work" "$g/repo.git"
  in_srv git daemon --reuseaddr --export-all --base-path="$g" --listen=$NETNS_SRV_IP --port=9418 "$g" \
    >/dev/null 2>&1 3>&- &

  # a package index (PEP 503, static files) served by the HTTP server above: one 8 MiB wheel
  python3 - "$DATA" <<'PY'
import os, sys, zipfile
data = sys.argv[1]
whl = os.path.join(data, "demo-1.0-py3-none-any.whl")
with zipfile.ZipFile(whl, "w", zipfile.ZIP_STORED) as z:
    z.writestr("demo/__init__.py", "")
    z.writestr("demo/blob.bin", os.urandom(8 << 20))
    z.writestr("demo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n")
    z.writestr("demo-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: sobas-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    z.writestr("demo-1.0.dist-info/RECORD", "")
os.makedirs(os.path.join(data, "simple", "demo"), exist_ok=True)
with open(os.path.join(data, "simple", "demo", "index.html"), "w") as f:
    f.write('<a href="../../demo-1.0-py3-none-any.whl">demo-1.0-py3-none-any.whl</a>\n')
PY
  for p in 8080 873 22 2222 5201 9418; do wait_port $p; done
}

teardown_file() {
  netns_down "$NETNS_NAME"
}

@test "wget downloads 64 MiB identically and the shim logs the flow's bytes" {
  skip_under_asan wget
  assert_transfer "wget -q -O $BATS_TEST_TMPDIR/out http://$NETNS_SRV_IP:8080/f64" \
    "$BATS_TEST_TMPDIR/out" "$DATA/f64" "$NETNS_SRV_IP:8080" bytes_received
  assert_flow_bytes "$BATS_TEST_TMPDIR/sobas.log" "$NETNS_SRV_IP:8080" app_rx $SIZE
  grep -q "ev=open .*local=$NETNS_CLI_IP:[0-9]* peer=$NETNS_SRV_IP:8080 origin=connect" "$BATS_TEST_TMPDIR/sobas.log"
  [ "$(grep -c ev=window "$BATS_TEST_TMPDIR/sobas.log")" -ge 3 ]
  run ! grep -q "sobas:" "$BATS_TEST_TMPDIR/sobas.log.stderr"  # quiet by default
}

@test "curl downloads identically over IPv4 and IPv6" {
  skip_under_asan curl
  same_with_and_without_shim "curl -sS http://$NETNS_SRV_IP:8080/f64 | sha256sum"
  assert_flow_bytes "$BATS_TEST_TMPDIR/sobas.log" "$NETNS_SRV_IP:8080" bytes_received $SIZE
  rm -f "$BATS_TEST_TMPDIR/sobas.log"
  same_with_and_without_shim "curl -sS -g 'http://[$NETNS_SRV_IP6]:8080/f64' | sha256sum"
  assert_flow_bytes "$BATS_TEST_TMPDIR/sobas.log" "[$NETNS_SRV_IP6]:8080" bytes_received $SIZE
}

@test "a refused connection fails with the same message and exit code" {
  skip_under_asan curl
  # curl's message carries the attempt's time ("after 0 ms"), which a busy host makes 1 ms either way.
  same_with_and_without_shim "curl -sS http://$NETNS_SRV_IP:9/ 2>&1 | sed -E 's/after [0-9]+ ms/after N ms/'; echo rc=\${PIPESTATUS[0]}"
  [[ "$out" == *"Couldn't connect to server"* && "$out" == *"rc=7"* ]]
}

@test "rsync from an rsync daemon" {
  assert_transfer "rsync rsync://$NETNS_SRV_IP/data/f64 $BATS_TEST_TMPDIR/out" \
    "$BATS_TEST_TMPDIR/out" "$DATA/f64" "$NETNS_SRV_IP:873" bytes_received
}

@test "rsync over ssh" {
  assert_transfer "rsync -e 'ssh $SSHOPTS' root@$NETNS_SRV_IP:$DATA/f64 $BATS_TEST_TMPDIR/out" \
    "$BATS_TEST_TMPDIR/out" "$DATA/f64" "$NETNS_SRV_IP:22" bytes_received
}

@test "rsync push to an rsync daemon and over ssh: the client sends, measured as a sender" {
  # A sender's bytes_acked may trail by what is still in flight when it closes: app_tx is exact.
  assert_transfer "rsync $DATA/f64 rsync://$NETNS_SRV_IP/up/f64" \
    "$BATS_FILE_TMPDIR/up/f64" "$DATA/f64" "$NETNS_SRV_IP:873" app_tx
  rm -f "$BATS_TEST_TMPDIR/sobas.log"
  assert_transfer "rsync -e 'ssh $SSHOPTS' $DATA/f64 root@$NETNS_SRV_IP:$BATS_TEST_TMPDIR/pushed" \
    "$BATS_TEST_TMPDIR/pushed" "$DATA/f64" "$NETNS_SRV_IP:22" app_tx
  grep -q "role=sender" "$BATS_TEST_TMPDIR/sobas.log"
}

@test "lighttpd preloaded serves plain curl: every byte, the server's flow measured as a sender" {
  command -v lighttpd >/dev/null || skip "lighttpd not installed (scripts/install-deps.sh installs it)"
  local i
  for i in 1 2; do
    in_cli curl -sS --fail -o "$BATS_TEST_TMPDIR/out" "http://$NETNS_SRV_IP:8090/f64"
    cmp "$BATS_TEST_TMPDIR/out" "$DATA/f64"
  done
  [ "$(count_whole_flows "$BATS_FILE_TMPDIR/lighttpd.log" "local=$NETNS_SRV_IP:8090" app_tx $SIZE)" -eq 2 ]
  grep -q "local=$NETNS_SRV_IP:8090 .*role=sender" "$BATS_FILE_TMPDIR/lighttpd.log"
}

@test "scp download and upload" {
  assert_transfer "scp $SSHOPTS root@$NETNS_SRV_IP:$DATA/f64 $BATS_TEST_TMPDIR/out" \
    "$BATS_TEST_TMPDIR/out" "$DATA/f64" "$NETNS_SRV_IP:22" bytes_received
  rm -f "$BATS_TEST_TMPDIR/sobas.log"
  # A sender's bytes_acked may trail by what is still in flight when it closes: app_tx is exact.
  assert_transfer "scp $SSHOPTS $DATA/f64 root@$NETNS_SRV_IP:$BATS_TEST_TMPDIR/up" \
    "$BATS_TEST_TMPDIR/up" "$DATA/f64" "$NETNS_SRV_IP:22" app_tx
}

@test "scp against a preloaded sshd: the sandboxed child survives and the server side is measured" {
  assert_transfer "scp -P 2222 $SSHOPTS root@$NETNS_SRV_IP:$DATA/f64 $BATS_TEST_TMPDIR/out" \
    "$BATS_TEST_TMPDIR/out" "$DATA/f64" "$NETNS_SRV_IP:2222" bytes_received
  # Both downloads (plain and preloaded client) went through the preloaded sshd, whose server-side
  # flow wrote the whole file each time.
  [ "$(count_whole_flows "$BATS_FILE_TMPDIR/sshd.log" "local=$NETNS_SRV_IP:2222" app_tx $SIZE)" -eq 2 ]
  run ! grep -qiE "killed|seccomp|signal" "$BATS_FILE_TMPDIR/ssh/sshd-shim.out"
}

@test "iperf3 upload with write() and with sendfile (-Z), and download (-R)" {
  local flags
  for flags in "" "-Z" "-R"; do
    rm -f "$BATS_TEST_TMPDIR/sobas.log"
    run_cli shim "$BATS_TEST_TMPDIR/sobas.log" "iperf3 -c $NETNS_SRV_IP -p 5201 -n 64M $flags >/dev/null"
    [ "$rc" = 0 ]
    if [ "$flags" = "-R" ]; then field=bytes_received; else field=app_tx; fi
    assert_flow_bytes "$BATS_TEST_TMPDIR/sobas.log" "$NETNS_SRV_IP:5201" $field $SIZE
  done
}

# Threaded and event-loop clients beyond the C tools: a JVM (HttpClient's selector and executor
# threads), Node.js (libuv), aria2c splitting one file over 16 connections.
@test "a JVM's HttpClient fetches 4 copies at once: same output, every flow whole" {
  command -v java >/dev/null || skip "no java (scripts/install-deps.sh installs a JDK)"
  same_with_and_without_shim "java $REPO/test/programs/ParallelGet.java http://$NETNS_SRV_IP:8080/f64 4"
  [ "$(echo "$out" | grep -c "^200 $SIZE ")" -eq 4 ]
  # the JVM connects through dual-stack IPv6 sockets: the peer is the v4-mapped address
  [ "$(count_whole_flows "$BATS_TEST_TMPDIR/sobas.log" "peer=[::ffff:$NETNS_SRV_IP]:8080" bytes_received $SIZE)" -eq 4 ]
}

@test "Node.js http.get: same status, length and digest; the flow whole" {
  command -v node >/dev/null || skip "no node (scripts/install-deps.sh installs nodejs)"
  same_with_and_without_shim "node $REPO/test/programs/node_get.js http://$NETNS_SRV_IP:8080/f64"
  [ "$out" = "200 $SIZE $(sha256sum < "$DATA/f64" | cut -d' ' -f1)" ]
  assert_flow_bytes "$BATS_TEST_TMPDIR/sobas.log" "$NETNS_SRV_IP:8080" bytes_received $SIZE
}

@test "aria2c -x 16 -s 16 splits one file over many connections: the same file, the flows carried it together" {
  command -v aria2c >/dev/null || skip "no aria2c (scripts/install-deps.sh installs aria2)"
  skip_under_asan aria2c
  # aria2c prints timings and speeds: the file's digest and the exit code are what must not change
  same_with_and_without_shim "aria2c -q -x 16 -s 16 -k 1M --allow-overwrite=true --auto-file-renaming=false \
    -d $BATS_TEST_TMPDIR -o out http://$NETNS_SRV_IP:8080/f64 && sha256sum < $BATS_TEST_TMPDIR/out"
  [ "$out" = "$(sha256sum < "$DATA/f64")" ]
  local log=$BATS_TEST_TMPDIR/sobas.log flows bytes
  flows=$(grep -c "ev=close .*peer=$NETNS_SRV_IP:8080" "$log")
  bytes=$(grep "ev=close .*peer=$NETNS_SRV_IP:8080" "$log" | grep -o 'app_rx=[0-9]*' | cut -d= -f2 | awk '{ s += $1 } END { print s + 0 }')
  echo "flows $flows, bytes $bytes"
  # aria2c opens its connections as pieces free up: on this fast veth it finishes with fewer than 16
  # (7 in one run), and each flow past 256 KiB is measured; together they carry the file, headers aside
  [ "$flows" -ge 2 ] && [ "$bytes" -ge "$SIZE" ] && [ "$bytes" -le $((SIZE + SIZE / 100)) ]
}

@test "git clone over git:// (git daemon): the same checkout and exit code, the pack measured" {
  command -v git >/dev/null || skip "no git"
  local dest=$BATS_TEST_TMPDIR/clone
  same_with_and_without_shim "rm -rf $dest; git clone -q git://$NETNS_SRV_IP/repo.git $dest && sha256sum < $dest/big"
  [ "$out" = "$(sha256sum < "$BATS_FILE_TMPDIR/git/work/big")" ]
  # the pack carries the 8 MiB blob (random bytes do not compress)
  local got
  got=$(grep "ev=close .*peer=$NETNS_SRV_IP:9418" "$BATS_TEST_TMPDIR/sobas.log" | grep -o 'bytes_received=[0-9]*' | cut -d= -f2)
  [ -n "$got" ] && [ "$got" -ge $((8 * 1024 * 1024)) ]
}

@test "pip download from a local package index: the same wheel and exit code, the flow whole" {
  local pip=$REPO/build/venv/bin/pip dest=$BATS_TEST_TMPDIR/pip
  [ -x "$pip" ] || skip "no venv pip (scripts/setup-venv.sh makes it)"
  local whl=$DATA/demo-1.0-py3-none-any.whl
  # pip takes plain HTTP only from localhost unless the host is named trusted
  same_with_and_without_shim "rm -rf $dest; $pip download -q --no-deps --no-cache-dir --disable-pip-version-check \
    --index-url http://$NETNS_SRV_IP:8080/simple/ --trusted-host $NETNS_SRV_IP -d $dest demo==1.0 && sha256sum < $dest/demo-1.0-py3-none-any.whl"
  [ "$out" = "$(sha256sum < "$whl")" ]
  assert_flow_bytes "$BATS_TEST_TMPDIR/sobas.log" "$NETNS_SRV_IP:8080" app_rx "$(stat -c %s "$whl")"
}
