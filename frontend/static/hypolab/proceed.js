// A link that starts work (a crowd entry, a study start, the next scene) renders a form that POSTs
// the same address: where scripts run it is submitted at once, so the link still feels like one step.
const form = document.getElementById("proceed-form");
if (form && form.dataset.autosubmit) {
  form.querySelector("button").disabled = true;
  form.submit();
}
