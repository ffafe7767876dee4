// A campaign's live dashboard (campaign_dashboard.html): counts and workers, refreshed when the server
// says something changed, or every few seconds once the websocket is down.
import { get, readJSON } from "../api.js";
import { subscribe } from "../dashboard.js";

const page = readJSON("page-data");

function show(progress) {
  for (const [table, id] of [["assignments", "assignment-counts"], ["descriptions", "description-counts"]]) {
    for (const [status, n] of Object.entries(progress[table])) {
      const cell = document.querySelector(`#${id} td[data-status="${status}"]`);
      if (cell) cell.textContent = n;
    }
  }
  document.querySelector("#worker-table tbody").replaceChildren(...progress.workers.map((w) => {
    const tr = document.createElement("tr");
    for (const v of [w.worker_id, w.assignments, w.descriptions, w.median_seconds_per_description]) {
      const td = document.createElement("td"); td.textContent = v; tr.append(td);
    }
    return tr;
  }));
  document.getElementById("dashboard-updated").textContent = new Date().toLocaleTimeString();
}

show(readJSON("progress-data"));
// Bursts of messages (a worker typing) fetch once.
let pending = null;
const refresh = () => {
  if (pending) return;
  pending = setTimeout(async () => {
    pending = null;
    const r = await get(`/api/v1/campaigns/${page.campaign}/`);
    if (r.ok) show(r.data.progress);
  }, 500);
};
subscribe(`/ws/campaigns/${page.campaign}/`, { onMessage: refresh, onDown: () => setInterval(refresh, 3000) });
