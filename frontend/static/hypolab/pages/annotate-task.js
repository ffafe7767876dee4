// The other crowd tasks (annotate_task.html): world frames, questions, choice items and independent
// answers. The form's fields depend on the campaign's kind; its state is the draft's `content`.
import { readJSON } from "../api.js";
import { openAssignment } from "../assignment.js";
import { mountOverlayTool } from "../overlay-tool.js";
import { mountPairedVideo } from "../paired-video.js";

const page = readJSON("page-data");
const task = readJSON("task-data");
const draft = readJSON("draft-data");
const kind = page.kind;
const $ = (id) => document.getElementById(id);
const form = $("task-form");
const error = $("task-error");
const LETTERS = "ABCDEFGH";  // 2 to 7 choices (annotation/kinds.py)
const NO_CORRECT_OPTION = "No correct option is listed.";

const choicesBox = $("choices");
function setChoices(n, values = [], correct = []) {
  choicesBox.querySelectorAll(".choice-row").forEach((row) => row.remove());
  for (let i = 0; i < n; i++) {
    const row = document.createElement("div");
    row.className = "choice-row";
    const tick = Object.assign(document.createElement("input"), { type: "checkbox", className: "correct", value: LETTERS[i] });
    tick.checked = correct.includes(LETTERS[i]);
    const label = document.createElement("label");
    label.append(tick, ` ${LETTERS[i]}.`);
    const choice = Object.assign(document.createElement("input"), { className: "choice", autocomplete: "off", value: values[i] || "" });
    choice.setAttribute("aria-label", `Choice ${LETTERS[i]}`);  // the tick's label says "correct"
    tick.setAttribute("aria-label", `Choice ${LETTERS[i]} is correct`);
    row.append(label, " ", choice);
    choicesBox.append(row);
  }
}
// The family's tags, picked from lists (annotation/family_tags.py TAG_FIELDS); the server names a
// tag left unpicked. A subtype's data-group is its category: picking one narrows the other.
const tagSelects = () => [...document.querySelectorAll("#family-tags select[data-tag]")];
function pickedTags() {
  const tags = {};
  for (const select of tagSelects()) {
    tags[select.dataset.tag] = select.multiple ? [...select.selectedOptions].map((o) => o.value) : select.value;
  }
  return tags;
}
function narrowGroups() {
  const groups = new Set([...document.querySelectorAll("#family-tags option[data-group]")].map((o) => o.dataset.group));
  const parent = tagSelects().find((select) => [...select.options].some((o) => groups.has(o.value)));
  if (!parent) return;
  for (const option of document.querySelectorAll("#family-tags option[data-group]")) {
    option.hidden = Boolean(parent.value) && option.dataset.group !== parent.value;
  }
}
function restoreTags(tags) {
  for (const select of tagSelects()) {
    const value = tags[select.dataset.tag];
    if (select.multiple) [...select.options].forEach((o) => { o.selected = (value || []).includes(o.value); });
    else if (typeof value === "string") select.value = value;
  }
  narrowGroups();
}
if ($("family-tags")) {
  $("family-tags").addEventListener("change", (e) => {
    const picked = e.target.selectedOptions?.[0];
    const parent = tagSelects().find((select) => [...select.options].some((o) => o.value === picked?.dataset.group));
    if (picked?.dataset.group && parent) parent.value = picked.dataset.group;  // a subtype sets its category
    narrowGroups();
    const child = e.target.querySelector("option[data-group]") ? null
      : tagSelects().find((select) => select.selectedOptions[0]?.hidden);
    if (child) child.value = "";  // a category that no longer holds the picked subtype clears it
  });
}
function collect() {
  if (kind === "world_frame") {
    return { anchor: $("anchor").value, side: (form.querySelector("input[name=side]:checked") || {}).value,
             text: $("frame-text").value };
  }
  if (kind === "answer_only") {
    if (!task.choices.length) return { answer: $("answer").value };
    return { answer: [...form.querySelectorAll("input[name=answer]:checked")].map((i) => i.value) };
  }
  // a campaign without a question-type taxonomy (the choice families) asks for none: the tags place the item
  const answer = { question: $("question").value, ...($("question-type") ? { question_type: $("question-type").value } : {}) };
  if (kind === "question_answer") return { ...answer, answer: $("answer").value };
  answer.choices = [...form.querySelectorAll(".choice")].map((i) => i.value);
  answer.correct = [...form.querySelectorAll(".correct:checked")].map((i) => i.value);
  if (kind === "choice_image") {
    // the flip decision (3DSRBench's FlipEval: swap / same / none); families never mirrored are not asked
    if ($("flip")) answer.flip = $("flip").value;
    answer.overlays = overlayTool ? overlayTool.marks : [];
  }
  else answer.hallucination = $("hallucination").checked;
  answer.not_sure = $("not-sure").checked;
  if ($("family-tags")) answer.tags = pickedTags();
  return answer;
}
function restore(c) {
  if (kind === "world_frame") {
    if (c.anchor) $("anchor").value = c.anchor;
    const side = [...form.querySelectorAll("input[name=side]")].find((i) => i.value === c.side);
    if (side) side.checked = true;
    $("frame-text").value = c.text || "";
    return;
  }
  if (kind === "answer_only") {
    if (!task.choices.length) { $("answer").value = c.answer || ""; return; }
    form.querySelectorAll("input[name=answer]").forEach((i) => { i.checked = (c.answer || []).includes(i.value); });
    return;
  }
  $("question").value = c.question || "";
  if (c.question_type && $("question-type")) $("question-type").value = c.question_type;
  if (kind === "question_answer") { $("answer").value = c.answer || ""; return; }
  const values = c.choices || [];
  if (kind === "choice_image") {
    $("choice-count").value = String(Math.min(Math.max(values.length, 2), 7));
    if ($("flip")) $("flip").value = c.flip || (c.flip_swaps === true ? "swap" : c.flip_swaps === false ? "same" : "");
  }
  else $("hallucination").checked = !!c.hallucination;
  $("not-sure").checked = !!c.not_sure;
  if ($("family-tags") && c.tags && typeof c.tags === "object") restoreTags(c.tags);
  setChoices(kind === "choice_image" ? Number($("choice-count").value) : Math.max(values.length, 2), values, c.correct || []);
}

if (kind === "world_frame") {
  // The sentence follows the pick until the worker edits it.
  let edited = false;
  const generate = () => {
    if (edited) return;
    const side = (form.querySelector("input[name=side]:checked") || {}).value;
    const label = $("anchor").selectedOptions[0]?.textContent;
    if (side && label) $("frame-text").value = task.template.replace("{label}", label).replace("{side}", side);
  };
  $("frame-text").addEventListener("input", () => { edited = true; });
  form.addEventListener("change", (e) => { if (e.target.id !== "frame-text") generate(); });
}
// Choice items on images: the arrows, start boxes and bounding boxes drawn on them (overlay-tool.js),
// kept in the draft and sent with the item.
let overlayTool = null;
if (kind === "choice_image" && $("media")) {
  overlayTool = mountOverlayTool($("media"), [...$("media").querySelectorAll("img")], {
    marks: (draft.content || {}).overlays,
    onChange: () => { form.dispatchEvent(new Event("input")); form.dispatchEvent(new Event("focusout")); },
  });
}
if (kind === "choice_image") {
  $("choice-count").addEventListener("change", () => { const c = collect(); setChoices(Number($("choice-count").value), c.choices, c.correct); });
}
if (kind === "choice_video") {
  $("add-choice").addEventListener("click", () => { const c = collect(); if (c.choices.length < 7) setChoices(c.choices.length + 1, c.choices, c.correct); });
  $("hallucination").addEventListener("change", (e) => {
    const c = collect();
    if (e.target.checked && !c.choices.includes(NO_CORRECT_OPTION)) setChoices(c.choices.length + 1, [...c.choices, NO_CORRECT_OPTION], c.correct);
  });
}
// M3-Verse: the evaluators' frame-locked player (play both, frame step, A/B), on the same two videos.
if (task.videos && $("videos")) mountPairedVideo($("videos"), task.videos);
restore(draft.content || {});

const assignment = openAssignment({
  page, draft, form, error, status: $("draft-status"),
  body: () => ({ content: collect() }),
  drafted: () => assignment.autosave.dirty || assignment.autosave.revision > 0 || Object.keys(draft.content || {}).length > 0,
});
form.addEventListener("submit", (e) => {
  e.preventDefault();
  error.textContent = "";
  assignment.submit({ answer: collect() });
});
