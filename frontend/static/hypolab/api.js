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

/** A DRF error body as one sentence ("field: message …"); `current` (a conflict's fresh copy) is not an error. */
export function errorText(data) {
  return Object.entries(data).filter(([k]) => k !== "current").map(([k, v]) =>
    (k === "non_field_errors" || k === "detail" ? "" : k + ": ") + (Array.isArray(v) ? v.join(" ") : v)).join(" ");
}
