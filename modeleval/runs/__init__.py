"""Running a run: the options a launch is checked against (run_options.py), the inference loop of one
batch (inference.py), the batches in flight and the reaper that hands a dead worker's batch on
(inflight.py), prediction files produced elsewhere (prediction_files.py) and the scoring that ends a run
(run_scoring.py). The verbs that start, cancel and resume a run are modeleval/services.py."""
