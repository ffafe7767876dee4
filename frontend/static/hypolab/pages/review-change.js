// Reviewing a change (review_change.html): refine, approve or reject it, decide on a model's polish,
// write questions on an approved change. Every decision carries the version it was made on. While a
// grammar pass runs over the benchmark, its job widget follows it (job-progress.js); when it ends, a
// link offers the page again (the pass may have polished this change), the page does not reload itself.
import { errorText, post, readJSON } from "../api.js";
import "../job-progress.js";

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
