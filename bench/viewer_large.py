"""Large scenes: a 10,000,000-point room imported as a PLY scan and shown within the viewer's budget.

Run: .venv/bin/python bench/viewer_large.py   (no arguments; about five minutes on two cores)
Builds a throwaway stack in a temporary folder (SQLite, a media folder, Celery tasks run in the
importing process). The demo room generator samples room 1 at 10M points, written as a binary PLY
(x y z, colours) with its furniture as a boxes file. `manage.py import_scan` imports it as a real
user would (alignment estimated from the scan, objects from the boxes, the canonical PLY) and
`process_scene` runs on commit in the same process (the octree viewer file, HLPC v3, and both top
views): import_s is that command's wall time, import_peak_mb its peak resident memory. Then daphne
serves the review page of a change on the scene and Chromium (software GL) opens it as a reviewer,
RUNS times in fresh contexts as bench/viewer_load.py does, each run's steps to its first frame
printed (the page, the viewer's script, the first range request, the frame): first_frame_ms is the
median run's first-frame mark (the octree's root),
budget_points the points the viewer holds once the view is complete (never over its budget,
2,000,000), resident_mb the bytes of their arrays, orbit_fps the frames per second while the mouse
drags the camera. Prints `first_frame_ms=N budget_points=N resident_mb=N orbit_fps=N import_s=N
import_peak_mb=N` last.
"""

import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.viewer_load import (  # noqa: E402
    BROWSER_ARGS,
    RUNS,
    daphne,
    measure_viewer,
    reviewer_and_change,
    sandbox,
    where_the_time_goes,
)
from tests.browser.conftest import CHROMIUM, login  # noqa: E402

POINTS = 10_000_000
USER = "viewer-large"

# Writes room 1 of the demo at POINTS points as scan.ply and its furniture as boxes.json in the cwd.
WRITE_SCAN = f"""
import json
from demo.rooms import generate_room
from scenes.scans import write_points_ply
room = generate_room(0, points_per_room={POINTS})
with open("scan.ply", "wb") as out:
    out.write(write_points_ply(room.xyz, room.rgb, room.instance * 0))
boxes = [{{"label": o["label"], "center": o["center"], "size": o["size"], "yaw": o.get("yaw", 0.0)}}
         for o in room.objects]
json.dump(boxes, open("boxes.json", "w"))
"""
SCENE = """
from benchmarks.models import Scene
scene = Scene.objects.get(external_id="large_room")
"""
READ_HELD = """() => {
  const viewer = document.querySelector("[data-pointcloud]");
  return {held: Number(viewer.dataset.pointsDrawn), bytes: Number(viewer.dataset.residentBytes),
          budget: Number(viewer.dataset.pointBudget), nodes: Number(viewer.dataset.nodes)};
}"""


def main() -> None:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="viewer-large-") as tmp:
        env, manage = sandbox(tmp)
        manage("create_benchmark", "large", "--name", "Large scenes", "--family", "hypo3d")
        manage("shell", "-v", "0", "-c", WRITE_SCAN, cwd=tmp)
        ply_mb = Path(tmp, "scan.ply").stat().st_size / 1e6
        # Peak memory of a finished child: the import is the largest of this process's children by far.
        started = time.perf_counter()
        manage("import_scan", "--benchmark", "large", "--scene", "large_room", f"{tmp}/scan.ply",
               "--boxes", f"{tmp}/boxes.json")
        import_s = time.perf_counter() - started
        import_peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        change_id = manage("shell", "-v", "0", "-c", reviewer_and_change(SCENE, USER)).split()[-1]
        # The import leaves about 200 MB of written pages for the kernel to flush: flushed here, so the
        # first run times the viewer, not the disk catching up (a reviewer opens a scene long after).
        os.sync()
        with daphne(env, f"{tmp}/web.log") as base, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
            views, first_views, helds = [], [], []
            for _ in range(RUNS):
                # A fresh context each time, as bench/viewer_load.py: every byte comes over the wire.
                context = browser.new_context(viewport={"width": 1280, "height": 860})
                page = context.new_page()
                login(page, base, USER, USER)
                views.append(measure_viewer(page, f"{base}/review/changes/{change_id}/"))
                first_views.append(page.evaluate(READ_HELD))
                # The view after the orbit (it settles in 180 ms): its nodes replace those of the first.
                page.wait_for_timeout(1000)
                page.wait_for_selector("[data-pointcloud][data-complete=true]", timeout=120_000)
                helds.append(page.evaluate(READ_HELD))
                context.close()
            browser.close()
        meta = json.loads(manage("shell", "-v", "0", "-c", "from benchmarks.models import Asset; import json; "
                                 "print(json.dumps(Asset.objects.get(role='viewer_points').meta))"))
    for view in views:
        print(f"first_frame_ms={view['first_frame_ms']} full_frame_ms={view['full_frame_ms']} "
              f"orbit_fps={view['orbit_fps']}\n  {where_the_time_goes(view)}")
    # The median run by first frame (the goal's figure), so one run disturbed by the machine does not decide.
    median = sorted(range(RUNS), key=lambda run: views[run]["first_frame_ms"])[RUNS // 2]
    view, first_view, held = views[median], first_views[median], helds[median]
    print(f"points={POINTS} ply_mb={ply_mb:.0f} file_nodes={meta['nodes']} file_bytes_per_point="
          f"{meta['bytes_per_point']} full_frame_ms={view['full_frame_ms']} first_view_points={first_view['held']} "
          f"nodes_held={held['nodes']} budget={held['budget']} transferred_bytes_per_point={view['bytes_per_point']} "
          f"motion_stride={view['motion_stride']} range_requests={view['requests'] - 1}")
    print(f"loadavg={os.getloadavg()[0]:.2f} runs={RUNS} (median by first_frame_ms below)")
    print(f"first_frame_ms={view['first_frame_ms']} budget_points={max(first_view['held'], held['held'])} "
          f"resident_mb={max(first_view['bytes'], held['bytes']) / 2**20:.1f} orbit_fps={view['orbit_fps']} "
          f"import_s={import_s:.1f} import_peak_mb={import_peak_mb:.0f}")


if __name__ == "__main__":
    main()
