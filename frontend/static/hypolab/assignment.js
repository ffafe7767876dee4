/**
 * What both crowd authoring pages (annotate.js, annotate-task.js) do with a leased assignment: autosave
 * the draft, keep the lease with heartbeats, submit, and give the scene back. `page` is the view's
 * page data: {assignment, done_url, returned_url}.
 */
import { errorText, post } from "./api.js";
import { createAutosave } from "./autosave.js";

export function openAssignment({ page, draft, form, error, status, body, drafted }) {
  const base = `/api/v1/assignments/${page.assignment}/`;
  const finished = () => { location.href = page.done_url; };
  // A 409 on the assignment: submitted already (from another tab: show the code) or the lease is gone.
  const leaseLost = (r) => {
    if (r.status === 409 && r.data.completion_code) { finished(); return true; }
    if (r.status === 409 && r.data.assignment) { error.textContent = errorText(r.data) + " Reload the page."; return true; }
    return false;
  };
  const fail = (r) => { if (!leaseLost(r)) error.textContent = errorText(r.data); };
  const autosave = createAutosave({ url: base + "draft/", revision: draft.revision, form, status, body, refused: leaseLost });
  setInterval(() => autosave.queue(() => post(base + "heartbeat/", {}).then(leaseLost)), draft.heartbeat_seconds * 1000);

  // Giving the scene back always asks first (a stray click ends the work), and says what becomes of a
  // draft (kept for the campaign's records, but this worker cannot continue it); then back to the platform.
  document.getElementById("release-assignment").addEventListener("click", () => {
    const question = drafted()
      ? "Give this scene back? Your draft stays in the campaign's records, but you cannot continue it and it " +
        "will not be submitted or paid."
      : "Give this scene back? You leave this task without a completion code and cannot come back to it.";
    if (!confirm(question)) return;
    autosave.queue(async () => {
      await autosave.save();
      const r = await post(base + "release/", {});
      if (r.ok) location.href = page.returned_url; else fail(r);
    });
  });

  return {
    base, autosave, leaseLost, fail,
    /** Saves what is unsaved, then submits `answer`; on success the page shows the completion code. */
    submit: (answer) => autosave.queue(async () => {
      await autosave.save();
      const r = await post(base + "submit/", answer);
      if (r.ok) finished(); else fail(r);
    }),
  };
}
