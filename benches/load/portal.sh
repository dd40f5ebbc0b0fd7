#!/usr/bin/env bash
# Latency of portal pages: the release server with the demo data on SQLite, logged in through
# the login form (session cookie), each page for DURATION seconds with wrk (2 threads).
# CONNECTIONS=1 measures one user's latency (p50 of a page alone); more measure under load.
# MEASUREMENTS=N first posts N more fixture measurements (~0.4 MB each) for the patient through
# the API, so that list pages are full (20 rows) of real-sized measurements.
# TACHO_BIN runs another build of the server (e.g. an older one, to compare).
# Usage: benches/load/portal.sh [DURATION] [CONNECTIONS]   (needs wrk: apt-get install wrk)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=benches/load/needs.sh
source benches/load/needs.sh
needs wrk curl
duration="${1:-10}"
connections="${2:-1}"
threads=$(( connections < 2 ? 1 : 2 ))
if [ -z "${TACHO_BIN:-}" ]; then cargo build --release -q; fi
bin="${TACHO_BIN:-target/release/tacho}"
extra="${MEASUREMENTS:-0}"
work=$(mktemp -d)
port=18182
base="http://127.0.0.1:$port"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
TACHO_DATA_DIR="$work" TACHO_ADDR="127.0.0.1:$port" TACHO_LOG="${BENCH_LOG:-warn}" \
  "$bin" serve --demo >"$work/server.log" 2>&1 &
for _ in $(seq 1 100); do curl -sf "$base/health/ready" >/dev/null && break; sleep 0.1; done

# shellcheck source=benches/load/portal_login.sh
source benches/load/portal_login.sh

page() {
  local cookie="$1" path="$2"
  echo "== GET $path, $connections connection(s), ${duration}s"
  wrk -t"$threads" -c"$connections" -d"${duration}s" --latency -H "Cookie: $cookie" "$base$path" |
    grep -E 'Requests/sec|50%|99%|Non-2xx'
}

if [ "$extra" -gt 0 ]; then
  echo "== posting $extra measurements for anna@tacho.test"
  token=$(curl -s "$base/auth/v2/oauth2/tokens" -H 'Content-Type: application/json' \
    -d '{"grant_type":"password","username":"anna@tacho.test","password":"tacho-demo"}' |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
  fixtures=(sinus_72 irregular_af bradycardia_48 ppg_only no_heartrate)
  for i in $(seq 1 "$extra"); do
    curl -sf -o /dev/null "$base/data/v1/measurements/documents" -H "Authorization: Bearer $token" \
      -H 'Content-Type: application/json' --data-binary "@tests/fixtures/${fixtures[$((i % 5))]}.json"
  done
fi

patient=$(login anna@tacho.test)
physician=$(login dr.peeters@tacho.test)
admin=$(login admin@tacho.test)
measurement=$(curl -s -H "Cookie: $patient" "$base/portal/measurements" | grep -o '/portal/measurements/[0-9a-f]\{24\}' | head -1)
anna=$(curl -s -H "Cookie: $physician" "$base/portal/patients" | grep -o '/portal/patients/[0-9a-f]\{24\}' | head -1)

page "$patient" /portal/measurements
page "$patient" "$measurement"
page "$patient" /portal/profile
page "$patient" /portal/account
page "$patient" /portal/reports
page "$physician" /portal/patients
page "$physician" "$anna"
page "$admin" /portal/admin/users
page "$admin" /portal/admin/audit
