"""The demo: its material, made procedurally and seeded (the same call gives the same bytes), and the
seeding that builds the finished demo from it through the importers and services (`seed.py`, run by
`manage.py seed_demo`, with its campaigns, reviewers' agreement and participant visit beside it).

The sandbox (`rooms.py`, `sandbox.py`): furnished rooms sampled as point clouds and written as the
`hypo3d-demo` benchmark, so a fresh install has scenes to show.

The finished demo (`files.py`, one module per family): for each of the five families, a small
benchmark's files in the shape its authors publish them, so `seed_demo` can feed them to the
importers a researcher uses (docs/IMPORT.md, ../shared/FORMATS.md):

- Hypo3D: the procedural rooms as PLY scans with labelled boxes and the world-frame sentence, and an
  item file `{scene_id: [{context_change, change_type, questions_answers}]}`;
- 3DSRBench: a VLMEvalKit TSV with base64 JPEG renders of coloured boxes, spheres and cylinders,
  rotated-choice copies (`-1`..`-3`) and mirrored rows (`-flip`) whose left/right answers swap;
- CausalSpatial: top views of a table with a motion arrow (an image set) and rows `{id, question with
  (A)/(B)/(C) Not sure options, answer, not_sure}`;
- Spatial457: CLEVR-like vehicle scenes (an image set) and question JSON, one file per level;
- M3-Verse: paired before/after egocentric videos (2 s, 160x120) with objects per state and an operation
  log, and an item JSONL.

The hand-written tables (the rooms' furniture, Spatial457's vehicle scenes, Hypo3D's changes and
questions) are JSON files in `data/`, read once at import into the modules' dataclasses and tuples.

Each family also has the outputs of a made-up model ("Demo VLM") in a prediction-file shape its tools
write, right about half the time, so the leaderboard has a model row that is neither chance nor human.
Every answer is computed from the generated scene it asks about."""
