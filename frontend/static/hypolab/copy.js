// Copy buttons: <button data-copy="text">. The text is also in a read-only field beside it, for
// browsers without clipboard access (plain HTTP).
for (const button of document.querySelectorAll("button[data-copy]")) {
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(button.dataset.copy);
      button.textContent = "Copied";
    } catch (e) {
      const field = button.closest("tr")?.querySelector("input");
      if (field) { field.focus(); field.select(); }
      button.textContent = "Press Ctrl+C";
    }
    setTimeout(() => { button.textContent = "Copy"; }, 2000);
  });
}
for (const field of document.querySelectorAll("input.crowd-link-template")) {
  field.addEventListener("focus", () => field.select());
}
