#!/usr/bin/env bash
# Peak memory of PARALLEL simultaneous `GET /data/v1/measurements/documents?limit(50)` lists
# (default 50), each page holding 50 measurements of the largest size an upload may have:
# every signal array at its bound (30,000 frames of 4 x 4 cells of Y, U and V with one
# decimal, frame times, acc and gyro x/y/z, 18,000 RR intervals), just under the 10 MiB body
# limit. Release server on SQLite. A fresh user uploads 50 of them; the server is then
# restarted on the same data, so that its peak resident set (VmHWM in /proc/<pid>/status)
# covers start-up and the lists only; the lists are fired with curl through xargs -P.
# TACHO_BIN runs another build of the server (e.g. one from before the lists were streamed).
# MEMORY_CAP_MB caps the server's address space (ulimit -v) so that a build that would take
# more memory than the machine has fails alone instead of starving the machine.
# UPLOADS (default 50) stores fewer measurements, for a quick check of the script.
# Usage: benches/load/list_memory.sh [PARALLEL]   (needs curl and python3)
set -euo pipefail
cd "$(dirname "$0")/../.."
parallel="${1:-50}"
uploads="${UPLOADS:-50}"
target="${CARGO_TARGET_DIR:-target}"
if [ -z "${TACHO_BIN:-}" ]; then cargo build --release -q --bin tacho; fi
bin="${TACHO_BIN:-$target/release/tacho}"
work=$(mktemp -d)
port=18185
base="http://127.0.0.1:$port"
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; wait; rm -rf "$work"' EXIT

start() {
  (
    if [ -n "${MEMORY_CAP_MB:-}" ]; then ulimit -v $((MEMORY_CAP_MB * 1024)); fi
    TACHO_DATA_DIR="$work" TACHO_ADDR="127.0.0.1:$port" TACHO_LOG=warn \
      TACHO_SCHEDULER_TICK=0 exec "$bin" serve >>"$work/server.log" 2>&1
  ) &
  server=$!
  for _ in $(seq 1 200); do curl -sf "$base/health/ready" >/dev/null && return; sleep 0.1; done
  echo "the server did not start" >&2; cat "$work/server.log" >&2; exit 1
}
hwm() { awk '/VmHWM/ { print int($2 / 1024) }' "/proc/$server/status"; }

python3 - "$work/payload.json" <<'EOF'
import json, math, random, sys
rng = random.Random(7)
frames, rate = 30_000, 250.0
t = [round(i * 1000 / rate) for i in range(frames)]
def pulse(i, base, amp):
    s = i / rate
    return round(base + amp * math.sin(2 * math.pi * 1.2 * s) + rng.gauss(0, 0.3), 1)
quadrants = [[{ch: [pulse(i, 120 + 10 * r + c, 3 - r * 0.4) for i in range(frames)]
               for ch in ("y", "u", "v")} for c in range(4)] for r in range(4)]
motion = lambda: {axis: [round(rng.gauss(0, 0.002), 4) for _ in range(frames)] for axis in "xyz"}
payload = {"measurement_timestamp": 1_795_217_400_000, "heartrate": 72,
           "rr_intervals": [800 + rng.choice((0, 6, -4, 3, -5)) for _ in range(18_000)],
           "time": t, "quadrants": quadrants, "acc": motion(), "gyro": motion(),
           "technical_details": {"camera_fps": 250, "duration_ms": 120_000, "frame_count": frames},
           "context": {"symptoms": [], "activity": "rest"}, "tags": ["largest"]}
json.dump(payload, open(sys.argv[1], "w"), separators=(",", ":"))
EOF
size=$(stat -c %s "$work/payload.json")

start
curl -sf "$base/users/v1/register" -H 'Content-Type: application/json' -o /dev/null \
  -d '{"first_name":"Max","last_name":"Size","email":"max@tacho.test","password":"correct horse battery","language":"EN","time_zone":"Europe/Brussels"}'
token=$(curl -s "$base/auth/v2/oauth2/tokens" -H 'Content-Type: application/json' \
  -d '{"grant_type":"password","username":"max@tacho.test","password":"correct horse battery"}' |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
for _ in $(seq 1 "$uploads"); do
  read -r code seconds < <(curl -s -o /dev/null -w '%{http_code} %{time_total}\n' \
    "$base/data/v1/measurements/documents" -H "Authorization: Bearer $token" \
    -H 'Content-Type: application/json' --data-binary @"$work/payload.json")
  [ "$code" = 200 ] || { echo "upload answered $code" >&2; exit 1; }
  echo "$seconds"
done >"$work/uploads.txt"
python3 - "$work/uploads.txt" "$size" <<'EOF'
import statistics, sys
ms = sorted(float(t) * 1000 for t in open(sys.argv[1]))
print(f"== {len(ms)} uploads of {int(sys.argv[2])} bytes (every array at its bound), one at a time: "
      f"p50 {statistics.median(ms):.0f} ms, max {ms[-1]:.0f} ms")
EOF
echo "== restarting the server on the same data"
kill "$server"; wait "$server" 2>/dev/null || true
start
echo "VmHWM after start: $(hwm) MiB"
# One list first, read whole: the page is what the wire shape says it is.
curl -s "$base/data/v1/measurements/documents?limit(50)" -H "Authorization: Bearer $token" \
  -o "$work/one.json"
python3 - "$work/one.json" "$uploads" <<'EOF'
import json, sys
page = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
assert page["page"] == {"total": n, "offset": 0, "limit": 50}, page["page"]
assert len(page["data"]) == n and all(len(d["data"]["time"]) == 30_000 for d in page["data"])
print(f"one list read whole: {len(page['data'])} documents, envelope {page['page']}")
EOF
rm "$work/one.json"

list() {
  curl -s -o /dev/null -w '%{http_code} %{size_download} %{time_total}\n' \
    "$base/data/v1/measurements/documents?limit(50)" -H "Authorization: Bearer $token" || echo "failed 0 0"
}
export -f list; export base token
started=$(date +%s.%N)
# VmHWM sampled meanwhile too, for a server that does not live to the end.
( while kill -0 "$server" 2>/dev/null; do
    peak=$(hwm 2>/dev/null) && [ -n "$peak" ] && echo "$peak" >"$work/hwm.txt"; sleep 0.2
  done ) &
sampler=$!
seq 1 "$parallel" | xargs -P "$parallel" -I{} bash -c list >"$work/lists.txt"
elapsed=$(python3 -c "import time; print(f'{time.time() - $started:.1f}')")
alive=yes; kill -0 "$server" 2>/dev/null || alive=no
python3 - "$work/lists.txt" "$parallel" "$elapsed" <<'EOF'
import collections, sys
rows = [line.split() for line in open(sys.argv[1]) if line.strip()]
codes = collections.Counter(r[0] for r in rows)
sizes = sorted(int(r[1]) for r in rows)
print(f"== {sys.argv[2]} parallel lists of limit(50) in {sys.argv[3]} s: status {dict(codes)}, "
      f"body {sizes[0] / 1e6:.1f} to {sizes[-1] / 1e6:.1f} MB")
EOF
if [ "$alive" = yes ]; then
  echo "server peak resident set (VmHWM): $(hwm) MiB"
else
  echo "the server died during the lists; its last VmHWM sample: $(cat "$work/hwm.txt") MiB"
  tail -3 "$work/server.log"
fi
if grep -q ERROR "$work/server.log"; then
  echo "server errors: $(grep -c ERROR "$work/server.log"), the first:"
  grep -m1 ERROR "$work/server.log" | cut -c1-400
fi
