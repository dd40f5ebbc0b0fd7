#!/usr/bin/env bash
# `tacho reports run-due` on a database with PATIENTS × 6 due periodic reports: every patient
# has a 30-day prescription that started 31 days ago (four weeks, a month and its end are due)
# and a measurement twice a day. Prints the run's own summary and its wall time and peak memory
# (GNU time). SQLite by default; set TACHO_DATABASE_URL to a fresh PostgreSQL database instead.
# Every report is an event for its patient (inbox) and for the ward's physician (inbox).
# NOTIFY=deliver also sends each patient's e-mail to an SMTP server on loopback and each
# event to a webhook endpoint on loopback (benches/load/sinks.py), the physician choosing a
# daily digest; the deliveries are worked by the same run.
# TACHO_BIN runs another build (e.g. one from before notifications, to compare).
# KILL_AFTER=<seconds> is the fault run: the first run-due is killed with SIGKILL after that
# long, a second one (after the 5 s lease of the killed run's jobs) finishes the work, and the
# script checks that no report, event or inbox entry was lost or doubled (SQLite only).
# Usage: benches/load/run_due.sh [PATIENTS]   (needs python3 and /usr/bin/time)
set -euo pipefail
cd "$(dirname "$0")/../.."
patients="${1:-1667}"
notify="${NOTIFY:-}"
if [ -z "${TACHO_BIN:-}" ]; then cargo build --release -q; fi
bin="${TACHO_BIN:-target/release/tacho}"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
export TACHO_DATA_DIR="$work" TACHO_LOG=warn
"$bin" migrate >/dev/null
if [ "$notify" = deliver ]; then
  python3 benches/load/sinks.py 12525 18186 "$work/hooks.log" &
  sinks=$!
  export TACHO_SMTP_URL=smtp://127.0.0.1:12525 TACHO_WEBHOOK_ALLOW_LOOPBACK=1
fi

echo "== seeding $patients patients, $((patients * 60)) measurements"
python3 - "$patients" "$work/seed.sql" "$notify" <<'PY'
import json, os, sys, time
patients, out, notify = int(sys.argv[1]), sys.argv[2], sys.argv[3]
now = int(time.time() * 1000)
day = 86_400_000
start = now - 31 * day
counter = iter(range(1, 10**9))
def oid():
    return f"{now // 1000:08x}{os.urandom(5).hex()}{next(counter) % (1 << 24):06x}"
group = oid()
rows = [f"INSERT INTO groups (id, name, description, creation_timestamp, update_timestamp) VALUES ('{group}', 'Ward', NULL, {start}, {start});"]
indicators = ["normal", "normal", "irregular", "tachycardia"]
def user_row(user, email, first, last):
    return (
        "INSERT INTO users (id, email, password_hash, first_name, last_name, phone_number, language, time_zone, "
        "activation, roles, profile_image, failed_count, last_failed_timestamp, creation_timestamp, update_timestamp) "
        f"VALUES ('{user}', '{email}', 'x', '{first}', '{last}', NULL, 'EN', 'Europe/Brussels', true, '[]', NULL, 0, NULL, {start}, {start});"
    )
physician = oid()
rows.append(user_row(physician, "dr@bench.test", "Doctor", "Ward"))
rows.append(
    "INSERT INTO staff_enlistments (id, user_id, group_id, roles, creation_timestamp, update_timestamp) "
    f"VALUES ('{oid()}', '{physician}', '{group}', '[]', {start}, {start});"
)
if notify == "deliver":
    rows.append(
        "INSERT INTO notification_preferences (user_id, muted, daily_digest, attach_pdf, update_timestamp) "
        f"VALUES ('{physician}', '', true, false, {start});"
    )
    rows.append(
        "INSERT INTO webhook_endpoints (id, group_id, url, events, enabled, disabled_reason, creator_id, "
        "creation_timestamp, update_timestamp) VALUES "
        f"('{oid()}', '{group}', 'http://127.0.0.1:18186/hooks', 'periodic_report.created', true, NULL, '{physician}', {start}, {start});"
    )
for p in range(patients):
    user = oid()
    rows.append(user_row(user, f"p{p}@bench.test", "Patient", str(p)))
    rows.append(
        "INSERT INTO patient_enlistments (id, user_id, group_id, creation_timestamp, expiry_timestamp, scheduled_until) "
        f"VALUES ('{oid()}', '{user}', '{group}', {start}, {start + 30 * day}, NULL);"
    )
    values = []
    for n in range(60):
        at = start + n * day // 2 + 3_600_000
        summary = json.dumps({"symptoms": ["palpitations"] if n % 4 == 1 else [], "quality": "good"})
        data = json.dumps({"measurement_timestamp": at, "heartrate": 60 + n % 40})
        values.append(
            f"('{oid()}', '{user}', 'analyzed', '{data}', {at}, {60 + n % 40}, '{indicators[n % 4]}', '{summary}', {at}, {at}, {at})"
        )
    rows.append(
        "INSERT INTO measurements (id, creator_id, status, data, measurement_timestamp, heartrate, indicator, summary, "
        "creation_timestamp, update_timestamp, status_changed_timestamp) VALUES " + ", ".join(values) + ";"
    )
with open(out, "w") as f:
    f.write("BEGIN;\n" + "\n".join(rows) + "\nCOMMIT;\n")
PY
if [ -n "${TACHO_DATABASE_URL:-}" ]; then
  psql -q "$TACHO_DATABASE_URL" -f "$work/seed.sql"
  # A bulk load leaves the planner without statistics until autovacuum runs.
  psql -q "$TACHO_DATABASE_URL" -c ANALYZE
else
  sqlite3 "$work/tacho.db" < "$work/seed.sql"
fi

if [ -n "${KILL_AFTER:-}" ]; then
  export TACHO_JOB_LEASE=5
  echo "== tacho reports run-due, killed with SIGKILL after ${KILL_AFTER} s"
  "$bin" reports run-due >/dev/null &
  victim=$!
  sleep "$KILL_AFTER"
  kill -9 "$victim" 2>/dev/null || echo "(it had finished already)"
  wait "$victim" 2>/dev/null || true
  echo "made before the kill: $(sqlite3 "$work/tacho.db" 'SELECT COUNT(*) FROM reports')"
  sleep 6
fi
echo "== tacho reports run-due${notify:+ (NOTIFY=$notify)}"
/usr/bin/time -f 'wall %e s, user %U s, system %S s, peak RSS %M KB' "$bin" reports run-due
echo "== again (nothing due)"
/usr/bin/time -f 'wall %e s, peak RSS %M KB' "$bin" reports run-due
if [ -n "${KILL_AFTER:-}" ]; then
  q() { sqlite3 "$work/tacho.db" "$1"; }
  jobs=$(q "SELECT COUNT(*) FROM jobs WHERE kind = 'periodic_report'")
  reports=$(q "SELECT COUNT(*) FROM reports")
  events=$(q "SELECT COUNT(*) FROM events WHERE kind = 'periodic_report.created'")
  entries=$(q "SELECT COUNT(*) FROM notifications")
  doubled=$(q "SELECT COUNT(*) FROM (SELECT report_id FROM events GROUP BY report_id HAVING COUNT(*) > 1)")
  open=$(q "SELECT COUNT(*) FROM jobs WHERE status <> 'done'")
  echo "== after the kill and the second run: $jobs periods, $reports reports, $events events, $entries inbox entries, $doubled doubled events, $open jobs not done"
  if [ "$reports" != "$jobs" ] || [ "$events" != "$reports" ] || [ "$entries" != $((2 * reports)) ] || [ "$doubled" != 0 ] || [ "$open" != 0 ]; then
    echo "FAULT RUN FAILED: something was lost or doubled" >&2
    exit 1
  fi
  echo "nothing lost, nothing doubled"
fi
if [ "$notify" = deliver ]; then
  kill "$sinks"
  wait "$sinks" 2>/dev/null || true
  read -r mails hooks <"$work/hooks.log.counts"
  echo "== delivered: $mails e-mails, $hooks webhooks"
fi
