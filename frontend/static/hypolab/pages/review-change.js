// Reviewing a change (review_change.html): refine, approve or reject it, decide on a model's polish,
// write questions on an approved change. Every decision carries the version it was made on. While a
// grammar pass runs over the benchmark, its job widget follows it (job-progress.js); when it ends, a
// link offers the page again (the pass may have polished this change), the page does not reload itself.
//
// The change's edit in 3D (change-editor-panel.js): a reviewer may replace it (its own version check, 400 when
// the text disagrees), and each question's written answers stand beside the answer its geometry derives.
import { changeEditLayer, mountPointCloudViewer } from "../../vendor/hypolab/pointcloud-viewer.js";
import { errorText, get, post, readJSON } from "../api.js";
import { mountChangeEditor } from "../change-editor-panel.js";
import "../job-progress.js";
import { mountTopView } from "../topview.js";

const page = readJSON("page-data");
const base = `/api/v1/changes/${page.change}/`;
const byId = (id) => document.getElementById(id);
let version = page.version;
const show = (id, r) => { byId(id).textContent = errorText(r.data); };
const act = async (path, body, errorId) => {
  const r = await post(base + path, { ...body, version });
  if (r.ok) { version = r.data.version; location.reload(); } else show(errorId, r);
};
const ticked = (name) => [...document.querySelectorAll(`input[name=${name}]:checked`)].map((c) => c.value);

if (byId("save-edit")) {
  byId("save-edit").addEventListener("click", () => act("refine/", { text: byId("refined").value }, "review-error"));
  byId("approve").addEventListener("click", async () => {
    // Approving keeps an unsaved edit: save it first, then approve the new version.
    if (byId("refined").value.trim() !== page.text) {
      const r = await post(base + "refine/", { text: byId("refined").value, version });
      if (!r.ok) { show("review-error", r); return; }
      version = r.data.version;
    }
    act("approve/", {}, "review-error");
  });
  byId("reject").addEventListener("click", () => act("reject/", { criteria: ticked("criteria"), note: byId("reject-note").value }, "review-error"));
}
if (byId("polish-pass")) {
  byId("polish-pass").addEventListener("job:state", (event) => {
    byId("polish-pass-ended").hidden = !["done", "failed", "cancelled"].includes(event.detail.status);
  });
}
if (byId("polish")) {
  const decide = async (action) => {
    const r = await post(`/api/v1/polishes/${page.polish}/${action}/`, { version });
    if (r.ok) location.reload(); else show("polish-error", r);
  };
  byId("accept-polish").addEventListener("click", () => decide("accept"));
  byId("revert-polish").addEventListener("click", () => decide("revert"));
}
if (byId("question-form")) {
  byId("question-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const r = await post(base + "questions/", { question: byId("question").value, answer: byId("answer").value,
                                                question_type: ticked("question_type"),
                                                unchanged_answer: byId("unchanged-answer").value,
                                                irrelevant_change: byId("irrelevant-change").checked });
    if (r.ok) location.reload(); else show("question-error", r);
  });
}

const editor = mountChangeEditor({
  root: byId("change-editor"), viewerElement: byId("scene-pointcloud"),
  objects: readJSON("scene-viewer-data").objects || [], initial: page.edit, editLayer: changeEditLayer,
  onChange: () => { if (byId("geometry-error")) byId("geometry-error").textContent = ""; },
});
editor.selectNamed(page.text);
if (byId("save-geometry")) {
  byId("save-geometry").addEventListener("click", async () => {
    const r = await post(`/api/v1/changes/${page.change}/geometry/`, { edit: editor.edit, version });
    if (r.ok) { version = r.data.version; location.reload(); } else show("geometry-error", r);
  });
}

// The derived answers: a row per question, flagged where the geometry disagrees with what was written.
async function showDerived() {
  const r = await get(`/api/v1/changes/${page.change}/derived-answers/`);
  if (!r.ok) return;
  const rows = r.data.filter((row) => row.derived !== null);
  byId("derived-answers").hidden = !rows.length;
  byId("derived-answers-none").hidden = Boolean(rows.length);
  byId("derived-answers").tBodies[0].replaceChildren(...rows.map((row) => {
    const tr = document.createElement("tr");
    tr.dataset.item = row.item;
    tr.dataset.agrees = String(row.agrees);
    const flag = row.agrees ? "agrees" : "⚠ disagrees";
    for (const cell of [row.question, row.answers.join(", "), row.derived, flag]) {
      tr.append(Object.assign(document.createElement("td"), { textContent: cell }));
    }
    if (!row.agrees) tr.className = "hl-disagrees";
    return tr;
  }));
}
showDerived();

// Before and after the change: the after-state's viewer (scenes/after_state.py), mounted the
// first time it is asked for; the scene's own viewer, and the editor over it, stay as they were, hidden meanwhile.
const afterToggle = byId("toggle-after-state");
if (afterToggle) {
  const after = readJSON("after-state-data");
  const before = document.querySelector(".hl-scene-viewer:not(#after-state-viewer)");
  let mounted = false;
  afterToggle.addEventListener("click", () => {
    const showAfter = afterToggle.getAttribute("aria-pressed") !== "true";
    byId("after-state-viewer").hidden = !showAfter;
    before.hidden = showAfter;
    if (showAfter && !mounted) {  // mounted once visible: the viewer sizes itself to its element
      mountPointCloudViewer(byId("after-pointcloud"), after.points_url, after);
      mountTopView(byId("after-topview"), { imageUrl: after.topview_plain_url, semanticUrl: after.topview_semantic_url,
                                            map: after.map });
      mounted = true;
    }
    afterToggle.setAttribute("aria-pressed", String(showAfter));
    afterToggle.textContent = `Show the scene ${showAfter ? "before" : "after"} the change`;
    byId("after-state-shown").textContent = `Showing the scene ${showAfter ? "after" : "before"} the change.`;
  });
}
if (byId("make-after-state")) {
  byId("make-after-state").addEventListener("click", async () => {
    const r = await post(base + "after-state/", {});
    if (!r.ok) { show("after-state-error", r); return; }
    byId("make-after-state").disabled = true;
    byId("after-state-made").textContent = "Being made: open this page again in a minute to see it.";
  });
}
