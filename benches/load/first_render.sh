#!/usr/bin/env bash
# First renders over HTTP of RR-only measurements of growing length: the release server with the
# demo data on SQLite; for each size, COUNT new measurements are posted (untimed; the analysis
# runs at upload) and for each the first `POST /data/v1/measurement-reports/documents` is timed
# (build, hash, render, store), after WARMUP untimed ones. The series are made as the peers'
# harness makes its 30-minute series (sinus rhythm with drift and respiration, alternating
# 300-beat stretches of irregular rhythm), plus one premature beat.
# TACHO_BIN runs another build of the server (e.g. an older one, to compare); REPORT_LANG the
# reports' language (default en).
# Usage: benches/load/first_render.sh [COUNT] [SIZES]   (default: 30 "71 2200 400000")
set -euo pipefail
cd "$(dirname "$0")/../.."
count="${1:-30}"
sizes="${2:-71 2200 400000}"
if [ -z "${TACHO_BIN:-}" ]; then cargo build --release -q; fi
bin="${TACHO_BIN:-target/release/tacho}"
work=$(mktemp -d)
port="${PORT:-18184}"
base="http://127.0.0.1:$port"
trap 'kill $(jobs -p) 2>/dev/null || true; [ -z "${KEEP_LOG:-}" ] || cp "$work/server.log" "$KEEP_LOG"; rm -rf "$work"' EXIT
TACHO_DATA_DIR="$work" TACHO_ADDR="127.0.0.1:$port" TACHO_LOG="${BENCH_LOG:-warn}" TACHO_LOGIN_RATE=100000 \
  "$bin" serve --demo >"$work/server.log" 2>&1 &
server=$!
for _ in $(seq 1 100); do curl -sf "$base/health/ready" >/dev/null && break; sleep 0.1; done
# Another server on the port would answer instead: make sure it is ours.
kill -0 "$server" 2>/dev/null || { cat "$work/server.log"; exit 1; }

python3 - "$base" "$count" "${WARMUP:-3}" $sizes <<'PY'
import json, math, os, random, statistics, sys, time, urllib.error, urllib.request

base, count, warmup, sizes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), [int(s) for s in sys.argv[4:]]

def call(method, path, token=None, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", "Bearer " + token)
    with urllib.request.urlopen(req, timeout=600) as r:
        return json.loads(r.read())

def series(rng, n):
    base_rr, drift, rr = rng.uniform(780, 860), 0.0, []
    for i in range(n):
        drift = 0.98 * drift + rng.gauss(0, 8)
        v = base_rr + drift + 30 * math.sin(i / 4.0)
        if (i // 300) % 2 == 1:
            v = base_rr * rng.uniform(0.55, 1.35)
        rr.append(round(v + rng.gauss(0, 10), 1))
    if n > 40:
        rr[n // 2] = round(base_rr * 0.6, 1)
        rr[n // 2 + 1] = round(base_rr * 1.4, 1)
    return rr

token = call("POST", "/auth/v2/oauth2/tokens", body={"grant_type": "password",
             "username": "anna@tacho.test", "password": "tacho-demo"})["access_token"]
print(f"{'intervals':>10} {'n':>4} {'p50 ms':>9} {'p90 ms':>9} {'min ms':>9} {'max ms':>9}")
for size in sizes:
    times = []
    for k in range(warmup + count):
        rr = series(random.Random(f"{size}-{k}"), size)
        try:
            m = call("POST", "/data/v1/measurements/documents", token,
                     {"measurement_timestamp": 1795217400000 + k * 1000,
                      "heartrate": round(60000 * len(rr) / sum(rr)), "rr_intervals": rr,
                      "context": {"symptoms": [], "activity": "resting"}, "tags": ["bench"]})
        except urllib.error.HTTPError as e:
            print(f"{size:>10} upload refused: {e.code} {e.read().decode()[:200]}")
            break
        started = time.perf_counter()
        call("POST", "/data/v1/measurement-reports/documents", token,
             {"measurementId": m["id"], "language": os.environ.get("REPORT_LANG", "en")})
        if k >= warmup:
            times.append((time.perf_counter() - started) * 1000)
    if times:
        times.sort()
        p90 = times[min(len(times) - 1, math.ceil(0.9 * len(times)) - 1)]
        print(f"{size:>10} {len(times):>4} {statistics.median(times):>9.1f} {p90:>9.1f} "
              f"{times[0]:>9.1f} {times[-1]:>9.1f}", flush=True)
PY
