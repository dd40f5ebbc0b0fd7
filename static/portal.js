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
function clearLater(toast) {
  clearTimeout(toast.clearing);
  toast.clearing = setTimeout(function () { toast.innerHTML = ""; }, 6000);
}
document.addEventListener("htmx:afterSwap", function (event) {
  var target = event.detail.target;
  if (target.id === "toast") clearLater(target);
});
// New content (a swapped-in form, or the page itself when htmx starts) that carries a saved
// form's notice.
document.addEventListener("htmx:load", function (event) { toastNotice(event.detail.elt); });
// A saved form says so where it was sent from; a toast repeats it where every page shows
// news. Screen readers hear the notice itself, so the toast is for the eye only.
function toastNotice(root) {
  var notice = root.querySelector && root.querySelector(".notice[role='status']");
  var toast = document.getElementById("toast");
  if (!notice || !toast) return;
  var box = document.createElement("div");
  box.className = "toast toast-ok";
  box.setAttribute("aria-hidden", "true");
  box.textContent = notice.textContent;
  toast.replaceChildren(box);
  clearLater(toast);
}
// Forms that change something that is hard to undo ask first (the htmx ones use hx-confirm).
document.addEventListener("submit", function (event) {
  var question = event.target.getAttribute && event.target.getAttribute("data-confirm");
  if (question && !window.confirm(question)) event.preventDefault();
});
// A tapped (or clicked) dot of a trend chart says what it is below the chart; pointing at it
// shows the same words as the dot's title.
document.addEventListener("click", function (event) {
  var dot = event.target.closest && event.target.closest("svg.trend .dot");
  if (!dot) return;
  var figure = dot.closest("figure");
  var out = figure && figure.querySelector(".tap-value");
  if (!out) return;
  figure.querySelectorAll(".dot.chosen").forEach(function (d) { d.classList.remove("chosen"); });
  dot.classList.add("chosen");
  out.textContent = dot.getAttribute("data-label");
});
// A tap on the tachogram reads the row of its table for that moment of the recording.
document.addEventListener("click", function (event) {
  var svg = event.target.closest && event.target.closest("svg.tachogram");
  if (!svg || !svg.getScreenCTM()) return;
  var section = svg.closest("section");
  var out = section && section.querySelector(".tap-value");
  if (!out) return;
  var point = svg.createSVGPoint();
  point.x = event.clientX;
  point.y = event.clientY;
  var at = point.matrixTransform(svg.getScreenCTM().inverse()).x / 600;
  var rows = section.querySelectorAll("tr[data-from]");
  var found = null;
  rows.forEach(function (row) {
    row.classList.remove("chosen");
    var from = parseFloat(row.getAttribute("data-from"));
    var to = parseFloat(row.getAttribute("data-to"));
    if (at >= from && at < to) found = row;
  });
  if (!found) return;
  found.classList.add("chosen");
  out.textContent = found.getAttribute("data-label");
});
// A form sent after its session ended (signed out elsewhere, or idle too long) is answered
// with the way to the login page, which then leads back here. What was typed is kept in this
// tab until then (never a password or the form's token), and put back in the same form for the
// same account, which says so.
var DRAFT = "tacho-draft";
function draftFields(form, each) {
  Array.prototype.forEach.call(form.elements, function (field) {
    if (!field.name || /^(password|hidden|file|submit|button|reset)$/.test(field.type)) return;
    each(field, field.type === "checkbox" || field.type === "radio"
      ? field.name + "=" + field.value : field.name);
  });
}
document.addEventListener("htmx:beforeOnLoad", function (event) {
  var to = event.detail.xhr && event.detail.xhr.getResponseHeader("HX-Redirect");
  if (!to || to.indexOf("/portal/login") !== 0) return;
  var form = event.detail.elt.closest && event.detail.elt.closest("form[id]");
  if (!form) return;
  var fields = {};
  draftFields(form, function (field, key) {
    fields[key] = key === field.name ? field.value : field.checked;
  });
  try {
    sessionStorage.setItem(DRAFT, JSON.stringify({
      path: location.pathname, account: document.body.getAttribute("data-account"),
      form: form.id, fields: fields }));
  } catch (e) { /* storage refused: the login still goes on */ }
});
function restoreDraft() {
  var draft = null;
  try { draft = JSON.parse(sessionStorage.getItem(DRAFT)); } catch (e) { return; }
  if (!draft || draft.path !== location.pathname) return;
  var account = document.body.getAttribute("data-account");
  if (!account) return;
  // Another account signed in on this tab: what the first one typed is not its to see.
  sessionStorage.removeItem(DRAFT);
  var form = document.getElementById(draft.form);
  if (draft.account !== account || !form) return;
  draftFields(form, function (field, key) {
    if (!(key in draft.fields)) return;
    if (key === field.name) field.value = draft.fields[key];
    else field.checked = draft.fields[key];
  });
  var notice = document.createElement("p");
  notice.className = "notice draft-kept";
  notice.setAttribute("role", "status");
  notice.textContent = document.body.getAttribute("data-draft-kept");
  form.insertBefore(notice, form.firstChild);
}
if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", restoreDraft);
else restoreDraft();
