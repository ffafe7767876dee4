"""Scenes: a benchmark's material (scans with their alignment and oriented boxes, image sets, paired
videos, posed frames) imported, and what is built from it for the pages and the models (viewer
level-of-detail files and octrees, top views, renders, after-states). The scene rows themselves are
benchmarks' models; this app fills and reads them. Its entry points are in `services.py`."""
