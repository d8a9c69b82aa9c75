#!/usr/bin/env bash
# package.sh — builds the Debian packages (sobas, sobasd, sobas-top) with CPack into DIR (default build/packages).
# Usage: scripts/package.sh [--build DIR] [--out DIR]   (DIR configured for /usr, as scripts/build.sh does)
set -euo pipefail
cd "$(dirname "$0")/.."

build=build
out=
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n 2,3p "$0" | sed 's/^# //'; exit 0 ;;
    *) echo "package.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
out=${out:-$build/packages}

# The multiarch library directory (lib/x86_64-linux-gnu) is chosen at configure time, from the prefix.
cmake -S . -B "$build" -G Ninja -DCMAKE_INSTALL_PREFIX=/usr >/dev/null
cmake --build "$build" -j "$(nproc)"
mkdir -p "$out"
cpack --config "$build/CPackConfig.cmake" -B "$out" >/dev/null
ls "$out"/*.deb
