// An evaluator's timed session (eval_session.html): the stimulus (scene, images or paired videos), the
// question and its answer inputs; the session-clock engine decides what comes when.
import { mountPointCloudViewer } from "../../vendor/hypolab/pointcloud-viewer.js";
import { readJSON } from "../api.js";
import "../copy.js";
import { mountImageViewer } from "../image-viewer.js";
import { mountPairedVideo } from "../paired-video.js";
import { runSession } from "../session-clock.js";
import { mountTopView } from "../topview.js";

const page = readJSON("page-data");
const byId = (id) => document.getElementById(id);
const LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const fmt = (ms) => { const s = Math.max(0, Math.ceil(ms / 1000)); return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`; };

function renderAnswerInputs(item, previous) {
  const choices = byId("choices");
  choices.querySelectorAll("label").forEach((l) => l.remove());
  const isChoice = item.choices.length > 0;
  byId("open-answer").hidden = isChoice;
  choices.hidden = !isChoice;
  byId("answer").value = isChoice ? "" : (previous || "");
  if (!isChoice) return;
  const multi = item.answer_format === "multi";
  byId("choices-legend").textContent = multi ? "Pick every option that applies" : "Pick one option";
  const chosen = new Set((previous || "").split(/[\s,]+/).filter(Boolean));
  const options = item.choices.map((text, i) => [LETTERS[i], `${LETTERS[i]}. ${text}`]);
  if (item.not_sure_option) options.push(["Not sure", "Not sure"]);
  for (const [value, text] of options) {
    const label = document.createElement("label");
    label.className = "check";
    const input = Object.assign(document.createElement("input"), { type: multi && value !== "Not sure" ? "checkbox" : "radio", name: "choice", value });
    input.checked = chosen.has(value) || previous === value;
    label.append(input, " ", text);
    choices.append(label);
  }
}

// Resolves once each element's viewer says its stimulus is on screen (data-loaded "true": an image
// drawn, the point cloud's first frame, both videos ready to play) or failed ("error", shown as such).
function onScreen(elements) {
  return Promise.all(elements.map((element) => new Promise((resolve) => {
    const done = () => element.dataset.loaded === "true" || element.dataset.loaded === "error";
    if (done()) { resolve(); return; }
    const watch = new MutationObserver(() => { if (done()) { watch.disconnect(); resolve(); } });
    watch.observe(element, { attributes: true, attributeFilter: ["data-loaded"] });
  })));
}

/** Shows the item's stimuli; resolves when all of them are on screen (the item's clock starts then). */
function renderStimulus(item) {
  const shown = [];
  const hasScene = Boolean(item.scene && item.scene.points_url);
  byId("scene-panels").hidden = !hasScene;
  byId("pointcloud").replaceChildren(); byId("topview").replaceChildren();
  if (hasScene) {
    // The compass of the scene's world frame, as on the annotators' viewer; the anchor it turns on
    // is the one object named on hover (the orientation sentence names it too).
    const frame = item.scene.world_frame;
    const anchor = frame ? (item.scene.objects || []).filter((o) => o.instance_id === frame.anchor_instance_id) : [];
    mountPointCloudViewer(byId("pointcloud"), item.scene.points_url, { objects: anchor, world_frame: frame });
    shown.push(byId("pointcloud"));
    mountTopView(byId("topview"), { imageUrl: item.scene.topview_plain_url, semanticUrl: item.scene.topview_semantic_url, map: item.scene.map });
  }
  byId("image-panel").hidden = item.images.length === 0;
  byId("image").replaceChildren(); byId("more-images").replaceChildren();
  // Every image the model is shown, in the same order (the mirrored twins on a flipped item).
  item.images.forEach((image, i) => {
    const element = i === 0 ? byId("image") : byId("more-images").appendChild(document.createElement("div"));
    mountImageViewer(element, { ...image, alt: `Stimulus image ${i + 1}` });
    shown.push(element);
  });
  byId("video-panel").hidden = !item.videos;
  byId("videos").replaceChildren();
  if (item.videos) { mountPairedVideo(byId("videos"), item.videos); shown.push(byId("videos")); }
  return onScreen(shown);
}

const session = runSession(page.session, {
  item(item, previous, nItems) {
    byId("question").textContent = item.question;
    const frames = item.world_frame || [];
    byId("world-frame").hidden = frames.length === 0;
    byId("world-frame-text").textContent = frames.join(" ");
    byId("context-change").textContent = item.context_change ? "Imagine: " + item.context_change : "";
    byId("answer-count-note").hidden = !item.answer_count_note;
    byId("answer-count-note").textContent = item.answer_count_note || "";
    byId("answer-hint").textContent = item.answer_hint || "a short phrase";
    byId("progress").textContent = `Question ${item.number} of ${nItems}`;
    byId("practice-badge").hidden = !item.practice;
    byId("answer-error").textContent = "";
    document.body.dataset.itemId = item.id;
    renderAnswerInputs(item, previous);
    return renderStimulus(item);
  },
  revisiting(on) { byId("revisit-note").hidden = !on; },
  answered(entries, allowGoingBack) {
    const list = byId("answered-list");
    list.querySelectorAll("button").forEach((b) => b.remove());
    list.hidden = !allowGoingBack || entries.length === 0;
    for (const entry of entries) {
      const b = Object.assign(document.createElement("button"), { type: "button", textContent: String(entry.number) });
      b.addEventListener("click", () => session.revisit(entry.id));
      list.append(b, " ");
    }
  },
  countdown(itemMs, sessionMs) {
    byId("item-countdown").textContent = fmt(itemMs);
    byId("session-countdown").textContent = fmt(sessionMs);
  },
  stage() { byId("feedback").hidden = true; byId("stage").hidden = false; },
  feedback({ correct, answer }) {
    byId("stage").hidden = true; byId("feedback").hidden = false;
    byId("feedback-verdict").textContent = correct === null ? "Answer stored." : correct ? "Right!" : "Not quite.";
    byId("feedback-answer").textContent = answer;
  },
  finished(code) {
    byId("stage").hidden = true; byId("feedback").hidden = true; byId("finished").hidden = false;
    byId("session-header").hidden = true;  // no question is left: its number and clocks would be stale
    byId("completion-code").textContent = code;
    byId("copy-completion-code").dataset.copy = code;
    if (page.return_url) {
      const link = byId("return-link");
      link.hidden = false;
      link.querySelector("a").href = page.return_url.replace("{code}", code);
    }
  },
  error(text) { byId("answer-error").textContent = text; },
  typed() { return currentAnswer(session.shown()).trim(); },
});

function currentAnswer(item) {
  if (!item.choices.length) return byId("answer").value;
  return [...byId("choices").querySelectorAll("input:checked")].map((i) => i.value).join(", ");
}

byId("answer-form").addEventListener("submit", (e) => {
  e.preventDefault();
  session.answer(currentAnswer(session.shown()));
});
byId("back-to-current").addEventListener("click", () => session.resume());
byId("continue").addEventListener("click", () => session.resume());
// The opening screen (instructions and consent) comes first: no item, and no clock, before it is agreed.
if (!byId("intro")) session.start();
