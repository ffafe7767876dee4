"""The frame-count sweep (M3-Verse Fig. 4): each model's runs that differ only in the video frames
sampled per video (Run.inputs frames_per_video), as lines of a metric against the frame count. A line
is one model under one setting (every other axis of modeleval.analysis.labels held fixed); lines with a
single point are left out."""

import json

from .labels import run_setting


def frame_sweep(entries: list[tuple], metric: str | None) -> dict:
    """`entries` are (run, result) of finished runs: {"metric", "x": "frames per video", "series":
    [{"name", "model", "points": [{"frames", "value", "run"}]}]}, points by frame count."""
    lines: dict[tuple, dict] = {}
    for run, result in entries:
        frames = (run.inputs or {}).get("frames_per_video")
        if not frames or metric is None:
            continue
        setting = run_setting(run)
        rest = {**setting, "inputs": {k: v for k, v in setting["inputs"].items() if k != "frames_per_video"}}
        line = lines.setdefault((run.model.name, json.dumps(rest, sort_keys=True)), {
            "name": run.model.name, "model": run.model.name, "points": []})
        value = ((result or {}).get("overall") or {}).get(metric)
        line["points"].append({"frames": frames, "value": value, "run": run.pk})
    series = [line for line in lines.values() if len({p["frames"] for p in line["points"]}) > 1]
    names = [line["name"] for line in series]
    for line in series:
        line["points"].sort(key=lambda point: (point["frames"], point["run"]))
        if names.count(line["name"]) > 1:  # one model under several settings: say which
            line["name"] = f"{line['name']} (run {line['points'][0]['run']})"
    return {"metric": metric, "x": "frames per video", "series": series}


def sweep_rows(sweep: dict) -> list[list]:
    """The sweep as a table: a header of frame counts, one row per line (CSV, text)."""
    counts = sorted({point["frames"] for line in sweep["series"] for point in line["points"]})
    rows = [["model", *counts]]
    for line in sweep["series"]:
        values = {point["frames"]: point["value"] for point in line["points"]}
        rows.append([line["name"], *(values.get(count) for count in counts)])
    return rows
