/**
 * Top-view map with hoverable objects. The map data comes from scenes/topview.py:
 * {width, height, bounds, labels: [{instance_id, label, x, y, box: [left, top, right, bottom],
 * corners: [[x, y] x 4]}]} in the image's pixel coordinates. Hover is a lookup of the pointer in the
 * objects' footprints (the `corners` polygon, turned by the object's yaw; the `box` for maps made
 * before corners were kept), the smallest footprint winning, so a chair under a table is still
 * reachable, not a ray-cast.
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

function polygonArea(corners) {
  let twice = 0;
  corners.forEach(([x, y], i) => {
    const [nx, ny] = corners[(i + 1) % corners.length];
    twice += x * ny - nx * y;
  });
  return Math.abs(twice) / 2;
}

/** Whether (x, y) lies inside the polygon (even-odd rule; on an edge counts as inside). */
function inPolygon(corners, x, y) {
  let inside = false;
  for (let i = 0, j = corners.length - 1; i < corners.length; j = i++) {
    const [xi, yi] = corners[i];
    const [xj, yj] = corners[j];
    const onLine = (xj - xi) * (y - yi) === (yj - yi) * (x - xi);
    const between = Math.min(xi, xj) <= x && x <= Math.max(xi, xj) && Math.min(yi, yj) <= y && y <= Math.max(yi, yj);
    if (onLine && between) return true;
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

function footprintHolds(entry, x, y) {
  if (entry.corners?.length >= 3) return inPolygon(entry.corners, x, y);
  const [left, top, right, bottom] = entry.box;
  return x >= left && x <= right && y >= top && y <= bottom;
}

function footprintArea(entry) {
  return entry.corners?.length >= 3 ? polygonArea(entry.corners) : boxArea(entry.box);
}

/** The entry whose footprint holds pixel (x, y), the smallest one when they overlap; null if none. */
export function labelAt(labels, x, y) {
  let best = null;
  for (const entry of labels) {
    if (footprintHolds(entry, x, y) && (!best || footprintArea(entry) < footprintArea(best))) best = entry;
  }
  return best;
}

const SVG = "http://www.w3.org/2000/svg";

/** An SVG over the image, in the map's pixels, drawing a turned footprint's outline. */
function polygonOutline(map) {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", `0 0 ${map?.width ?? 1} ${map?.height ?? 1}`);
  svg.setAttribute("preserveAspectRatio", "none");
  svg.setAttribute("class", "hl-topview-polygon");
  svg.setAttribute("aria-hidden", "true");
  svg.style.cssText = "position: absolute; left: 0; top: 0; width: 100%; height: 100%; pointer-events: none";
  const polygon = document.createElementNS(SVG, "polygon");
  polygon.setAttribute("fill", "rgba(255, 179, 0, 0.12)");
  polygon.setAttribute("stroke", "#ffb300");
  polygon.setAttribute("stroke-width", "2");
  polygon.setAttribute("vector-effect", "non-scaling-stroke");
  svg.append(polygon);
  return { svg, polygon };
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
  const turned = polygonOutline(map);
  outline.hidden = tooltip.hidden = true;
  turned.svg.style.display = "none";
  frame.append(image, outline, turned.svg, tooltip);
  element.replaceChildren(frame);

  image.addEventListener("load", () => {
    element.dataset.ready = "true";
  });
  image.addEventListener("error", () => {
    element.dataset.ready = "error";
  });

  const labels = map?.labels ?? [];
  // The image's size in pixels: the semantic map may carry a numbered legend right of the map (its
  // `semantic_size`), the map keeping its pixels at the left, so hover reads the same coordinates.
  const shown = () => (element.dataset.mode === "semantic" && map?.semantic_size) || [map.width, map.height];
  const hide = () => {
    outline.hidden = tooltip.hidden = true;
    turned.svg.style.display = "none";
    element.dataset.hoverLabel = "";
  };

  image.addEventListener("pointermove", (event) => {
    if (!map) return;
    const rect = image.getBoundingClientRect();
    // Pointer position in the map's own pixels, whatever size the image is shown at.
    const [width, height] = shown();
    const x = ((event.clientX - rect.left) * width) / rect.width;
    const y = ((event.clientY - rect.top) * height) / rect.height;
    const entry = labelAt(labels, x, y);
    if (!entry) {
      hide();
      return;
    }
    const [left, top, right, bottom] = entry.box;
    // Percentages keep the outline on its object when the image is resized.
    Object.assign(outline.style, {
      left: `${(100 * left) / width}%`,
      top: `${(100 * top) / height}%`,
      width: `${(100 * (right - left)) / width}%`,
      height: `${(100 * (bottom - top)) / height}%`,
    });
    // A turned footprint is outlined as the polygon it is; the box outline serves older maps.
    const polygon = entry.corners?.length >= 3;
    if (polygon) turned.polygon.setAttribute("points", entry.corners.map((c) => c.join(",")).join(" "));
    turned.svg.style.display = polygon ? "" : "none";
    tooltip.textContent = entry.label;
    tooltip.style.left = `${event.clientX - rect.left + 12}px`;
    tooltip.style.top = `${event.clientY - rect.top + 12}px`;
    outline.hidden = polygon;
    tooltip.hidden = false;
    element.dataset.hoverLabel = entry.label;
  });
  image.addEventListener("pointerleave", hide);

  const toggle = semanticUrl ? document.createElement("button") : null;
  const setMode = (mode) => {
    const semantic = mode === "semantic" && Boolean(semanticUrl);
    element.dataset.mode = semantic ? "semantic" : "plain";
    image.src = semantic ? semanticUrl : imageUrl;
    if (map) turned.svg.setAttribute("viewBox", `0 0 ${shown().join(" ")}`);
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
