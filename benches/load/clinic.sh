#!/usr/bin/env bash
# A clinic's lists at its size: `tacho demo --patients P --measurements M` builds the clinic
# (timed) into a fresh SQLite database, or into PostgreSQL when DATABASE_URL names an empty
# database; the release server then serves it and each list below is requested for DURATION
# seconds by one connection (wrk --latency: p50 and p99 of a page alone), as the first group's
# physician (dr1.1@clinic.test) or the administrator.
#
# PER_GROUP patients share a group (default: all of them in one, as a single clinic; its
# physician then sees every measurement).
# TACHO_BIN runs another build of the server (e.g. an older one, to compare).
# CLINIC_DIR keeps the SQLite clinic in that folder: built there on first use, served again
# without a build on the next run (to compare builds of the server on the same data).
# CLINIC_BUILT=1 with DATABASE_URL serves the clinic already built in that PostgreSQL database.
# Usage: benches/load/clinic.sh [PATIENTS] [MEASUREMENTS] [DURATION]   (defaults 500 10 10;
#   needs wrk and curl: apt-get install wrk curl)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=benches/load/needs.sh
source benches/load/needs.sh
needs wrk curl
patients="${1:-500}"
measurements="${2:-10}"
duration="${3:-10}"
per_group="${PER_GROUP:-$patients}"
if [ -z "${TACHO_BIN:-}" ]; then cargo build --release -q --bin tacho; fi
bin="${TACHO_BIN:-target/release/tacho}"
work=$(mktemp -d)
data="${CLINIC_DIR:-$work}"
port="${PORT:-18186}"
base="http://127.0.0.1:$port"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
export TACHO_DATA_DIR="$data" TACHO_LOG=warn TACHO_LOGIN_RATE=100000
if [ -n "${DATABASE_URL:-}" ]; then export TACHO_DATABASE_URL="$DATABASE_URL"; fi

if [ -n "${CLINIC_DIR:-}" ] && [ -f "$data/tacho.db" ] || [ -n "${CLINIC_BUILT:-}" ]; then
  if [ -n "${DATABASE_URL:-}" ]; then echo "== the clinic already built in the PostgreSQL database"; else echo "== the clinic already built in $data"; fi
else
  echo "== tacho demo --patients $patients --measurements $measurements --patients-per-group $per_group"
  start=$(date +%s.%N)
  "$bin" demo --patients "$patients" --measurements "$measurements" --patients-per-group "$per_group" 2>/dev/null |
    head -1
  echo "built in $(echo "$(date +%s.%N) - $start" | bc) s"
fi

TACHO_ADDR="127.0.0.1:$port" "$bin" serve >"$work/server.log" 2>&1 &
for _ in $(seq 1 100); do curl -sf "$base/health/ready" >/dev/null && break; sleep 0.1; done
curl -sf "$base/health/ready" >/dev/null || { cat "$work/server.log" >&2; exit 1; }

# shellcheck source=benches/load/portal_login.sh
source benches/load/portal_login.sh
bearer() {
  curl -s "$base/auth/v2/oauth2/tokens" -H 'Content-Type: application/json' \
    -d "{\"grant_type\":\"password\",\"username\":\"$1\",\"password\":\"tacho-demo\"}" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])'
}
measure() {
  local header="$1" path="$2"
  printf '%-64s' "$path"
  wrk -t1 -c1 -d"${duration}s" --latency -H "$header" "$base$path" |
    awk '/ 50%/ { p50 = $2 } / 99%/ { p99 = $2 } /Non-2xx/ { bad = $0 } END { printf "p50 %-9s p99 %-9s %s\n", p50, p99, bad }'
}

physician=$(login dr1.1@clinic.test)
admin=$(login admin@tacho.test)
physician_token=$(bearer dr1.1@clinic.test)
admin_token=$(bearer admin@tacho.test)
echo "== physician (dr1.1@clinic.test), one connection, ${duration} s each"
measure "Cookie: $physician" /portal/worklist
measure "Cookie: $physician" /portal/patients
measure "Cookie: $physician" /portal/notifications
measure "Authorization: Bearer $physician_token" '/data/v1/measurements/documents?limit(50)&sort(-id)'
measure "Authorization: Bearer $physician_token" /notifications/v1
measure "Authorization: Bearer $physician_token" /reports/v1
echo "== administrator"
measure "Cookie: $admin" /portal/admin/users
measure "Cookie: $admin" /portal/admin/audit
measure "Authorization: Bearer $admin_token" '/users/v1?limit(50)'
measure "Authorization: Bearer $admin_token" '/data/v1/measurements/documents?limit(50)&sort(-id)'
