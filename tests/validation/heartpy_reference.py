#!/usr/bin/env python3
"""heartpy's own results on its three real finger-PPG recordings, as the reference that
tests/integration/analysis_validation.rs compares Tacho's analysis with.

Run by scripts/validation-setup inside the venv it makes (heartpy 1.2.7 and its numpy):

    python heartpy_reference.py DATA_DIR OUT_JSON

DATA_DIR holds data.csv, data2.csv and data3.csv as shipped in heartpy 1.2.7's wheel
(GPL: fetched at test time into target/, never committed).

Each recording is cut into consecutive, non-overlapping 60 s windows (a tail shorter than
60 s is left out). data.csv is only 24.8 s long: it is compared as one window of its whole
length rather than dropped, and its row says so (`seconds`).

The sample rate is the one heartpy's documentation uses for each file: 100 Hz for data.csv,
`get_samplerate_mstimer` of the ms timer for data2.csv, `get_samplerate_datetime` (format
`%Y-%m-%d %H:%M:%S.%f`) for data3.csv. Sample i of a window is at i × 1000 / rate ms: heartpy
assumes uniform sampling at that rate, and data3.csv's stamps repeat and skip (they cannot be
used as sample times), so both analyses see the same clock and any difference in peak times
is the analyses', not the clocks'.

Per window, `heartpy.process(values, rate)` with default settings: bpm, rmssd, sdnn, its
accepted peaks (`peaklist` less `removed_beats`) and rejected peaks as ms from the window
start, and the rejected share len(removed_beats) / len(peaklist). A window on which heartpy
raises is kept with its error, so the comparison can say so instead of silently skipping it.
"""

from __future__ import annotations

import csv
import importlib.metadata
import json
import math
import sys
import warnings
from pathlib import Path

import heartpy as hp
import numpy as np

WINDOW_S = 60.0


def load(data_dir: Path):
    """(file, values, sample rate) for each recording, rates as heartpy's docs compute them."""
    data = np.genfromtxt(data_dir / "data.csv", delimiter=",")
    yield "data.csv", data, 100.0

    rows = np.genfromtxt(data_dir / "data2.csv", delimiter=",", names=True)
    yield "data2.csv", rows["hr"], hp.get_samplerate_mstimer(rows["timer"])

    with open(data_dir / "data3.csv", newline="") as f:
        reader = csv.reader(f)
        next(reader)
        rows = [(r[0], float(r[1])) for r in reader if r]
    stamps = [r[0] for r in rows]
    rate = hp.get_samplerate_datetime(stamps, timeformat="%Y-%m-%d %H:%M:%S.%f")
    yield "data3.csv", np.array([r[1] for r in rows]), rate


def windows(values, rate):
    """Start indices and lengths of consecutive non-overlapping 60 s windows."""
    n = len(values)
    per = int(round(WINDOW_S * rate))
    if n < per:
        yield 0, n
        return
    for start in range(0, n - per + 1, per):
        yield start, per


def finite(x):
    x = float(x)
    return x if math.isfinite(x) else None


def reference(file, values, rate, start, length):
    window = np.asarray(values[start:start + length], dtype=float)
    ms = 1000.0 / rate
    row = {
        "file": file,
        "start_s": round(start / rate, 3),
        "seconds": round(length / rate, 3),
        "sample_rate": rate,
        "times_ms": [round(i * ms, 4) for i in range(length)],
        "values": [float(v) for v in window],
    }
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            wd, m = hp.process(window, rate)
    except Exception as e:  # heartpy raises BadSignalWarning on windows it cannot read
        row["error"] = f"{type(e).__name__}: {e}"
        return row
    peaks = np.asarray(wd["peaklist"])
    accepted_mask = np.asarray(wd["binary_peaklist"]) == 1
    removed = np.asarray(wd["removed_beats"])
    row.update({
        "bpm": finite(m["bpm"]),
        "rmssd": finite(m["rmssd"]),
        "sdnn": finite(m["sdnn"]),
        "peaks_ms": [round(float(p) * ms, 3) for p in peaks[accepted_mask]],
        "rejected_peaks_ms": [round(float(p) * ms, 3) for p in peaks[~accepted_mask]],
        "rejected_share": len(removed) / len(peaks) if len(peaks) else 1.0,
    })
    return row


def main() -> None:
    data_dir, out = Path(sys.argv[1]), Path(sys.argv[2])
    rows = []
    for file, values, rate in load(data_dir):
        for start, length in windows(values, rate):
            rows.append(reference(file, values, rate, start, length))
    out.parent.mkdir(parents=True, exist_ok=True)
    # heartpy 1.2.7's own __version__ still says 1.2.6: ask the installed distribution.
    version = importlib.metadata.version("heartpy")
    out.write_text(json.dumps({"heartpy": version, "windows": rows}))
    for r in rows:
        share = r.get("rejected_share")
        print(f"{r['file']:10} {r['start_s']:7.1f} s  {r['seconds']:5.1f} s  "
              f"{r['sample_rate']:7.2f} Hz  bpm={r.get('bpm', '-')!s:.6}  "
              f"rejected={'-' if share is None else f'{share:.1%}'}  {r.get('error', '')}")


if __name__ == "__main__":
    main()
