#!/usr/bin/env bash
# PostgreSQL stopped for OUTAGE seconds (default 10) under load: the release server on a fresh
# PostgreSQL database (with the demo data) takes WORKERS (default 4) loops of requests for
# 10 s + OUTAGE + 10 s, each loop posting a small measurement then reading /users/v1/me; the
# machine's PostgreSQL cluster is stopped 10 s in (pg_ctlcluster ... stop -m fast) and started
# again OUTAGE seconds later. Prints the statuses per phase, the time from PostgreSQL's start
# to the first 200, and checks that every measurement answered 200 is stored, and that no
# answer was a 500 or a SERVER_EXCEPTION.
# Not in CI: it stops the PostgreSQL that everything on the machine shares.
# Usage: benches/faults/postgres_stop.sh   (ADMIN_URL=postgres://postgres@127.0.0.1:5432/postgres)
set -euo pipefail
cd "$(dirname "$0")/../.."
outage="${OUTAGE:-10}"
workers="${WORKERS:-4}"
admin_url="${ADMIN_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
cluster=$(ls /etc/postgresql)
pg() { pg_ctlcluster --skip-systemctl-redirect "$cluster" main "$@"; }
work=$(mktemp -d)
port=18192
base="http://127.0.0.1:$port"
name="tacho_fault_$$"
trap 'kill $(jobs -p) 2>/dev/null || true; pg start 2>/dev/null || true; psql "$admin_url" -qc "drop database if exists $name" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
psql "$admin_url" -qc "create database $name"
database_url="${admin_url%/*}/$name"

cargo build --release -q
cp target/release/tacho "$work/tacho"
TACHO_DATABASE_URL="$database_url" TACHO_DATA_DIR="$work/data" TACHO_ADDR="127.0.0.1:$port" \
  TACHO_LOG=warn TACHO_LOGIN_RATE=100000 "$work/tacho" serve --demo >"$work/server.log" 2>&1 &
for _ in $(seq 1 100); do curl -sf "$base/health/ready" >/dev/null && break; sleep 0.1; done
token=$(curl -s "$base/auth/v2/oauth2/tokens" -H 'Content-Type: application/json' \
  -d '{"grant_type":"password","username":"anna@tacho.test","password":"tacho-demo"}' |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
python3 - >"$work/measurement.json" <<'PY'
import json, math
rr = [round(830 + 25 * math.sin(i / 3)) for i in range(70)]
print(json.dumps({"measurement_timestamp": 1795217400000, "rr_intervals": rr,
                  "context": {"activity": "resting", "symptoms": [], "symptomSeverity": 0}}))
PY
before=$(psql "$database_url" -Atc "select count(*) from measurements")

now_ms() { date +%s%3N; }
start=$(now_ms)
end=$(( start + (20 + outage) * 1000 ))
loop() {
  local n="$1"
  while [ "$(now_ms)" -lt "$end" ]; do
    # Each answer: time, kind, HTTP status, the envelope's code (or -).
    local body="$work/body.$n" status code
    status=$(curl -s -m 15 -o "$body" -w '%{http_code}' -H "Authorization: Bearer $token" \
      -H 'Content-Type: application/json' --data-binary "@$work/measurement.json" \
      "$base/data/v1/measurements/documents" || echo 000)
    code=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("code","-"))' "$body" 2>/dev/null || echo -)
    echo "$(now_ms) post $status $code" >>"$work/answers.$n"
    status=$(curl -s -m 15 -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" \
      "$base/users/v1/me" || echo 000)
    echo "$(now_ms) me $status -" >>"$work/answers.$n"
  done
}
for n in $(seq 1 "$workers"); do loop "$n" & done
sleep 10
stopped=$(now_ms)
pg stop -m fast
sleep "$outage"
pg start
started=$(now_ms)
wait $(jobs -p | tail -n "$workers") 2>/dev/null || true
cat "$work"/answers.* | sort -n >"$work/answers"

python3 - "$work/answers" "$start" "$stopped" "$started" <<'PY'
import sys, collections
path, start, stopped, started = sys.argv[1], *map(int, sys.argv[2:])
phases = collections.OrderedDict((p, collections.Counter()) for p in ("before", "outage", "after"))
first_ok_after = None
for line in open(path):
    t, kind, status, code = line.split()
    t = int(t)
    phase = "before" if t < stopped else "outage" if t < started else "after"
    phases[phase][f"{kind} {status}" + (f" code {code}" if code not in ("-", "None") and status != "200" else "")] += 1
    if phase == "after" and status == "200" and first_ok_after is None:
        first_ok_after = t
for phase, counts in phases.items():
    print(f"{phase:>7}: " + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))
print(f"first 200 after PostgreSQL started: {first_ok_after - started} ms" if first_ok_after else "no 200 after the outage")
PY
ok_posts=$(awk '$2 == "post" && $3 == "200"' "$work/answers" | wc -l)
after=$(psql "$database_url" -Atc "select count(*) from measurements")
echo "measurements answered 200: $ok_posts; stored since the start: $(( after - before ))"
if awk '$3 == "500" || $4 == "1"' "$work/answers" | grep -q .; then
  echo "FAIL: a 500 or a SERVER_EXCEPTION was answered" >&2
  exit 1
fi
# Every 200 is stored; a post cut off mid-commit may be stored although its answer was lost.
[ $(( after - before )) -ge "$ok_posts" ] || { echo "FAIL: a measurement answered 200 is missing" >&2; exit 1; }
echo "ok: no 500, nothing lost"
