// The change editor's controls (change-editor-panel.js) over stand-ins for the page, with no viewer: buttons
// and keys step the edit, undo and redo take steps back and forth, the root's data says the edit in the API's
// schema, the text's object is selected, and a reset starts afresh.
import assert from "node:assert/strict";
import { test } from "node:test";

class Node extends EventTarget {
  constructor(tag, attributes = {}) {
    super();
    Object.assign(this, { tagName: tag, dataset: {}, attributes: {}, textContent: "", value: "", disabled: false,
                          children: [] }, attributes);
  }
  setAttribute(name, value) { this.attributes[name] = value; }
  replaceChildren(...nodes) { this.children = nodes; }
  focus() { globalThis.focused = this; }
}
globalThis.Option = class { constructor(text, value) { Object.assign(this, { text, value }); } };

function page() {
  const actions = ["left", "right", "forward", "back", "up", "down", "turn-left", "turn-right", "bigger", "smaller",
                   "remove", "undo", "redo"];
  const buttons = actions.map((a) => { const b = new Node("BUTTON"); b.dataset.editAction = a; return b; });
  const named = {
    "#edit-target": new Node("SELECT"), "#edit-summary": new Node("P"), "#edit-hint": new Node("P"),
    "#edit-new-label": new Node("INPUT"), "#edit-add": new Node("BUTTON"),
    "[data-edit-action=remove]": buttons[actions.indexOf("remove")],
  };
  const root = new Node("SECTION", { querySelector: (s) => named[s], querySelectorAll: () => buttons });
  const viewerElement = new Node("DIV", { hlViewer: Promise.resolve(null) });
  const button = (action) => buttons[actions.indexOf(action)];
  return { root, viewerElement, named, button };
}
const key = (target, key, extra = {}) => {
  const event = Object.assign(new Event("keydown", { cancelable: true }), { key, ...extra });
  Object.defineProperty(event, "target", { value: target });
  target.dispatchEvent(event);
  return event;
};

const { mountChangeEditor } = await import("../../frontend/static/hypolab/change-editor-panel.js");
const objects = [
  { instance_id: 1, label: "table", center: [1, 1, 0.4], size: [1.2, 0.8, 0.8], yaw: 0 },
  { instance_id: 2, label: "chair", center: [-1, -1, 0.45], size: [0.5, 0.5, 0.9], yaw: 0 },
];

test("buttons and keys step the edit; undo and redo; the root holds the schema; a step tells the page", async () => {
  const { root, viewerElement, named, button } = page();
  const changes = [];
  const editor = mountChangeEditor({ root, viewerElement, objects, onChange: (schema) => changes.push(schema) });
  assert.equal(viewerElement.attributes.role, "application");
  assert.ok(button("bigger").disabled);  // nothing selected
  editor.selectNamed("The chair has been moved to the table.");
  assert.equal(root.dataset.selected, "o2");
  assert.ok(!button("bigger").disabled && button("undo").disabled);
  button("right").dispatchEvent(new Event("click"));  // no viewer: forward is +y, right is +x
  assert.deepEqual(JSON.parse(root.dataset.edit), { objects: [{ instance_id: 2, translation: [0.1, 0, 0] }], added: [] });
  const pressed = key(viewerElement, "ArrowUp", { shiftKey: true });
  assert.ok(pressed.defaultPrevented);
  assert.deepEqual(editor.edit.objects[0].translation, [0.1, 0.02, 0]);
  key(viewerElement, "r");
  key(viewerElement, "+");
  assert.equal(root.dataset.steps, "4");
  assert.equal(changes.length, 4);
  key(viewerElement, "z", { ctrlKey: true });
  key(viewerElement, "z", { ctrlKey: true });
  assert.deepEqual(editor.edit.objects, [{ instance_id: 2, translation: [0.1, 0.02, 0] }]);
  key(viewerElement, "y", { ctrlKey: true });
  assert.ok(editor.edit.objects[0].rotation > 0);
  assert.match(named["#edit-summary"].textContent, /chair 2 moved 0\.10 m, turned 15°/);
  // the text names another object: the edited one stays selected
  editor.selectNamed("The table is gone.");
  assert.equal(root.dataset.selected, "o2");
  // keys typed into a field are the field's
  assert.ok(!key(named["#edit-new-label"], "r").defaultPrevented);
  key(viewerElement, "Delete");
  assert.deepEqual(editor.edit.objects, [{ instance_id: 2, removed: true }]);
  assert.equal(button("remove").textContent, "Put back");
  assert.ok(button("bigger").disabled);
  editor.reset(null);
  assert.equal(editor.edit, null);
  assert.equal(root.dataset.steps, "0");
});

test("adding an object from the keyboard puts it on the floor in the middle of the room, selected", async () => {
  const { root, viewerElement, named } = page();
  const editor = mountChangeEditor({ root, viewerElement, objects, initial: { objects: [{ instance_id: 2, removed: true }] } });
  named["#edit-add"].dispatchEvent(Object.assign(new Event("click"), { detail: 0 }));
  assert.match(named["#edit-hint"].textContent, /name first/);
  named["#edit-new-label"].value = "stool";
  named["#edit-add"].dispatchEvent(Object.assign(new Event("click"), { detail: 0 }));
  assert.deepEqual(editor.edit.added, [{ label: "stool", center: [0, 0, 0.25], size: [0.5, 0.5, 0.5], yaw: 0 }]);
  assert.equal(root.dataset.selected, "a0");
  assert.deepEqual(editor.edit.objects, [{ instance_id: 2, removed: true }]);  // a replacement: removed and added
  await Promise.resolve();
  await Promise.resolve();
  assert.equal(root.dataset.ready, "no-viewer");
});
