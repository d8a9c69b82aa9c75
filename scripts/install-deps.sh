#!/usr/bin/env bash
# Installs every Debian package sobas needs to build, test and benchmark on a fresh Debian 12 machine.
set -euo pipefail

packages=(
  # build
  cmake ninja-build gcc g++ make pkg-config libgtest-dev libncurses-dev
  # the controller programs write JSON with it (header-only; the shim stays on glibc alone)
  nlohmann-json3-dev
  # tests: bats and the real programs the shim is tested under
  bats iproute2 procps wget curl rsync openssh-client openssh-server iperf3 python3 tmux git
  # the Debian packages: dpkg-shlibdeps fills their Depends, CPack finds the binaries with file
  dpkg-dev file
  # ... and lintian checks them (test/e2e/package.bats)
  lintian
  # the manual pages are checked with groff
  groff-base
  # servers the shim is tested and benchmarked in (event-driven, worker processes, sendfile)
  nginx-light lighttpd
  # more real clients: a JVM (run from source, so a JDK), Node.js, a 16-connection downloader
  default-jdk-headless nodejs aria2
  # UDT (SABUL's successor), the seeds' rate-based contender in the benchmark (test/udt)
  libudt-dev
  # the WAN benchmark's plots run in a venv (scripts/setup-venv.sh)
  python3-venv
  # benchmarks
  valgrind
  # the libFuzzer targets (clang's -fsanitize=fuzzer runtime)
  clang-14 libclang-rt-14-dev
)

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: must run as root (apt-get)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
updated=0
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
else
  apt-get update -qq
  updated=1
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # Debian starts sshd, nginx and lighttpd on install; our tests run their own, in namespaces.
  for unit in ssh nginx lighttpd; do systemctl disable --now "$unit" >/dev/null 2>&1 || true; done
  echo "install-deps: installed ${missing[*]}"
fi

# promtool, Prometheus' own checker of the metrics format, for sobas-top's textfile test: only that
# binary, taken out of Debian's prometheus package (installed, the package would start a server).
promtool=/opt/sobas-test/bin/promtool
if [ ! -x "$promtool" ]; then
  [ "$updated" = 1 ] || apt-get update -qq
  dl=$(mktemp -d)
  (cd "$dl" && apt-get download -qq prometheus >/dev/null 2>&1 && dpkg-deb -x prometheus_*.deb root)
  install -D -m 0755 "$dl/root/usr/bin/promtool" "$promtool"
  rm -rf "$dl"
  echo "install-deps: $promtool"
fi
