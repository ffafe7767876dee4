// Pages of background work (an export, a dedup run) reload until it is done: the template includes
// this module only while the work runs, with the delay in the json_script "reload-after-ms".
import { readJSON } from "../api.js";

// A navigation away (a link, the address bar) fires beforeunload, then keeps this page until the next
// page answers: a reload in that time would cancel it. So the reloads stop there, and start again only
// if the page is still here long after (the navigation was a download, or was stopped).
const STILL_HERE_MS = 30_000;
const reloadIn = (ms) => setTimeout(() => location.reload(), ms);

let timer = reloadIn(readJSON("reload-after-ms"));
addEventListener("beforeunload", () => {
  clearTimeout(timer);
  timer = reloadIn(STILL_HERE_MS);
});
