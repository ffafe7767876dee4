// Writing context changes (annotate.html): one or several descriptions per scene, autosaved as typed.
import { del, errorText, post, readJSON } from "../api.js";
import { openAssignment } from "../assignment.js";

const page = readJSON("page-data");
const state = readJSON("draft-data");
const byId = (id) => document.getElementById(id);
const text = byId("change-text");
const error = byId("change-error");
const warning = byId("change-warning");
const button = byId("submit-change");
const list = byId("description-list");

const assignment = openAssignment({
  page, draft: state, form: byId("change-form"), error, status: byId("draft-status"),
  body: () => ({ text: text.value }),
  drafted: () => text.value.trim() || state.descriptions.length,
});
const { autosave } = assignment;

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
  if (r.ok) adopt(r.data); else assignment.fail(r);
}
async function addDescription() {
  const r = await post(assignment.base + "descriptions/", { text: text.value });
  if (!r.ok) { assignment.fail(r); return; }
  text.value = "";
  adopt(r.data);
  warning.textContent = r.data.warnings.join(" ");
  text.focus();
}

text.value = state.text;
render();
text.addEventListener("input", () => { error.textContent = ""; render(); });
byId("change-form").addEventListener("submit", (e) => {
  e.preventDefault();
  error.textContent = ""; warning.textContent = "";
  button.disabled = true;
  const sent = isLast() ? assignment.submit({ text: text.value })
    : autosave.queue(async () => { await autosave.save(); await addDescription(); });
  sent.finally(() => { button.disabled = false; });
});
