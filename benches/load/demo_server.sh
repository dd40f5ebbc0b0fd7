# Sourced by the load scripts: `demo_server PORT` starts `tacho serve --demo` on 127.0.0.1:PORT
# with a temporary data directory under "$work" (which the caller made and cleans up), from a
# private copy of the release binary (TACHO_BIN, or the one `cargo build --release` leaves), so
# that another build sharing the target directory cannot swap it mid-run. It returns once the
# server answers, and fails with the server's log if it does not.
demo_server() {
  local port="$1"
  if [ -n "${TACHO_BIN:-}" ]; then
    cp "$TACHO_BIN" "$work/tacho"
  else
    cargo build --release -q
    local target
    target=$(cargo metadata --format-version 1 --no-deps |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
    cp "$target/release/tacho" "$work/tacho"
  fi
  TACHO_DATA_DIR="$work/data" TACHO_ADDR="127.0.0.1:$port" TACHO_LOG=warn TACHO_LOGIN_RATE=100000 \
    "$work/tacho" serve --demo >"$work/server.log" 2>&1 &
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/health/ready" >/dev/null && break; sleep 0.1; done
  curl -sf "http://127.0.0.1:$port/health/ready" >/dev/null || { cat "$work/server.log" >&2; return 1; }
}
