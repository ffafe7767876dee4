/**
 * Paired before/after videos kept on the same frame. The "before" video is the clock; the "after"
 * video follows it: on every frame the master presents (requestVideoFrameCallback, or timeupdate
 * where that is missing) a follower more than half a frame away is moved to the master's time.
 * Seeks and frame steps set both videos to the same frame; pausing lines the follower up exactly.
 *
 * Controls: play/pause both, a shared scrubber, one frame back/forward, speed, and a view toggle
 * between side by side and A/B (both stacked on one canvas, one shown, still locked together).
 * Keys when the player has focus: space play/pause, ←/→ or ,/. frame step, "a" flips A/B.
 * `fps` comes from the asset's probed metadata; without it the player measures it while playing.
 * data-loaded="true" once both videos can play ("error" on failure).
 */
const DEFAULT_FPS = 25;
const SPEEDS = [0.25, 0.5, 1, 2];

function makeVideo(url, label) {
  const figure = document.createElement("figure");
  Object.assign(figure.style, { margin: 0, gridArea: "1 / 1" });
  const video = document.createElement("video");
  Object.assign(video, { src: url, muted: true, playsInline: true, preload: "auto" });
  video.style.width = "100%";
  video.dataset.which = label.toLowerCase();
  const caption = document.createElement("figcaption");
  caption.textContent = label;
  figure.append(video, caption);
  return { figure, video };
}

function button(role, text, title) {
  const b = Object.assign(document.createElement("button"), { type: "button", textContent: text, title });
  b.dataset.role = role;
  return b;
}

export function mountPairedVideo(element, { before, after, fps: knownFps }) {
  element.classList.add("hl-paired-video");
  element.dataset.loaded = "false";
  element.tabIndex = 0;
  const left = makeVideo(before, "Before");
  const right = makeVideo(after, "After");
  const master = left.video;
  const follower = right.video;
  const videos = [master, follower];
  const row = document.createElement("div");
  row.append(left.figure, right.figure);

  const play = button("play", "Play both", "Play or pause both (space)");
  const back = button("step-back", "◀ frame", "One frame back (←)");
  const forward = button("step-forward", "frame ▶", "One frame forward (→)");
  const view = button("view", "A/B view", "Switch between side by side and one canvas");
  const flip = button("flip", "Show after", "Flip between the two states (a)");
  flip.hidden = true;
  const speed = document.createElement("select");
  speed.dataset.role = "speed";
  speed.setAttribute("aria-label", "Playback speed");
  speed.append(...SPEEDS.map((s) => new Option(`${s}×`, s, s === 1, s === 1)));
  const scrubber = Object.assign(document.createElement("input"), { type: "range", min: 0, max: 1000, value: 0 });
  scrubber.dataset.role = "scrubber";
  scrubber.setAttribute("aria-label", "Position in both videos");
  Object.assign(scrubber.style, { flex: "1 1 12rem", width: "auto", minWidth: "8rem" });
  speed.style.width = "auto";
  const clock = document.createElement("span");
  clock.dataset.role = "clock";
  const controls = document.createElement("div");
  Object.assign(controls.style, { display: "flex", gap: "0.5rem", alignItems: "center", flexWrap: "wrap" });
  controls.append(play, back, forward, scrubber, clock, speed, view, flip);
  element.replaceChildren(row, controls);

  let fps = knownFps > 0 ? knownFps : DEFAULT_FPS;
  let measuredFrom = null; // [mediaTime, presentedFrames] while measuring fps
  let abMode = false;
  let showingAfter = false;

  function layout() {
    // One canvas keeps the size of one side-by-side video.
    Object.assign(row.style, { display: "grid", gap: "0.75rem",
                               gridTemplateColumns: abMode ? "minmax(0, calc(50% - 0.375rem))" : "1fr 1fr" });
    left.figure.style.gridArea = "1 / 1";
    right.figure.style.gridArea = abMode ? "1 / 1" : "1 / 2";
    // Hidden, not removed: the hidden video keeps playing in step so a flip shows the same moment.
    left.figure.style.visibility = abMode && showingAfter ? "hidden" : "visible";
    right.figure.style.visibility = abMode && !showingAfter ? "hidden" : "visible";
    view.textContent = abMode ? "Side by side" : "A/B view";
    flip.hidden = !abMode;
    flip.textContent = showingAfter ? "Show before" : "Show after";
  }
  layout();

  const duration = () => Math.min(...videos.map((v) => v.duration || 0));
  const frameOf = (t) => Math.floor(t * fps + 1e-3);
  // The middle of a frame, so rounding in either decoder cannot land on its neighbour.
  const timeOfFrame = (k) => Math.min(Math.max(0, (k + 0.5) / fps), Math.max(0, duration() - 0.5 / fps));

  function showPosition(t) {
    if (duration()) scrubber.value = Math.round((t / duration()) * 1000);
    clock.textContent = `${t.toFixed(2)} s · frame ${frameOf(t)}`;
  }

  function seekBoth(t) {
    videos.forEach((v) => { v.currentTime = t; });
    showPosition(t);
  }

  function pauseBoth() {
    videos.forEach((v) => v.pause());
    play.textContent = "Play both";
    follower.currentTime = master.currentTime;
    showPosition(master.currentTime);
  }

  async function playBoth() {
    if (master.ended || master.currentTime >= duration()) seekBoth(0);
    follower.currentTime = master.currentTime;
    play.textContent = "Pause both";
    await Promise.all(videos.map((v) => v.play().catch(() => {})));
  }

  function step(frames) {
    if (!master.paused) pauseBoth();
    seekBoth(timeOfFrame(frameOf(master.currentTime) + frames));
  }

  // Keep the follower within half a frame of the master while playing.
  function follow(mediaTime) {
    if (master.paused || follower.seeking) return;
    if (Math.abs(follower.currentTime - mediaTime) > 0.5 / fps) follower.currentTime = mediaTime;
    showPosition(mediaTime);
  }

  function measureFps(metadata) {
    if (knownFps > 0 || metadata.presentedFrames === undefined) return;
    if (!measuredFrom) { measuredFrom = [metadata.mediaTime, metadata.presentedFrames]; return; }
    const frames = metadata.presentedFrames - measuredFrom[1];
    const seconds = metadata.mediaTime - measuredFrom[0];
    if (frames >= 10 && seconds > 0) { fps = Math.round(frames / seconds); knownFps = fps; }
  }

  if ("requestVideoFrameCallback" in HTMLVideoElement.prototype) {
    const onFrame = (_now, metadata) => {
      measureFps(metadata);
      follow(metadata.mediaTime);
      master.requestVideoFrameCallback(onFrame);
    };
    master.requestVideoFrameCallback(onFrame);
  } else {
    master.addEventListener("timeupdate", () => follow(master.currentTime));
  }

  // The follower waits while the master buffers, and the master's end stops both.
  master.addEventListener("waiting", () => follower.pause());
  master.addEventListener("playing", () => { if (follower.paused) follower.play().catch(() => {}); });
  master.addEventListener("ended", pauseBoth);
  master.addEventListener("seeked", () => { if (master.paused) showPosition(master.currentTime); });

  let ready = 0;
  videos.forEach((video) => {
    video.addEventListener("loadeddata", () => {
      ready += 1;
      if (ready === 2) { element.dataset.loaded = "true"; showPosition(master.currentTime); }
    }, { once: true });
    video.addEventListener("error", () => { element.dataset.loaded = "error"; });
  });

  play.addEventListener("click", () => (master.paused ? playBoth() : pauseBoth()));
  back.addEventListener("click", () => step(-1));
  forward.addEventListener("click", () => step(1));
  scrubber.addEventListener("input", () => {
    if (!master.paused) pauseBoth();
    seekBoth(timeOfFrame(frameOf((scrubber.value / 1000) * duration())));
  });
  speed.addEventListener("change", () => videos.forEach((v) => { v.playbackRate = Number(speed.value); }));
  view.addEventListener("click", () => { abMode = !abMode; layout(); });
  flip.addEventListener("click", () => { showingAfter = !showingAfter; layout(); });
  element.addEventListener("keydown", (event) => {
    if (event.target.closest("input, select, textarea")) return;
    if (event.key === " " && event.target.closest("button")) return; // the button's own click

    const actions = {
      " ": () => (master.paused ? playBoth() : pauseBoth()),
      ArrowLeft: () => step(-1), ",": () => step(-1),
      ArrowRight: () => step(1), ".": () => step(1),
      a: () => { if (!abMode) abMode = true; showingAfter = !showingAfter; layout(); },
    };
    if (!actions[event.key]) return;
    event.preventDefault();
    actions[event.key]();
  });

  return {
    play: playBoth,
    pause: pauseBoth,
    step,
    seek: (t) => seekBoth(timeOfFrame(frameOf(t))),
    dispose() { videos.forEach((v) => v.pause()); element.replaceChildren(); },
  };
}
