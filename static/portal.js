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
// Forms that change something that is hard to undo ask first (the htmx ones use hx-confirm).
document.addEventListener("submit", function (event) {
  var question = event.target.getAttribute && event.target.getAttribute("data-confirm");
  if (question && !window.confirm(question)) event.preventDefault();
});
