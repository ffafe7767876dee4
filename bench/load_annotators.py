"""Crowd load: 1,000 simulated annotators against the app served by gunicorn (see _loadserver.py)
on loopback with PostgreSQL, driven from one asyncio process. Each one arrives from a
Prolific-style link (arrivals spread over the first 90 s, as a study's places fill), opens its
assignment page, autosaves its draft every 5 s for two minutes (all 1,000 are in from 90 s to
120 s: about 200 autosaves/s), submits (one in ten twice, as a double click), and the bench checks
what was stored.

Run: .venv/bin/python bench/load_annotators.py   (about 3.5 minutes; no arguments)
Prints p50/p95 per endpoint and ends with `p95_ms=N lost=N duplicated=N` (worst endpoint's p95;
lost = a save or submit that failed, or a submit answered 201 with no change in the database;
duplicated = more changes stored for one assignment than its one submission made). The server's
log is in /tmp/hypolab-load-server.log."""

import asyncio
import os
import random
import time
from collections import Counter, defaultdict

from _loadserver import Client, Timings, enter_from_link, run_load, timed

ANNOTATORS = int(os.environ.get("LOAD_ANNOTATORS", 1000))  # fewer for a quick look
SCENES = 200
AUTOSAVE_S = 5
RAMP_S = 90  # arrivals spread over this
WORK_S = 120  # each annotator autosaves this long after arriving, then submits: all are in at once after RAMP_S


def seed() -> int:
    from annotation import services
    from benchmarks.models import Benchmark, Scene, SceneObject

    benchmark = Benchmark.objects.create(name="load", slug="load", family="hypo3d")
    scenes = Scene.objects.bulk_create(
        Scene(benchmark=benchmark, external_id=f"scene{i:04d}_00", caption="An office.") for i in range(SCENES)
    )
    SceneObject.objects.bulk_create(
        SceneObject(scene=scene, instance_id=n, label=label, center_x=n, center_y=1, center_z=0.5,
                    size_x=1, size_y=1, size_z=1)
        for scene in scenes
        for n, label in enumerate(["desk", "chair", "window", "bookshelf", "lamp"], start=1)
    )
    return services.create_campaign(benchmark, "load", "movement", scenes, lease_minutes=30).pk


async def annotator(number, port, campaign_id, start, timings, outcome):
    client = Client(port)
    arrive = random.uniform(0, RAMP_S)
    await asyncio.sleep(max(0.0, start + arrive - time.monotonic()))
    assignment = await enter_from_link(
        client, timings, f"/crowd/campaigns/{campaign_id}/?PROLIFIC_PID=load-{number}&STUDY_ID=s&SESSION_ID=x",
        outcome)
    if assignment is None:
        return
    submit_at = start + arrive + WORK_S
    next_save = time.monotonic() + random.uniform(0, AUTOSAVE_S)
    saves = 0
    while next_save < submit_at:
        await asyncio.sleep(max(0.0, next_save - time.monotonic()))
        saves += 1
        text = f"The chair has been moved from the desk to the window next to the bookshelf ({number}-{saves})."
        status, _, _ = await timed(client, timings, "autosave", "PUT", f"/api/v1/assignments/{assignment}/draft/",
                                   {"text": text})
        outcome["saves"] += 1
        outcome["lost"] += status != 200
        next_save += AUTOSAVE_S
    await asyncio.sleep(max(0.0, submit_at - time.monotonic()))
    for _ in range(2 if number % 10 == 0 else 1):
        status, _, _ = await timed(client, timings, "submit", "POST", f"/api/v1/assignments/{assignment}/submit/",
                                   {"text": f"The lamp {number} has been moved from the desk to the window."})
        outcome["submitted" if status == 201 else "refused_again" if status == 409 else "lost"] += 1
        if status == 201:
            outcome["accepted"].append(assignment)
    client.close()


async def drive(port, campaign_id):
    timings, outcome = Timings(), defaultdict(int)
    outcome["accepted"] = []
    start = time.monotonic() + 0.5
    await asyncio.gather(*(annotator(n, port, campaign_id, start, timings, outcome) for n in range(ANNOTATORS)))
    return timings, outcome


def main():
    run = run_load(seed, drive)

    from benchmarks.models import ContextChange

    stored = Counter(ContextChange.objects.values_list("provenance__assignment", flat=True))
    outcome = run.outcome
    missing = sum(1 for a in outcome["accepted"] if stored[a] == 0)
    duplicated = sum(n - 1 for n in stored.values() if n > 1)
    run.finish(f"{ANNOTATORS} annotators",
               f"steady {ANNOTATORS / AUTOSAVE_S:.0f} autosaves/s; {outcome['saves']} autosaves, "
               f"{outcome['submitted']} submitted, {outcome['refused_again']} double submits answered 409",
               lost=outcome["lost"] + missing, duplicated=duplicated)


if __name__ == "__main__":
    main()
