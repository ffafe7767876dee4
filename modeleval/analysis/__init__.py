"""Analysing runs: what a run is, said in its label (labels.py), the tables read across runs that differ
on one axis (ablations.py), on frames per video (sweep.py) or on the context change shown
(counterfactual.py), and Hypo3D's secondary metrics on a run (secondary_metrics.py)."""
