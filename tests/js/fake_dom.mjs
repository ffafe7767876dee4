// Just enough of a browser for the page modules' unit tests (Node's test runner, no DOM library):
// elements with text, attributes, children and events; document and window as event targets; fetch
// answered by the test. Install it before importing a module: modules read the page at import.
class FakeElement extends EventTarget {
  constructor(tag = "div", { id = "", text = "", children = {} } = {}) {
    super();
    this.tagName = tag.toUpperCase();
    this.id = id;
    this.textContent = text;
    this.dataset = {};
    this.attributes = {};
    this.children = [];
    this.named = children;  // selector -> element, for querySelector
  }
  querySelector(selector) { return this.named[selector] || null; }
  replaceChildren(...nodes) { this.children = nodes; }
  append(...nodes) {
    this.children.push(...nodes);
    this.textContent += nodes.map((node) => (typeof node === "string" ? node : node.textContent)).join("");
  }
  removeAttribute(name) { delete this.attributes[name]; if (name === "value") delete this.value; }
}

export function installDom({ elements = {} } = {}) {
  const document = new EventTarget();
  document.visibilityState = "visible";
  document.getElementById = (id) => elements[id] || null;
  document.querySelectorAll = () => [];
  document.createElement = (tag) => new FakeElement(tag);
  globalThis.document = document;
  globalThis.window = new EventTarget();
  // Timers run when the test says (`tick`), so no test waits and none keeps Node running.
  const intervals = [];
  globalThis.setInterval = (fn) => intervals.push(fn);
  globalThis.clearInterval = () => {};
  globalThis.CustomEvent = class extends Event {
    constructor(type, init = {}) { super(type, init); this.detail = init.detail; }
  };
  const requests = [];
  let answer = () => ({ status: 200, body: {} });
  globalThis.fetch = async (url, init) => {
    const sent = { url, ...init, json: init.body ? JSON.parse(init.body) : undefined };
    requests.push(sent);
    const { status, body } = answer(sent);
    return { ok: status < 400, status, json: async () => body };
  };
  return { requests, tick: () => intervals.forEach((fn) => fn()), freshWindow: () => { globalThis.window = new EventTarget(); }, answerWith: (fn) => { answer = fn; }, element: (tag, options) => new FakeElement(tag, options) };
}
