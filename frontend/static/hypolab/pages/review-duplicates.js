// Near-duplicate pairs (review_duplicates.html): keep the first, the second or both of each pair.
import { errorText, post } from "../api.js";

document.querySelectorAll("#duplicate-pairs button[data-keep]").forEach((button) => {
  button.addEventListener("click", async () => {
    const row = button.closest("tr");
    const r = await post(`/api/v1/duplicates/${row.dataset.pair}/resolve/`, { keep: button.dataset.keep });
    if (r.ok) row.querySelector(".resolution").textContent = r.data.resolution;
    else document.getElementById("dedup-error").textContent = errorText(r.data);
  });
});
