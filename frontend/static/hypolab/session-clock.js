/**
 * The timed session engine of human evaluation: it asks the server for the current item, counts its
 * time down against the server's clock (not the browser's: the server owns time, and a reload or a
 * wrong system clock changes nothing), sends answers with the time taken and the times focus left
 * the page, and moves on when the item's time is up. What is shown is the page's `view`:
 *   item(item, previousAnswer, nItems)  an item to answer (or revisit, with its earlier answer); returns a
 *     promise of its stimuli on screen: the page then reports the onset, and the item's clock (and the
 *     time taken) runs from it, so a slow download costs the participant nothing
 *   revisiting(on)  whether the item shown is an earlier one being changed
 *   answered(entries, allowGoingBack)  the answered items one may go back to
 *   countdown(itemMs, sessionMs)  four times a second
 *   stage()  the question stage replaces feedback;  feedback({correct, answer})  after a practice item
 *   finished(completionCode);  error(text);  typed()  the answer given but not sent yet ("" if none)
 */
import { errorText, get, post } from "./api.js";

const TICK_MS = 250;
const AFTER_TIME_UP_MS = 1500;

export function runSession(sessionId, view) {
  const api = `/api/v1/sessions/${sessionId}/`;
  let state = null, offset = 0, shownItem = null, shownSince = 0, tick = null, revisiting = null, focusLosses = 0;
  const serverNow = () => Date.now() + offset;

  function present(item, previous) {
    const stimuliShown = view.item(item, previous, state.n_items);
    shownSince = performance.now();
    focusLosses = 0;
    if (!revisiting) reportOnset(item, stimuliShown);
  }

  /** The stimuli are on screen: the server moves the item's deadline to run from now (within its bound). */
  async function reportOnset(item, stimuliShown) {
    const servedAt = performance.now();
    await stimuliShown;
    if (shownItem !== item.id || revisiting) return;
    shownSince = performance.now();
    const r = await post(api + "onset/", { item: item.id, load_ms: Math.round(shownSince - servedAt) });
    if (!r.ok || shownItem !== item.id) return;
    offset = Date.parse(r.data.server_now) - Date.now();
    item.deadline = r.data.deadline;
  }

  /** The next item's files, fetched at low priority while this one is answered (jsPsych's preload), so the
   * next clock starts on a stimulus already in the browser's cache. */
  const preloaded = new Set();
  function preload(urls) {
    for (const url of urls || []) {
      if (preloaded.has(url)) continue;
      preloaded.add(url);
      const link = document.createElement("link");
      link.rel = "prefetch";
      link.href = url;
      document.head.append(link);
    }
  }

  async function load() {
    revisiting = null;
    const r = await get(api + "current/");
    if (r.ok) show(r.data); else view.error(errorText(r.data));
  }

  function show(data) {
    state = data;
    offset = Date.parse(data.server_now) - Date.now();
    view.revisiting(false);
    clearInterval(tick);
    if (data.feedback) { view.feedback(data.feedback); return; }
    if (data.status === "finished" || !data.item) { view.finished(data.completion_code || ""); return; }
    view.stage();
    const item = data.item;
    if (shownItem !== item.id) { shownItem = item.id; present(item, ""); }
    preload(data.preload);
    view.answered(data.answered, data.allow_going_back);
    const countDown = () => {
      const left = Date.parse(item.deadline) - serverNow();
      view.countdown(left, Date.parse(data.session_deadline) - serverNow());
      if (left <= 0 && !revisiting) {
        clearInterval(tick);
        sendLate(item, view.typed());
      }
    };
    countDown();  // at once, so the previous item's time never shows on this one
    tick = setInterval(countDown, TICK_MS);
  }

  /** Time is up: an answer typed but not sent goes as a late one (the server keeps it, unscored, and says so). */
  async function sendLate(item, typed) {
    let said = "Time is up for this question.";
    if (typed) {
      const r = await post(api + "answer/", { item: item.id, answer: typed, focus_losses: focusLosses,
        client_latency_ms: Math.round(performance.now() - shownSince) });
      said = r.ok ? "" : errorText(r.data);
    }
    view.error(said);
    setTimeout(load, typed ? 2 * AFTER_TIME_UP_MS : AFTER_TIME_UP_MS);
  }

  // Leaving the tab or window during an item is data for the analysis, as in jsPsych.
  window.addEventListener("blur", () => { focusLosses += 1; });

  return {
    start: load,
    /** The item on screen: an earlier one being changed, else the current one. */
    shown: () => revisiting || state.item,
    /** Back to the current item (after feedback, or from an earlier one). */
    resume() { shownItem = null; load(); },
    async revisit(itemId) {
      const r = await get(api + `items/${itemId}/`);
      if (!r.ok) { view.error(errorText(r.data)); return; }
      revisiting = r.data;
      view.revisiting(true);
      present(r.data, r.data.your_answer);
    },
    async answer(text) {
      const item = revisiting || state.item;
      const r = await post(api + "answer/", { item: item.id, answer: text, focus_losses: focusLosses,
        client_latency_ms: revisiting ? null : Math.round(performance.now() - shownSince) });
      if (!r.ok) { view.error(errorText(r.data)); return; }
      if (revisiting) this.resume(); else show(r.data);
    },
  };
}
