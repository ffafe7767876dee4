/**
 * Top-view map with hoverable objects. The map data comes from benchmarks/topview.py:
 * {width, height, bounds, labels: [{instance_id, label, x, y, box: [left, top, right, bottom]}]}
 * in the image's pixel coordinates. Hover is a lookup of the pointer in those boxes (the
 * smallest box wins, so a chair under a table is still reachable), not a ray-cast.
 *
 * The element's data-hover-label holds the label shown ("" when none) and data-mode is
 * "plain" or "semantic"; data-ready becomes "true" once the image is shown. (It is not
 * data-loaded: pages and tests use [data-loaded=true] to find the point-cloud viewer.)
 */

function div(className) {
  const node = document.createElement("div");
  node.className = className;
  return node;
}

function boxArea([left, top, right, bottom]) {
  return (right - left) * (bottom - top);
}

/** The entry whose box holds pixel (x, y), the smallest one when boxes overlap; null if none. */
export function labelAt(labels, x, y) {
  let best = null;
  for (const entry of labels) {
    const [left, top, right, bottom] = entry.box;
    if (x >= left && x <= right && y >= top && y <= bottom) {
      if (!best || boxArea(entry.box) < boxArea(best.box)) best = entry;
    }
  }
  return best;
}

/**
 * Show the top view of a scene in `element`: `imageUrl` is the plain map, `semanticUrl` (optional)
 * the labelled one behind a toggle button, `map` the data for hover.
 */
export function mountTopView(element, { imageUrl, semanticUrl = null, map = null }) {
  element.classList.add("hl-topview");
  element.dataset.ready = "false";
  element.dataset.hoverLabel = "";
  element.dataset.mode = "plain";

  if (!imageUrl) {
    const status = div("hl-viewer-status hl-error");
    status.textContent = "This scene has no top-view map.";
    element.replaceChildren(status);
    element.dataset.ready = "error";
    return null;
  }

  const frame = div("hl-topview-frame");
  const image = document.createElement("img");
  image.className = "hl-topview-image";
  image.alt = "Top view of the scene";
  image.draggable = false;
  const outline = div("hl-topview-outline");
  const tooltip = div("hl-topview-tooltip");
  tooltip.setAttribute("role", "tooltip");
  outline.hidden = tooltip.hidden = true;
  frame.append(image, outline, tooltip);
  element.replaceChildren(frame);

  image.addEventListener("load", () => {
    element.dataset.ready = "true";
  });
  image.addEventListener("error", () => {
    element.dataset.ready = "error";
  });

  const labels = map?.labels ?? [];
  const hide = () => {
    outline.hidden = tooltip.hidden = true;
    element.dataset.hoverLabel = "";
  };

  image.addEventListener("pointermove", (event) => {
    if (!map) return;
    const rect = image.getBoundingClientRect();
    // Pointer position in the map's own pixels, whatever size the image is shown at.
    const x = ((event.clientX - rect.left) * map.width) / rect.width;
    const y = ((event.clientY - rect.top) * map.height) / rect.height;
    const entry = labelAt(labels, x, y);
    if (!entry) {
      hide();
      return;
    }
    const [left, top, right, bottom] = entry.box;
    // Percentages keep the outline on its object when the image is resized.
    Object.assign(outline.style, {
      left: `${(100 * left) / map.width}%`,
      top: `${(100 * top) / map.height}%`,
      width: `${(100 * (right - left)) / map.width}%`,
      height: `${(100 * (bottom - top)) / map.height}%`,
    });
    tooltip.textContent = entry.label;
    tooltip.style.left = `${event.clientX - rect.left + 12}px`;
    tooltip.style.top = `${event.clientY - rect.top + 12}px`;
    outline.hidden = tooltip.hidden = false;
    element.dataset.hoverLabel = entry.label;
  });
  image.addEventListener("pointerleave", hide);

  const toggle = semanticUrl ? document.createElement("button") : null;
  const setMode = (mode) => {
    const semantic = mode === "semantic" && Boolean(semanticUrl);
    element.dataset.mode = semantic ? "semantic" : "plain";
    image.src = semantic ? semanticUrl : imageUrl;
    if (toggle) {
      toggle.setAttribute("aria-pressed", String(semantic));
      toggle.textContent = semantic ? "Hide labels" : "Show labels";
    }
  };
  if (toggle) {
    toggle.type = "button";
    toggle.className = "hl-topview-toggle";
    toggle.addEventListener("click", () => setMode(element.dataset.mode === "semantic" ? "plain" : "semantic"));
    element.append(toggle);
  }
  setMode("plain");

  return { setMode };
}
