#!/usr/bin/env bash
# bench-wan.sh — the WAN benchmark from a fresh machine: installs, builds, then runs scripts/wanbench.py.
#   bash scripts/bench-wan.sh            full: every scenario, 3 repeats (about an hour), into results/wan/
#   bash scripts/bench-wan.sh --quick    smoke: two 100 Mb/s scenarios, one repeat (~1 min)
#   bash scripts/bench-wan.sh --seeds    the seeds' systems (Tierney's BDP, DRS, UDT) beside sobas, plain
#                                        CUBIC and max buffer on five HTTP paths (~30 min), into results/seeds/
# Other options are wanbench.py's (--only, --repeats, --out); see --help.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
scripts/setup-venv.sh
if [ "${1:-}" = --seeds ]; then
  shift
  set -- --only typical,shallow,bloated,long,competing \
    --contenders "sobas,linux default,max buffer,bdp,drs,udt" --out results/seeds "$@"
fi
exec build/venv/bin/python scripts/wanbench.py "$@"
