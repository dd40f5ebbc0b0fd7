#!/usr/bin/env bash
# What the synchronous analysis adds to an upload, measured against a build without it in the
# same run: two release servers (SQLite, demo data) side by side, BASELINE_BIN (a build from
# before the analysis) and target/release/tacho, receive the same upload
# (`POST /data/v1/measurements/documents` of tests/fixtures/sinus_72.json, 0.4 MB) in turn,
# A B A B …, one request at a time over a kept-alive connection each. Whatever else the
# machine does falls on both alike; the script prints each build's p50 and p90, the median of
# the paired differences (this build minus the baseline) with a 95 % interval from the
# pairs' bootstrap, and each server's CPU time per upload.
#
# Usage: BASELINE_BIN=/path/to/old/tacho [CURRENT_BIN=/path/to/new/tacho] \
#          benches/load/upload_compare.sh [PAIRS]
#   (CURRENT_BIN defaults to this checkout's release build, made first)
#   (a baseline: `git worktree add /tmp/base f22b4ec && cd /tmp/base &&
#    cargo build --release && cp target/release/tacho /tmp/tacho-f22b4ec`)
set -euo pipefail
cd "$(dirname "$0")/../.."
pairs="${1:-300}"
baseline="${BASELINE_BIN:?BASELINE_BIN must name a build of the server to compare with}"
current="${CURRENT_BIN:-}"
if [ -z "$current" ]; then
  cargo build --release -q
  current=target/release/tacho
fi
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

start() { # name binary port
  mkdir -p "$work/$1"
  TACHO_DATA_DIR="$work/$1" TACHO_ADDR="127.0.0.1:$3" TACHO_LOG=warn "$2" serve --demo \
    >"$work/$1/server.log" 2>&1 &
  echo $! >"$work/$1/pid"
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$3/health/ready" >/dev/null && return; sleep 0.1; done
  echo "$1 did not start" >&2
  exit 1
}
start baseline "$baseline" 18191
start current "$current" 18192

python3 - "$pairs" "$(getconf CLK_TCK)" "$(cat "$work/baseline/pid")" "$(cat "$work/current/pid")" <<'EOF'
import http.client, json, random, statistics, sys, time

pairs, tick = int(sys.argv[1]), int(sys.argv[2])
pids = {"baseline": sys.argv[3], "current": sys.argv[4]}
ports = {"baseline": 18191, "current": 18192}
body = open("tests/fixtures/sinus_72.json", "rb").read()

def cpu(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / tick

connections, headers = {}, {}
for name, port in ports.items():
    c = http.client.HTTPConnection("127.0.0.1", port)
    c.request("POST", "/auth/v2/oauth2/tokens", json.dumps({"grant_type": "password",
              "username": "anna@tacho.test", "password": "tacho-demo"}),
              {"Content-Type": "application/json"})
    token = json.loads(c.getresponse().read())["access_token"]
    connections[name] = c
    headers[name] = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}

def upload(name):
    c = connections[name]
    t0 = time.perf_counter()
    c.request("POST", "/data/v1/measurements/documents", body, headers[name])
    r = c.getresponse()
    answer = r.read()
    ms = (time.perf_counter() - t0) * 1000
    if r.status not in (200, 201):
        raise SystemExit(f"{name}: {r.status} {answer[:200]!r}")
    return ms, json.loads(answer)

for name in ports:
    for _ in range(10):
        _, answer = upload(name)
    analysis = answer.get("data", {}).get("analysis")
    print(f"{name}: status {answer.get('status')}, analysis "
          f"{'none' if analysis is None else analysis.get('version')}")

times = {name: [] for name in ports}
cpu_before = {name: cpu(pid) for name, pid in pids.items()}
for i in range(pairs):
    order = ["baseline", "current"] if i % 2 == 0 else ["current", "baseline"]
    for name in order:
        times[name].append(upload(name)[0])
cpu_spent = {name: cpu(pid) - cpu_before[name] for name, pid in pids.items()}

def q(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(p * len(s)))]

for name in ports:
    print(f"{name}: p50 {statistics.median(times[name]):.2f} ms, p90 {q(times[name], 0.9):.2f} ms, "
          f"server CPU {cpu_spent[name] * 1000 / pairs:.2f} ms per upload over {pairs} uploads")
differences = [c - b for b, c in zip(times["baseline"], times["current"])]
rng = random.Random(7)
medians = sorted(statistics.median(rng.choices(differences, k=len(differences)))
                 for _ in range(2000))
print(f"current - baseline: median of paired differences {statistics.median(differences):+.2f} ms "
      f"(95 % bootstrap interval {medians[50]:+.2f} to {medians[1949]:+.2f} ms); "
      f"p50 difference {statistics.median(times['current']) - statistics.median(times['baseline']):+.2f} ms")
EOF
