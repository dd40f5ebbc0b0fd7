#!/usr/bin/env bash
# Soak: DURATION seconds (default 60) at CONNECTIONS connections (default 256) of mixed traffic
# against the release server with the demo data on SQLite, with wrk (2 threads). Every request
# of the mix is sent in turn on each connection:
#   GET  /users/v1/me                              (patient, bearer)
#   GET  /data/v1/measurements/documents           (patient, bearer: a page of measurements)
#   GET  /users/v1?limit(20)                        (physician, bearer: the patients he sees)
#   POST /data/v1/measurement-reports/documents    (patient, 8 languages: render once, then cached)
#   GET  /files/v1/<token>/file                    (a report's PDF)
#   GET  /portal/measurements                      (patient, session cookie)
#   GET  /portal/patients                          (physician, session cookie)
# Prints wrk's latency distribution and request count, then the statuses the server logged
# (any non-2xx is an error here). TACHO_BIN runs another build.
# Usage: benches/load/soak.sh [DURATION] [CONNECTIONS]   (needs wrk: apt-get install wrk)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=benches/load/needs.sh
source benches/load/needs.sh
needs wrk curl
duration="${1:-60}"
connections="${2:-256}"
work=$(mktemp -d)
port=18191
base="http://127.0.0.1:$port"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
. benches/load/demo_server.sh
demo_server "$port"

token() {
  curl -s "$base/auth/v2/oauth2/tokens" -H 'Content-Type: application/json' \
    -d "{\"grant_type\":\"password\",\"username\":\"$1\",\"password\":\"tacho-demo\"}" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])'
}
login() {
  local jar="$work/$1.jar" csrf
  csrf=$(curl -s -c "$jar" -b "$jar" "$base/portal/login" | grep -o 'name="csrf" value="[0-9a-f]*"' | head -1 | sed 's/.*value="//; s/"//')
  curl -s -c "$jar" -b "$jar" -o /dev/null -d "csrf=$csrf&email=$1&password=tacho-demo" "$base/portal/login"
  awk '$6 == "tacho_session" { print "tacho_session=" $7 }' "$jar"
}
patient_token=$(token anna@tacho.test)
physician_token=$(token dr.peeters@tacho.test)
patient_cookie=$(login anna@tacho.test)
physician_cookie=$(login dr.peeters@tacho.test)
measurement=$(curl -s -H "Authorization: Bearer $patient_token" \
  "$base/data/v1/measurements/documents?eq(status,analyzed)" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["data"][0]["id"])')
file_token=$(curl -s -H "Authorization: Bearer $patient_token" -H 'Content-Type: application/json' \
  -d "{\"measurementId\":\"$measurement\",\"language\":\"en\"}" \
  "$base/data/v1/measurement-reports/documents" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["readFileToken"])')

cat >"$work/mix.lua" <<LUA
local requests = {}
local patient = { ["Authorization"] = "Bearer $patient_token" }
local physician = { ["Authorization"] = "Bearer $physician_token" }
local json = { ["Authorization"] = "Bearer $patient_token", ["Content-Type"] = "application/json" }
local languages = { "en", "nl", "de", "fr", "es", "it", "ar", "zh" }
local counts = {}
local index = 0

init = function(args)
  table.insert(requests, wrk.format("GET", "/users/v1/me", patient))
  table.insert(requests, wrk.format("GET", "/data/v1/measurements/documents", patient))
  table.insert(requests, wrk.format("GET", "/users/v1?limit(20)", physician))
  for _, language in ipairs(languages) do
    table.insert(requests, wrk.format("POST", "/data/v1/measurement-reports/documents", json,
      '{"measurementId":"$measurement","language":"' .. language .. '"}'))
  end
  table.insert(requests, wrk.format("GET", "/files/v1/$file_token/file"))
  table.insert(requests, wrk.format("GET", "/portal/measurements", { ["Cookie"] = "$patient_cookie" }))
  table.insert(requests, wrk.format("GET", "/portal/patients", { ["Cookie"] = "$physician_cookie" }))
  index = math.random(#requests) - 1
end

request = function()
  index = index % #requests + 1
  return requests[index]
end
LUA

echo "== soak: ${duration}s at $connections connections, $(wc -l <"$work/mix.lua") lines of mix"
wrk -t2 -c"$connections" -d"${duration}s" --timeout 10s --latency -s "$work/mix.lua" "$base" |
  grep -E 'Latency|requests in|Requests/sec|Non-2xx|Socket errors|50%|75%|90%|99%'
if grep -qiE '"level":"(ERROR|WARN)"|ERROR|WARN' "$work/server.log"; then
  echo "== the server logged warnings or errors:"
  grep -iE 'ERROR|WARN' "$work/server.log" | head -20
else
  echo "== the server logged no warning and no error"
fi
