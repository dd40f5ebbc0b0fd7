// Tacho portal: the few behaviours that need JavaScript. Everything else works without it.
"use strict";
document.addEventListener("click", function (event) {
  var button = event.target.closest("[data-copy]");
  if (!button) return;
  var field = document.getElementById(button.getAttribute("data-copy"));
  if (!field) return;
  field.select();
  if (navigator.clipboard) {
    navigator.clipboard.writeText(field.value).catch(function () {});
  }
});
// Toasts disappear after a while.
document.addEventListener("htmx:afterSwap", function (event) {
  if (event.detail.target.id === "toast") {
    setTimeout(function () { event.detail.target.innerHTML = ""; }, 6000);
  }
});
