// Reviewing a question (review_item.html): edit, approve, adjudicate a flagged consensus, or reject.
import { errorText, post, readJSON } from "../api.js";

const page = readJSON("page-data");
const base = `/api/v1/items/${page.item}/`;
const byId = (id) => document.getElementById(id);
const act = async (path, body) => {
  const r = await post(base + path, { ...body, version: page.version });
  if (r.ok) location.reload(); else byId("item-error").textContent = errorText(r.data);
};
const answers = () => byId("item-answers").value.split(",").map((a) => a.trim()).filter(Boolean);
const ticked = (name) => [...document.querySelectorAll(`input[name=${name}]:checked`)].map((c) => c.value);
const onClick = (id, handler) => byId(id)?.addEventListener("click", handler);

onClick("save-item", () => {
  const types = ticked("item_question_type");
  // Items without question types (choice families) keep their tags as they are.
  act("edit/", { question: byId("item-question").value, answers: answers(), ...(types.length ? { question_type: types } : {}) });
});
onClick("approve-item", () => act("approve/", {}));
onClick("adjudicate-item", () => act("adjudicate/", { answers: answers() }));
onClick("reject-item", () => act("reject/", { criteria: ticked("item_criteria"), note: byId("item-reject-note").value }));
