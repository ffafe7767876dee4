/**
 * A change as geometry, the maths of the 3D editor with no DOM and no three.js: the edit being made,
 * its boxes after the change, its steps (undo, redo), the supports a box can rest on, which key does what,
 * and the edit in the server's schema (annotation/change_geometry.py: aligned coordinates, metres, z up).
 *
 * The editor's state is plain data: {objects: {instance id: {translation, rotation, scale: [sx, sy, sz],
 * removed}}, added: [{label, center, size, yaw}]}. Every operation returns a new state. A target is the
 * key of one box: "o<instance id>" for a scene object, "a<index>" for an added box.
 */

export const STEP_M = 0.1;        // an arrow key's move
export const FINE_STEP_M = 0.02;  // with Shift
export const TURN_RAD = Math.PI / 12;
export const SCALE_STEP = 1.1;
export const DEFAULT_SIZE = [0.5, 0.5, 0.5];

const NO_CHANGE = { translation: [0, 0, 0], rotation: 0, scale: [1, 1, 1], removed: false };

export const emptyEdit = () => ({ objects: {}, added: [] });
export const objectKey = (instanceId) => `o${instanceId}`;
export const addedKey = (index) => `a${index}`;

/** The entry of the object `instanceId` (its defaults when the edit leaves it alone). */
export function entryOf(state, instanceId) {
  const entry = state.objects[instanceId];
  return entry ? { ...NO_CHANGE, ...entry } : { ...NO_CHANGE };
}

/** A box after its entry, as the server's change_geometry.moved: scaled about its bottom centre, turned, moved. */
export function boxAfter(box, entry) {
  const [sx, sy, sz] = entry.scale;
  const size = [box.size[0] * sx, box.size[1] * sy, box.size[2] * sz];
  const bottom = box.center[2] - box.size[2] / 2;
  const [dx, dy, dz] = entry.translation;
  return { ...box, center: [box.center[0] + dx, box.center[1] + dy, bottom + size[2] / 2 + dz], size,
           yaw: (box.yaw || 0) + entry.rotation };
}

const changes = (entry) => entry.removed || entry.rotation !== 0 || entry.translation.some((v) => v !== 0) ||
  entry.scale.some((v) => v !== 1);

/**
 * Every box of the scene with what the edit does to it: {key, instance_id, label, center, size, yaw,
 * before (the original box, or null for an added one), edited, removed}; added boxes last.
 */
export function afterBoxes(objects, state) {
  const boxes = objects.map((o) => {
    const entry = entryOf(state, o.instance_id);
    const after = entry.removed ? o : boxAfter(o, entry);
    return { ...after, key: objectKey(o.instance_id), before: o, edited: changes(entry), removed: entry.removed };
  });
  return boxes.concat(state.added.map((a, i) => ({ ...a, yaw: a.yaw || 0, instance_id: null, key: addedKey(i),
                                                   before: null, edited: true, removed: false })));
}

export const boxOf = (objects, state, key) => afterBoxes(objects, state).find((b) => b.key === key) || null;

function withEntry(state, instanceId, change) {
  const entry = change(entryOf(state, instanceId));
  const objects = { ...state.objects };
  if (changes(entry)) objects[instanceId] = entry; else delete objects[instanceId];
  return { ...state, objects };
}

function withAdded(state, index, change) {
  const added = state.added.slice();
  added[index] = change(added[index]);
  return { ...state, added };
}

/** Apply to the target's box: `object(entry)` for a scene object, `added(box)` for an added one. */
function onTarget(state, key, { object, added }) {
  if (!key) return state;
  const id = Number(key.slice(1));
  if (key[0] === "a") return state.added[id] ? withAdded(state, id, added) : state;
  return entryOf(state, id).removed ? state : withEntry(state, id, object);
}

const plus = (a, b) => a.map((v, i) => v + (b[i] || 0));

export const moveBy = (state, key, delta) => onTarget(state, key, {
  object: (e) => ({ ...e, translation: plus(e.translation, delta) }),
  added: (a) => ({ ...a, center: plus(a.center, delta) }),
});

export const turnBy = (state, key, radians) => onTarget(state, key, {
  object: (e) => ({ ...e, rotation: e.rotation + radians }),
  added: (a) => ({ ...a, yaw: (a.yaw || 0) + radians }),
});

/** Scales the box by `factor` about its bottom centre (the server's convention). */
export const scaleBy = (state, key, factor) => onTarget(state, key, {
  object: (e) => ({ ...e, scale: e.scale.map((s) => s * factor) }),
  added: (a) => {
    const size = a.size.map((s) => s * factor);
    return { ...a, size, center: [a.center[0], a.center[1], a.center[2] - a.size[2] / 2 + size[2] / 2] };
  },
});

/** Removes a scene object (its transform goes: a removed object takes none) or takes back an added box. */
export function removeTarget(state, key) {
  if (!key) return state;
  const id = Number(key.slice(1));
  if (key[0] === "a") return { ...state, added: state.added.filter((_, i) => i !== id) };
  return withEntry(state, id, () => ({ ...NO_CHANGE, removed: true }));
}

/** Brings a removed scene object back where it was. */
export function restoreTarget(state, key) {
  if (!key || key[0] !== "o") return state;
  return withEntry(state, Number(key.slice(1)), () => ({ ...NO_CHANGE }));
}

/** The size for a new box labelled `label`: a scene object's of that label, else DEFAULT_SIZE. */
export function defaultSize(objects, label) {
  const same = objects.find((o) => o.label.toLowerCase() === label.trim().toLowerCase());
  return same ? same.size.slice() : DEFAULT_SIZE.slice();
}

/** Adds a box labelled `label` whose bottom centre is `point`: {state, key}. */
export function addBox(state, objects, label, point) {
  const size = defaultSize(objects, label);
  const box = { label: label.trim(), center: [point[0], point[1], point[2] + size[2] / 2], size, yaw: 0 };
  return { state: { ...state, added: [...state.added, box] }, key: addedKey(state.added.length) };
}

/** Is (x, y) inside the box's turned footprint, widened by `margin`? */
export function containsXY(box, x, y, margin = 0) {
  const yaw = box.yaw || 0;
  const dx = x - box.center[0];
  const dy = y - box.center[1];
  const u = Math.cos(yaw) * dx + Math.sin(yaw) * dy;
  const v = -Math.sin(yaw) * dx + Math.cos(yaw) * dy;
  return Math.abs(u) <= box.size[0] / 2 + margin && Math.abs(v) <= box.size[1] / 2 + margin;
}

export const bottomOf = (box) => box.center[2] - box.size[2] / 2;
export const topOf = (box) => box.center[2] + box.size[2] / 2;

/** The floor's height: a box labelled floor's top, else the lowest bottom of the scene's boxes. */
export function floorZ(objects) {
  const floor = objects.find((o) => o.label.toLowerCase() === "floor");
  if (floor) return topOf(floor);
  return objects.length ? Math.min(...objects.map(bottomOf)) : 0;
}

/** The heights the target can rest at, low to high: the floor and the tops of the boxes under its centre. */
export function supportLevels(objects, state, key) {
  const box = boxOf(objects, state, key);
  if (!box) return [];
  const levels = [floorZ(objects)];
  for (const other of afterBoxes(objects, state)) {
    if (other.key === key || other.removed || other.label.toLowerCase() === "floor") continue;
    if (containsXY(other, box.center[0], box.center[1])) levels.push(topOf(other));
  }
  return [...new Set(levels.map((z) => Math.round(z * 1000) / 1000))].sort((a, b) => a - b);
}

/** The target put onto the next support above (`direction` 1) or below (-1) its bottom; unchanged if none. */
export function ontoSupport(objects, state, key, direction) {
  const box = boxOf(objects, state, key);
  if (!box) return state;
  const bottom = bottomOf(box);
  const levels = supportLevels(objects, state, key);
  const next = direction > 0 ? levels.find((z) => z > bottom + 0.01) : levels.reverse().find((z) => z < bottom - 0.01);
  return next === undefined ? state : moveBy(state, key, [0, 0, next - bottom]);
}

// --- the handles: turning and resizing with the pointer ---------------------------------------------

export const MIN_SCALE = 0.1;      // a box's scale stays within these (the server takes up to 10)
export const MAX_SCALE = 10;
export const SNAP_SCALE = 0.1;     // a scale handle with Shift snaps the box's scale to tenths
const HANDLE_GAP_M = 0.2;          // the turn handle lies this far beyond the box's front edge
const CORNER_GAP_M = 0.1;          // the scale handle this far out from its corner, along the diagonal

/**
 * Where a box's handles are, on the horizontal plane of its bottom: `turn` beyond the middle of its front
 * edge (its local +x, the direction its yaw points; `front` is that edge's middle), `scale` just out from its
 * front-left `corner` (local +x, +y) along the diagonal; `centre` is the bottom's centre, the point a turn and
 * a resize go about.
 */
export function handlePoints(box) {
  const yaw = box.yaw || 0;
  const [c, s] = [Math.cos(yaw), Math.sin(yaw)];
  const z = bottomOf(box);
  const at = (u, v) => [box.center[0] + c * u - s * v, box.center[1] + s * u + c * v, z];
  const [hx, hy] = [box.size[0] / 2, box.size[1] / 2];
  const out = 1 + CORNER_GAP_M / (Math.hypot(hx, hy) || 1);
  return { centre: [box.center[0], box.center[1], z], front: at(hx, 0), turn: at(hx + HANDLE_GAP_M, 0),
           corner: at(hx, hy), scale: at(hx * out, hy * out) };
}

/** The signed angle (radians, counter-clockwise seen from above, in (-π, π]) from `from` to `to` about `centre`. */
export function angleAbout(centre, from, to) {
  const a = Math.atan2(from[1] - centre[1], from[0] - centre[0]);
  const b = Math.atan2(to[1] - centre[1], to[0] - centre[0]);
  let d = b - a;
  while (d <= -Math.PI) d += 2 * Math.PI;
  while (d > Math.PI) d -= 2 * Math.PI;
  return d;
}

/** An angle rounded to whole multiples of `step` (the keys' TURN_RAD, 15°). */
export const snapAngle = (radians, step = TURN_RAD) => Math.round(radians / step) * step;

/** The ratio of `to`'s distance from `centre` to `from`'s on the floor plane; 1 when `from` is at the centre. */
export function scaleRatio(centre, from, to) {
  const start = Math.hypot(from[0] - centre[0], from[1] - centre[1]);
  if (start < 1e-6) return 1;
  return Math.hypot(to[0] - centre[0], to[1] - centre[1]) / start;
}

/**
 * The factor a handle drag of `ratio` applies to a box whose scale is `current` (an object's uniform scale,
 * 1 for an added box): the resulting scale kept within [MIN_SCALE, MAX_SCALE], with `snap` rounded to SNAP_SCALE.
 */
export function scaleFactor(ratio, current = 1, { snap = false } = {}) {
  let next = current * (Number.isFinite(ratio) && ratio > 0 ? ratio : 1);
  if (snap) next = Math.round(next / SNAP_SCALE) * SNAP_SCALE;
  return Math.min(MAX_SCALE, Math.max(MIN_SCALE, next)) / current;
}

/**
 * The state after a pointer drag of the target, from the state when it began: `kind` "move" (`value` the
 * floor delta [dx, dy, 0]), "turn" (`value` the handle's angle about the centre, radians) or "scale"
 * (`value` the handle's distance ratio); `snap` (Shift) snaps a turn to TURN_RAD and a scale to tenths.
 */
export function dragged(start, key, kind, value, { snap = false } = {}) {
  if (kind === "move") return moveBy(start, key, value);
  if (kind === "turn") return turnBy(start, key, snap ? snapAngle(value) : value);
  if (kind === "scale") {
    const current = key && key[0] === "o" ? entryOf(start, Number(key.slice(1))).scale[0] : 1;
    return scaleBy(start, key, scaleFactor(value, current, { snap }));
  }
  return start;
}

/** Where the ray (origin, direction; arrays) meets the horizontal plane at height z: [x, y, z], or null. */
export function rayToPlaneZ(origin, direction, z) {
  if (Math.abs(direction[2]) < 1e-9) return null;
  const t = (z - origin[2]) / direction[2];
  if (t < 0) return null;
  return [origin[0] + t * direction[0], origin[1] + t * direction[1], z];
}

/** The floor move of an arrow key, relative to the view: `forward` is the view's direction on the floor. */
export function arrowStep(key, forward, step) {
  const length = Math.hypot(forward[0], forward[1]) || 1;
  const [fx, fy] = [forward[0] / length, forward[1] / length];
  const directions = { ArrowUp: [fx, fy], ArrowDown: [-fx, -fy], ArrowRight: [fy, -fx], ArrowLeft: [-fy, fx] };
  const d = directions[key];
  return d ? [d[0] * step, d[1] * step, 0] : null;
}

/** What a key press does in the editor: an action name (with `fine` for Shift on arrows), or null. */
export function keyAction({ key, shiftKey = false, ctrlKey = false, metaKey = false, altKey = false }) {
  const command = ctrlKey || metaKey;
  if (command && !altKey) {
    const lower = key.toLowerCase();
    if (lower === "z") return shiftKey ? "redo" : "undo";
    if (lower === "y") return "redo";
    return null;
  }
  if (altKey) return null;
  if (key.startsWith("Arrow")) return { ArrowUp: "forward", ArrowDown: "back", ArrowLeft: "left", ArrowRight: "right" }[key] || null;
  if (key === "PageUp") return "up";
  if (key === "PageDown") return "down";
  if (key === "r") return "turn-left";
  if (key === "R") return "turn-right";
  if (key === "+" || key === "=") return "bigger";
  if (key === "-" || key === "_") return "smaller";
  if (key === "Delete" || key === "Backspace") return "remove";
  return null;
}

// --- steps -----------------------------------------------------------------------------------------

/** The steps of an edit: `present` is the edit now, `past` and `future` what undo and redo go back to. */
export const createHistory = (present = emptyEdit()) => ({ past: [], present, future: [] });

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/** One step to `next` (none when it changes nothing). */
export function record(history, next) {
  if (same(next, history.present)) return history;
  return { past: [...history.past, history.present], present: next, future: [] };
}

/** A step in progress (a drag): the edit shown changes, the steps do not; `commit` ends it as one step. */
export const preview = (history, next) => ({ ...history, present: next });

/** The step in progress ends: one step from `start` (the edit when it began) to the edit now. */
export function commit(history, start) {
  if (same(start, history.present)) return history;
  return { past: [...history.past, start], present: history.present, future: [] };
}

export function undo(history) {
  if (!history.past.length) return history;
  return { past: history.past.slice(0, -1), present: history.past.at(-1), future: [history.present, ...history.future] };
}

export function redo(history) {
  if (!history.future.length) return history;
  return { past: [...history.past, history.present], present: history.future[0], future: history.future.slice(1) };
}

// --- the server's schema -------------------------------------------------------------------------

const round = (value, places) => {
  const factor = 10 ** places;
  const r = Math.round(value * factor) / factor;
  return Object.is(r, -0) ? 0 : r;
};
const metres = (v) => v.map((x) => round(x, 4));

/** The edit as the API takes it (benchmarks/edit_schema.py), or null when it changes nothing. */
export function toSchema(state) {
  const objects = [];
  for (const [id, raw] of Object.entries(state.objects)) {
    const entry = { ...NO_CHANGE, ...raw };
    if (entry.removed) { objects.push({ instance_id: Number(id), removed: true }); continue; }
    const out = { instance_id: Number(id) };
    const translation = metres(entry.translation);
    if (translation.some((v) => v !== 0)) out.translation = translation;
    const rotation = round(entry.rotation, 5);
    if (rotation !== 0) out.rotation = rotation;
    const scale = entry.scale.map((s) => round(s, 4));
    if (scale.some((s) => s !== 1)) out.scale = scale.every((s) => s === scale[0]) ? scale[0] : scale;
    if (Object.keys(out).length > 1) objects.push(out);
  }
  objects.sort((a, b) => a.instance_id - b.instance_id);
  const added = state.added.map((a) => ({ label: a.label, center: metres(a.center), size: metres(a.size),
                                          yaw: round(a.yaw || 0, 5) }));
  if (!objects.length && !added.length) return null;
  return { objects, added };
}

/** The editor's state from an edit in the schema (a draft's, a stored change's; its `world` is left out). */
export function fromSchema(edit) {
  const state = emptyEdit();
  if (!edit || typeof edit !== "object") return state;
  for (const raw of edit.objects || []) {
    const scale = raw.scale === undefined ? 1 : raw.scale;
    state.objects[raw.instance_id] = raw.removed ? { ...NO_CHANGE, removed: true } : {
      translation: (raw.translation || [0, 0, 0]).slice(), rotation: raw.rotation || 0,
      scale: Array.isArray(scale) ? scale.slice() : [scale, scale, scale], removed: false,
    };
  }
  state.added = (edit.added || []).map((a) => ({ label: a.label, center: a.center.slice(), size: a.size.slice(),
                                                 yaw: a.yaw || 0 }));
  return state;
}

/** The scene object the text names first (the longest label where two start at the same word), or null. */
export function namedObject(objects, text) {
  const lower = ` ${(text || "").toLowerCase().replace(/[^a-z0-9]+/g, " ")} `;
  let best = null;
  let bestAt = Infinity;
  for (const o of objects) {
    const label = o.label.toLowerCase().replace(/[^a-z0-9]+/g, " ").trim();
    if (!label || label === "floor" || label === "wall") continue;
    const singular = ` ${label} `;
    const plural = ` ${label}s `;
    const at = Math.min(...[lower.indexOf(singular), lower.indexOf(plural)].filter((i) => i >= 0), Infinity);
    if (at < bestAt || (at === bestAt && best && label.length > best.label.length)) {
      best = o;
      bestAt = at;
    }
  }
  return best;
}

/** The edit in words, one phrase per box it touches (the page's summary beside the viewer). */
export function describe(objects, state) {
  const phrases = [];
  for (const box of afterBoxes(objects, state)) {
    if (!box.edited) continue;
    const name = box.before ? `${box.label} ${box.instance_id}` : `new ${box.label}`;
    if (box.removed) { phrases.push(`${name} removed`); continue; }
    if (!box.before) { phrases.push(`${name} added`); continue; }
    const entry = entryOf(state, box.instance_id);
    const parts = [];
    const [dx, dy, dz] = entry.translation;
    if (Math.hypot(dx, dy) >= 0.005) parts.push(`moved ${Math.hypot(dx, dy).toFixed(2)} m`);
    if (Math.abs(dz) >= 0.005) parts.push(`${dz > 0 ? "raised" : "lowered"} ${Math.abs(dz).toFixed(2)} m`);
    if (entry.rotation) parts.push(`turned ${Math.round((entry.rotation * 180) / Math.PI)}°`);
    if (entry.scale.some((s) => s !== 1)) parts.push(`scaled ×${entry.scale[0].toFixed(2)}`);
    phrases.push(`${name} ${parts.join(", ") || "unchanged"}`);
  }
  return phrases.length ? `The edit: ${phrases.join("; ")}.` : "No edit yet.";
}
