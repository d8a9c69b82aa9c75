#!/usr/bin/env bats
# package.bats — the Debian packages: their contents and dependencies, an install into a scratch root, preloaded downloads and the manual pages from it, a purge.

load helpers

setup() {
  require_root_and_build
  # Packages are made from the plain build, once: an ASan build is no thing to ship.
  [ -z "${SOBAS_ASAN_RUNTIME:-}" ] || skip "packages are built from the plain build"
  grep -qx 'CMAKE_INSTALL_PREFIX:PATH=/usr' "$BUILD/CMakeCache.txt" ||
    { echo "$BUILD is not configured for /usr (scripts/build.sh does that)" >&2; return 1; }
  DEBS=$BATS_TEST_TMPDIR/debs
  ROOT=$BATS_TEST_TMPDIR/root
}

teardown() {
  [ -z "${HTTP_PID:-}" ] || kill "$HTTP_PID" 2>/dev/null || true
  [ -z "${NETNS_NAME:-}" ] || netns_down "$NETNS_NAME"
}

# dpkg with its own database in the scratch root; maintainer scripts run outside a chroot with
# DPKG_ROOT set (ours then leave systemd alone) since the root holds no shell of its own.
scratch_dpkg() { dpkg --root="$ROOT" --log=/dev/null --force-script-chrootless "$@"; }

@test "three .deb packages: contents, shared-library dependencies, the conffile" {
  cpack --config "$BUILD/CPackConfig.cmake" -B "$DEBS" >/dev/null
  local arch
  arch=$(dpkg --print-architecture)
  for pkg in sobas sobasd sobas-top; do [ -f "$DEBS/${pkg}_0.1.0_$arch.deb" ] || { ls "$DEBS"; return 1; }; done
  local sobas=$DEBS/sobas_0.1.0_$arch.deb
  # dpkg-shlibdeps ran: each package depends on what its binaries link
  [[ "$(dpkg-deb -f "$sobas" Depends)" == *libc6* ]]
  [[ "$(dpkg-deb -f "$DEBS/sobasd_0.1.0_$arch.deb" Depends)" == *libstdc++6* ]]
  [[ "$(dpkg-deb -f "$DEBS/sobas-top_0.1.0_$arch.deb" Depends)" == *libncursesw6* ]]
  # the library in the multiarch directory that ld.so's $LIB names, in its private folder
  local multiarch
  multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
  # dpkg-deb -c: mode owner size date time path [-> target]
  run bash -c "dpkg-deb -c '$sobas' | awk '{ print \$6 }'"
  for path in ./usr/lib/$multiarch/sobas/libsobas.so ./usr/bin/sobas ./usr/bin/sobas-path ./etc/sobas/sobas.conf \
    ./usr/share/man/man1/sobas.1.gz ./usr/share/man/man1/sobas-path.1.gz ./usr/share/man/man7/libsobas.7.gz ./usr/share/man/man5/sobas.conf.5.gz; do
    grep -qx -- "$path" <<< "$output" || { echo "no $path in sobas: $output"; return 1; }
  done
  [[ "$output" != *sobasd* && "$output" != *sobas-top* ]]
  run dpkg-deb -c "$DEBS/sobasd_0.1.0_$arch.deb"
  [[ "$output" == *" ./usr/sbin/sobasd"* && "$output" == *" ./usr/lib/systemd/system/sobasd.service"* ]]
  [ "$(dpkg-deb -I "$sobas" conffiles)" = /etc/sobas/sobas.conf ]
  # stripped: no debug sections in what is shipped
  dpkg-deb -x "$sobas" "$BATS_TEST_TMPDIR/x"
  [ -z "$(readelf -S "$BATS_TEST_TMPDIR/x/usr/lib/$multiarch/sobas/libsobas.so" | grep debug_info)" ]
}

@test "lintian, pedantic: no finding but those packaging/lintian-known lists with a reason" {
  command -v lintian >/dev/null || { echo "lintian is not installed (scripts/install-deps.sh installs it)"; return 1; }
  cpack --config "$BUILD/CPackConfig.cmake" -B "$DEBS" >/dev/null
  local known
  known=$(awk '!/^#/ && NF { printf "%s%s", sep, $1; sep = "," }' "$REPO/packaging/lintian-known")
  run lintian --pedantic --display-info --fail-on error,warning,info,pedantic --suppress-tags "$known" "$DEBS"/*.deb
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
  # each known tag is still there: a fixed one leaves the list
  run lintian --pedantic --display-info --tags "$known" "$DEBS"/*.deb
  local tag
  for tag in ${known//,/ }; do
    grep -Eq ": $tag( |\$)" <<< "$output" || { echo "$tag no longer found: drop it from packaging/lintian-known"; return 1; }
  done
}

@test "installed from the packages (scratch root): preloaded downloads on loopback and across two namespaces, the manual pages, the \$LIB path, the unit; purge leaves nothing" {
  cpack --config "$BUILD/CPackConfig.cmake" -B "$DEBS" >/dev/null
  mkdir -p "$ROOT/var/lib/dpkg/info" "$ROOT/var/lib/dpkg/updates" "$ROOT/var/lib/dpkg/triggers"
  : > "$ROOT/var/lib/dpkg/status"
  # --force-depends: the scratch root's database knows no libc6; this host has it
  run scratch_dpkg --force-depends -i "$DEBS"/*.deb
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
  [ "$(dpkg-query --admindir="$ROOT/var/lib/dpkg" -W -f '${Status}\n' sobas sobasd sobas-top | sort -u)" = "install ok installed" ]

  # a download through the installed sobas command, which finds the installed library by itself
  local data=$BATS_TEST_TMPDIR/www log=$BATS_TEST_TMPDIR/sobas.log
  mkdir -p "$data"
  head -c $((8 * 1024 * 1024)) /dev/urandom > "$data/f"
  serve_loopback "$data"
  run "$ROOT/usr/bin/sobas" --loopback --log "$log" -v curl -sS -o "$BATS_TEST_TMPDIR/got" "http://127.0.0.1:$HTTP_PORT/f"
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
  [[ "$output" == *"sobas: curl["*"]: active: policy sobas"* ]] || { echo "$output"; return 1; }
  cmp "$data/f" "$BATS_TEST_TMPDIR/got"
  grep -q "ev=close .*role=receiver" "$log" || { cat "$log"; return 1; }

  # the same across two hosts (namespaces joined by a veth pair), as a user's first try would be
  NETNS_NAME=pkg-$$
  netns_up "$NETNS_NAME"
  in_srv python3 -m http.server 8080 --bind "$NETNS_SRV_IP" -d "$data" >/dev/null 2>&1 3>&- &
  wait_port 8080
  run in_cli "$ROOT/usr/bin/sobas" --log "$log.ns" curl -sS -o "$BATS_TEST_TMPDIR/got.ns" "http://$NETNS_SRV_IP:8080/f"
  [ "$status" -eq 0 ] || { echo "$output"; return 1; }
  cmp "$data/f" "$BATS_TEST_TMPDIR/got.ns"
  grep -q "ev=close .*role=receiver" "$log.ns" || { cat "$log.ns"; return 1; }
  netns_down "$NETNS_NAME"

  # the installed manual pages open (man reads them gzipped, as dpkg installed them)
  local page
  for page in "1 sobas" "1 sobas-path" "1 sobas-top" "8 sobasd" "5 sobas.conf" "7 libsobas"; do
    run env MANPAGER=cat MANWIDTH=80 man -M "$ROOT/usr/share/man" $page
    [ "$status" -eq 0 ] && [ "${#lines[@]}" -gt 20 ] || { echo "man $page: $output"; return 1; }
  done

  # ld.so expands $LIB to this architecture's library directory: the path for /etc/ld.so.preload and
  # for LD_PRELOAD lines that must hold on any architecture
  run env LD_PRELOAD="$ROOT/usr/\$LIB/sobas/libsobas.so" SOBAS_VERBOSE=1 true
  [ "$status" -eq 0 ] && [[ "$output" == "sobas: true["*"]: active: "* ]] || { echo "$output"; return 1; }

  # the other packages' programs run, and the unit starts the installed sobasd
  "$ROOT/usr/sbin/sobasd" --version
  "$ROOT/usr/bin/sobas-top" --version
  grep -qx "ExecStart=/usr/sbin/sobasd --stats /run/sobasd/stats.json" "$ROOT/usr/lib/systemd/system/sobasd.service"

  # remove keeps the administrator's conffile, purge takes it
  scratch_dpkg -r sobas sobasd sobas-top
  [ -f "$ROOT/etc/sobas/sobas.conf" ]
  scratch_dpkg -P sobas sobasd sobas-top
  run find "$ROOT" -path "$ROOT/var/lib/dpkg" -prune -o ! -type d -print
  [ -z "$output" ] || { echo "left behind: $output"; return 1; }
}
