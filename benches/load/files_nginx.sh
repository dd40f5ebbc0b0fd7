#!/usr/bin/env bash
# A cached PDF from Tacho against the same file from nginx, in one run on loopback.
#
# Starts the release server (`serve --demo`, SQLite, TACHO_LOG=warn) and renders one English
# report of tests/fixtures/sinus_72.json; starts Debian's nginx-light on another loopback port
# serving that same PDF from a temporary directory (sendfile, access log off, one worker per
# core, as Tacho has one HTTP worker per core); then runs `wrk -t2 -c64 -d${DURATION}s` against
# `GET /files/v1/<token>/file` and against nginx, alternately, ROUNDS times, and prints
# requests/s per round and Tacho's share of nginx's rate.
#
# Usage: benches/load/files_nginx.sh [DURATION] [ROUNDS]      (defaults 10 and 3)
#   TACHO_BIN=path   use this binary instead of building the release one
#   TACHO_FILE_CACHE_BYTES=0 (or any other TACHO_* setting) is passed on to the server
# Installs nginx-light and wrk with apt-get when missing (needs root).
set -euo pipefail
cd "$(dirname "$0")/../.."
duration="${1:-10}"
rounds="${2:-3}"
tacho_port=18184
nginx_port=18185

missing=$(for p in nginx-light wrk curl; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
if [ -n "$missing" ]; then
  apt-get update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
fi

work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
base="http://127.0.0.1:$tacho_port"
# shellcheck source=benches/load/demo_server.sh
source benches/load/demo_server.sh
demo_server "$tacho_port"
json() { python3 -c "import json,sys; print(json.load(sys.stdin)$1)"; }
token=$(curl -s "$base/auth/v2/oauth2/tokens" -H 'Content-Type: application/json' \
  -d '{"grant_type":"password","username":"anna@tacho.test","password":"tacho-demo"}' | json '["access_token"]')
auth=(-H "Authorization: Bearer $token" -H 'Content-Type: application/json')
measurement=$(curl -s "$base/data/v1/measurements/documents" "${auth[@]}" \
  --data-binary @tests/fixtures/sinus_72.json | json '["id"]')
file=$(curl -s "$base/data/v1/measurement-reports/documents" "${auth[@]}" \
  -d "{\"measurementId\":\"$measurement\",\"language\":\"en\"}" | json '["data"]["readFileToken"]')
tacho_url="$base/files/v1/$file/file"

# nginx serves the very bytes Tacho serves. Its workers run as nobody: the tree must be readable.
mkdir -p "$work/www" "$work/nginx"
curl -sf -o "$work/www/report.pdf" "$tacho_url"
chmod 755 "$work" "$work/www"
chmod 644 "$work/www/report.pdf"
cat >"$work/nginx/nginx.conf" <<EOF
daemon off;
worker_processes auto;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  client_body_temp_path $work/nginx/body;
  proxy_temp_path $work/nginx/proxy;
  fastcgi_temp_path $work/nginx/fastcgi;
  uwsgi_temp_path $work/nginx/uwsgi;
  scgi_temp_path $work/nginx/scgi;
  types { application/pdf pdf; }
  server {
    listen 127.0.0.1:$nginx_port;
    root $work/www;
  }
}
EOF
nginx -e "$work/nginx/error.log" -p "$work/nginx" -c "$work/nginx/nginx.conf" &
nginx_url="http://127.0.0.1:$nginx_port/report.pdf"
for _ in $(seq 1 100); do curl -sf -o /dev/null "$nginx_url" && break; sleep 0.1; done
curl -sf -o "$work/from-nginx.pdf" "$nginx_url"
cmp -s "$work/www/report.pdf" "$work/from-nginx.pdf" || { echo "nginx serves other bytes" >&2; exit 1; }
size=$(stat -c %s "$work/www/report.pdf")

rate() { wrk -t2 -c64 -d"${duration}s" "$1" | awk '/^Requests\/sec:/ { printf "%.0f", $2 }'; }
echo "# $(date -u +%F) $(nproc) cores, $size-byte PDF, wrk -t2 -c64 -d${duration}s, $(nginx -v 2>&1 | cut -d' ' -f3)"
echo "| round | Tacho req/s | nginx req/s | Tacho / nginx |"
echo "|---:|---:|---:|---:|"
for round in $(seq 1 "$rounds"); do
  ours=$(rate "$tacho_url")
  theirs=$(rate "$nginx_url")
  echo "| $round | $ours | $theirs | $(python3 -c "print(f'{$ours / $theirs:.0%}')") |"
done
