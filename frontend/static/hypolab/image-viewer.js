/**
 * Image viewer: one image with overlays drawn in an SVG laid over it, in the image's own pixel
 * coordinates (so they stay put when the image is scaled). Overlays are data, e.g.
 *   {type: "arrow", from: [x, y], to: [x, y], colour: "#e33", label: "A"}
 *   {type: "box", x, y, width, height, colour, label}   (also "start_box": CausalSpatial's start box)
 * The same shapes, with the same geometry, are printed into the pixels models get
 * (benchmarks/overlays.py: keep the stroke widths, the arrow head and the label offset equal).
 * When the image is drawn the element gets data-loaded="true" (data-loaded="error" on failure).
 */
const SVG = "http://www.w3.org/2000/svg";

export function svgElement(name, attributes) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  return node;
}

const COLOURS = { arrow: "#ff3b30", box: "#ff3b30", start_box: "#34c759" };

export function drawOverlay(svg, overlay, markerId) {
  const colour = overlay.colour || COLOURS[overlay.type] || "#ff3b30";
  let anchor = null;
  if (overlay.type === "arrow") {
    const [x1, y1] = overlay.from;
    const [x2, y2] = overlay.to;
    // each arrow's head in its own colour
    const marker = svgElement("marker", { id: markerId, markerWidth: 8, markerHeight: 8, refX: 6, refY: 4, orient: "auto" });
    marker.append(svgElement("path", { d: "M0,0 L8,4 L0,8 z", fill: colour }));
    svg.querySelector("defs").append(marker);
    svg.append(svgElement("line", { x1, y1, x2, y2, stroke: colour, "stroke-width": 4, "marker-end": `url(#${markerId})` }));
    anchor = [x1, y1];
  } else if (overlay.type === "box" || overlay.type === "start_box") {
    svg.append(svgElement("rect", { x: overlay.x, y: overlay.y, width: overlay.width, height: overlay.height,
      fill: "none", stroke: colour, "stroke-width": 3 }));
    anchor = [overlay.x, overlay.y];
  }
  if (overlay.label && anchor) {
    const text = svgElement("text", { x: anchor[0] + 4, y: anchor[1] - 6, fill: colour, "font-size": 18, "font-weight": 700 });
    text.textContent = overlay.label;
    svg.append(text);
  }
}

export function mountImageViewer(element, { url, overlays = [], alt = "Stimulus image" }) {
  element.classList.add("hl-image-viewer");
  element.dataset.loaded = "false";
  const frame = document.createElement("div");
  frame.style.position = "relative";
  frame.style.display = "inline-block";
  frame.style.maxWidth = "100%";
  const image = document.createElement("img");
  image.alt = alt;
  image.style.maxWidth = "100%";
  image.style.display = "block";
  frame.append(image);
  element.replaceChildren(frame);
  image.addEventListener("load", () => {
    const svg = svgElement("svg", { viewBox: `0 0 ${image.naturalWidth} ${image.naturalHeight}` });
    Object.assign(svg.style, { position: "absolute", inset: "0", width: "100%", height: "100%", pointerEvents: "none" });
    const markerId = `arrow-head-${Math.random().toString(36).slice(2)}`;
    svg.append(svgElement("defs", {}));
    overlays.forEach((overlay, i) => drawOverlay(svg, overlay, `${markerId}-${i}`));
    frame.append(svg);
    element.dataset.loaded = "true";
  });
  image.addEventListener("error", () => {
    element.dataset.loaded = "error";
    element.append(Object.assign(document.createElement("p"), { className: "error", textContent: "Could not load the image." }));
  });
  image.src = url;
  return { dispose() { element.replaceChildren(); } };
}
