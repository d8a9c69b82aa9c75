#!/usr/bin/env bash
# bench-wan.sh — the WAN benchmark from a fresh machine: installs, builds, then runs scripts/wanbench.py.
#   bash scripts/bench-wan.sh            full: every scenario, 3 repeats (about an hour), into results/wan/
#   bash scripts/bench-wan.sh --quick    smoke: two 100 Mb/s scenarios, one repeat (~1 min)
# Other options are wanbench.py's (--only, --repeats, --out); see --help.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
scripts/setup-venv.sh
exec build/venv/bin/python scripts/wanbench.py "$@"
