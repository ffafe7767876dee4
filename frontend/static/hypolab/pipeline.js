/**
 * The manage page's pipeline section (manage.html #pipeline): add a stage (its kind and params as
 * JSON, with an example per kind), remove one, run one or all. Each run answers with its job, shown
 * in the one progress widget (job-progress.js), which follows the job live.
 */
import { del, errorText, post, readJSON } from "./api.js";
import { showJob, watchJob } from "./job-progress.js";

/** `{"params": {"level": [...]}}` reads as "params.level: ...". */
function stageErrorText(data) {
  const { params, ...rest } = data;
  if (!params || Array.isArray(params) || typeof params !== "object") return errorText(data);
  const named = Object.fromEntries(Object.entries(params).map(([name, why]) => [`params.${name}`, why]));
  return errorText({ ...rest, ...named });
}

export function attachPipeline(section) {
  if (!section) return;
  const { slug, examples } = readJSON("pipeline-data");
  const form = section.querySelector("#stage-form");
  const error = section.querySelector("#stage-error");
  const { kind, params } = form.elements;
  // A refused add or run shows its message here, brought into view (the stage list can be long).
  const say = (text) => {
    error.textContent = text;
    if (text) error.scrollIntoView({ block: "center" });
  };
  const showExample = () => { params.value = JSON.stringify(examples[kind.value] || {}, null, 1); };
  kind.addEventListener("change", showExample);
  showExample();

  // A stage that has run offers Run again (a new job even with the same params), not Run.
  const ranOnce = (row) => {
    const run = row.querySelector("button[data-action=run]");
    run.textContent = "Run again";
    run.dataset.again = "1";
  };

  const follow = (row, state) => {
    ranOnce(row);
    const widget = section.querySelector("#job-progress-template").content.firstElementChild.cloneNode(true);
    widget.dataset.jobId = state.id;
    widget.querySelector(".job-kind").textContent = state.kind;
    row.querySelector(".stage-job").replaceChildren(widget);
    showJob(widget, state);
    watchJob(widget);
  };

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    let parsed;
    try {
      parsed = params.value.trim() ? JSON.parse(params.value) : {};
    } catch (e) {
      say(`params: not valid JSON (${e.message})`);
      return;
    }
    const r = await post(`/api/v1/benchmarks/${slug}/stages/`,
      { kind: kind.value, name: form.elements.name.value, params: parsed });
    if (!r.ok) {
      say(stageErrorText(r.data));
      return;
    }
    location.hash = "pipeline";
    location.reload();
  });

  section.addEventListener("click", async (event) => {
    const button = event.target.closest("button[data-action]");
    if (!button) return;
    const row = button.closest("tr[data-stage]");
    error.textContent = "";
    button.disabled = true;
    try {
      if (button.dataset.action === "run") {
        const r = await post(`/api/v1/stages/${row.dataset.stage}/run/`, { again: button.dataset.again === "1" });
        if (r.ok) follow(row, r.data); else say(stageErrorText(r.data));
      } else if (button.dataset.action === "run-all") {
        const again = section.querySelector("#pipeline-again").checked;
        const r = await post(`/api/v1/benchmarks/${slug}/pipeline/run/`, { again });
        const rows = section.querySelectorAll("tr[data-stage]");
        if (r.ok) r.data.jobs.forEach((job, i) => follow(rows[i], job)); else say(stageErrorText(r.data));
      } else if (button.dataset.action === "remove") {
        const r = await del(`/api/v1/stages/${row.dataset.stage}/`);
        if (r.ok) location.reload(); else say(stageErrorText(r.data));
      }
    } finally {
      button.disabled = false;
    }
  });
}
