#!/usr/bin/env bash
# Tacho against its peers in one run: warm Chromium and WeasyPrint (the harness in
# ../shared/peers) render the same report data, and Tacho joins through the harness's OURS_WARM
# hook (tacho_warm.py: each document posted as a measurement, then the report request timed
# over HTTP, a first render each time). One table comes out: median, p90 and range per engine,
# mode and language.
#
# Builds the release binary, starts `tacho serve --demo` on a loopback port with a temporary
# data directory, runs the harness against it and stops the server.
#
# Usage: benches/peers.sh
#   PEERS_DIR=path   the harness (default: shared/peers beside the repository)
#   PEERS_ENV=path   where the harness installs playwright-core and WeasyPrint
#                    (default target/peers-env)
#   RUNS=5 N=20 LANGS="en ar zh"   passed on to the harness
#   TACHO_BIN=path   use this binary instead of building the release one
# The harness installs what it lacks (Debian's chromium and fonts, npm, a venv): needs root
# and about 5 minutes on 2 cores.
set -euo pipefail
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
cd "$root"
peers=$(cd "${PEERS_DIR:-$root/../shared/peers}" && pwd)
port="${PORT:-18190}"

work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
url="http://127.0.0.1:$port"
# shellcheck source=benches/load/demo_server.sh
source benches/load/demo_server.sh
demo_server "$port"

# Absolute: the harness hands it to node and to processes that run elsewhere.
PEERS_ENV=$(realpath -m "${PEERS_ENV:-target/peers-env}") RUNS="${RUNS:-5}" N="${N:-20}" \
  OURS_NAME=tacho OURS_WARM="python3 $peers/tacho_warm.py" TACHO_URL="$url" \
  "$peers/run.sh"
