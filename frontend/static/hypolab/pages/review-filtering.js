// Filtering drafted questions from the keyboard (review_filtering.html): j/k move, y keeps, e edits
// then keeps, n drops with a reason.
import { errorText, post, readJSON } from "../api.js";
import { mountStimulusCell, mountStimulusCells } from "../stimulus-cells.js";

// What each draft shows: its images with their marks at once, its paired videos (the frame-locked
// player) when its row is first focused or asked for, so a long list does not load every video.
const stimuli = readJSON("stimuli-data", {}) || {};
mountStimulusCells(stimuli);

const rows = [...document.querySelectorAll("tr.draft")];
const error = document.getElementById("filter-error");
let current = 0;
const focus = (i) => { current = Math.max(0, Math.min(rows.length - 1, i)); if (rows[current]) rows[current].focus(); };
async function decide(action, extra) {
  const row = rows[current];
  if (!row || row.dataset.done) return;
  const r = await post(`/api/v1/items/${row.dataset.id}/filter/`, { action, version: Number(row.dataset.version), ...extra });
  if (!r.ok) { error.textContent = errorText(r.data); return; }
  row.dataset.done = "true";
  row.querySelector(".draft-decision").textContent = action === "keep" ? "kept" : "dropped";
  error.textContent = "";
  focus(current + 1);
}
document.addEventListener("keydown", (e) => {
  if (e.target.matches("input, textarea")) return;
  if (e.key === "j") focus(current + 1);
  else if (e.key === "k") focus(current - 1);
  else if (e.key === "y") decide("keep", {});
  else if (e.key === "e") {
    const question = prompt("Edit the question", rows[current].querySelector(".draft-question").textContent);
    if (question) decide("keep", { question });
  } else if (e.key === "n") {
    const reason = prompt("Why drop it?");
    if (reason) decide("drop", { reason });
  }
});
rows.forEach((row, i) => row.addEventListener("focus", () => {
  current = i;
  const cell = row.querySelector("td.draft-stimulus");
  if (cell) mountStimulusCell(cell, stimuli, { videos: true });
}));
focus(0);
