#!/usr/bin/env bash
# The analysis's speed against heartpy's, in one run, on one core each:
#  1. `cargo bench --bench analysis` (criterion): Tacho's `analyse` on the sinus_72 camera
#     recording (48 channels x 1,800 frames) and on heartpy's data3.csv 0-60 s window
#     (6,025 samples at 100.42 Hz);
#  2. heartpy 1.2.7's `process()` with default settings, in the venv of
#     scripts/validation-setup, on the same two windows: for the camera, the central cell
#     quadrants[1][1]'s y channel inverted (255 - y: the pulse runs downwards in y, heartpy
#     looks for peaks pointing up) at the fixture's frame rate (technical_details.camera_fps).
#     On that raw channel process() gives up (BadSignalWarning: the pulse is ~4 units on a
#     1-unit quantisation with breathing wander), so it gets the channel after heartpy's own
#     `filter_signal` band-pass (0.5-8 Hz, order 2), done once outside the timed loop: the
#     figure is process() alone, the smaller and so the stricter one to compare with;
#  3. the medians side by side and their ratio.
# Both run pinned to the same single core (taskset) with the numeric libraries' thread pools
# limited to one thread. Usage: benches/analysis_speed.sh   (needs python3; taskset if present)
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/validation-setup >/dev/null
export TACHO_HEARTPY_REFERENCE="$PWD/target/validation/heartpy.json"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
pin=()
if command -v taskset >/dev/null; then
  pin=(taskset -c "$(($(nproc) - 1))")
fi

echo "== Tacho: cargo bench --bench analysis (${pin[*]:-unpinned})"
cargo bench --bench analysis --no-run
"${pin[@]}" cargo bench -q --bench analysis 2>&1 | grep -E '^(analysis/|\s+time:)' || true

echo "== heartpy 1.2.7 process(), default settings (${pin[*]:-unpinned})"
MPLBACKEND=Agg MPLCONFIGDIR="$PWD/target/validation/mpl" "${pin[@]}" \
  target/analysis-env/bin/python - "$TACHO_HEARTPY_REFERENCE" tests/fixtures/sinus_72.json <<'EOF'
import json, statistics, sys, timeit
from pathlib import Path
import heartpy as hp
import numpy as np

reference = json.loads(Path(sys.argv[1]).read_text())
window = next(w for w in reference["windows"] if w["file"] == "data3.csv" and w["start_s"] == 0)
ppg = np.asarray(window["values"], dtype=float)
fixture = json.loads(Path(sys.argv[2]).read_text())
fps = float(fixture["technical_details"]["camera_fps"])
raw = 255.0 - np.asarray(fixture["quadrants"][1][1]["y"], dtype=float)
try:
    hp.process(raw, fps)
    camera = raw
except hp.exceptions.BadSignalWarning:
    print("heartpy process() cannot read the raw camera channel; timing it on the channel "
          "after heartpy's filter_signal(0.5-8 Hz band-pass)")
    camera = hp.filter_signal(raw, [0.5, 8], fps, order=2, filtertype="bandpass")

def median_seconds(values, rate):
    wd, m = hp.process(values, rate)  # once, and it must read the window
    call = lambda: hp.process(values, rate)
    number = max(1, int(0.5 / timeit.timeit(call, number=1)))
    runs = timeit.repeat(call, number=number, repeat=15)
    return statistics.median(r / number for r in runs), m["bpm"]

out = {}
for name, values, rate in (("camera_60s", camera, fps), ("ppg_60s", ppg, window["sample_rate"])):
    seconds, bpm = median_seconds(values, rate)
    out[name] = seconds
    print(f"heartpy {name}: median {seconds * 1e3:.3f} ms per process() "
          f"({len(values)} samples at {rate:.2f} Hz, heartpy bpm {bpm:.1f})")
Path("target/validation/heartpy_speed.json").write_text(json.dumps(out))
EOF

echo "== ratio (medians)"
python3 - <<'EOF'
import json
from pathlib import Path
heartpy = json.loads(Path("target/validation/heartpy_speed.json").read_text())
for name in ("camera_60s", "ppg_60s"):
    estimates = Path(f"target/criterion/analysis/{name}/new/estimates.json")
    if not estimates.exists():
        print(f"{name}: no Tacho figure ({estimates} missing)")
        continue
    ours = json.loads(estimates.read_text())["median"]["point_estimate"] / 1e9
    print(f"{name}: Tacho {ours * 1e3:.3f} ms, heartpy {heartpy[name] * 1e3:.3f} ms, "
          f"heartpy / Tacho = {heartpy[name] / ours:.0f}x")
EOF
