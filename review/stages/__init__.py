"""Pipeline stage runners that judge a benchmark's items (issue #17): `balance` (3DSRBench's
complementary rewrites and per-type quotas) and `llm_filter` (M3-Verse's vision-free and ambiguity
filters, prompts as versioned data under prompts/).

Each runner is `runner(stage, progress) -> report`: `stage` brings `.benchmark`, `.params` and `.pk`,
`progress(done, total, message)` reports how far it is, and the report (JSON) says what was kept,
dropped or rewritten and why. review.pipeline registers them; a re-run finds nothing left to do.
An item a stage drops is rejected with a filtering decision naming why (review.services.stage_verdict)."""
