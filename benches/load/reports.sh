#!/usr/bin/env bash
# Report figures over HTTP against the release server (SQLite, demo data):
#  1. the first report request after the server starts (engine set-up + first render);
#  2. a repeated request (served from the cache) and GET /files/v1/<token>/file with wrk,
#     64 connections for DURATION seconds;
#  3. the server's peak memory (VmHWM) after 10 and after RENDERS distinct renders.
# Usage: benches/load/reports.sh [DURATION] [RENDERS]   (needs wrk, curl, python3)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=benches/load/needs.sh
source benches/load/needs.sh
needs wrk curl
duration="${1:-10}"
renders="${2:-1000}"
cargo build --release -q
work=$(mktemp -d)
port=18183
base="http://127.0.0.1:$port"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

TACHO_DATA_DIR="$work" TACHO_ADDR="127.0.0.1:$port" TACHO_LOG=warn TACHO_LOGIN_RATE=100000 \
  target/release/tacho serve --demo >"$work/server.log" 2>&1 &
server=$!
for _ in $(seq 1 100); do curl -sf "$base/health/ready" >/dev/null && break; sleep 0.1; done
json() { python3 -c "import json,sys; print(json.load(sys.stdin)$1)"; }
token=$(curl -s "$base/auth/v2/oauth2/tokens" -H 'Content-Type: application/json' \
  -d '{"grant_type":"password","username":"anna@tacho.test","password":"tacho-demo"}' | json '["access_token"]')
auth=(-H "Authorization: Bearer $token" -H 'Content-Type: application/json')
measurement=$(curl -s "$base/data/v1/measurements/documents" "${auth[@]}" --data-binary @tests/fixtures/sinus_72.json | json '["id"]')

echo "== first report request after start"
curl -s -o /dev/null -w 'first POST report: %{time_total} s\n' "$base/data/v1/measurement-reports/documents" "${auth[@]}" \
  -d "{\"measurementId\":\"$measurement\",\"language\":\"en\"}"
curl -s -o /dev/null -w 'repeat (cached PDF): %{time_total} s\n' "$base/data/v1/measurement-reports/documents" "${auth[@]}" \
  -d "{\"measurementId\":\"$measurement\",\"language\":\"en\"}"
file=$(curl -s "$base/data/v1/measurement-reports/documents?limit(1)&sort(-id)&eq(data.measurementId,$measurement)" "${auth[@]}" \
  | json '["data"][0]["data"]["readFileToken"]')

echo "== GET /files/v1/<token>/file, 64 connections, ${duration}s"
wrk -t2 -c64 -d"${duration}s" --latency "$base/files/v1/$file/file"

echo "== memory over distinct renders"
render() {
  curl -s -o /dev/null "$base/data/v1/measurements/documents/$measurement" -X PUT "${auth[@]}" -d "{\"tags\":[\"r$1\"]}"
  curl -s -o /dev/null "$base/data/v1/measurement-reports/documents" "${auth[@]}" -d "{\"measurementId\":\"$measurement\",\"language\":\"en\"}"
}
peak() { grep -E '^(VmHWM|VmRSS)' "/proc/$server/status" | tr -s ' ' | tr '\n' ' '; echo; }
started=$(date +%s.%N)
for i in $(seq 1 10); do render "$i"; done
echo "after 10 renders: $(peak)"
for i in $(seq 11 "$renders"); do render "$i"; done
elapsed=$(python3 -c "import time; print(round(time.time() - $started, 1))")
echo "after $renders renders: $(peak)(${elapsed} s in all)"
