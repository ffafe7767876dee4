// The scene viewer include (_scene_viewer.html): point cloud and top-view map of one scene, with the
// objects a page wants outlined in red.
import { mountPointCloudViewer } from "../../vendor/hypolab/pointcloud-viewer.js";
import { readJSON } from "../api.js";
import { mountTopView } from "../topview.js";

const viewer = readJSON("scene-viewer-data");
const redBoxes = readJSON("scene-viewer-red", []);
mountPointCloudViewer(document.getElementById("scene-pointcloud"), viewer.points_url, { ...viewer, redBoxes });
mountTopView(document.getElementById("scene-topview"), {
  imageUrl: viewer.topview_plain_url,
  semanticUrl: viewer.topview_semantic_url,
  map: viewer.map,
});
