// The scene viewer include (_scene_viewer.html): point cloud and top-view map of one scene, with the
// objects a page wants outlined in red. The point cloud's element keeps the mount's promise as `hlViewer`
// (the viewer's handle, or null), for a page's layer over it (the change editor, change-editor-panel.js).
import { mountPointCloudViewer } from "../../vendor/hypolab/pointcloud-viewer.js";
import { readJSON } from "../api.js";
import { mountTopView } from "../topview.js";

const viewer = readJSON("scene-viewer-data");
const redBoxes = readJSON("scene-viewer-red", []);
const element = document.getElementById("scene-pointcloud");
element.hlViewer = mountPointCloudViewer(element, viewer.points_url, { ...viewer, redBoxes });
element.dispatchEvent(new Event("hl-viewer-mount"));
mountTopView(document.getElementById("scene-topview"), {
  imageUrl: viewer.topview_plain_url,
  semanticUrl: viewer.topview_semantic_url,
  map: viewer.map,
});
