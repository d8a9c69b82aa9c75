#!/usr/bin/env bash
# setup-venv.sh — creates build/venv with the pinned Python packages: the WAN benchmark's plots, the tests' Prometheus parser (idempotent).
set -euo pipefail
cd "$(dirname "$0")/.."
req=scripts/requirements-bench.txt
venv=build/venv
stamp=$venv/.requirements
if [ -x "$venv/bin/python" ] && cmp -s "$req" "$stamp"; then exit 0; fi
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req"
cp "$req" "$stamp"
echo "setup-venv: $venv ready ($(grep -c '==' "$req") pinned packages)"
