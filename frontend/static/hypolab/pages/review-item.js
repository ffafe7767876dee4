// Reviewing a question (review_item.html): what the item shows (images with their marks, the
// frame-locked paired videos: the evaluators' viewers), then edit, approve, adjudicate a flagged
// consensus, or reject.
import { errorText, post, readJSON } from "../api.js";
import { mountImageViewer } from "../image-viewer.js";
import { mountPairedVideo } from "../paired-video.js";

const page = readJSON("page-data");
const stimulus = readJSON("stimulus-data") || {};
const base = `/api/v1/items/${page.item}/`;
const byId = (id) => document.getElementById(id);
const act = async (path, body) => {
  const r = await post(base + path, { ...body, version: page.version });
  if (r.ok) location.reload(); else byId("item-error").textContent = errorText(r.data);
};
const ticked = (name) => [...document.querySelectorAll(`input[name=${name}]:checked`)].map((c) => c.value);
const onClick = (id, handler) => byId(id)?.addEventListener("click", handler);

(stimulus.images || []).forEach((image, i) => {
  const element = byId("stimulus-images").appendChild(document.createElement("div"));
  element.className = "stimulus-image";
  mountImageViewer(element, { ...image, alt: `Stimulus image ${i + 1}` });
});
if (stimulus.videos && byId("stimulus-videos")) mountPairedVideo(byId("stimulus-videos"), stimulus.videos);

// A choice item's answers are the ticked choices' letters; an open item's the comma-separated words.
function answers() {
  if (byId("item-choices")) return [...document.querySelectorAll(".item-correct:checked")].map((c) => c.value);
  return byId("item-answers").value.split(",").map((a) => a.trim()).filter(Boolean);
}
// The family's tags, from the same lists as the authoring form (annotation/family_tags.py).
function familyTags() {
  const tags = {};
  for (const select of document.querySelectorAll("#item-family-tags select[data-tag]")) {
    if (select.dataset.tag === "flip" && !select.value) continue;  // the flip decision left undecided
    tags[select.dataset.tag] = select.multiple ? [...select.selectedOptions].map((o) => o.value) : select.value;
  }
  return tags;
}

// A 3DSRBench subtype names its category: picking one sets the other, as on the authoring form.
byId("item-family-tags")?.addEventListener("change", (e) => {
  const group = e.target.selectedOptions?.[0]?.dataset.group;
  const parent = group && [...document.querySelectorAll("#item-family-tags select[data-tag]")]
    .find((select) => [...select.options].some((o) => o.value === group && !o.dataset.group));
  if (parent) parent.value = group;
});

onClick("save-item", () => {
  const body = { question: byId("item-question").value, answers: answers() };
  const types = ticked("item_question_type");
  if (types.length) body.question_type = types;  // only families with question types (Hypo3D) tick them
  if (byId("item-choices")) body.choices = [...document.querySelectorAll(".item-choice")].map((c) => c.value);
  if (byId("item-family-tags")) body.tags = familyTags();
  act("edit/", body);
});
onClick("approve-item", () => act("approve/", {}));
onClick("adjudicate-item", () => act("adjudicate/", { answers: answers() }));
onClick("reject-item", () => act("reject/", { criteria: ticked("item_criteria"), note: byId("item-reject-note").value }));
