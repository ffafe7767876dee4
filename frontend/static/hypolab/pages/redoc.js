// The API reference (api/redoc.html): drf-spectacular's ReDoc with nothing from other hosts.
import { readJSON } from "../api.js";

// ReDoc's sidebar links to Redocly with a logo from its CDN: show it without that request.
const blank = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E";
const local = (value) => (String(value).startsWith("https://cdn.redoc.ly/") ? blank : value);
const src = Object.getOwnPropertyDescriptor(HTMLImageElement.prototype, "src");
Object.defineProperty(HTMLImageElement.prototype, "src", {
  get() { return src.get.call(this); },
  set(value) { src.set.call(this, local(value)); },
});
const setAttribute = Element.prototype.setAttribute;
Element.prototype.setAttribute = function (name, value) {
  return setAttribute.call(this, name, this.tagName === "IMG" && name === "src" ? local(value) : value);
};

// The settings come as drf-spectacular writes them: a JSON text.
window.Redoc.init(readJSON("redoc-schema-url"), JSON.parse(readJSON("redoc-settings")), document.getElementById("redoc-container"));
