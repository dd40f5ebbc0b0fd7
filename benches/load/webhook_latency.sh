#!/usr/bin/env bash
# From event to webhook: the release server on SQLite with the demo data, a webhook endpoint
# on loopback (benches/load/sinks.py) for the `measurement.analysed` events of Anna's care
# team, and COUNT uploads of the sinus_72 fixture by Anna, one at a time, 50 ms apart. For
# each event, the time from its write (inside the upload's transaction, `events.
# creation_timestamp`) to the receiver reading the request; prints p50, p90 and p99, and the
# uploads' own latency for comparison.
# Usage: benches/load/webhook_latency.sh [COUNT]   (needs curl, python3 and sqlite3)
set -euo pipefail
cd "$(dirname "$0")/../.."
count="${1:-200}"
if [ -z "${TACHO_BIN:-}" ]; then cargo build --release -q; fi
bin="${TACHO_BIN:-target/release/tacho}"
work=$(mktemp -d)
port=18187
base="http://127.0.0.1:$port"
trap 'kill $(jobs -p) 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
echo "work: $work"
python3 benches/load/sinks.py 12526 18188 "$work/hooks.log" &
TACHO_DATA_DIR="$work" TACHO_ADDR="127.0.0.1:$port" TACHO_LOG=warn TACHO_WEBHOOK_ALLOW_LOOPBACK=1 \
  "$bin" serve --demo >"$work/server.log" 2>&1 &
for _ in $(seq 1 600); do curl -sf "$base/health/ready" >/dev/null && break; sleep 0.1; done

login() {
  curl -s "$base/auth/v2/oauth2/tokens" -H 'Content-Type: application/json' \
    -d "{\"grant_type\":\"password\",\"username\":\"$1\",\"password\":\"tacho-demo\"}" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])'
}
anna=$(login anna@tacho.test)
admin=$(login admin@tacho.test)
group=$(curl -s "$base/users/v1/me" -H "Authorization: Bearer $anna" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["patient_enlistments"][0]["group_id"])')
curl -sf "$base/webhooks/v1" -H "Authorization: Bearer $admin" -H 'Content-Type: application/json' \
  -d "{\"url\":\"http://127.0.0.1:18188/hooks\",\"events\":[\"measurement.analysed\"],\"group_id\":\"$group\"}" >/dev/null

echo "== $count uploads by Anna, 50 ms apart, each delivered to a webhook on loopback"
for _ in $(seq 1 "$count"); do
  curl -s -o /dev/null -w '%{http_code} %{time_total}\n' "$base/data/v1/measurements/documents" \
    -H "Authorization: Bearer $anna" -H 'Content-Type: application/json' \
    --data-binary @tests/fixtures/sinus_72.json
  sleep 0.05
done >"$work/uploads.txt"
for _ in $(seq 1 100); do
  [ "$(wc -l <"$work/hooks.log")" -ge "$count" ] && break
  sleep 0.1
done
sqlite3 "$work/tacho.db" "SELECT id, creation_timestamp FROM events WHERE kind = 'measurement.analysed'" >"$work/events.txt"
python3 - "$work/hooks.log" "$work/events.txt" "$work/uploads.txt" <<'EOF'
import statistics, sys
written = dict(line.strip().split("|") for line in open(sys.argv[2]) if line.strip())
arrivals = [line.split() for line in open(sys.argv[1])]
ms = sorted(float(t) - int(written[i]) for t, i in arrivals if i in written)
q = lambda p: ms[min(len(ms) - 1, int(p * len(ms)))]
print(f"event written → webhook received: p50 {statistics.median(ms):.1f} ms, p90 {q(0.9):.1f} ms, "
      f"p99 {q(0.99):.1f} ms, max {ms[-1]:.1f} ms over {len(ms)} deliveries ({len(written)} events)")
up = sorted(float(t) * 1000 for _, t in (l.split() for l in open(sys.argv[3])))
print(f"the uploads themselves: p50 {statistics.median(up):.1f} ms, p90 {up[int(0.9 * len(up))]:.1f} ms")
EOF
