"""Past one machine (#33): a release of 500,000 items exported, a 50,000,000-point scan turned into the
viewer's octree, and 100 real texts added to a 1,000,000-vector near-duplicate index, each in bounded
memory.

Run: .venv/bin/python bench/scale.py   (no arguments; at most 10 minutes, about 5 on two quiet cores)

Each part runs in its own child process, so each peak is that part's own resident size (Python and
Django included), measured by the child itself (ru_maxrss):

- export (bench/_export_scale.py, h7's streaming export): a fresh PostgreSQL database filled with
  500,000 approved items, the release exported as JSONL, JSON, CSV and Parquet with manifest and card;
  `export_items`, `export_peak_mb` (goal <= 512);
- scan (bench/_scale_parts.py): demo room 1 as a 50,000,000-point binary PLY (850 MB; the room sampled
  at 2,000,000 points and jittered 25 times by 4 mm), written chunk by chunk;
- octree: `octree_disk.build_octree_file` over that PLY read chunk by chunk: the HLPC v3 file the
  viewer reads, built out of core; `octree_points`, `octree_peak_mb` (goal <= 1,024), `octree_s`;
- dedup (bench/_scale_dedup.py): `dedup_index_texts` synthetic 384-d vectors indexed, 100 real texts
  embedded (excluded) and added: `dedup_add100_ms` (goal <= 1,000), `dedup_recall` against exact
  search at the 0.8 threshold (goal >= 0.95).

Starts and stops what it needs (a temporary folder, the export's throwaway database); PostgreSQL must
run on 127.0.0.1. The export runs beside the other three (one after the other), a line of work per
core. A part still running when the 10 minutes are up is stopped and reported as `timeout`. Prints `key=value` pairs last, with the machine's load before and after (other processes
share the cores).
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOUND_S = 600
EXPORT_ITEMS = 500_000
KEYS = {
    "export": ("export_items", "export_peak_mb"),
    "scan": (),
    "octree": ("octree_points", "octree_peak_mb"),
    "dedup": ("dedup_index_texts", "dedup_add100_ms", "dedup_recall"),
}
EXPORT = f"""
import json, sys
sys.path.insert(0, {str(ROOT / 'bench')!r})
from _export_scale import measure_export
print(json.dumps(measure_export({EXPORT_ITEMS})))
"""


def load() -> str:
    return "/".join(f"{value:.2f}" for value in os.getloadavg())


def run_child(command: list[str], timeout: float) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    # Its own session, so a part stopped at the bound takes its children (the export's) with it.
    child = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
    try:
        stdout, stderr = child.communicate(timeout=max(timeout, 1))
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.communicate()
        return {"error": "timeout"}
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    if child.returncode or not lines:
        sys.stderr.write(stdout[-2000:] + stderr[-4000:])
        return {"error": "failed"}
    return json.loads(lines[-1])


def run_part(part: str, work: str, deadline: float) -> dict:
    left = deadline - time.monotonic()
    if left < 5:
        return {"error": "timeout"}
    if part == "export":
        return run_child([sys.executable, "-c", EXPORT], left)
    return run_child([sys.executable, str(ROOT / "bench" / "_scale_parts.py"), part, work], left)


def scan_parts(work: str, deadline: float) -> dict:
    """scan, octree, dedup one after the other (the octree reads the scan)."""
    found = {}
    for part in ("scan", "octree", "dedup"):
        found[part] = run_part(part, work, deadline)
        if part == "scan" and "error" in found["scan"]:
            found["octree"] = {"error": "no-scan"}
            found["dedup"] = run_part("dedup", work, deadline)
            break
    return found


def main() -> None:
    started = time.monotonic()
    deadline = started + BOUND_S
    results = {"load_before": load()}
    with tempfile.TemporaryDirectory(prefix="hypolab-scale-") as work, ThreadPoolExecutor(2) as pool:
        # The export (a database and a Python child) beside the scan parts: two cores, two lines of work.
        export = pool.submit(run_part, "export", work, deadline)
        parts = pool.submit(scan_parts, work, deadline)
        found = {"export": export.result(), **parts.result()}
    for part in ("export", "scan", "octree", "dedup"):
        values = found[part]
        if "error" in values:
            results.update({key: values["error"] for key in KEYS[part] or (f"{part}_s",)})
            continue
        if "peak_mb" in values:
            values[f"{part}_peak_mb"] = values.pop("peak_mb")
        results.update(values)
        print(f"{part}: {json.dumps(values)}", flush=True)
    results["total_s"] = round(time.monotonic() - started)
    results["load_after"] = load()
    ordered = [key for part in KEYS.values() for key in part] + ["octree_s", "total_s", "load_before", "load_after"]
    extras = sorted(key for key in results if key not in ordered)
    print(" ".join(f"{key}={results[key]}" for key in ordered + extras if key in results))
    failed = any(isinstance(results.get(key), str) for part in KEYS.values() for key in part)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
