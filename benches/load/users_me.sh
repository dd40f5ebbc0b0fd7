#!/usr/bin/env bash
# Load benchmark of GET /users/v1/me: the release server with the demo data, 64 concurrent
# connections (wrk, 2 threads) for DURATION seconds, on SQLite and (when reachable) PostgreSQL,
# with the read cache (the default) and without it (TACHO_CACHE_TTL_MS=0).
# Usage: benches/load/users_me.sh [DURATION]   (needs wrk: apt-get install wrk)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=benches/load/needs.sh
source benches/load/needs.sh
needs wrk curl
duration="${1:-20}"
pg_url="${BENCH_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
cargo build --release -q
bin=target/release/tacho
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

run() {
  local label="$1" url="$2" port=18181
  for ttl in 2000 0; do
    measure "$label" "$url" "$port" "$ttl"
  done
}

measure() {
  local label="$1" url="$2" port="$3" ttl="$4"
  TACHO_DATA_DIR="$work/$label" TACHO_DATABASE_URL="$url" TACHO_ADDR="127.0.0.1:$port" TACHO_LOG="${BENCH_LOG:-warn}" \
    TACHO_CACHE_TTL_MS="$ttl" "$bin" serve --demo >"$work/$label.log" 2>&1 &
  local server=$!
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/health/ready" >/dev/null && break; sleep 0.1; done
  local token
  token=$(curl -s "http://127.0.0.1:$port/auth/v2/oauth2/tokens" -H 'Content-Type: application/json' \
    -d '{"grant_type":"password","username":"anna@tacho.test","password":"tacho-demo"}' |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
  echo "== $label, cache TTL ${ttl} ms: GET /users/v1/me, 64 connections, ${duration}s"
  wrk -t2 -c64 -d"${duration}s" --latency -H "Authorization: Bearer $token" "http://127.0.0.1:$port/users/v1/me"
  kill "$server"; wait "$server" 2>/dev/null || true
}

run sqlite "sqlite://$work/sqlite/tacho.db?mode=rwc"
if pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
  db="tacho_bench_$$"
  psql "$pg_url" -qc "create database $db"
  run postgres "${pg_url%/*}/$db"
  psql "$pg_url" -qc "drop database $db"
fi
