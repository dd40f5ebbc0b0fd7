// Tacho portal: the export of a patient's whole record. The link downloads the ZIP without any
// script; with this one the archive is fetched as a stream, the bytes received so far are
// shown beside a progress bar while the server makes it (its size is not known before the
// end), and it is saved under the server's file name once complete.
"use strict";
(function () {
  // "740 kB", "12.4 MB" in the page's language.
  function size(bytes) {
    var lang = document.documentElement.lang || "en";
    var mega = bytes >= 1000 * 1000;
    var amount = mega ? bytes / (1000 * 1000) : bytes / 1000;
    try {
      return new Intl.NumberFormat(lang, {
        style: "unit", unit: mega ? "megabyte" : "kilobyte", maximumFractionDigits: mega ? 1 : 0
      }).format(amount);
    } catch (e) {
      return (mega ? amount.toFixed(1) + " MB" : Math.round(amount) + " kB");
    }
  }

  function fileName(response, fallback) {
    var disposition = response.headers.get("Content-Disposition") || "";
    var match = /filename="([^"]+)"/.exec(disposition);
    return match ? match[1] : fallback;
  }

  function save(blob, name) {
    var url = URL.createObjectURL(blob);
    var link = document.createElement("a");
    link.href = url;
    link.download = name;
    link.hidden = true;
    document.body.appendChild(link);
    link.click();
    link.remove();
    // The browser has started the download by now; the address is no longer needed.
    setTimeout(function () { URL.revokeObjectURL(url); }, 60000);
  }

  async function download(link) {
    var status = document.getElementById(link.getAttribute("data-export"));
    var message = document.getElementById("export-message");
    var bytes = document.getElementById("export-bytes");
    var progress = document.getElementById("export-progress");
    link.setAttribute("aria-disabled", "true");
    link.busy = true;
    progress.removeAttribute("value");
    bytes.textContent = size(0);
    status.hidden = false;
    message.textContent = link.getAttribute("data-preparing");
    try {
      var response = await fetch(link.href, { credentials: "same-origin" });
      if (!response.ok || !response.body) {
        message.textContent = link.getAttribute(
          response.status === 429 ? "data-too-many" : "data-failed");
        status.hidden = true;
        return;
      }
      var reader = response.body.getReader();
      var parts = [];
      var received = 0;
      for (;;) {
        var part = await reader.read();
        if (part.done) break;
        parts.push(part.value);
        received += part.value.length;
        bytes.textContent = size(received);
      }
      save(new Blob(parts, { type: "application/zip" }), fileName(response, "tacho-export.zip"));
      progress.value = 1;
      progress.max = 1;
      message.textContent = link.getAttribute("data-saved");
    } catch (e) {
      // A connection cut while the archive was being made: what arrived is not a whole ZIP.
      status.hidden = true;
      message.textContent = link.getAttribute("data-failed");
    } finally {
      link.removeAttribute("aria-disabled");
      link.busy = false;
    }
  }

  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("a[data-export]");
    if (!link || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    // Without streams the plain link does the download.
    if (!window.fetch || !window.ReadableStream || !window.URL || !URL.createObjectURL) return;
    event.preventDefault();
    if (!link.busy) download(link);
  });
})();
