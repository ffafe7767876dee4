/**
 * The pages' client for the JSON API: same-origin requests carrying the CSRF token (base.html puts
 * it in the json_script "csrf-token"), answers read as {ok, status, data} whatever the body was, and
 * the page data templates hand to scripts with `{{ ...|json_script:"id" }}`.
 */
export function readJSON(id, fallback = null) {
  const element = document.getElementById(id);
  return element ? JSON.parse(element.textContent) : fallback;
}

const csrf = readJSON("csrf-token", "");

async function request(method, url, body, { keepalive = false } = {}) {
  const headers = { "X-CSRFToken": csrf };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const r = await fetch(url, {
    method, credentials: "same-origin", keepalive, headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let data;
  try { data = await r.json(); } catch (e) { data = r.ok ? {} : { detail: "The server answered " + r.status }; }
  return { ok: r.ok, status: r.status, data };
}

export const get = (url) => request("GET", url);
export const post = (url, body = {}) => request("POST", url, body);
// keepalive: the request outlives the page (autosave's last save when the page goes away).
export const put = (url, body, options) => request("PUT", url, body, options);
export const del = (url) => request("DELETE", url);

// As frontend/templatetags/hypolab_ui.py: a message that needs its field's name gets it in words.
const GENERIC_MESSAGE = /^(This field|This value|Ensure this|A valid|Not a valid|Enter a|At most|Must be)/;
const ACRONYMS = { url: "URL", id: "ID", pid: "ID" };
const fieldLabel = (field) => {
  const text = field.replace(/([a-z])([A-Z])/g, "$1 $2").replace(/_/g, " ").trim().toLowerCase().split(/\s+/)
    .map((w) => ACRONYMS[w] || w).join(" ");
  return text.charAt(0).toUpperCase() + text.slice(1);
};

// Not errors of their own: a conflict's fresh copy, and the details of a field's message (a change's edit: each
// disagreement of its text, and the path at fault as a string, not a field's list of messages).
const detail = ([k, v]) => k === "current" || k === "problems" || (k === "path" && typeof v === "string");

/** A DRF error body as sentences for people: each message, after its field's name in words only where the
 * message needs it ("Batch size: Must be …"); details (above) are not errors. */
export function errorText(data) {
  return Object.entries(data).filter((entry) => !detail(entry)).map(([k, v]) => {
    const message = Array.isArray(v) ? v.join(" ") : String(v);
    const named = k !== "non_field_errors" && k !== "detail" && GENERIC_MESSAGE.test(message);
    return (named ? fieldLabel(k) + ": " : "") + message;
  }).join(" ");
}
