#!/usr/bin/env bash
# The patient's data export at two sizes: `tacho demo` builds one patient with SMALL (default
# 1,000) measurements, then a second with LARGE (default 10,000), into a fresh SQLite database
# (or into PostgreSQL when DATABASE_URL names an empty database); the release server then
# serves it, and each patient downloads its own export (`GET /users/v1/{id}/export`) once.
# Reported for each: the time the download took, its size, that it is a whole ZIP with a CSV
# row per measurement, and the server's peak resident set (VmHWM in /proc/<pid>/status)
# before and after, which stays flat when the archive is made as it is sent.
# TACHO_BIN runs another build of the server (e.g. an older one, to compare).
# Usage: benches/load/export.sh [SMALL] [LARGE]   (needs curl, python3 and unzip)
set -euo pipefail
cd "$(dirname "$0")/../.."
small="${1:-1000}"
large="${2:-10000}"
target="${CARGO_TARGET_DIR:-target}"
if [ -z "${TACHO_BIN:-}" ]; then cargo build --release -q --bin tacho; fi
bin="${TACHO_BIN:-$target/release/tacho}"
work=$(mktemp -d)
port="${PORT:-18187}"
base="http://127.0.0.1:$port"
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; wait; rm -rf "$work"' EXIT
export TACHO_DATA_DIR="$work" TACHO_LOG=warn TACHO_LOGIN_RATE=100000 TACHO_SCHEDULER_TICK=0
if [ -n "${DATABASE_URL:-}" ]; then export TACHO_DATABASE_URL="$DATABASE_URL"; fi

# patient0 gets SMALL measurements; a second build adds only the missing patient1, with LARGE.
for build in "1 $small" "2 $large"; do
  set -- $build
  echo "== tacho demo --patients $1 --measurements $2 --patients-per-group 2"
  start=$(date +%s.%N)
  "$bin" demo --patients "$1" --measurements "$2" --patients-per-group 2 2>/dev/null | head -1
  echo "built in $(echo "$(date +%s.%N) - $start" | bc) s"
done

TACHO_ADDR="127.0.0.1:$port" "$bin" serve >"$work/server.log" 2>&1 &
server=$!
for _ in $(seq 1 200); do curl -sf "$base/health/ready" >/dev/null && break; sleep 0.1; done
curl -sf "$base/health/ready" >/dev/null || { cat "$work/server.log" >&2; exit 1; }
hwm() { awk '/VmHWM/ { print int($2 / 1024) }' "/proc/$server/status"; }
rss() { awk '/VmRSS/ { print int($2 / 1024) }' "/proc/$server/status"; }

bearer() {
  curl -sf "$base/auth/v2/oauth2/tokens" -H 'Content-Type: application/json' \
    -d "{\"grant_type\":\"password\",\"username\":\"$1\",\"password\":\"tacho-demo\"}" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])'
}

export_of() {
  local email="$1" expected="$2" token id zip before after
  token=$(bearer "$email")
  id=$(curl -sf "$base/users/v1/me" -H "Authorization: Bearer $token" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
  zip="$work/export-$id.zip"
  before=$(hwm)
  echo "== $email ($expected measurements): peak RSS before ${before} MB (now $(rss) MB)"
  curl -sf "$base/users/v1/$id/export" -H "Authorization: Bearer $token" -o "$zip" \
    -w 'downloaded %{size_download} bytes in %{time_total} s (first byte after %{time_starttransfer} s)\n'
  after=$(hwm)
  echo "peak RSS after ${after} MB (+$((after - before)) MB; now $(rss) MB)"
  unzip -tq "$zip"
  rows=$(unzip -p "$zip" measurements.csv | python3 -c 'import csv,sys; print(sum(1 for _ in csv.reader(sys.stdin)) - 1)')
  pdfs=$(unzip -Z1 "$zip" | grep -c '^reports/' || true)
  echo "measurements.csv: $rows rows; reports: $pdfs PDFs"
  if [ "$rows" != "$expected" ]; then
    echo "expected $expected rows" >&2
    exit 1
  fi
}

echo "== server started: peak RSS $(hwm) MB"
export_of patient0@clinic.test "$small"
export_of patient1@clinic.test "$large"
# Once more each, the server warm (the PDF engine loaded by the first archive's render): the
# peak should not move with the record's size.
echo "== again, warm"
export_of patient0@clinic.test "$small"
export_of patient1@clinic.test "$large"
