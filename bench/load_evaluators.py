"""Human-baseline load: 300 simulated evaluators taking timed sessions at once against the app served
like bench/load_annotators.py (gunicorn, see _loadserver.py; PostgreSQL, loopback), from one
asyncio process. Each arrives from a crowd link (spread over the ramp-up), which starts their
session, opens the session page (instructions and consent), agrees (the session's clock starts then),
fetches the current item, and then answers item after item with a
few seconds of thought each (2 familiarisation items with feedback, then 10 scored items), about
75 requests/s in all.

Run: .venv/bin/python bench/load_evaluators.py   (about 1.5 minutes; no arguments)
Prints p50/p95 per endpoint and ends with `p95_ms=N lost=N` (worst endpoint's p95; lost = an answer
the client got 2xx for that is not stored as sent, or an answer neither stored nor refused with a
4xx, or a session that could not start). The server's log is in /tmp/hypolab-load-server.log."""

import asyncio
import json
import os
import random
import time
from collections import defaultdict

from _loadserver import Client, Timings, enter_from_link, run_load, timed

EVALUATORS = int(os.environ.get("LOAD_EVALUATORS", 300))  # fewer for a quick look
ITEMS = 200
SCORED_PER_SESSION = 10
FAMILIARISATION = 2
RAMP_S = 20
THINK_S = (2.5, 5.5)  # per item: 300 evaluators at ~4 s each is ~75 answers/s
STOP_S = 150  # bounded: an evaluator still answering then leaves its session unfinished


def seed() -> int:
    from benchmarks.models import Benchmark, Item, Scene
    from humaneval.services.design import StudyDesign, create_study

    benchmark = Benchmark.objects.create(name="load", slug="load", family="3dsrbench")
    scenes = Scene.objects.bulk_create(
        Scene(benchmark=benchmark, external_id=f"scene{i:04d}", caption="A room.") for i in range(20)
    )
    items = Item.objects.bulk_create(
        Item(benchmark=benchmark, scene=scenes[n % len(scenes)], question=f"Is the chair left of the desk? ({n})",
             answer_format="single", choices=["yes", "no", "next to it", "behind it"], answers=["A"],
             tags={"category": "location"}, status="approved")
        for n in range(ITEMS + FAMILIARISATION)
    )
    design = StudyDesign(
        "load", [item.pk for item in items[:ITEMS]], seconds_per_item=120, seconds_per_session=1800, seed=7,
        familiarisation_count=FAMILIARISATION, participants_per_item=EVALUATORS * SCORED_PER_SESSION // ITEMS + 1,
        items_per_session=SCORED_PER_SESSION, consent_text="I agree to take part.",
    )
    study = create_study(benchmark, design, None)
    return study.pk


async def evaluator(number, port, study_id, start, timings, outcome):
    client = Client(port)
    await asyncio.sleep(max(0.0, start + random.uniform(0, RAMP_S) - time.monotonic()))
    session = await enter_from_link(
        client, timings, f"/crowd/studies/{study_id}/?PROLIFIC_PID=eval-{number}&STUDY_ID=s&SESSION_ID=x", outcome)
    if session is None:
        return
    status, _, _ = await timed(client, timings, "consent", "POST", f"/eval/sessions/{session}/consent/",
                               {"agree": True})
    if status != 200:
        outcome["lost"] += 1
        client.close()
        return
    status, _, body = await timed(client, timings, "current", "GET", f"/api/v1/sessions/{session}/current/")
    state = _json(body) if status == 200 else None
    while state and state.get("item") and time.monotonic() < start + STOP_S:
        await asyncio.sleep(random.uniform(*THINK_S))
        item = state["item"]["id"]
        answer = random.choice("ABCD")
        status, _, body = await timed(client, timings, "answer", "POST", f"/api/v1/sessions/{session}/answer/",
                                      {"item": item, "answer": answer, "client_latency_ms": 3000})
        if 200 <= status < 300:
            outcome["sent"].append((session, item, answer))
            state = _json(body)
            if state.get("feedback") and not state.get("item"):  # familiarisation: read the feedback, go on
                status, _, body = await timed(client, timings, "current", "GET",
                                              f"/api/v1/sessions/{session}/current/")
                state = _json(body) if status == 200 else None
        elif 400 <= status < 500:
            outcome["refused"] += 1
            state = None
        else:
            outcome["failed"].append((session, item, answer))
            state = None
    outcome["finished"] += bool(state and state.get("status") == "finished")
    client.close()


def _json(body: bytes):
    return json.loads(body)


async def drive(port, study_id):
    timings, outcome = Timings(), defaultdict(int)
    outcome["sent"], outcome["failed"] = [], []
    start = time.monotonic() + 0.5
    await asyncio.gather(*(evaluator(n, port, study_id, start, timings, outcome) for n in range(EVALUATORS)))
    return timings, outcome


def main():
    run = run_load(seed, drive)

    from humaneval.models import Response

    stored = {(r.session_id, r.item_id): r.answer_text
              for r in Response.objects.filter(session__study_id=run.target).exclude(answered_at=None)}
    outcome = run.outcome
    lost = outcome["lost"] + sum(stored.get((s, i)) != a for s, i, a in outcome["sent"])
    lost += sum((s, i) not in stored for s, i, _ in outcome["failed"])
    run.finish(f"{EVALUATORS} evaluators",
               f"{len(outcome['sent'])} answers stored, {outcome['refused']} refused (4xx), "
               f"{outcome['finished']} sessions finished", lost=lost)


if __name__ == "__main__":
    main()
