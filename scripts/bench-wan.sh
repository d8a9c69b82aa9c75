#!/usr/bin/env bash
# bench-wan.sh — the WAN benchmark from a fresh machine: installs, builds, then runs scripts/wanbench.py.
#   bash scripts/bench-wan.sh            full: every scenario, 3 repeats (about 110 minutes), into results/wan/
#   bash scripts/bench-wan.sh --quick    smoke: two 100 Mb/s scenarios, one repeat (~1 min)
#   bash scripts/bench-wan.sh --seeds    the seeds' systems (Tierney's BDP, DRS, UDT) on five HTTP paths
#                                        (~15 min): their rows join those paths' tables in results/wan/
# Other options are wanbench.py's (--only, --repeats, --out); see --help.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
scripts/setup-venv.sh
if [ "${1:-}" = --seeds ]; then
  shift
  set -- --only typical,shallow,bloated,long,competing \
    --contenders bdp,drs,udt --merge "$@"
fi
exec build/venv/bin/python scripts/wanbench.py "$@"
