#!/usr/bin/env bash
# `tacho reports run-due` on a database with PATIENTS × 6 due periodic reports: every patient
# has a 30-day prescription that started 31 days ago (four weeks, a month and its end are due)
# and a measurement twice a day. Prints the run's own summary and its wall time and peak memory
# (GNU time). SQLite by default; set TACHO_DATABASE_URL to a fresh PostgreSQL database instead.
# Usage: benches/load/run_due.sh [PATIENTS]   (needs python3 and /usr/bin/time)
set -euo pipefail
cd "$(dirname "$0")/../.."
patients="${1:-1667}"
cargo build --release -q
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TACHO_DATA_DIR="$work" TACHO_LOG=warn
target/release/tacho migrate >/dev/null

echo "== seeding $patients patients, $((patients * 60)) measurements"
python3 - "$patients" "$work/seed.sql" <<'PY'
import json, os, sys, time
patients, out = int(sys.argv[1]), sys.argv[2]
now = int(time.time() * 1000)
day = 86_400_000
start = now - 31 * day
counter = iter(range(1, 10**9))
def oid():
    return f"{now // 1000:08x}{os.urandom(5).hex()}{next(counter) % (1 << 24):06x}"
group = oid()
rows = [f"INSERT INTO groups (id, name, description, creation_timestamp, update_timestamp) VALUES ('{group}', 'Ward', NULL, {start}, {start});"]
indicators = ["normal", "normal", "irregular", "tachycardia"]
for p in range(patients):
    user = oid()
    rows.append(
        "INSERT INTO users (id, email, password_hash, first_name, last_name, phone_number, language, time_zone, "
        "activation, roles, profile_image, failed_count, last_failed_timestamp, creation_timestamp, update_timestamp) "
        f"VALUES ('{user}', 'p{p}@bench.test', 'x', 'Patient', '{p}', NULL, 'EN', 'Europe/Brussels', true, '[]', NULL, 0, NULL, {start}, {start});"
    )
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
else
  sqlite3 "$work/tacho.db" < "$work/seed.sql"
fi

echo "== tacho reports run-due"
/usr/bin/time -f 'wall %e s, user %U s, system %S s, peak RSS %M KB' target/release/tacho reports run-due
echo "== again (nothing due)"
/usr/bin/time -f 'wall %e s, peak RSS %M KB' target/release/tacho reports run-due
