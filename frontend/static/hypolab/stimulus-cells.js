/**
 * What each item of a list page shows (the drafted-question filter, the item analysis): each cell
 * `td.draft-stimulus[data-item]` gets the item's images with their marks (image-viewer.js) at once and
 * its paired videos (the frame-locked player, paired-video.js) only when asked, so a long list does not
 * load every video. `stimuli` is {item id: {images, videos}} (review.selectors.stimuli_of).
 */
import { mountImageViewer } from "./image-viewer.js";
import { mountPairedVideo } from "./paired-video.js";

export function mountStimulusCell(cell, stimuli, { videos = false } = {}) {
  const shown = stimuli[cell.dataset.item];
  if (!shown || cell.dataset.mounted === "all") return;
  if (!cell.dataset.mounted) {
    shown.images.forEach((image, i) => {
      const element = cell.appendChild(document.createElement("div"));
      element.className = "stimulus-thumb";
      mountImageViewer(element, { ...image, alt: `Item ${cell.dataset.item}, image ${i + 1}` });
    });
    cell.dataset.mounted = shown.videos ? "images" : "all";
  }
  if (videos && shown.videos) {
    cell.querySelector("button.show-videos")?.remove();
    mountPairedVideo(cell.appendChild(document.createElement("div")), shown.videos);
    cell.dataset.mounted = "all";
  }
}

/** Every cell of the page; an item with videos gets a button that opens its player. */
export function mountStimulusCells(stimuli) {
  for (const cell of document.querySelectorAll("td.draft-stimulus[data-item]")) {
    mountStimulusCell(cell, stimuli);
    if (stimuli[cell.dataset.item]?.videos && cell.dataset.mounted !== "all") {
      const open = Object.assign(document.createElement("button"), { type: "button", className: "link show-videos",
        textContent: "Show the two videos" });
      open.addEventListener("click", () => mountStimulusCell(cell, stimuli, { videos: true }));
      cell.append(open);
    }
  }
}
