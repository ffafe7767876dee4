// Near-duplicate pairs (review_duplicates.html): keep the first, the second or both of each pair.
import { errorText, post } from "../api.js";

// review.models.DedupPair.Resolution's labels: what the row says once resolved, as after a reload.
const RESOLVED = { kept_first: "Kept the first", kept_second: "Kept the second", kept_both: "Not duplicates" };

document.querySelectorAll("#duplicate-pairs button[data-keep]").forEach((button) => {
  button.addEventListener("click", async () => {
    const row = button.closest("tr");
    const r = await post(`/api/v1/duplicates/${row.dataset.pair}/resolve/`, { keep: button.dataset.keep });
    if (r.ok) row.querySelector(".resolution").textContent = RESOLVED[r.data.resolution] || r.data.resolution;
    else document.getElementById("dedup-error").textContent = errorText(r.data);
  });
});
