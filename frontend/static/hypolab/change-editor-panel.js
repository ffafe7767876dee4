/**
 * "Edit the change in 3D", the page's side: the controls of _change_editor.html (the object list, one
 * button per step, a new object's label), the keys over the viewer and the panel, and the steps (undo, redo)
 * of the edit; the maths is change-editor.js, the drawing and the pointer pointcloud-edit.js (passed in as
 * `editLayer`, from the viewer's bundle). The panel works before (and without) the viewer: the buttons edit,
 * the viewer draws once it is up. The root's data-edit holds the edit in the API's schema, data-selected the
 * selected box, data-steps how many steps undo can take back.
 */
import * as edit from "./change-editor.js";

const FIELDS = new Set(["INPUT", "TEXTAREA", "SELECT"]);

/**
 * `root`: the editor's section; `viewerElement`: the point cloud's element (its `hlViewer`, a promise of the
 * viewer, is set by the scene viewer's script); `objects`: the scene's boxes; `initial`: an edit in the
 * schema (a draft's or the change's) or null; `onChange(schema)`: after every step.
 */
export function mountChangeEditor({ root, viewerElement, objects, initial = null, editLayer = null, onChange = () => {} }) {
  const $ = (selector) => root.querySelector(selector);
  const target = $("#edit-target");
  const summary = $("#edit-summary");
  const hint = $("#edit-hint");
  const labelInput = $("#edit-new-label");
  const boxes = objects.filter((o) => o.center && o.size);
  let history = edit.createHistory(edit.fromSchema(initial));
  let selected = null;
  let layer = null;
  let dragStart = null;

  const render = () => {
    const after = edit.afterBoxes(boxes, history.present);
    if (selected && !after.some((b) => b.key === selected)) selected = null;
    target.replaceChildren(new Option("none", ""), ...after.map((b) => new Option(
      `${b.before ? b.label + " " + b.instance_id : "new " + b.label}${b.removed ? " (removed)" : b.edited ? " (edited)" : ""}`,
      b.key)));
    target.value = selected || "";
    const box = after.find((b) => b.key === selected);
    for (const button of root.querySelectorAll("[data-edit-action]")) {
      const action = button.dataset.editAction;
      button.disabled = action === "undo" ? !history.past.length : action === "redo" ? !history.future.length
        : !box || (box.removed && action !== "remove");
    }
    const remove = $("[data-edit-action=remove]");
    remove.textContent = box?.removed ? "Put back" : "Remove";
    summary.textContent = edit.describe(boxes, history.present);
    const schema = edit.toSchema(history.present);
    root.dataset.edit = JSON.stringify(schema);
    root.dataset.selected = selected || "";
    root.dataset.steps = String(history.past.length);
    layer?.draw(after, selected);
    return schema;
  };
  const changed = () => onChange(render());
  const step = (next) => {
    const before = history;
    history = edit.record(history, next);
    if (history !== before) changed(); else render();
  };
  const select = (key) => {
    selected = key || null;
    render();
  };
  const say = (text) => { hint.textContent = text; };

  const act = (action, { fine = false } = {}) => {
    const state = history.present;
    const forward = layer ? layer.forward() : [0, 1];
    const moves = { forward: "ArrowUp", back: "ArrowDown", left: "ArrowLeft", right: "ArrowRight" };
    if (action === "undo") { history = edit.undo(history); changed(); return; }
    if (action === "redo") { history = edit.redo(history); changed(); return; }
    if (!selected) { say("Select an object first: click its box or pick it in the list."); return; }
    const box = edit.boxOf(boxes, state, selected);
    if (moves[action]) step(edit.moveBy(state, selected, edit.arrowStep(moves[action], forward, fine ? edit.FINE_STEP_M : edit.STEP_M)));
    else if (action === "up" || action === "down") {
      const next = edit.ontoSupport(boxes, state, selected, action === "up" ? 1 : -1);
      if (next === state) say(action === "up" ? "Nothing to rest on above it here." : "It is on the floor already.");
      step(next);
    } else if (action === "turn-left") step(edit.turnBy(state, selected, edit.TURN_RAD));
    else if (action === "turn-right") step(edit.turnBy(state, selected, -edit.TURN_RAD));
    else if (action === "bigger") step(edit.scaleBy(state, selected, edit.SCALE_STEP));
    else if (action === "smaller") step(edit.scaleBy(state, selected, 1 / edit.SCALE_STEP));
    else if (action === "remove") step(box?.removed ? edit.restoreTarget(state, selected) : edit.removeTarget(state, selected));
  };

  for (const button of root.querySelectorAll("[data-edit-action]")) {
    button.addEventListener("click", () => act(button.dataset.editAction));
  }
  target.addEventListener("change", () => select(target.value));

  const centre = () => {
    if (!boxes.length) return [0, 0, 0];
    const xs = boxes.map((b) => b.center[0]);
    const ys = boxes.map((b) => b.center[1]);
    return [(Math.min(...xs) + Math.max(...xs)) / 2, (Math.min(...ys) + Math.max(...ys)) / 2, edit.floorZ(boxes)];
  };
  const place = (point) => {
    const { state, key } = edit.addBox(history.present, boxes, placing, point);
    placing = null;
    if (layer) layer.placing = null;
    selected = key;
    say("Placed: drag it or use the buttons to put it where the text says.");
    step(state);
  };
  let placing = null;
  $("#edit-add").addEventListener("click", (event) => {
    const label = labelInput.value.trim();
    if (!label) { say("Type the new object's name first."); labelInput.focus(); return; }
    placing = label;
    // From the keyboard (or without the viewer) the new box starts in the middle of the room, on the floor.
    if (event.detail === 0 || !layer) { place(centre()); return; }
    layer.placing = label;
    say(`Click on the floor or on an object's top to place the ${label}; Escape stops.`);
  });

  const onKey = (event) => {
    if (FIELDS.has(event.target.tagName) && event.target !== viewerElement) return;
    if (event.key === "Escape" && placing) {
      placing = null;
      if (layer) layer.placing = null;
      say("");
      event.preventDefault();
      return;
    }
    const action = edit.keyAction(event);
    if (!action) return;
    event.preventDefault();
    act(action, { fine: event.shiftKey });
  };
  root.addEventListener("keydown", onKey);
  viewerElement.addEventListener("keydown", onKey);
  viewerElement.tabIndex = 0;
  viewerElement.setAttribute("role", "application");
  viewerElement.setAttribute("aria-label", "Scene viewer: the change's edit");
  viewerElement.setAttribute("aria-describedby", "edit-keys");

  const attach = (viewer) => {
    if (!viewer || !editLayer) {
      root.dataset.ready = "no-viewer";
      return;
    }
    layer = editLayer(viewer, boxes, {
      pick: (key) => {
        select(key);
        viewerElement.focus({ preventScroll: true });
      },
      // A drag of the box (kind "move") or of a handle ("turn", "scale"): previews from where it began, one step.
      drag: (phase, value, kind = "move", { snap = false } = {}) => {
        if (phase === "start") dragStart = history.present;
        else if (phase === "move") history = edit.preview(history, edit.dragged(dragStart, selected, kind, value, { snap }));
        else history = edit.commit(history, dragStart);
        if (phase === "move") render(); else if (phase === "end") changed();
      },
      place,
    });
    root.screenOf = layer.screenOf; // where a point is on the page (the browser tests drag by it)
    root.handleOf = layer.handleOf; // where the selected box's "turn" or "scale" handle is on the page
    root.handlePointOf = layer.handlePointOf; // and in the scene
    render();
    root.dataset.ready = "true";
  };
  const mounted = viewerElement.hlViewer ?? new Promise((resolve) => {
    viewerElement.addEventListener("hl-viewer-mount", () => resolve(viewerElement.hlViewer), { once: true });
  });
  Promise.resolve(mounted).then(attach, () => attach(null));
  render();

  return {
    /** The edit in the API's schema, or null when it changes nothing. */
    get edit() { return edit.toSchema(history.present); },
    /** A fresh edit (after a description was added, or from the server); no steps to undo. */
    reset(schema = null) {
      history = edit.createHistory(edit.fromSchema(schema));
      selected = null;
      render();
    },
    /** Selects the object the text names, unless the edit already touches the one selected. */
    selectNamed(text) {
      const box = selected && edit.boxOf(boxes, history.present, selected);
      if (box?.edited) return;
      const named = edit.namedObject(boxes, text);
      if (named && edit.objectKey(named.instance_id) !== selected) select(edit.objectKey(named.instance_id));
    },
  };
}
