"""A release of a benchmark, as one package (nothing is re-exported here; import the module that holds it):

- life.py: a release's life: export_release (the one way to export), its core.Job (run_release_export,
  cancel), freezing the items, writing the other formats and files, release_files, import_release.
- lines.py: a release line (LINE_VALUES, release_line), the lines read back from the JSONL (release_lines),
  and the helpers life.py and stream.py share (dumps, id_order, mean_words, split_name, release_asset_path).
- stream.py: the files written as a stream (chunked reads, the store, the JSONL/JSON/CSV/Parquet writers,
  format_bytes in memory, the card and the diff counted as lines go by).
- geometry.py: a change's geometry in a release (change_geometry, after-state files, the import's mapping).
- published.py: a release in each family's published shape (with 3DSRBench's variant rows).
- harness.py (+ harness_files/): the VLMEvalKit TSV and the lmms-eval task folder.
- hub.py: the release as a Hugging Face dataset (Parquet per split, README card) and push_release.

Each module imports only those listed before it in this order: lines, geometry, stream and published,
hub, harness, life (no circle; what two of them share is public in lines.py).
"""
