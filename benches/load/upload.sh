#!/usr/bin/env bash
# Latency of a measurement upload: `POST /data/v1/measurements/documents` of the sinus_72
# camera fixture (0.4 MB: 48 channels x 1,800 frames, analysed synchronously by the server)
# against the release server on SQLite with the demo data, one request at a time, COUNT
# timed requests after 10 untimed ones; prints p50, p90 and p99 of curl's time_total, and the
# server's CPU time per upload.
# TACHO_BIN runs another build of the server (e.g. one from before the analysis, to compare:
# the analysis may add at most 1.5 ms to the p50).
# Usage: benches/load/upload.sh [COUNT]   (needs curl and python3)
set -euo pipefail
cd "$(dirname "$0")/../.."
count="${1:-200}"
if [ -z "${TACHO_BIN:-}" ]; then cargo build --release -q; fi
bin="${TACHO_BIN:-target/release/tacho}"
work=$(mktemp -d)
port=18184
base="http://127.0.0.1:$port"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
TACHO_DATA_DIR="$work" TACHO_ADDR="127.0.0.1:$port" TACHO_LOG=warn "$bin" serve --demo >"$work/server.log" 2>&1 &
server=$!
for _ in $(seq 1 100); do curl -sf "$base/health/ready" >/dev/null && break; sleep 0.1; done

token=$(curl -s "$base/auth/v2/oauth2/tokens" -H 'Content-Type: application/json' \
  -d '{"grant_type":"password","username":"anna@tacho.test","password":"tacho-demo"}' |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
upload() {
  curl -s -o "$work/answer.json" -w '%{http_code} %{time_total}\n' "$base/data/v1/measurements/documents" \
    -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    --data-binary @tests/fixtures/sinus_72.json
}

for _ in $(seq 1 10); do upload >/dev/null; done
# What the server answered: its status and, when it analyses uploads, its result.
python3 - "$work/answer.json" <<'EOF'
import json, sys
data = json.load(open(sys.argv[1])).get("data", {})
analysis = data.get("analysis")
print("answer: status", json.load(open(sys.argv[1])).get("status"),
      "| analysis:", "none" if analysis is None else
      f"{analysis.get('heart_rate')} bpm, {data.get('mostSevereLabel')}, version {analysis.get('version')}")
EOF

echo "== $count uploads of tests/fixtures/sinus_72.json ($(stat -c %s tests/fixtures/sinus_72.json) bytes), one at a time"
# The server's CPU time (user + system, from /proc) over the timed uploads: unlike the
# latency, it does not wait on the disk or on other processes, so a small change shows.
cpu() { awk '{ print $14 + $15 }' "/proc/$server/stat"; }
cpu_before=$(cpu)
for _ in $(seq 1 "$count"); do upload; done >"$work/times.txt"
cpu_after=$(cpu)
python3 - "$work/times.txt" "$((cpu_after - cpu_before))" "$(getconf CLK_TCK)" <<'EOF'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
codes = {c for c, _ in rows}
ms = sorted(float(t) * 1000 for _, t in rows)
q = lambda p: ms[min(len(ms) - 1, int(p * len(ms)))]
print(f"status {sorted(codes)}: p50 {statistics.median(ms):.2f} ms, p90 {q(0.9):.2f} ms, "
      f"p99 {q(0.99):.2f} ms, mean {statistics.mean(ms):.2f} ms over {len(ms)} uploads; "
      f"server CPU {int(sys.argv[2]) * 1000 / int(sys.argv[3]) / len(ms):.2f} ms per upload")
EOF
