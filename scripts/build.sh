#!/usr/bin/env bash
# build.sh — configures and builds sobas into build/ (and, with --asan, an ASan+UBSan build into build-asan/).
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=$(nproc)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr >/dev/null
cmake --build build -j "$jobs"
if [ "${1:-}" = --asan ]; then
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DSOBAS_SANITIZE=address,undefined >/dev/null
  cmake --build build-asan -j "$jobs"
fi
