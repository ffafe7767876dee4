/**
 * Autosave, the one every authoring page uses: the form's state goes to the server's draft three
 * seconds after an edit at most, when focus leaves the form, and when the page is hidden or left.
 * Saves run one at a time (through `queue`, which pages also use for their own requests), so each
 * carries the revision the previous one returned. Leaving the page sends the latest state at once
 * with keepalive (the request outlives the page) and without a revision: a save still in flight
 * would make it stale, and a refused last save is work lost.
 */
import { put } from "./api.js";

const SAVE_EVERY_MS = 3000;

export function createAutosave({ url, revision, form, status, body, refused = () => false }) {
  let dirty = false;
  let chain = Promise.resolve();
  const queue = (job) => (chain = chain.then(job, job));

  async function save() {
    if (!dirty) return;
    dirty = false;
    const r = await put(url, { ...body(), revision }, { keepalive: true });
    if (r.ok) {
      revision = r.data.revision;
      // an edit made while this save was on its way is not in it: the page still says "editing…"
      if (!dirty) status.textContent = "draft saved " + new Date().toLocaleTimeString();
    } else if (refused(r)) {
      // the page has said why (the lease is gone)
    } else if (r.status === 409) {
      status.textContent = "this draft was changed in another tab or device — reload to continue from it";
    } else {
      dirty = true;
      status.textContent = "not saved yet (retrying)";
    }
  }

  const edited = () => { dirty = true; status.textContent = "editing…"; };
  form.addEventListener("input", edited);  // text, selects, ticks and radios all fire it
  form.addEventListener("focusout", () => queue(save));
  document.addEventListener("visibilitychange", () => { if (document.visibilityState === "hidden") queue(save); });
  window.addEventListener("pagehide", () => {
    if (!dirty) return;
    dirty = false;
    put(url, body(), { keepalive: true });
  });
  setInterval(() => queue(save), SAVE_EVERY_MS);

  return {
    queue,
    /** Save now if there is anything unsaved (before submitting or giving the scene back). */
    save,
    get dirty() { return dirty; },
    get revision() { return revision; },
    /** The server's draft replaced what the form holds (after an action that is not a save). */
    adopt(newRevision) { revision = newRevision; dirty = false; },
  };
}
