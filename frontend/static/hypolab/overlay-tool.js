/**
 * The overlay tool of the authoring page (annotate_task.html, choice items on images): draw a motion
 * arrow, a start box or a bounding box on an image by dragging over it. Marks are data, as the item
 * stores them (benchmarks/overlays.py): {image, type: "arrow", from: [x, y], to: [x, y], colour} or
 * {image, type: "box" | "start_box", x, y, width, height, colour}, coordinates normalised to the image
 * (0-1). They are drawn with the session page's shapes (image-viewer.js), which models get printed
 * into their pixels.
 */
import { drawOverlay, svgElement } from "./image-viewer.js";

const TYPES = [["arrow", "Motion arrow"], ["start_box", "Start box"], ["box", "Bounding box"]];
const COLOURS = { arrow: "#ff3b30", start_box: "#34c759", box: "#ff3b30" };
const NAMES = Object.fromEntries(TYPES);
const round = (v) => Math.round(Math.min(Math.max(v, 0), 1) * 10000) / 10000;

function toolbar(onClear, onUndo) {
  const box = Object.assign(document.createElement("fieldset"), { id: "overlay-tool", className: "overlay-tool" });
  box.append(Object.assign(document.createElement("legend"), {
    textContent: "Marks on the image (drag over an image to draw; evaluators and models are shown them)" }));
  TYPES.forEach(([value, name], i) => {
    const label = document.createElement("label");
    const radio = Object.assign(document.createElement("input"), { type: "radio", name: "overlay-type", value, id: `overlay-type-${value}` });
    radio.checked = i === 0;
    label.append(radio, ` ${name} `);
    box.append(label);
  });
  const colourLabel = Object.assign(document.createElement("label"), { htmlFor: "overlay-colour", textContent: " Colour " });
  const colour = Object.assign(document.createElement("input"), { type: "color", id: "overlay-colour", value: COLOURS.arrow });
  const undo = Object.assign(document.createElement("button"), { type: "button", id: "overlay-undo", className: "link", textContent: "Remove the last mark" });
  const clear = Object.assign(document.createElement("button"), { type: "button", id: "overlay-clear", className: "link", textContent: "Remove all marks" });
  undo.addEventListener("click", onUndo);
  clear.addEventListener("click", onClear);
  const list = Object.assign(document.createElement("ol"), { id: "overlay-list" });
  box.append(colourLabel, colour, " ", undo, " ", clear, list);
  box.addEventListener("change", (e) => { if (e.target.name === "overlay-type") colour.value = COLOURS[e.target.value]; });
  return { box, list, type: () => box.querySelector("input[name=overlay-type]:checked").value, colour: () => colour.value };
}

/** Mounts the tool on `images` (img elements, in the scene's order); `onChange(marks)` on every edit. */
export function mountOverlayTool(host, images, { marks = [], onChange = () => {} }) {
  marks = Array.isArray(marks) ? marks.filter((m) => m && typeof m === "object") : [];
  const layers = [];
  const bar = toolbar(() => { marks = []; changed(); }, () => { marks.pop(); changed(); });
  host.insertBefore(bar.box, images[0] || null);

  function pixels(mark, width, height) {
    if (mark.type === "arrow") {
      return { ...mark, from: [mark.from[0] * width, mark.from[1] * height], to: [mark.to[0] * width, mark.to[1] * height] };
    }
    return { ...mark, x: mark.x * width, y: mark.y * height, width: mark.width * width, height: mark.height * height };
  }
  function render(index, preview) {
    const layer = layers[index];
    if (!layer || !layer.width) return;
    layer.svg.replaceChildren(svgElement("defs", {}));
    [...marks, ...(preview ? [preview] : [])].forEach((mark, i) => {
      if ((mark.image || 0) === index) drawOverlay(layer.svg, pixels(mark, layer.width, layer.height), `overlay-head-${index}-${i}`);
    });
  }
  function list() {
    bar.list.replaceChildren(...marks.map((mark) => Object.assign(document.createElement("li"), {
      textContent: `${NAMES[mark.type] || mark.type} on image ${(mark.image || 0) + 1}`,
    })));
  }
  function changed() { layers.forEach((_, i) => render(i)); list(); onChange(marks); }

  images.forEach((image, index) => {
    const frame = Object.assign(document.createElement("div"), { className: "overlay-frame" });
    Object.assign(frame.style, { position: "relative", display: "inline-block", maxWidth: "100%" });
    image.replaceWith(frame);
    frame.append(image);
    image.style.display = "block";
    const svg = svgElement("svg", { "data-image": index, role: "img", "aria-label": `Drawing area over image ${index + 1}` });
    Object.assign(svg.style, { position: "absolute", inset: "0", width: "100%", height: "100%", cursor: "crosshair", touchAction: "none" });
    frame.append(svg);
    const layer = { svg, width: 0, height: 0 };
    layers[index] = layer;
    const sized = () => {
      layer.width = image.naturalWidth;
      layer.height = image.naturalHeight;
      svg.setAttribute("viewBox", `0 0 ${layer.width} ${layer.height}`);
      render(index);
    };
    if (image.complete && image.naturalWidth) sized(); else image.addEventListener("load", sized);

    const at = (e) => {
      const r = svg.getBoundingClientRect();
      return [round((e.clientX - r.left) / r.width), round((e.clientY - r.top) / r.height)];
    };
    let start = null;
    const shape = (end) => {
      const [type, colour] = [bar.type(), bar.colour()];
      if (type === "arrow") return { image: index, type, from: start, to: end, colour };
      const [x, y] = [Math.min(start[0], end[0]), Math.min(start[1], end[1])];
      return { image: index, type, x, y, width: round(Math.abs(end[0] - start[0])), height: round(Math.abs(end[1] - start[1])), colour };
    };
    svg.addEventListener("pointerdown", (e) => { e.preventDefault(); start = at(e); svg.setPointerCapture(e.pointerId); });
    svg.addEventListener("pointermove", (e) => { if (start) render(index, shape(at(e))); });
    svg.addEventListener("pointerup", (e) => {
      if (!start) return;
      const mark = shape(at(e));
      start = null;
      const drawn = mark.type === "arrow"
        ? Math.hypot(mark.to[0] - mark.from[0], mark.to[1] - mark.from[1]) >= 0.01
        : mark.width >= 0.005 && mark.height >= 0.005;
      if (drawn) marks.push(mark);
      changed();
    });
  });
  list();
  return { get marks() { return marks; } };
}
