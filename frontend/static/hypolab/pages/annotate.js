// Writing context changes (annotate.html): one or several descriptions per scene, autosaved as typed, each
// with its edit in 3D (change-editor-panel.js; the draft's content keeps the one being made).
import { changeEditLayer } from "../../vendor/hypolab/pointcloud-viewer.js";
import { del, post, readJSON } from "../api.js";
import { openAssignment } from "../assignment.js";
import { mountChangeEditor } from "../change-editor-panel.js";

const page = readJSON("page-data");
const state = readJSON("draft-data");
const byId = (id) => document.getElementById(id);
const text = byId("change-text");
const error = byId("change-error");
const warning = byId("change-warning");
const button = byId("submit-change");
const list = byId("description-list");
const form = byId("change-form");

// An edit step is an edit of the form: autosave hears of it as of typing (and the draft's content, which
// holds the edit being made, is saved again after the editor is reset).
const edited = () => form.dispatchEvent(new Event("input"));
const editor = mountChangeEditor({
  root: byId("change-editor"), viewerElement: byId("scene-pointcloud"),
  objects: readJSON("scene-viewer-data").objects || [], initial: state.content?.edit || null,
  editLayer: changeEditLayer, onChange: () => { error.textContent = ""; edited(); },
});
const assignment = openAssignment({
  page, draft: state, form, error, status: byId("draft-status"),
  body: () => ({ text: text.value, content: { edit: editor.edit } }),
  drafted: () => text.value.trim() || state.descriptions.length || editor.edit,
});
const { autosave } = assignment;
// The server's refusal (a text the edit disagrees with, say) is read where the form is.
const fail = (r) => {
  assignment.fail(r);
  error.scrollIntoView({ block: "nearest" });
};

const isLast = () => state.descriptions.length + 1 >= state.needed;
function render() {
  byId("word-count").textContent = (text.value.match(/[A-Za-z0-9']+/g) || []).length;
  button.textContent = isLast() ? "Submit" : "Add description";
  if (!list) return;
  byId("description-number").textContent = Math.min(state.descriptions.length + 1, state.needed);
  list.replaceChildren(...state.descriptions.map((d, i) => {
    const li = document.createElement("li");
    li.textContent = d.text;
    const again = Object.assign(document.createElement("button"), { type: "button", className: "link", textContent: "Rewrite" });
    again.addEventListener("click", () => autosave.queue(() => rewrite(i + 1)));
    li.append(again);
    for (const w of d.warnings) li.append(Object.assign(document.createElement("p"), { className: "warning", textContent: w }));
    return li;
  }));
}
// The server's draft after adding or taking back a description.
function adopt(draft) {
  state.descriptions = draft.descriptions;
  autosave.adopt(draft.revision);
  if (draft.text !== undefined) text.value = draft.text;
  render();
}
async function rewrite(number) {
  const r = await del(assignment.base + "descriptions/" + number + "/");
  if (!r.ok) { fail(r); return; }
  editor.reset(state.descriptions[number - 1]?.edit || null);
  adopt(r.data);
  edited();
}
// The last description goes with its edit; a refusal is scrolled into view.
const submit = () => assignment.submit({ text: text.value, edit: editor.edit }).then(() => {
  if (error.textContent) error.scrollIntoView({ block: "nearest" });
});
async function addDescription() {
  const r = await post(assignment.base + "descriptions/", { text: text.value, edit: editor.edit });
  if (!r.ok) { fail(r); return; }
  text.value = "";
  editor.reset(null);
  adopt(r.data);
  edited();
  warning.textContent = r.data.warnings.join(" ");
  text.focus();
}

text.value = state.text;
render();
editor.selectNamed(text.value);
text.addEventListener("input", () => { error.textContent = ""; render(); editor.selectNamed(text.value); });
form.addEventListener("submit", (e) => {
  e.preventDefault();
  error.textContent = ""; warning.textContent = "";
  button.disabled = true;
  const sent = isLast() ? submit()
    : autosave.queue(async () => { await autosave.save(); await addDescription(); });
  sent.finally(() => { button.disabled = false; });
});
