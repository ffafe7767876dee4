"""Pipeline stage runners that judge a benchmark's items: `balance` (3DSRBench's
complementary items and per-type quotas) and `llm_filter` (M3-Verse's vision-free, ambiguity and
difficulty filters and blind answering, prompts as versioned data under prompts/).

Each runner is `runner(stage, progress) -> report`: `stage` brings `.benchmark`, `.params` and `.pk`,
`progress(done, total, message)` reports how far it is, and the report (JSON) says what was kept,
dropped or added and why. construction.pipeline registers them; a re-run finds nothing left to do.
An item a stage drops is rejected with a filtering decision naming why (review.services.stage_verdict)."""
