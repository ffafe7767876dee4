/**
 * Paired before/after videos, locked together: one play/pause button and one position slider drive
 * both, and the "after" video is pulled back to the "before" one whenever they drift apart, so a
 * viewer always compares the same moment. The videos' own controls are hidden.
 * When both can play the element gets data-loaded="true" (data-loaded="error" on failure).
 */
const MAX_DRIFT_S = 0.15;

function makeVideo(url, label) {
  const figure = document.createElement("figure");
  const video = document.createElement("video");
  Object.assign(video, { src: url, muted: true, playsInline: true, preload: "auto" });
  video.style.width = "100%";
  const caption = document.createElement("figcaption");
  caption.textContent = label;
  figure.append(video, caption);
  return { figure, video };
}

export function mountPairedVideo(element, { before, after }) {
  element.classList.add("hl-paired-video");
  element.dataset.loaded = "false";
  const left = makeVideo(before, "Before");
  const right = makeVideo(after, "After");
  const row = document.createElement("div");
  Object.assign(row.style, { display: "grid", gridTemplateColumns: "1fr 1fr", gap: "0.75rem" });
  row.append(left.figure, right.figure);
  const play = Object.assign(document.createElement("button"), { type: "button", textContent: "Play both" });
  play.dataset.role = "play";
  const slider = Object.assign(document.createElement("input"), { type: "range", min: 0, max: 1000, value: 0 });
  slider.setAttribute("aria-label", "Position in both videos");
  const controls = document.createElement("div");
  controls.append(play, slider);
  element.replaceChildren(row, controls);

  const videos = [left.video, right.video];
  let ready = 0;
  videos.forEach((video) => {
    video.addEventListener("loadeddata", () => { ready += 1; if (ready === 2) element.dataset.loaded = "true"; }, { once: true });
    video.addEventListener("error", () => { element.dataset.loaded = "error"; });
  });
  const duration = () => Math.min(...videos.map((v) => v.duration || 0));
  play.addEventListener("click", () => {
    if (left.video.paused) {
      videos.forEach((v) => v.play().catch(() => {}));
      play.textContent = "Pause both";
    } else {
      videos.forEach((v) => v.pause());
      play.textContent = "Play both";
    }
  });
  slider.addEventListener("input", () => {
    const t = (slider.value / 1000) * duration();
    videos.forEach((v) => { v.currentTime = t; });
  });
  left.video.addEventListener("timeupdate", () => {
    if (Math.abs(right.video.currentTime - left.video.currentTime) > MAX_DRIFT_S) right.video.currentTime = left.video.currentTime;
    if (duration()) slider.value = Math.round((left.video.currentTime / duration()) * 1000);
  });
  left.video.addEventListener("ended", () => { right.video.pause(); play.textContent = "Play both"; });
  return { dispose() { videos.forEach((v) => v.pause()); element.replaceChildren(); } };
}
